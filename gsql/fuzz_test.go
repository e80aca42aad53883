package gsql

import (
	"context"
	"strings"
	"testing"

	googlesql "github.com/goccy/go-googlesql"
)

// FuzzClassify feeds arbitrary text to Classify and checks what must hold
// whatever the input: no panic; the same verdict twice; a Query is also a
// query statement to GoogleSQL's single-statement entry point (a second
// opinion from the same parser, which catches mistakes in how this package
// counts statements); a Query never stays one with a statement after it.
func FuzzClassify(f *testing.F) {
	for _, c := range corpus(f) {
		if len(c.sql) < 4096 {
			f.Add(c.sql)
		}
	}
	e, err := theEngine()
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > 1<<14 {
			return
		}
		v := Classify(ctx, sql)
		if v.Kind == Unknown {
			t.Fatalf("Classify(%q) could not classify: %s", sql, v.Reason)
		}
		if again := Classify(ctx, sql); again != v {
			t.Fatalf("Classify(%q) = %+v, then %+v", sql, v, again)
		}
		if !v.ReadOnly() {
			return
		}
		out, err := googlesql.ParseStatement(sql, e.parser)
		if err != nil {
			t.Fatalf("Classify(%q) = Query, but ParseStatement fails: %v", sql, err)
		}
		stmt, err := out.Statement()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := stmt.(*googlesql.ASTQueryStatement); !ok {
			t.Fatalf("Classify(%q) = Query, but ParseStatement gives %T", sql, stmt)
		}
		// A newline ends any trailing comment; the verdict must change.
		if w := Classify(ctx, sql+"\n;DROP TABLE t"); w.ReadOnly() && !strings.Contains(sql, "/*") {
			t.Fatalf("Classify(%q + DROP) = %+v", sql, w)
		}
	})
}

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

// FuzzFormatSQL feeds arbitrary text (seeded with the corpus, with
// comments spliced in) to FormatSQL and checks what formatting promises
// whenever it answers: the result says what the text says (SameSQL, which
// compares comments byte for byte and in order), and formatting it again
// gives it back.
func FuzzFormatSQL(f *testing.F) {
	for i, c := range corpus(f) {
		if len(c.sql) >= 4096 {
			continue
		}
		f.Add(c.sql)
		// The same SQL with a comment after its first line and one on a
		// line of its own before its last line.
		lines := strings.Split(c.sql, "\n")
		if len(lines) > 1 {
			lines[0] += " -- c" + string(rune('a'+i%26))
			lines[len(lines)-1] = "/* d */\n" + lines[len(lines)-1]
			f.Add(strings.Join(lines, "\n"))
		}
	}
	f.Add("select a, -- why\n b from t # h\nwhere x = 1 /* y */ and z")
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > 1<<13 {
			return
		}
		out, err := FormatSQL(sql, FormatOptions{})
		if err != nil {
			return
		}
		if err := SameSQL(sql, out); err != nil {
			t.Fatalf("FormatSQL(%q) = %q, which says something else: %v", sql, out, err)
		}
		again, err := FormatSQL(out, FormatOptions{})
		if err != nil || again != out {
			t.Fatalf("FormatSQL(%q) = %q; again: %q, %v", sql, out, again, err)
		}
	})
}

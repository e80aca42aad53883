package gsql

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/sqlcorpus"
)

// kindNames are the kinds by their String(), as the corpus file names them.
var kindNames = func() map[string]Kind {
	m := map[string]Kind{}
	for k := Unknown; k <= TooLarge; k++ {
		m[k.String()] = k
	}
	return m
}()

type corpusEntry struct {
	name, sql string
	want      Kind
}

// corpus is testdata/sql/preview_corpus.json (package sqlcorpus) and the
// generated long statements: what a preview may meet, benign and hostile,
// with what GoogleSQL (BigQuery's parser) makes of each. The hostile ones
// are the reason this package exists: each of them looked like a
// read-only query to a hand-written lexer, or could.
func corpus(t testing.TB) []corpusEntry {
	var out []corpusEntry
	for _, e := range append(sqlcorpus.Load(t), sqlcorpus.Generated()...) {
		k, ok := kindNames[e.Kind]
		if !ok {
			t.Fatalf("corpus entry %q: unknown kind %q", e.Name, e.Kind)
		}
		out = append(out, corpusEntry{e.Name, e.SQL, k})
	}
	return out
}

func TestClassify(t *testing.T) {
	ctx := context.Background()
	for _, c := range corpus(t) {
		t.Run(c.name, func(t *testing.T) {
			v := Classify(ctx, c.sql)
			if v.Kind != c.want {
				t.Errorf("Classify(%q) = %v (%s), want %v", abbrev(c.sql), v.Kind, v.Reason, c.want)
			}
			if v.Reason == "" {
				t.Errorf("Classify(%q): no reason", abbrev(c.sql))
			}
			if v.ReadOnly() != (c.want == Query) {
				t.Errorf("ReadOnly() = %v", v.ReadOnly())
			}
			if again := Classify(ctx, c.sql); again != v {
				t.Errorf("second Classify = %+v, first %+v", again, v)
			}
		})
	}
}

func TestClassifyReasons(t *testing.T) {
	ctx := context.Background()
	for sql, want := range map[string]string{
		"SELECT 1":                          "read-only query",
		"DROP TABLE `d.t`":                  "DROP TABLE statement",
		"SELECT 1 --\r; DROP TABLE `d.t`\n": "script of 2 statements (query; DROP TABLE statement)",
		"INSERT INTO t VALUES (1)":          "INSERT statement",
		"EXPORT DATA OPTIONS (uri = 'gs://b/*') AS SELECT 1": "EXPORT DATA statement",
		"EXECUTE IMMEDIATE 'x'":                              "EXECUTE IMMEDIATE statement",
		"DECLARE x INT64":                                    "DECLARE statement",
		"SELECT * FROM EXTERNAL_QUERY('c', 'DELETE FROM u')": "query calls EXTERNAL_QUERY (a statement run by another database)",
		"SELECT ds.f(1)":                                     "query calls the routine ds.f",
		"SELECT * FROM ML.PREDICT(MODEL m, (SELECT 1))":      "query calls ML.PREDICT (a model BigQuery runs for you)",
	} {
		if got := Classify(ctx, sql).Reason; got != want {
			t.Errorf("Classify(%q).Reason = %q, want %q", sql, got, want)
		}
	}
	if r := Classify(ctx, "SELECT 1\x00").Reason; !strings.Contains(r, "GoogleSQL cannot parse it") || !strings.Contains(r, "Illegal input character") {
		t.Errorf("reason for a NUL: %q", r)
	}
}

func TestClassifyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := Classify(ctx, "SELECT 'not seen before, so not remembered'")
	if v.Kind != Unknown || v.ReadOnly() {
		t.Fatalf("cancelled Classify = %+v, want Unknown", v)
	}
	// Not remembered: a later call with a live context classifies it.
	if v := Classify(context.Background(), "SELECT 'not seen before, so not remembered'"); v.Kind != Query {
		t.Fatalf("after cancellation: %+v", v)
	}
}

// TestDeeplyNested: deep nesting is linear for GoogleSQL's parser (the
// hand-written lexer this package replaced was quadratic in it).
func TestDeeplyNested(t *testing.T) {
	ctx := context.Background()
	for _, s := range []string{
		strings.Repeat("(", 5000) + "SELECT 1" + strings.Repeat(")", 5000),
		nestedWith(2000),
		nestedSubqueries(2000),
	} {
		if v := Classify(ctx, s); v.Kind != Query && v.Kind != Invalid {
			t.Errorf("%d bytes of nesting: %+v", len(s), v)
		}
	}
}

// TestDeniedKindsReviewed pins the go-googlesql version the lists of
// refused node kinds and built-in namespaces were reviewed against. A new
// GoogleSQL can add syntax (a pipe operator that writes, a function
// namespace that calls out); when this fails after an upgrade, read the
// new ASTNodeKind constants and function namespaces, update refusedKinds
// and builtinNamespaces, extend the corpus, then the version here.
func TestDeniedKindsReviewed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`github\.com/goccy/go-googlesql (\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod does not require github.com/goccy/go-googlesql")
	}
	if got, reviewed := string(m[1]), "v0.3.0"; got != reviewed {
		t.Fatalf("go-googlesql is %s; refusedKinds and builtinNamespaces were reviewed for %s (see this test's comment)", got, reviewed)
	}
}

func TestDescribeDebug(t *testing.T) {
	for in, want := range map[string]string{
		"DropStatement TABLE [14-30]":             "DROP TABLE statement",
		"CreateFunctionStatement(is_temp) [0-31]": "CREATE FUNCTION statement",
		"CreateTableStatement [0-10]":             "CREATE TABLE statement",
		"VariableDeclaration [0-15]":              "DECLARE statement",
		"AuxLoadDataStatement [0-9]":              "LOAD DATA statement",
		"ExportDataStatement [0-51]\n  Options":   "EXPORT DATA statement",
		"BeginEndBlock [0-19]":                    "BEGIN … END block",
		"SomethingNew [0-1]":                      "SOMETHING NEW",
		"DropStatement(is_if_exists) VIEW [0-30]": "DROP VIEW statement",
	} {
		if got := describeDebug(in); got != want {
			t.Errorf("describeDebug(%q) = %q, want %q", in, got, want)
		}
	}
}

func abbrev(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func nestedWith(depth int) string {
	var b strings.Builder
	b.WriteString("WITH c0 AS (SELECT 1 AS x)")
	for i := 1; i < depth; i++ {
		b.WriteString(", c")
		b.WriteString(itoa(i))
		b.WriteString(" AS (SELECT x + 1 AS x FROM c")
		b.WriteString(itoa(i - 1))
		b.WriteString(" WHERE x > 0)")
	}
	b.WriteString(" SELECT * FROM c")
	b.WriteString(itoa(depth - 1))
	return b.String()
}

func nestedSubqueries(depth int) string {
	return strings.Repeat("SELECT x FROM (", depth) + "SELECT 1 AS x" + strings.Repeat(")", depth)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

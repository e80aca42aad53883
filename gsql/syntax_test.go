package gsql

import (
	"context"
	"strings"
	"testing"
)

// A statement GoogleSQL's parser rejects is a certain syntax error, at the
// place the parser stopped; one of a kind BigQuery runs and GoogleSQL
// lacks, or one dfd cannot be sure about, is skipped with a hint.
func TestSyntaxErrors(t *testing.T) {
	c := testCatalog(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, sql string
		kind      ErrorKind // "": skipped
		contains  string    // in the message, or in Skipped
		line, col int
	}{
		{"misspelt keyword", "SELEC country FROM `proj.sales.customers`", SyntaxError, `Unexpected identifier "SELEC"`, 1, 1},
		{"trailing WHERE", "SELECT country FROM `proj.sales.customers` WHERE", SyntaxError, "Unexpected end of script", 1, 49},
		{"trailing WHERE after a comment", "SELECT country\nFROM `proj.sales.customers`\n-- only the big ones\nWHERE", SyntaxError, "Unexpected end of script", 4, 6},
		{"trailing AND", "SELECT country FROM `proj.sales.customers` WHERE country = 'FR' AND", SyntaxError, "Unexpected end of script", 1, 68},
		{"unclosed string", "SELECT country FROM `proj.sales.customers` WHERE country = 'FR", SyntaxError, "Unclosed string literal", 1, 60},
		{"unclosed quoted name", "SELECT country FROM `proj.sales.customers", SyntaxError, "Unclosed identifier literal", 1, 21},
		{"unbalanced parenthesis", "SELECT (1 + 2 FROM `proj.sales.customers`", SyntaxError, "Syntax error", 1, 15},
		{"second statement of a script", "SELECT 1;\nSELEC 2", SyntaxError, `Unexpected identifier "SELEC"`, 2, 1},
		{"inside an IF", "IF TRUE THEN\n  SELEC 1;\nEND IF", SyntaxError, "SELEC", 2, 3},
		{"before a kind GoogleSQL lacks", "SELEC 1;\nALTER PROJECT proj SET OPTIONS (`region-us.default_time_zone` = 'UTC')", SyntaxError, "SELEC", 1, 1},
		{"no such object kind", "CREATE TABEL sales.t AS SELECT 1 AS x", OtherError, "TABEL is not a supported object type", 1, 8},

		{"a kind GoogleSQL lacks", "ALTER PROJECT proj SET OPTIONS (`region-us.default_time_zone` = 'UTC')", "", "GoogleSQL does not know ALTER PROJECT statements yet; not analysed", 0, 0},
		{"a kind GoogleSQL lacks, in a script", "SELECT 1;\n-- then\nalter   project proj SET OPTIONS (`region-us.default_time_zone` = 'UTC');\nSELECT 2", "", "GoogleSQL does not know ALTER PROJECT statements yet", 0, 0},
		{"a kind GoogleSQL lacks, in a block", "BEGIN\n  DROP RESERVATION `admin.region-us.prod`;\nEND", "", "GoogleSQL does not know DROP RESERVATION statements yet", 0, 0},
		{"legacy SQL", "#legacySQL\nSELECT country FROM [proj:sales.customers]", "", "legacy SQL", 0, 0},
		{"a comment that is no prefix", "# legacy SQL? no\nSELECT country FROM [proj:sales.customers]", SyntaxError, "Syntax error", 2, 21},
		{"a byte order mark", "\uFEFFSELECT 1", "", "byte order mark", 0, 0},
		{"a dashed table name", "SELECT * FROM proj.region-us.INFORMATION_SCHEMA.JOBS", "", "dash or a wildcard without backticks", 0, 0},
		{"an unquoted wildcard table", "SELECT * FROM other.analytics.events_* WHERE _TABLE_SUFFIX > '2024'", "", "dash or a wildcard without backticks", 0, 0},
		{"MATCH_RECOGNIZE", "SELECT * FROM `proj.sales.orders` MATCH_RECOGNIZE (ORDER BY ordered_at MEASURES COUNT(*) AS n PATTERN (a b+) DEFINE b AS b.amount > a.amount)", "", "language features still in development", 0, 0},
		{"GRAPH_TABLE", "SELECT * FROM GRAPH_TABLE(sales.g MATCH (p:person) COLUMNS (p.name))", "", "language features still in development", 0, 0},
		{"too long", "SELEC " + strings.Repeat("x", MaxStatementBytes), "", "longer than", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := c.Analyze(ctx, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			if tc.kind == "" {
				if a.Problem != nil || !strings.Contains(a.Skipped, tc.contains) {
					t.Errorf("problem %+v, skipped %q; want skipped with %q", a.Problem, a.Skipped, tc.contains)
				}
				return
			}
			p := a.Problem
			if p == nil || p.Kind != tc.kind || !strings.Contains(p.Message, tc.contains) || p.Line != tc.line || p.Column != tc.col {
				t.Errorf("problem %+v (skipped %q), want %s with %q at %d:%d", p, a.Skipped, tc.kind, tc.contains, tc.line, tc.col)
			}
		})
	}
	if !SyntaxError.Certain() || OtherError.Certain() {
		t.Error("a syntax error must be certain, an unknown object kind not")
	}
}

// Every kind of notYetInGoogleSQL: its fixture is one GoogleSQL's parser
// still rejects (else the entry is obsolete: remove it, and the kind is
// analysed), and is skipped with a hint naming the kind, alone or as a
// statement of a script.
func TestNotYetInGoogleSQL(t *testing.T) {
	e, err := theEngine()
	if err != nil {
		t.Fatal(err)
	}
	c := testCatalog(t)
	ctx := context.Background()
	seen := map[string]bool{}
	for _, k := range notYetInGoogleSQL {
		t.Run(k.Kind, func(t *testing.T) {
			if seen[k.Kind] || k.Fixture == "" || !strings.HasPrefix(k.Source, "https://cloud.google.com/bigquery/") {
				t.Fatalf("%+v: needs a unique kind, a fixture and its BigQuery reference page", k)
			}
			seen[k.Kind] = true
			if _, err := e.parse(k.Fixture); err == nil {
				t.Fatalf("GoogleSQL parses %q now: remove the entry", k.Fixture)
			}
			want := "GoogleSQL does not know " + k.Kind + " yet; not analysed"
			for _, sql := range []string{k.Fixture, "SELECT 1;\n" + k.Fixture + ";\nSELECT 2", "IF TRUE THEN\n  " + k.Fixture + ";\nEND IF"} {
				a, err := c.Analyze(ctx, sql)
				if err != nil {
					t.Fatal(err)
				}
				if a.Problem != nil || a.Skipped != want {
					t.Errorf("%q: problem %+v, skipped %q; want %q", sql, a.Problem, a.Skipped, want)
				}
			}
		})
	}
}

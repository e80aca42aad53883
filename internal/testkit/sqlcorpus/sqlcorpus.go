// Package sqlcorpus loads testdata/sql/preview_corpus.json: statements a
// JiT preview may meet, benign and hostile (comments ended by a lone
// carriage return, literals full of semicolons, BOM, NUL, Unicode
// look-alikes, pipe syntax, EXTERNAL_QUERY, DML in CTEs, EXPORT DATA,
// temporary and remote functions, …), each with what BigQuery's parser
// makes of it. gsql's tests check the kinds; the preview-safety tests of
// dfd jit and the daemon run every statement through a JiT action and
// check what reaches BigQuery.
package sqlcorpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Entry is one statement.
type Entry struct {
	Name string `json:"name"`
	SQL  string `json:"sql"`
	// Kind is gsql.Kind's String(): "query", "query with effects",
	// "statement", "script", "empty", "invalid".
	Kind string `json:"kind"`
}

// ReadOnly: a preview may run it for real.
func (e Entry) ReadOnly() bool { return e.Kind == "query" }

// Load reads the corpus.
func Load(t testing.TB) []Entry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "sql", "preview_corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Entry
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("preview_corpus.json: %v", err)
	}
	return out
}

// Generated are statements too large to keep in the file: very long and
// very deeply nested ones (all read-only queries to GoogleSQL, or over
// its size bound), by name.
func Generated() []Entry {
	nested := "SELECT x FROM (" // 2,000 levels of subqueries
	return []Entry{
		{Name: "deeply nested subqueries", SQL: strings.Repeat(nested, 2000) + "SELECT 1 AS x" + strings.Repeat(")", 2000), Kind: "query"},
		{Name: "deeply nested parentheses", SQL: strings.Repeat("(", 3000) + "SELECT 1" + strings.Repeat(")", 3000), Kind: "query"},
		{Name: "long select list", SQL: "SELECT " + strings.Repeat("1 AS a, ", 20000) + "2 AS b", Kind: "query"},
		{Name: "over the size bound, a DROP at the end", SQL: "SELECT '" + strings.Repeat("x", 300<<10) + "'; DROP TABLE t", Kind: "too large"},
	}
}

// ProbeAction is the source of a definitions/*.js file with one JiT table
// called name whose code executes every statement of entries twice — once
// plainly, once asking for its own location, reservation, labels, a huge
// byte limit and no dry run, as hostile JiT code would — then tries to
// delete a table, and returns "SELECT 1 AS done". A failing call is
// caught, so every statement is tried.
func ProbeAction(name string, entries []Entry) string {
	stmts := make([]string, len(entries))
	for i, e := range entries {
		stmts[i] = e.SQL
	}
	list, err := json.Marshal(stmts)
	if err != nil {
		panic(err) // strings always marshal
	}
	return `publish(` + strconvQuote(name) + `, { type: "table" }).jitCode(async (jctx) => {
  const statements = ` + string(list) + `;
  const hostile = { location: "EU", reservation: "projects/p/locations/EU/reservations/someone-elses",
    labels: { dfd: "prod", team: "probe" }, dryRun: false };
  for (const statement of statements) {
    for (const bigQueryOptions of [undefined, hostile]) {
      try {
        await jctx.adapter.execute({ statement, fetchResults: true, byteLimit: 1099511627776, bigQueryOptions });
      } catch (e) {}
    }
  }
  try {
    await jctx.adapter.deleteTable({ target: { database: jctx.database(), schema: jctx.schema(), name: "precious" } });
  } catch (e) {}
  return "SELECT 1 AS done";
});
`
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Hostile values ProbeAction asks for, which a preview must not use.
const (
	HostileLocation    = "EU"
	HostileReservation = "projects/p/locations/EU/reservations/someone-elses"
)

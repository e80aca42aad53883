package sqlcheck

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// checkFixture compiles testdata/projects/<name> with the real core and
// checks it against the metadata snapshot testdata/metadata/<metadata>.
func checkFixture(t *testing.T, name, metadata string, opts Options) (*Result, string) {
	t.Helper()
	root := testenv.ProjectCopy(t, testenv.Fixture(name), testenv.CoreVersion)
	p, err := project.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(root, "node_modules", "@dataform", "core", "bundle.js")
	core := &project.Core{Version: testenv.CoreVersion, Dir: filepath.Dir(bundle), BundlePath: bundle}
	res, err := compile.Run(context.Background(), p, core, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if errs := res.Errors(); len(errs) > 0 {
		t.Fatalf("the fixture has compilation errors: %v", errs)
	}
	if metadata != "" {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "metadata", metadata))
		if err != nil {
			t.Fatal(err)
		}
		md, err := offline.Parse(metadata, data, offline.Options{DefaultDatabase: res.Graph.GetProjectConfig().GetDefaultDatabase()})
		if err != nil {
			t.Fatal(err)
		}
		opts.Metadata = md
	}
	opts.Read = func(rel string) ([]byte, bool) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		return b, err == nil
	}
	out, err := Check(context.Background(), res.Graph, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out, root
}

// The planted errors of sql_check (each file says "ERROR (intended)"),
// each found where the text is, and nothing else above a hint.
func TestCheckFindsPlantedErrors(t *testing.T) {
	res, root := checkFixture(t, "sql_check", "sql_check.json", Options{})
	want := []struct {
		file, at, code, message string
		placed                  bool // at a ${…} or a ref, not the text itself
	}{
		{"definitions/marts/customer_totals.sqlx", "amount_cent)", "unknown-column", "Did you mean amount_cents?", false},
		{"definitions/marts/customer_names.sqlx", "full_nam,", "unknown-column", "full_nam", false},
		{"definitions/marts/order_flags.sqlx", "amount_cents + status", "type-mismatch", "No matching signature for operator +", false},
		{"definitions/marts/archive_counts.sqlx", "orders_archive", "unknown-table", "orders_archive", false},
		{"definitions/marts/by_country.js", "contry", "unknown-column", "Did you mean country?", false},
		{"definitions/staging/stg_refunds.sqlx", `${money.cents("refund_amount")}`, "unknown-column", "refund_amount", true},
	}
	found := map[int]bool{}
	for _, f := range res.Findings {
		if f.Severity == Hint {
			continue
		}
		matched := false
		for i, w := range want {
			if f.File != w.file {
				continue
			}
			text, err := os.ReadFile(filepath.Join(root, w.file))
			if err != nil {
				t.Fatal(err)
			}
			off := strings.Index(string(text), w.at)
			if off < 0 || strings.Count(string(text), w.at) != 1 {
				t.Fatalf("%s: %q is not in the file once", w.file, w.at)
			}
			line := strings.Count(string(text[:off]), "\n")
			col := len(utf16.Encode([]rune(string(text[strings.LastIndexByte(string(text[:off]), '\n')+1 : off]))))
			matched = true
			found[i] = true
			if f.Line != line || f.Col != col || f.Code != w.code || !strings.Contains(f.Message, w.message) || f.Severity != Error || f.MappedToPlacement != w.placed {
				t.Errorf("%s: got %s %d:%d %s %q (placed %v), want error %s at %d:%d (%q) containing %q (placed %v)",
					w.file, f.Severity, f.Line, f.Col, f.Code, f.Message, f.MappedToPlacement, w.code, line, col, w.at, w.message, w.placed)
			}
		}
		if !matched {
			t.Errorf("unexpected finding: %s:%d:%d: %s: %s [%s] (%s)", f.File, f.Line+1, f.Col+1, f.Severity, f.Message, f.Code, f.Action)
		}
	}
	for i, w := range want {
		if !found[i] {
			t.Errorf("%s: no finding for %q", w.file, w.at)
		}
	}

	// Scripts are analysed: the operation's DECLARE, SET and IF, and the
	// incremental table whose pre_operations DECLARE a variable, in both
	// variants. Nothing is left to hint about.
	for _, f := range res.Findings {
		if f.Severity == Hint {
			t.Errorf("hint %s:%d: %s", f.File, f.Line+1, f.Message)
		}
	}
	// Schemas flow through the DAG: the inferred tables' columns.
	for target, cols := range map[string]string{
		"acme-shop.shop.stg_orders":     "order_id INT64, customer_id INT64, amount_cents INT64, status STRING, ordered_at TIMESTAMP, items ARRAY<STRUCT<sku STRING, qty INT64, price NUMERIC>>, ship_country STRING",
		"acme-shop.shop.daily_revenue":  "order_date DATE, revenue_cents INT64, customers INT64",
		"acme-shop.shop.stg_events":     "event_name STRING, user_id STRING, page STRING, event_date DATE, param_key STRING, param_int INT64",
		"acme-shop.shop.weekly_revenue": "week DATE, revenue_cents INT64",
	} {
		var got []string
		for _, c := range res.Schemas[target] {
			got = append(got, c.Name+" "+c.Type.String())
		}
		if strings.Join(got, ", ") != cols {
			t.Errorf("%s: schema %q, want %q", target, strings.Join(got, ", "), cols)
		}
	}
	t.Logf("analysed %d statements, skipped %d", res.Analysed, res.Skipped)
}

// Without metadata, every statement reading a declaration is skipped: no
// finding above a hint except those that need no warehouse table.
func TestCheckWithoutMetadataOnlyHints(t *testing.T) {
	res, _ := checkFixture(t, "sql_check", "", Options{})
	for _, f := range res.Findings {
		if f.Severity != Hint && f.File != "definitions/marts/archive_counts.sqlx" {
			t.Errorf("%s:%d:%d: %s: %s", f.File, f.Line+1, f.Col+1, f.Severity, f.Message)
		}
	}
	if len(res.Unknown) == 0 || res.Unknown["acme-raw.raw.orders"] == nil {
		t.Errorf("unknown tables %v, want acme-raw.raw.orders among them", res.Unknown)
	}
}

// A warehouse that says a table does not exist is believed when it is
// BigQuery itself (MissingIsCertain): an error at the table's name. A
// snapshot may be partial: a warning there when it lists the table's
// dataset in full, else the statement's hint.
func TestCheckMissingTable(t *testing.T) {
	g := &dataformpb.CompiledGraph{
		ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "p"},
		Tables: []*dataformpb.Table{{
			Target: &dataformpb.Target{Database: "p", Schema: "d", Name: "t"}, FileName: "definitions/t.sqlx",
			EnumType: dataformpb.TableType_VIEW, Query: "SELECT a\nFROM `p.raw.gone`",
		}},
	}
	for _, tc := range []struct {
		name, snapshot string
		certain        bool
		want           string
	}{
		{"BigQuery", `{"tables": []}`, true, "error unknown-table at 2:6"},
		{"snapshot listing the dataset", `{"tables": [], "datasets": [{"database": "p", "schema": "raw"}]}`, false, "warning unknown-table at 2:6"},
		{"snapshot of other datasets", `{"tables": [], "datasets": [{"database": "p", "schema": "other"}]}`, false, "hint sql-skipped at 0:0"},
	} {
		md, err := offline.Parse("snapshot", []byte(tc.snapshot), offline.Options{DefaultDatabase: "p"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Check(context.Background(), g, Options{Metadata: md, MissingIsCertain: tc.certain})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != 1 {
			t.Fatalf("%s: findings %+v", tc.name, res.Findings)
		}
		f := res.Findings[0]
		if got := fmt.Sprintf("%s %s at %d:%d", f.Severity, f.Code, f.StatementLine, f.StatementColumn); got != tc.want {
			t.Errorf("%s: %s (%q), want %s", tc.name, got, f.Message, tc.want)
		}
		if f.Code == "unknown-table" && !strings.HasPrefix(f.Message, "Table not found: p.raw.gone (") {
			t.Errorf("%s: message %q", tc.name, f.Message)
		}
	}
}

// A table a snapshot lacks, that no action creates, gets a warning at its
// name when the project declares it (whether read by ref() or by name),
// and when the snapshot lists its dataset in full; any other keeps the
// statement's hint.
func TestCheckAbsentTableAtItsName(t *testing.T) {
	gone := &dataformpb.Target{Database: "p", Schema: "raw", Name: "gone"}
	g := &dataformpb.CompiledGraph{
		ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "p"},
		Declarations:  []*dataformpb.Declaration{{Target: gone, FileName: "definitions/gone.sqlx"}},
		Tables: []*dataformpb.Table{{
			Target: &dataformpb.Target{Database: "p", Schema: "d", Name: "by_ref"}, FileName: "definitions/by_ref.sqlx",
			EnumType: dataformpb.TableType_VIEW, Query: "SELECT a FROM `p.raw.gone`", DependencyTargets: []*dataformpb.Target{gone},
		}, {
			Target: &dataformpb.Target{Database: "p", Schema: "d", Name: "by_name"}, FileName: "definitions/by_name.sqlx",
			EnumType: dataformpb.TableType_VIEW, Query: "SELECT a FROM `p.raw.gone`",
		}, {
			Target: &dataformpb.Target{Database: "p", Schema: "d", Name: "undeclared"}, FileName: "definitions/undeclared.sqlx",
			EnumType: dataformpb.TableType_VIEW, Query: "SELECT a FROM `p.raw.archive`",
		}},
	}
	hint, warning := "hint sql-skipped at 0:0", "warning unknown-table at 1:15"
	for _, tc := range []struct {
		snapshot string
		want     map[string]string
	}{
		{`{"tables": []}`, map[string]string{"p.d.by_ref": warning, "p.d.by_name": warning, "p.d.undeclared": hint}},
		{`{"tables": [], "datasets": [{"schema": "raw"}]}`, map[string]string{"p.d.by_ref": warning, "p.d.by_name": warning, "p.d.undeclared": warning}},
	} {
		md, err := offline.Parse("snapshot", []byte(tc.snapshot), offline.Options{DefaultDatabase: "p"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Check(context.Background(), g, Options{Metadata: md})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, f := range res.Findings {
			got[f.Action] = fmt.Sprintf("%s %s at %d:%d", f.Severity, f.Code, f.StatementLine, f.StatementColumn)
		}
		if !maps.Equal(got, tc.want) {
			t.Errorf("%s: findings by action %v, want %v", tc.snapshot, got, tc.want)
		}
	}
}

// A Checker re-analyses only what changed: the second check of the same
// graph remembers every statement and finds the same; after an edit of an
// upstream action's output schema, its dependents are analysed again and
// see the new schema.
func TestCheckerRemembers(t *testing.T) {
	root := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	compileGraph := func() *dataformpb.CompiledGraph {
		p, err := project.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		bundle := filepath.Join(root, "node_modules", "@dataform", "core", "bundle.js")
		res, err := compile.Run(context.Background(), p, &project.Core{Version: testenv.CoreVersion, Dir: filepath.Dir(bundle), BundlePath: bundle}, compile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Graph
	}
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "metadata", "sql_check.json"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := offline.Parse("sql_check.json", data, offline.Options{DefaultDatabase: "acme-shop"})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Metadata: md, MetadataID: "snapshot sql_check.json", Read: func(rel string) ([]byte, bool) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		return b, err == nil
	}}
	k := NewChecker()
	ctx := context.Background()
	g := compileGraph()
	first, err := k.Check(ctx, g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.Remembered != 0 {
		t.Fatalf("first check remembered %d", first.Remembered)
	}
	second, err := k.Check(ctx, g, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Only what declares something other than variables by a DECLARE of
	// its own runs again, as such a declaration is made by analysing it:
	// stg_orders's CREATE TEMP FUNCTION, and guard's script (it declares
	// n among other statements). weekly_revenue's DECLARE, in each
	// variant, is remembered and its variable declared again.
	if second.Ran != 2 || second.Remembered != first.Ran-2 {
		t.Errorf("second check: GoogleSQL ran %d times, %d remembered; the first ran %d", second.Ran, second.Remembered, first.Ran)
	}
	if !sameFindings(first.Findings, second.Findings) {
		t.Errorf("findings differ:\n%v\n%v", first.Findings, second.Findings)
	}

	// Fix the upstream column name customer_totals misspells: stg_orders
	// now outputs amount_cent, and customer_totals's error goes away.
	file := filepath.Join(root, "definitions", "staging", "stg_orders.sqlx")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(text), "AS amount_cents,", "AS amount_cent,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	g3 := compileGraph()
	third, err := k.Check(ctx, g3, opts)
	if err != nil {
		t.Fatal(err)
	}
	// What the checker remembered (analyses, DECLAREs' variables, the
	// verdicts on queries, the source files with their findings' places)
	// gives what a checker that remembers nothing finds.
	cold, err := NewChecker().Check(ctx, g3, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFindings(third.Findings, cold.Findings) || !reflect.DeepEqual(third.Schemas, cold.Schemas) {
		t.Errorf("after the edit, the remembering checker found\n%v\nand a new one\n%v", third.Findings, cold.Findings)
	}
	if third.Ran == 0 || third.Ran >= first.Ran {
		t.Errorf("after the edit: GoogleSQL ran %d times (a cold check: %d)", third.Ran, first.Ran)
	}
	t.Logf("cold: %d analyses; same graph: %d; after an upstream edit: %d", first.Ran, second.Ran, third.Ran)
	for _, f := range third.Findings {
		if f.File == "definitions/marts/customer_totals.sqlx" && f.Severity == Error {
			t.Errorf("customer_totals still has %q after its upstream changed", f.Message)
		}
	}
	found := false
	for _, f := range third.Findings {
		// order_flags read amount_cents: now it is the one with an unknown column.
		if f.File == "definitions/marts/order_flags.sqlx" && f.Code == "unknown-column" && strings.Contains(f.Message, "amount_cents") {
			found = true
		}
	}
	if !found {
		t.Errorf("order_flags: no unknown-column finding for amount_cents after the upstream rename: %v", third.Findings)
	}
}

func sameFindings(a, b []Finding) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
)

// Column rename (textDocument/prepareRename, textDocument/rename on an
// output column's name) driven by the fake editor against the real server
// on daemon/testdata/column_rename, whose every table the metadata
// snapshot (or the project's own SQL) gives a schema: the edited project
// must compile with dfd and with the official CLI, and the analysis must
// find every dependent's columns as they were.

// columnRenameSession starts a server with metadata and workspace edits
// on a copy of the fixture with extra files added.
func columnRenameSession(t *testing.T, extra map[string]string) (*session, string) {
	t.Helper()
	root := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "daemon", "testdata", "column_rename"), testenv.CoreVersion)
	for rel, text := range extra {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "snapshot", "snapshot": sqlCheckSnapshot()},
	}})
	cfg.Capabilities = fakeeditor.WorkspaceEditCapabilities
	s := startServer(t, serverConfig{editor: cfg})
	s.init(t, root)
	return s, root
}

// awaitPrepare asks prepareRename at pos until the SQL check has the
// column (the first check runs after the first compile).
func (s *session) awaitPrepare(t *testing.T, path string, pos protocol.Position) (string, error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ph, _, err := s.prepareRename(t, path, pos)
		if err == nil || time.Now().After(deadline) {
			return ph, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// columnsOf are an action's output columns ("name TYPE") as dfd/lineage
// has them.
func (s *session) columnsOf(t *testing.T, path string) []string {
	t.Helper()
	var res lsp.LineageResult
	params := map[string]any{"textDocument": map[string]any{"uri": uri.File(path)}}
	if err := s.ed.Call(s.ctx, lsp.MethodLineage, params, &res); err != nil {
		t.Fatalf("dfd/lineage %s: %v", filepath.Base(path), err)
	}
	var out []string
	for _, c := range res.Columns {
		out = append(out, c.Name+" "+c.Type)
	}
	if len(out) == 0 {
		t.Fatalf("dfd/lineage %s: no columns (%s)", filepath.Base(path), res.Reason)
	}
	return out
}

// dfdCompiles compiles root with dfd's own compile; it must have no
// errors.
func dfdCompiles(t *testing.T, root string) {
	t.Helper()
	out, err := exec.Command(dfdBin(t), "compile", root, "--json").Output()
	if err != nil {
		t.Fatalf("dfd compile: %v\n%s", err, out)
	}
	var g map[string]any
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatalf("dfd compile printed no graph: %v", err)
	}
	if ge, ok := g["graphErrors"].(map[string]any); ok && len(ge) > 0 {
		t.Fatalf("dfd compile reports errors: %v", ge)
	}
}

func TestRenameColumn(t *testing.T) {
	const (
		stg    = "definitions/staging/stg_orders.sqlx"
		list   = "definitions/marts/order_list.sqlx"
		joined = "definitions/marts/customer_orders.sqlx"
		known  = "definitions/assertions/known_customers.sqlx"
		daily  = "definitions/marts/daily_orders.sqlx"
	)
	cases := []struct {
		name, file, marker string
		delta              int
		old, new           string
		// want: per file, texts it must have after the rename; gone:
		// texts it must no longer have.
		want, gone map[string][]string
	}{
		{name: "alias, two dependents and an assertion", file: stg, marker: "AS cust_id", delta: 4, old: "cust_id", new: "buyer_id",
			want: map[string][]string{
				stg:    {"customer_id AS buyer_id,", `nonNull: ["buyer_id"]`, `clusterBy: ["buyer_id"]`, `buyer_id: "The customer who ordered."`},
				joined: {"ON o.buyer_id = c.customer_id"},
				list:   {"SELECT order_id, buyer_id AS cust_id, amount", "WHERE buyer_id IS NOT NULL"},
				known:  {"SELECT order_id, buyer_id AS cust_id", "WHERE buyer_id < 0"},
			},
			gone: map[string][]string{stg: {"cust_id"}, joined: {"cust_id"}}},
		{name: "bare column gets an alias", file: stg, marker: "SELECT\n  order_id", delta: 9, old: "order_id", new: "order_key",
			want: map[string][]string{
				stg:    {"  order_id AS order_key,", `uniqueKey: ["order_key"]`},
				joined: {"COUNT(o.order_key) AS orders"},
				list:   {"SELECT order_key AS order_id, cust_id"},
				known:  {"SELECT order_key AS order_id, cust_id"},
			},
			gone: map[string][]string{joined: {"order_id"}}},
		{name: "config uniqueKey, partitionBy, clusterBy", file: daily, marker: "AS order_day", delta: 4, old: "order_day", new: "order_date",
			want: map[string][]string{
				daily: {`uniqueKey: ["order_date"]`, `partitionBy: "order_date"`, `clusterBy: ["order_date"]`, "AS order_date, COUNT(*)"},
			},
			gone: map[string][]string{daily: {"order_day"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, root := columnRenameSession(t, nil)
			abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
			path := abs(tc.file)
			pos, err := s.ed.Pos(path, tc.marker, tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			if ph, err := s.awaitPrepare(t, path, pos); err != nil || ph != tc.old {
				t.Fatalf("prepareRename at %q: %q, %v; want %q", tc.marker, ph, err, tc.old)
			}
			dependents := []string{list, joined}
			before := map[string][]string{}
			for _, d := range dependents {
				before[d] = s.columnsOf(t, abs(d))
			}
			we, err := s.ed.Rename(s.ctx, path, pos, tc.new)
			if err != nil {
				t.Fatalf("rename %s → %s: %v", tc.old, tc.new, err)
			}
			if err := s.ed.ApplyEdit(s.ctx, we); err != nil {
				t.Fatalf("applying the rename: %v", err)
			}
			for rel, texts := range tc.want {
				b, _ := os.ReadFile(abs(rel))
				for _, w := range texts {
					if !strings.Contains(string(b), w) {
						t.Errorf("%s does not have %q after the rename:\n%s", rel, w, b)
					}
				}
				for _, g := range tc.gone[rel] {
					if strings.Contains(string(b), g) {
						t.Errorf("%s still has %q after the rename:\n%s", rel, g, b)
					}
				}
			}
			cliGraph(t, root)
			dfdCompiles(t, root)
			// The analysis of the renamed project: the action has the
			// new name, every dependent its old columns.
			deadline := time.Now().Add(60 * time.Second)
			for {
				cols := strings.Join(s.columnsOf(t, path), ",")
				if strings.Contains(cols, tc.new+" ") && !strings.Contains(cols, tc.old+" ") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s's columns after the rename: %s", tc.file, cols)
				}
				time.Sleep(200 * time.Millisecond)
			}
			for _, d := range dependents {
				if got := s.columnsOf(t, abs(d)); strings.Join(got, ",") != strings.Join(before[d], ",") {
					t.Errorf("%s's columns changed: %v, were %v", d, got, before[d])
				}
			}
		})
	}
}

// Column renames that cannot be safe are refused, and say where.
func TestRenameColumnRefusals(t *testing.T) {
	cases := []struct {
		name  string
		extra map[string]string
		new   string
		want  []string
	}{
		{"a SELECT * dependent", map[string]string{"definitions/marts/all_orders.sqlx": "config { type: \"view\" }\n\nSELECT *\nFROM ${ref(\"stg_orders\")}\n"},
			"buyer_id", []string{"through *", "definitions/marts/all_orders.sqlx:3:"}},
		{"a JiT dependent", map[string]string{"definitions/jit_orders.js": "publish(\"jit_orders\", { type: \"table\", dependencies: [\"stg_orders\"] }).jitCode(async (jctx) => {\n  return { query: `SELECT cust_id FROM ${jctx.ref(\"stg_orders\")}` };\n});\n"},
			"buyer_id", []string{"JiT", "definitions/jit_orders.js:1:"}},
		{"a dependent reading an unknown table", map[string]string{"definitions/marts/mixed.sqlx": "config { type: \"view\" }\n\nSELECT o.cust_id, x.n\nFROM ${ref(\"stg_orders\")} AS o\nCROSS JOIN `acme-raw.raw.nowhere` AS x\n"},
			"buyer_id", []string{"was not analysed", "acme-raw.raw.nowhere", "definitions/marts/mixed.sqlx:"}},
		{"a collision", nil, "amount", []string{"already has a column amount", "definitions/staging/stg_orders.sqlx:15:"}},
		{"a reference inside ${…}", map[string]string{"definitions/marts/templated.sqlx": "config { type: \"view\" }\n\nSELECT order_id,\n  ${\"cust_id\"} AS c\nFROM ${ref(\"stg_orders\")}\n"},
			"buyer_id", []string{"cannot edit", "definitions/marts/templated.sqlx:4:"}},
		{"not a column name", nil, "buyer id", []string{"letters, digits"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, root := columnRenameSession(t, tc.extra)
			path := filepath.Join(root, "definitions", "staging", "stg_orders.sqlx")
			pos, err := s.ed.Pos(path, "AS cust_id", 4)
			if err != nil {
				t.Fatal(err)
			}
			if ph, err := s.awaitPrepare(t, path, pos); err != nil || ph != "cust_id" {
				t.Fatalf("prepareRename: %q, %v", ph, err)
			}
			s.expectRenameRefused(t, path, pos, tc.new, tc.want...)
		})
	}
}

// prepareRename offers a column rename only on an output column's name.
func TestPrepareRenameColumnPlaces(t *testing.T) {
	s, root := columnRenameSession(t, nil)
	path := filepath.Join(root, "definitions", "marts", "customer_orders.sqlx")
	at := func(marker string, delta int) protocol.Position {
		pos, err := s.ed.Pos(path, marker, delta)
		if err != nil {
			t.Fatal(err)
		}
		return pos
	}
	if ph, err := s.awaitPrepare(t, path, at("AS orders", 4)); err != nil || ph != "orders" {
		t.Fatalf("on an alias: %q, %v", ph, err)
	}
	if ph, _, err := s.prepareRename(t, path, at("c.full_name", 4)); err != nil || ph != "full_name" {
		t.Errorf("on a bare qualified item: %q, %v", ph, err)
	}
	for _, m := range []struct {
		marker string
		delta  int
	}{{"COUNT(o.order_id)", 9}, {"ON o.cust_id", 6}, {"GROUP BY c.customer_id", 12}} {
		if ph, _, err := s.prepareRename(t, path, at(m.marker, m.delta)); err == nil {
			t.Errorf("at %q: offered a rename of %q", m.marker, ph)
		}
	}
}

package daemon_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Rename (textDocument/prepareRename, textDocument/rename) driven by the
// fake editor against the real server on the fixture projects; the result
// is compiled by the official CLI, whose graph must be the one it printed
// for the original project with the name substituted (computed here from
// that graph, not written by hand).

// cliGraph compiles dir with the official CLI (`dataform compile --json`)
// and returns the graph; the compile must succeed without errors.
func cliGraph(t *testing.T, dir string, flags ...string) map[string]any {
	t.Helper()
	args := append([]string{testenv.CLIBundle(t), "compile", dir, "--json"}, flags...)
	cmd := exec.Command(testenv.Node(t), args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the official CLI failed on %s: %v\nstderr:\n%s\nstdout:\n%.2000s", dir, err, stderr.String(), stdout.String())
	}
	var g map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &g); err != nil {
		t.Fatalf("the CLI printed no graph: %v\n%s", err, stdout.String())
	}
	if ge, ok := g["graphErrors"].(map[string]any); ok && len(ge) > 0 {
		t.Fatalf("the CLI reports errors: %v", ge)
	}
	return g
}

// renamedGraph is graph g as it should compile after action old became
// new: every target named old — or one of its built-in assertions,
// "<schema>_old_assertions_…", those whose parentAction is old — named
// new, SQL that names `….old` naming `….new`, the JiT code's "old"
// literals "new", and renamed files' names. (Only old's own assertions:
// "shop_dim_customers_assertions_…" contains "_customers_assertions_" but
// belongs to dim_customers, which a rename of customers leaves be.)
func renamedGraph(g any, old, new string, files map[string]string) any {
	names := map[string]string{old: new}
	if m, ok := g.(map[string]any); ok {
		list, _ := m["assertions"].([]any)
		for _, a := range list {
			a, _ := a.(map[string]any)
			pa, _ := a["parentAction"].(map[string]any)
			tg, _ := a["target"].(map[string]any)
			if n, ok := tg["name"].(string); ok && pa["name"] == old {
				names[n] = strings.Replace(n, "_"+old+"_assertions_", "_"+new+"_assertions_", 1)
			}
		}
	}
	var walk func(v any, key string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			_, hasSchema := x["schema"]
			_, hasDB := x["database"]
			for k, val := range x {
				if n, ok := val.(string); ok && k == "name" && (hasSchema || hasDB) {
					if to, ok := names[n]; ok {
						val = to
					}
				} else {
					val = walk(val, k)
				}
				out[k] = val
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e, key)
			}
			return out
		case string:
			if key == "fileName" {
				if to, ok := files[x]; ok {
					return to
				}
				return x
			}
			x = strings.ReplaceAll(x, "."+old+"`", "."+new+"`")
			if key == "jitCode" {
				x = strings.ReplaceAll(x, `"`+old+`"`, `"`+new+`"`)
				x = strings.ReplaceAll(x, `\"`+old+`\"`, `\"`+new+`\"`)
			}
			return x
		}
		return v
	}
	return walk(g, "")
}

// sortedGraph orders a graph's action lists by target: a renamed file is
// compiled in another order.
func sortedGraph(g any) any {
	m, ok := g.(map[string]any)
	if !ok {
		return g
	}
	for _, k := range []string{"tables", "operations", "assertions", "declarations", "tests", "notebooks", "dataPreparations", "targets"} {
		list, ok := m[k].([]any)
		if !ok {
			continue
		}
		key := func(v any) string {
			if k == "targets" {
				b, _ := json.Marshal(v)
				return string(b)
			}
			b, _ := json.Marshal(v.(map[string]any)["target"])
			if n, ok := v.(map[string]any)["name"].(string); ok {
				return string(b) + n
			}
			return string(b)
		}
		sort.SliceStable(list, func(i, j int) bool { return key(list[i]) < key(list[j]) })
	}
	return m
}

func renameEditorConfig() serverConfig {
	return serverConfig{editor: fakeeditor.Config{Capabilities: fakeeditor.WorkspaceEditCapabilities}}
}

// prepareRename asks what a rename at marker+delta of file would rename.
func (s *session) prepareRename(t *testing.T, path string, pos protocol.Position) (placeholder string, rng protocol.Range, err error) {
	t.Helper()
	var res struct {
		Range       protocol.Range `json:"range"`
		Placeholder string         `json:"placeholder"`
	}
	err = s.ed.Call(s.ctx, protocol.MethodTextDocumentPrepareRename, map[string]any{"textDocument": map[string]any{"uri": uri.File(path)}, "position": pos}, &res)
	return res.Placeholder, res.Range, err
}

// fileRenames are the files a workspace edit renames, root-relative.
func fileRenames(t *testing.T, root string, we *fakeeditor.WorkspaceEdit) map[string]string {
	out := map[string]string{}
	for _, c := range we.DocumentChanges {
		if c.Kind == "rename" {
			from, _ := filepath.Rel(root, uri.URI(c.OldURI).FsPath())
			to, _ := filepath.Rel(root, uri.URI(c.NewURI).FsPath())
			out[filepath.ToSlash(from)] = filepath.ToSlash(to)
		}
	}
	return out
}

func TestRenameActionsCompileWithTheCLI(t *testing.T) {
	cases := []struct {
		name, fixture, file, marker string
		delta                       int
		old, new                    string
		open                        bool // rename with the file open in the editor (versioned edits of a buffer)
		fileRenamed                 string
	}{
		// An action named by its file: the file is renamed; ${ref("x")}
		// in SQLX.
		{name: "sqlx named by its file", fixture: "sqlx_warehouse", file: "definitions/marts/dim_customers.sqlx", marker: `ref("stg_orders")`, delta: 5,
			old: "stg_orders", new: "staging_orders", open: true, fileRenamed: "definitions/staging/staging_orders.sqlx"},
		// resolve(), dependencies: […], the assertion's dependencies.
		{name: "resolve and dependencies", fixture: "sqlx_warehouse", file: "definitions/ops/grant_reporting_access.sqlx", marker: `resolve("dim_customers")`, delta: 9,
			old: "dim_customers", new: "customer_dimension", fileRenamed: "definitions/marts/customer_dimension.sqlx"},
		// A declaration named in its config; ref("schema", "name").
		{name: "declaration with a config name", fixture: "sqlx_warehouse", file: "definitions/sources/raw_customers.sqlx", marker: `name: "customers"`, delta: 7,
			old: "customers", new: "shop_customers"},
		// JavaScript: publish("x"), ctx.ref, dependencies, dependencyTargets
		// objects, a test's input, SQLX ${ref}.
		{name: "javascript action", fixture: "js_api", file: "definitions/sessions.js", marker: `publish("sessions"`, delta: 9,
			old: "sessions", new: "user_sessions"},
		// actions.yaml: an entry named by its filename (the .sql file and
		// the filename are renamed), dependencyTargets entries.
		{name: "actions.yaml filename", fixture: "actions_yaml", file: "definitions/actions.yaml", marker: "inventory/no_orphan_warehouses.sql", delta: 12,
			old: "no_orphan_warehouses", new: "orphan_warehouse_check", fileRenamed: "definitions/inventory/orphan_warehouse_check.sql"},
		// actions.yaml name with a dataset; ref("schema", "name") in SQLX.
		{name: "actions.yaml name", fixture: "actions_yaml", file: "definitions/suppliers/reorder_suggestions.sqlx", marker: `"supplier_lead_times"`, delta: 1,
			old: "supplier_lead_times", new: "lead_times"},
		// JiT code: jctx.ref in .jitCode(…), dependencyTargets, and an
		// SQLX ref to a JiT table.
		{name: "jit action", fixture: "jit_actions", file: "definitions/jit/daily_clicks.js", marker: `publish("daily_clicks"`, delta: 9,
			old: "daily_clicks", new: "clicks_per_day"},
		// JiT code given as a string (with escaped quotes) refs it.
		{name: "jit code string", fixture: "jit_function_shapes", file: "definitions/shapes/operations.js", marker: `name: "campaigns"`, delta: 7,
			old: "campaigns", new: "ad_campaigns", fileRenamed: "definitions/sources/ad_campaigns.sqlx"},
		// resolve({database, schema, name}).
		{name: "resolve object", fixture: "cli_overrides", file: "definitions/export_to_ads.sqlx", marker: `name: "campaign_roi"`, delta: 7,
			old: "campaign_roi", new: "roi_by_campaign", fileRenamed: "definitions/roi_by_campaign.sqlx"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := testenv.ProjectCopy(t, testenv.Fixture(tc.fixture), testenv.CoreVersion)
			before := cliGraph(t, root)
			s := startServer(t, renameEditorConfig())
			s.init(t, root)
			s.awaitPreviewChanged(t, 0, "")
			path := filepath.Join(root, filepath.FromSlash(tc.file))
			if tc.open {
				if err := s.ed.Open(s.ctx, path); err != nil {
					t.Fatal(err)
				}
			}
			pos, err := s.ed.Pos(path, tc.marker, tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			ph, _, err := s.prepareRename(t, path, pos)
			if err != nil || ph != tc.old {
				t.Fatalf("prepareRename at %q: %q, %v; want %q", tc.marker, ph, err, tc.old)
			}
			we, err := s.ed.Rename(s.ctx, path, pos, tc.new)
			if err != nil {
				t.Fatalf("rename %s → %s: %v", tc.old, tc.new, err)
			}
			if err := s.ed.ApplyEdit(s.ctx, we); err != nil {
				t.Fatalf("applying the rename: %v", err)
			}
			renamed := fileRenames(t, root, we)
			if tc.fileRenamed != "" && !containsValue(renamed, tc.fileRenamed) {
				t.Errorf("file renames %v, want one to %s", renamed, tc.fileRenamed)
			}
			if tc.fileRenamed == "" && len(renamed) > 0 {
				t.Errorf("unexpected file renames %v", renamed)
			}
			if tc.open {
				if err := s.ed.Save(s.ctx, path); err != nil {
					t.Fatal(err)
				}
			}
			after := cliGraph(t, root)
			want := sortedGraph(renamedGraph(before, tc.old, tc.new, renamed))
			if diff := cmp.Diff(want, sortedGraph(after)); diff != "" {
				t.Errorf("the CLI's graph after the rename differs from the original's with %s → %s (-want +got):\n%s", tc.old, tc.new, diff)
			}
		})
	}
}

func containsValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

// An includes constant and an includes function renamed across the
// project: the CLI compiles the same graph.
func TestRenameIncludesMembersCompileWithTheCLI(t *testing.T) {
	cases := []struct {
		file, marker string
		delta        int
		old, new     string
	}{
		{"definitions/marts/fct_orders.sqlx", "constants.PAID_STATUSES", 10, "PAID_STATUSES", "PAID_ORDER_STATUSES"},
		{"includes/sql.js", "function inList", 9, "inList", "inValues"},
	}
	root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	before := cliGraph(t, root)
	s := startServer(t, renameEditorConfig())
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	for _, tc := range cases {
		path := filepath.Join(root, filepath.FromSlash(tc.file))
		pos, err := s.ed.Pos(path, tc.marker, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		if ph, _, err := s.prepareRename(t, path, pos); err != nil || ph != tc.old {
			t.Fatalf("prepareRename at %q: %q, %v", tc.marker, ph, err)
		}
		we, err := s.ed.Rename(s.ctx, path, pos, tc.new)
		if err != nil {
			t.Fatalf("rename %s: %v", tc.old, err)
		}
		files := map[string]bool{}
		for _, c := range we.DocumentChanges {
			if c.TextDocument != nil {
				rel, _ := filepath.Rel(root, uri.URI(c.TextDocument.URI).FsPath())
				files[filepath.ToSlash(rel)] = true
			}
		}
		if err := s.ed.ApplyEdit(s.ctx, we); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s → %s edited %v", tc.old, tc.new, files)
		if len(files) < 2 {
			t.Errorf("renaming %s edited only %v", tc.old, files)
		}
		for rel := range files {
			b, _ := os.ReadFile(filepath.Join(root, rel))
			if strings.Contains(string(b), tc.old) {
				t.Errorf("%s still mentions %s after the rename:\n%s", rel, tc.old, b)
			}
		}
	}
	after := cliGraph(t, root)
	if diff := cmp.Diff(sortedGraph(before), sortedGraph(after)); diff != "" {
		t.Errorf("renaming includes members changed the graph (-before +after):\n%s", diff)
	}
}

// Renames that cannot be complete are refused, and say where.
func TestRenameRefusals(t *testing.T) {
	type refusal struct {
		fixture, file, marker string
		delta                 int
		new                   string
		want                  []string // in the error message
	}
	cases := map[string]refusal{
		"collision": {"sqlx_warehouse", "definitions/marts/dim_customers.sqlx", `ref("stg_orders")`, 5, "stg_customers",
			[]string{"an action named stg_customers already exists", "definitions/staging/stg_customers.sqlx:1"}},
		"computed reference": {"js_api", "definitions/reporting/daily_active_users.sqlx", "config", 1, "dau",
			[]string{"computed", "definitions/quality/checks.js:17: ctx.ref(table)"}},
		"computed definition": {"js_api", "definitions/reporting/funnel_test.sqlx", `input "stg_page_view_events"`, 8, "stg_page_views",
			[]string{"its name is computed", "definitions/staging_events.js:4: publish(events.stagingName(eventType.name)"}},
		"hard-coded table name": {"actions_yaml", "definitions/actions.yaml", "- name: stock_levels", 8, "stock_on_hand",
			[]string{"definitions/inventory/low_stock.sql:3: FROM `acme-logistics.inventory.stock_levels`", "definitions/inventory/no_orphan_warehouses.sql:2:"}},
		"invalid name": {"sqlx_warehouse", "definitions/marts/dim_customers.sqlx", `ref("stg_orders")`, 5, "stg.orders",
			[]string{"letters, digits"}},
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			root := testenv.ProjectCopy(t, testenv.Fixture(tc.fixture), testenv.CoreVersion)
			s := startServer(t, renameEditorConfig())
			s.init(t, root)
			s.awaitPreviewChanged(t, 0, "")
			path := filepath.Join(root, filepath.FromSlash(tc.file))
			pos, err := s.ed.Pos(path, tc.marker, tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			s.expectRenameRefused(t, path, pos, tc.new, tc.want...)
		})
	}
}

// expectRenameRefused renames at pos in path to newName and fails t unless
// the server refuses, saying each of want.
func (s *session) expectRenameRefused(t *testing.T, path string, pos protocol.Position, newName string, want ...string) {
	t.Helper()
	we, err := s.ed.Rename(s.ctx, path, pos, newName)
	if err == nil {
		t.Fatalf("rename to %s was not refused: %+v", newName, we)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not say %q", err, w)
		}
	}
	t.Logf("refused: %v", err)
}

package daemon_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
	"github.com/dfdtools/dfd/workspace"
)

// dfd/preview of an incremental table: query, incremental query and both
// sets of pre/post operations, plus type, tags and dependencies.
func TestPreviewIncremental(t *testing.T) {
	root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	s := startServer(t, serverConfig{})
	s.init(t, root)
	file := filepath.Join(root, "definitions", "marts", "fct_orders.sqlx")
	res := s.preview(t, file)
	if len(res.Actions) != 1 {
		t.Fatalf("actions: %+v", res.Actions)
	}
	a := res.Actions[0]
	if a.Kind != workspace.KindIncremental || a.Target.Name != "fct_orders" || a.Jit || a.JitPreview != nil {
		t.Errorf("action: %+v", a.Action)
	}
	if strings.Join(a.Tags, ",") != "marts,hourly" {
		t.Errorf("tags %v", a.Tags)
	}
	var deps []string
	for _, d := range a.Dependencies {
		deps = append(deps, d.Name)
	}
	if !contains(deps, "stg_orders") || !contains(deps, "stg_customers") {
		t.Errorf("dependencies %v", deps)
	}
	q := a.SQL
	switch {
	case !strings.Contains(q.Query, "FROM `") || strings.Contains(q.Query, "watermark"):
		t.Errorf("query: %s", q.Query)
	case !strings.Contains(q.IncrementalQuery, "AND o.updated_at > watermark"):
		t.Errorf("incremental query: %s", q.IncrementalQuery)
	case len(q.PreOps) != 1 || !strings.Contains(q.PreOps[0], `TIMESTAMP("1970-01-01")`):
		t.Errorf("pre ops: %q", q.PreOps)
	case len(q.IncrementalPreOps) != 1 || !strings.Contains(q.IncrementalPreOps[0], "MAX(updated_at)"):
		t.Errorf("incremental pre ops: %q", q.IncrementalPreOps)
	case len(q.PostOps) != 1 || len(q.IncrementalPostOps) != 1:
		t.Errorf("post ops: %q / %q", q.PostOps, q.IncrementalPostOps)
	}
	if res.CoreVersion != testenv.CoreVersion || res.Version < 1 {
		t.Errorf("preview header: %+v", res)
	}
	// Assertions and operations.
	for file, kind := range map[string]string{
		"definitions/assertions/assert_revenue_not_negative.sqlx": workspace.KindAssertion,
		"definitions/ops/grant_reporting_access.sqlx":             workspace.KindOperation,
	} {
		res := s.preview(t, filepath.Join(root, filepath.FromSlash(file)))
		if len(res.Actions) == 0 || res.Actions[0].Kind != kind {
			t.Errorf("%s: %+v", file, res.Actions)
			continue
		}
		sql := res.Actions[0].SQL
		if kind == workspace.KindOperation && len(sql.Queries) == 0 || kind == workspace.KindAssertion && sql.Query == "" {
			t.Errorf("%s: no SQL: %+v", file, sql)
		}
	}
}

func jitWorkspace(t *testing.T) string {
	return testenv.ProjectCopy(t, testenv.Fixture("jit_actions"), testenv.CoreVersion)
}

func snapshotPath() string {
	return filepath.Join(testenv.RepoRoot(), "testdata", "metadata", "clickstream.json")
}

// JiT previews run the action's JiT code under the preview policy, with
// database calls answered by the offline metadata snapshot.
func TestJitPreviewWithSnapshot(t *testing.T) {
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"snapshot": snapshotPath()}}})})
	s.init(t, root)

	res := s.preview(t, filepath.Join(root, "definitions", "jit", "daily_clicks.js"))
	if len(res.Actions) != 1 || res.Actions[0].JitPreview == nil {
		t.Fatalf("preview: %+v", res)
	}
	a := res.Actions[0]
	jp := a.JitPreview
	if !a.Jit || a.SQL.Query != "" {
		t.Errorf("AoT SQL of a JiT action: %+v", a.SQL)
	}
	if jp.Error != "" {
		t.Fatalf("JiT error: %s", jp.Error)
	}
	// The snapshot knows raw_clicks has campaign_id, so the JiT code joins campaigns.
	if !strings.Contains(jp.SQL.Query, "c.name AS campaign_name") || !strings.Contains(jp.SQL.Query, "'US', 'CA', 'MX'") {
		t.Errorf("JiT query: %s", jp.SQL.Query)
	}
	if len(jp.SQL.PreOps) != 1 || len(jp.SQL.PostOps) != 1 || !strings.Contains(jp.SQL.PostOps[0], `"usd"`) {
		t.Errorf("JiT ops: %q %q", jp.SQL.PreOps, jp.SQL.PostOps)
	}
	if len(jp.Calls) != 1 || jp.Calls[0].Method != "GetTable" || jp.Calls[0].Summary != "acme-collector.landing.raw_clicks" || jp.Calls[0].Error != "" {
		t.Errorf("adapter calls: %+v", jp.Calls)
	}
	if !strings.Contains(jp.Adapter, "clickstream.json") || jp.ElapsedMs <= 0 {
		t.Errorf("adapter %q, elapsed %v", jp.Adapter, jp.ElapsedMs)
	}

	// The operation: DeleteTable is refused in preview; its Execute is
	// answered from the snapshot.
	res = s.preview(t, filepath.Join(root, "definitions", "jit", "housekeeping.js"))
	var ops *lsp.PreviewAction
	for i := range res.Actions {
		if res.Actions[i].Target.Name == "drop_stale_scratch_tables" {
			ops = &res.Actions[i]
		}
	}
	if ops == nil || ops.JitPreview == nil || ops.JitPreview.Error != "" {
		for _, a := range res.Actions {
			t.Logf("%s: %+v", a.Target.Name, a.JitPreview)
		}
		t.Fatalf("housekeeping preview failed")
	}
	var deletes, executes int
	for _, c := range ops.JitPreview.Calls {
		switch c.Method {
		case "DeleteTable":
			deletes++
			if !strings.Contains(c.Error, "PERMISSION_DENIED") {
				t.Errorf("DeleteTable in preview: %+v", c)
			}
		case "Execute":
			executes++
		}
	}
	if deletes == 0 || executes != 1 || len(ops.JitPreview.SQL.Queries) != 2 || !strings.Contains(ops.JitPreview.SQL.Queries[0], "(failed: PERMISSION_DENIED") {
		t.Errorf("housekeeping: %d deletes, %d executes, queries %q", deletes, executes, ops.JitPreview.SQL.Queries)
	}

	// Incremental: both variants.
	res = s.preview(t, filepath.Join(root, "definitions", "jit", "click_sessions.js"))
	if jp := res.Actions[0].JitPreview; jp == nil || !strings.Contains(jp.SQL.Query, "DATE_SUB(CURRENT_DATE(), INTERVAL 90 DAY)") || !strings.Contains(jp.SQL.IncrementalQuery, "MAX(session_date)") {
		t.Errorf("incremental JiT: %+v", jp)
	}
	// Assertion.
	res = s.preview(t, filepath.Join(root, "definitions", "jit", "checks.js"))
	if jp := res.Actions[0].JitPreview; jp == nil || jp.Error != "" || !strings.Contains(jp.SQL.Query, "HAVING SUM(clicks) <") {
		t.Errorf("assertion JiT: %+v", jp)
	}
}

// Without a snapshot, JiT previews say so; configuring one (as
// workspace/didChangeConfiguration) makes them use it.
func TestJitPreviewWithoutSnapshot(t *testing.T) {
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{})
	s.init(t, root)
	file := filepath.Join(root, "definitions", "jit", "daily_clicks.js")
	res := s.preview(t, file)
	jp := res.Actions[0].JitPreview
	if jp == nil || len(jp.Warnings) == 0 || !strings.Contains(jp.Warnings[0], "dfd.metadata.snapshot") || jp.Adapter != "none" {
		t.Fatalf("JiT preview without a snapshot: %+v", jp)
	}
	// The code catches the failing GetTable and falls back.
	if strings.Contains(jp.SQL.Query, "campaign_name") || len(jp.Calls) != 1 || !strings.Contains(jp.Calls[0].Error, "no metadata snapshot") {
		t.Errorf("fallback query %q, calls %+v", jp.SQL.Query, jp.Calls)
	}

	mark := s.previewChanges()
	settings, _ := jsonRaw(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"snapshot": snapshotPath()}}})
	if err := s.ed.Server.DidChangeConfiguration(s.ctx, &protocol.DidChangeConfigurationParams{Settings: settings}); err != nil {
		t.Fatal(err)
	}
	s.awaitPreviewChanged(t, mark, "")
	res = s.preview(t, file)
	if jp := res.Actions[0].JitPreview; jp == nil || len(jp.Warnings) != 0 || !strings.Contains(jp.SQL.Query, "campaign_name") {
		t.Errorf("after configuring a snapshot: %+v", jp)
	}
}

// dfd/preview reflects the edits sent before it (no save needed).
func TestPreviewFollowsEdits(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	s := startServer(t, serverConfig{})
	s.init(t, ws)
	stats := filepath.Join(ws, "shop", "definitions", "order_stats.js")
	if err := s.ed.Open(s.ctx, stats); err != nil {
		t.Fatal(err)
	}
	s.preview(t, stats)
	var worst time.Duration
	for i := 0; i < 5; i++ {
		old := "COUNT(*) AS n"
		if i > 0 {
			old = "COUNT(*) AS n" + strings.Repeat("x", i)
		}
		if err := s.ed.Replace(s.ctx, stats, old, "COUNT(*) AS n"+strings.Repeat("x", i+1)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res := s.preview(t, stats)
		worst = max(worst, time.Since(start))
		if want := "AS n" + strings.Repeat("x", i+1) + " FROM"; !strings.Contains(res.Actions[0].SQL.Query, want) {
			t.Fatalf("preview after edit %d: %q, want %q", i, res.Actions[0].SQL.Query, want)
		}
	}
	t.Logf("didChange → dfd/preview: worst %s (debounce %s)", worst.Round(time.Millisecond), lsp.DefaultDebounce)
}

package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/lsp"
)

func (s *session) status(t *testing.T) lsp.StatusResult {
	t.Helper()
	var res lsp.StatusResult
	if err := s.ed.Call(s.ctx, lsp.MethodStatus, nil, &res); err != nil {
		t.Fatalf("dfd/status: %v", err)
	}
	return res
}

func (s *session) configure(t *testing.T, settings any) {
	t.Helper()
	raw, err := json.Marshal(settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Server.DidChangeConfiguration(s.ctx, &protocol.DidChangeConfigurationParams{Settings: raw}); err != nil {
		t.Fatal(err)
	}
}

// awaitCompiled waits for the dfd/previewChanged of a compile of the
// project (root ending in rootSuffix) at a version above after.
func (s *session) awaitCompiled(t *testing.T, rootSuffix string, after int64) lsp.PreviewChangedParams {
	t.Helper()
	var p lsp.PreviewChangedParams
	err := s.ed.Await(s.ctx, "dfd/previewChanged for "+rootSuffix, func(st *fakeeditor.State) bool {
		for _, raw := range st.PreviewChanged {
			var x lsp.PreviewChangedParams
			if err := json.Unmarshal(raw, &x); err == nil && strings.HasSuffix(string(x.Project), rootSuffix) && x.Version > after {
				p = x
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func projectStatus(t *testing.T, res lsp.StatusResult, rootSuffix string) lsp.StatusProject {
	t.Helper()
	for _, p := range res.Projects {
		if strings.HasSuffix(string(p.Root), rootSuffix) {
			return p
		}
	}
	t.Fatalf("dfd/status has no project %s: %+v", rootSuffix, res.Projects)
	return lsp.StatusProject{}
}

// With dfd.compileAsYouType false an edit compiles nothing (dfd/status's
// compiledVersion stays) until the file is saved; dfd/preview compiles
// the edits it needs.
func TestCompileAsYouTypeOff(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	s := startServer(t, serverConfig{debounce: 30 * time.Millisecond,
		editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{"compileAsYouType": false}})})
	s.init(t, ws)
	stats := filepath.Join(ws, "shop", "definitions", "order_stats.js")
	if err := s.ed.Open(s.ctx, stats); err != nil {
		t.Fatal(err)
	}
	first := s.preview(t, stats)
	before := projectStatus(t, s.status(t), "/shop")
	if before.Compiled < 0 || before.DeferredEdits {
		t.Fatalf("status after the first compile: %+v", before)
	}
	s.awaitCompiled(t, "/shop", before.Compiled-1) // announced after the preview's answer
	mark := s.previewChanges()
	if err := s.ed.Replace(s.ctx, stats, "COUNT(*) AS n", "COUNT(*) AS n_edited"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // many debounce delays
	after := projectStatus(t, s.status(t), "/shop")
	if after.Compiled != before.Compiled || after.Version != before.Version || !after.DeferredEdits {
		t.Errorf("an edit compiled with compileAsYouType false: before %+v, after %+v", before, after)
	}
	if n := s.previewChanges(); n != mark {
		t.Errorf("%d compiles announced after an edit", n-mark)
	}

	// didSave compiles.
	if err := s.ed.Save(s.ctx, stats); err != nil {
		t.Fatal(err)
	}
	s.awaitCompiled(t, "/shop", before.Compiled)
	saved := projectStatus(t, s.status(t), "/shop")
	if saved.Compiled <= before.Compiled || saved.DeferredEdits {
		t.Errorf("status after save: %+v (before %+v)", saved, before)
	}

	// dfd/preview compiles the unsaved edits it shows.
	if err := s.ed.Replace(s.ctx, stats, "COUNT(*) AS n_edited", "COUNT(*) AS n_previewed"); err != nil {
		t.Fatal(err)
	}
	res := s.preview(t, stats)
	if !strings.Contains(res.Actions[0].SQL.Query, "n_previewed") || res.Version <= first.Version {
		t.Errorf("preview after an unsaved edit: version %d, %q", res.Version, res.Actions[0].SQL.Query)
	}

	// Back to compiling as you type: held-back edits compile at once.
	if err := s.ed.Replace(s.ctx, stats, "COUNT(*) AS n_previewed", "COUNT(*) AS n_again"); err != nil {
		t.Fatal(err)
	}
	s.configure(t, map[string]any{"dfd": map[string]any{"compileAsYouType": true}})
	s.awaitCompiled(t, "/shop", res.Version)
	if st := projectStatus(t, s.status(t), "/shop"); st.DeferredEdits || st.Compiled != st.Version {
		t.Errorf("status after compileAsYouType true: %+v", st)
	}
}

const loopingJit = `publish("jit_forever", { type: "table" }).jitCode(async (jctx) => {
  while (true) {}
});
`

// dfd.jit.timeoutMs bounds a JiT preview whose code loops.
func TestJitTimeoutSetting(t *testing.T) {
	root := jitWorkspace(t)
	loop := filepath.Join(root, "definitions", "jit", "forever.js")
	if err := os.WriteFile(loop, []byte(loopingJit), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"snapshot": snapshotPath()},
		"jit":      map[string]any{"timeoutMs": 300},
	}})})
	s.init(t, root)
	s.preview(t, filepath.Join(root, "definitions", "jit", "daily_clicks.js")) // compiled
	start := time.Now()
	res := s.preview(t, loop)
	took := time.Since(start)
	if len(res.Actions) != 1 || res.Actions[0].JitPreview == nil || res.Actions[0].JitPreview.Error == "" {
		t.Fatalf("preview of a looping JiT action: %+v", res.Actions)
	}
	t.Logf("looping JiT preview failed after %s: %s", took.Round(time.Millisecond), res.Actions[0].JitPreview.Error)
	if took > 5*time.Second {
		t.Errorf("the looping preview took %s with dfd.jit.timeoutMs 300 (default %s)", took, daemon.DefaultJitTimeout)
	}

	// The JiT checks after a compile (open .js files) use it too.
	start = time.Now()
	if err := s.ed.Open(s.ctx, loop); err != nil {
		t.Fatal(err)
	}
	// Opening a file as on disk compiles nothing: edit it.
	if err := s.ed.Replace(s.ctx, loop, "while (true) {}", "while (true) { /* edited */ }"); err != nil {
		t.Fatal(err)
	}
	ds := s.awaitDiags(t, loop, "jit-failed", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "jit_forever failed") })
	t.Logf("jit-failed after %s: %q", time.Since(start).Round(time.Millisecond), messages(ds))
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("the JiT check of a looping action took %s with dfd.jit.timeoutMs 300 (default 5s)", took)
	}
}

// dfd/status shows the project's workers (pooled runner) and its metadata
// snapshot, and the server's version.
func TestStatusWorkersAndSnapshot(t *testing.T) {
	root := jitWorkspace(t)
	poolLog := &logBuffer{}
	pools := jit.NewPools(jit.PoolOptions{
		Workers: 2,
		Command: []string{os.Args[0], "worker"},
		Env:     []string{benchWorkerEnv + "=1"},
		Logger:  slog.New(slog.NewTextHandler(poolLog, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	t.Cleanup(func() {
		_ = pools.Close()
		if t.Failed() {
			t.Logf("pool log:\n%s", lastLines(poolLog.String(), 40))
		}
	})
	s := startServer(t, serverConfig{
		editor:  fakeeditorConfig(map[string]any{"dfd.metadata.snapshot": snapshotPath()}),
		backend: daemon.BackendOptions{NewRunner: daemon.NewPooled(pools)},
	})
	s.init(t, root)
	s.preview(t, filepath.Join(root, "definitions", "jit", "daily_clicks.js"))
	var st lsp.StatusProject
	var res lsp.StatusResult
	for deadline := time.Now().Add(30 * time.Second); ; {
		res = s.status(t)
		st = projectStatus(t, res, filepath.Base(root))
		if st.Workers != nil && st.Workers.Ready >= 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res.ServerVersion != "test" {
		t.Errorf("serverVersion %q", res.ServerVersion)
	}
	if w := st.Workers; w == nil || w.Ready < 1 || w.Total < w.Ready+w.Busy || w.Total > 2 {
		t.Errorf("workers: %+v", w)
	}
	m := st.Metadata
	if m == nil || m.Source != "snapshot" || m.State != "offline" || !strings.Contains(m.Detail, snapshotPath()) || !strings.Contains(m.Detail, "10 tables") {
		t.Errorf("metadata: %+v", m)
	}
	raw, _ := json.Marshal(st)
	for _, want := range []string{`"workers":{"ready":`, `"metadata":{"source":"snapshot","state":"offline","detail":"snapshot `} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("status JSON lacks %s: %s", want, raw)
		}
	}

	// A snapshot that cannot be read: state error.
	s.configure(t, map[string]any{"dfd.metadata.snapshot": filepath.Join(t.TempDir(), "missing.json")})
	st = projectStatus(t, s.status(t), filepath.Base(root))
	if m := st.Metadata; m == nil || m.State != "error" || !strings.Contains(m.Detail, "missing.json") {
		t.Errorf("metadata of a missing snapshot: %+v", m)
	}
}

// Without a metadata source: metadata none; the in-process runner has no
// workers to show.
func TestStatusNoSource(t *testing.T) {
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{})
	s.init(t, root)
	s.preview(t, filepath.Join(root, "definitions", "jit", "daily_clicks.js"))
	st := projectStatus(t, s.status(t), filepath.Base(root))
	if st.Workers != nil {
		t.Errorf("in-process workers: %+v", st.Workers)
	}
	if m := st.Metadata; m == nil || m.Source != "none" || m.State != "none" {
		t.Errorf("metadata: %+v", m)
	}
}

// rewriteSnapshot writes the snapshot without raw_clicks.campaign_id.
func rewriteSnapshot(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var snap map[string]any
	if err := json.Unmarshal(data, &snap); err != nil {
		t.Fatal(err)
	}
	for _, tb := range snap["tables"].([]any) {
		tm := tb.(map[string]any)
		if tm["target"].(map[string]any)["name"] != "raw_clicks" {
			continue
		}
		var kept []any
		for _, f := range tm["fields"].([]any) {
			if f.(map[string]any)["name"] != "campaign_id" {
				kept = append(kept, f)
			}
		}
		tm["fields"] = kept
	}
	out, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dfd/refreshMetadata re-reads the snapshot and drops the cached JiT
// previews: a snapshot rewritten on disk shows in the preview only after
// it (previews are cached per compile).
func TestRefreshMetadataSnapshot(t *testing.T) {
	root := jitWorkspace(t)
	snap := filepath.Join(t.TempDir(), "snap.json")
	data, err := os.ReadFile(snapshotPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snap, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"snapshot": snap}}})})
	s.init(t, root)
	file := filepath.Join(root, "definitions", "jit", "daily_clicks.js")
	if jp := s.preview(t, file).Actions[0].JitPreview; jp == nil || !strings.Contains(jp.SQL.Query, "campaign_name") {
		t.Fatalf("first preview: %+v", jp)
	}
	rewriteSnapshot(t, snapshotPath(), snap)
	if jp := s.preview(t, file).Actions[0].JitPreview; jp == nil || !strings.Contains(jp.SQL.Query, "campaign_name") {
		t.Fatalf("preview before the refresh is not the cached one: %+v", jp)
	}

	mark := s.previewChanges()
	var res lsp.RefreshMetadataResult
	if err := s.ed.Call(s.ctx, lsp.MethodRefresh, map[string]any{"uri": uri.File(file)}, &res); err != nil {
		t.Fatalf("dfd/refreshMetadata: %v", err)
	}
	if len(res.Projects) != 1 || res.Projects[0].Root != uri.File(root) || res.Projects[0].Source != "snapshot" ||
		res.Projects[0].Refreshed != 10 || res.Projects[0].Error != "" {
		t.Errorf("refresh result: %+v", res)
	}
	s.awaitPreviewChanged(t, mark, filepath.Base(root))
	jp := s.preview(t, file).Actions[0].JitPreview
	if jp == nil || jp.Error != "" || strings.Contains(jp.SQL.Query, "campaign_name") {
		t.Errorf("preview after the refresh still uses the old snapshot: %+v", jp)
	}

	// Every project; a broken snapshot is reported per project.
	if err := os.WriteFile(snap, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = lsp.RefreshMetadataResult{}
	if err := s.ed.Call(s.ctx, lsp.MethodRefresh, nil, &res); err != nil {
		t.Fatalf("dfd/refreshMetadata: %v", err)
	}
	if len(res.Projects) != 1 || res.Projects[0].Error == "" || res.Projects[0].Refreshed != 0 {
		t.Errorf("refresh of a broken snapshot: %+v", res)
	}

	// A uri in no project.
	err = s.ed.Call(s.ctx, lsp.MethodRefresh, map[string]any{"uri": uri.File(t.TempDir())}, nil)
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc2.InvalidParams || !strings.Contains(rpcErr.Message, "not in a Dataform project") {
		t.Errorf("refresh of an unknown uri: %v", err)
	}
}

// dfd.logLevel: debug messages reach window/logMessage (and the log) only
// at debug; at error, info messages no longer do.
func TestLogLevelSetting(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	s := startServer(t, serverConfig{})
	s.init(t, ws)
	stats := filepath.Join(ws, "shop", "definitions", "order_stats.js")
	if err := s.ed.Open(s.ctx, stats); err != nil {
		t.Fatal(err)
	}
	last := s.preview(t, stats).Version
	s.awaitCompiled(t, "/shop", last-1)
	compiledLogs := func(from int) int {
		n := 0
		logs := s.ed.Snapshot().Logs
		for _, l := range logs[min(from, len(logs)):] {
			if strings.HasPrefix(l, "compiled ") {
				n++
			}
		}
		return n
	}
	save := func() {
		t.Helper()
		if err := s.ed.Save(s.ctx, stats); err != nil {
			t.Fatal(err)
		}
		last = s.awaitCompiled(t, "/shop", last).Version
		time.Sleep(100 * time.Millisecond) // logMessage is queued
	}
	save()
	if n := compiledLogs(0); n != 0 {
		t.Errorf("%d debug messages forwarded at the default level", n)
	}

	s.configure(t, map[string]any{"dfd": map[string]any{"logLevel": "debug"}})
	from := len(s.ed.Snapshot().Logs)
	if err := s.ed.Save(s.ctx, stats); err != nil {
		t.Fatal(err)
	}
	last = s.awaitCompiled(t, "/shop", last).Version
	// The compile's debug message, and the one of the check after it: a
	// check still running when the level changes would log at debug after
	// the test starts counting.
	if err := s.ed.Await(s.ctx, "the compile's and the check's debug logMessages", func(st *fakeeditor.State) bool {
		compiled, checked := false, false
		for _, l := range st.Logs[min(from, len(st.Logs)):] {
			compiled = compiled || strings.HasPrefix(l, "compiled ")
			checked = checked || strings.HasPrefix(l, "checked ")
		}
		return compiled && checked
	}); err != nil {
		t.Fatal(err)
	}

	s.configure(t, map[string]any{"dfd.logLevel": "error"})
	from = len(s.ed.Snapshot().Logs)
	stderrFrom := len(s.log.String())
	save()
	if logs := s.ed.Snapshot().Logs[from:]; len(logs) != 0 {
		t.Errorf("messages forwarded at level error: %q", logs)
	}
	if tail := s.log.String()[stderrFrom:]; strings.Contains(tail, "msg=compiled") {
		t.Errorf("debug message logged at level error:\n%s", tail)
	}
}

// With BigQuery (the emulator): dfd/status says online once the graph's
// datasets are prefetched, and dfd/refreshMetadata fetches them again.
func TestStatusAndRefreshBigQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the BigQuery emulator")
	}
	emu, err := bqtest.Start(context.Background(), bqtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Stop)
	client := emu.Client(t)
	if err := client.Dataset("landing").Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := client.Dataset("landing").Table("raw_clicks").Create(context.Background(), &bigquery.TableMetadata{Schema: bigquery.Schema{
		{Name: "country", Type: bigquery.StringFieldType},
	}}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("DFD_BIGQUERY_ENDPOINT", "")
	root := bqProject(t)
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"endpoint": emu.URL},
	}})})
	s.init(t, root)
	s.preview(t, filepath.Join(root, "definitions", "daily.js"))
	for !strings.Contains(s.log.String(), "prefetched BigQuery metadata") {
		select {
		case <-s.ctx.Done():
			t.Fatal("no prefetch of BigQuery metadata")
		case <-time.After(20 * time.Millisecond):
		}
	}
	st := projectStatus(t, s.status(t), filepath.Base(root))
	if m := st.Metadata; m == nil || m.Source != "bigquery" || m.State != "online" || !strings.Contains(m.Detail, emu.URL) {
		t.Errorf("metadata: %+v", m)
	}
	mark := s.previewChanges()
	var res lsp.RefreshMetadataResult
	if err := s.ed.Call(s.ctx, lsp.MethodRefresh, map[string]any{"uri": uri.File(root)}, &res); err != nil {
		t.Fatalf("dfd/refreshMetadata: %v", err)
	}
	if len(res.Projects) != 1 || res.Projects[0].Source != "bigquery" || res.Projects[0].Refreshed < 1 || res.Projects[0].Error != "" {
		t.Errorf("refresh: %+v", res)
	}
	s.awaitPreviewChanged(t, mark, filepath.Base(root))
}

package daemon_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
)

// When a preview's JiT deadline (dfd.jit.timeoutMs) passes while its query
// job runs, the job is cancelled before dfd/preview answers: the stand-in,
// whose job for this statement never finishes, receives jobs.cancel for
// the very job id submitted, and the preview's call list says so.
func TestPreviewDeadlineCancelsTheJob(t *testing.T) {
	s, rec, file := slowJobServer(t, 4000)
	res := s.preview(t, file)
	if len(res.Actions) != 1 || res.Actions[0].JitPreview == nil {
		t.Fatalf("preview: %+v", res)
	}
	jp := res.Actions[0].JitPreview
	jobs := realJobs(rec)
	if len(jobs) != 1 || jp.Error == "" {
		t.Fatalf("%d real jobs (want 1), preview error %q", len(jobs), jp.Error)
	}
	if got := rec.Cancels(); !slices.Equal(got, jobs) {
		t.Fatalf("jobs.cancel for %v, want %v", got, jobs)
	}
	said := false
	for _, c := range jp.Calls {
		if c.Method == "Execute" && strings.Contains(c.Error, "job "+jobs[0]+" cancelled") {
			said = true
		}
	}
	if !said {
		t.Errorf("the call list does not say the job was cancelled: %+v", jp.Calls)
	}
}

// When the editor gives up on a preview ($/cancelRequest: VS Code's panel
// does so when a newer edit asks for a new preview) while its query job
// runs, the job is cancelled, long before the JiT deadline (60 s here).
func TestCancelledPreviewCancelsTheJob(t *testing.T) {
	s, rec, file := slowJobServer(t, 60000)
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	go func() { // give up once the job is being waited for
		for ctx.Err() == nil {
			for _, r := range rec.Requests() {
				if strings.Contains(r.Path, "/queries/") {
					cancel()
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	err := s.ed.Call(ctx, lsp.MethodPreview, map[string]any{"textDocument": map[string]any{"uri": uri.File(file)}}, nil)
	if err == nil {
		t.Fatal("the cancelled preview answered")
	}
	jobs := realJobs(rec)
	for end := time.Now().Add(20 * time.Second); len(rec.Cancels()) == 0 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if got := rec.Cancels(); len(jobs) != 1 || !slices.Equal(got, jobs) {
		t.Fatalf("jobs.cancel for %v, want %v", got, jobs)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the job was cancelled after %v: at the JiT deadline, not when the preview was", d)
	}
}

// slowJobServer is a daemon whose BigQuery is a stand-in on which the
// JiT code of definitions/slow.js runs a query that never finishes.
func slowJobServer(t *testing.T, jitTimeoutMs int) (*session, *bqrecorder.Server, string) {
	t.Helper()
	const slow = "SELECT slow FROM `test.d.big`"
	rec := bqrecorder.Start(t, bqrecorder.Options{SlowJob: func(stmt string) bool { return stmt == slow }})
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: test\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/slow.js": `publish("slow", { type: "table" }).jitCode(async (jctx) => {
  await jctx.adapter.execute({ statement: "` + strings.ReplaceAll(slow, "`", "\\`") + `", fetchResults: true });
  return "SELECT 1 AS never";
});
`,
	})
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"endpoint": rec.URL},
		"jit":      map[string]any{"timeoutMs": jitTimeoutMs},
	}})})
	s.init(t, root)
	return s, rec, filepath.Join(root, "definitions", "slow.js")
}

func realJobs(rec *bqrecorder.Server) []string {
	var jobs []string
	for _, r := range rec.Jobs() {
		if !r.DryRun {
			jobs = append(jobs, r.Job.JobReference.JobId)
		}
	}
	return jobs
}

package daemon_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// When a preview's JiT deadline (dfd.jit.timeoutMs) passes while its query
// job runs, the job is cancelled before dfd/preview answers: the stand-in,
// whose job for this statement never finishes, receives jobs.cancel for
// the very job id submitted, and the preview's call list says so.
func TestPreviewDeadlineCancelsTheJob(t *testing.T) {
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
		"jit":      map[string]any{"timeoutMs": 4000},
	}})})
	s.init(t, root)
	res := s.preview(t, filepath.Join(root, "definitions", "slow.js"))
	if len(res.Actions) != 1 || res.Actions[0].JitPreview == nil {
		t.Fatalf("preview: %+v", res)
	}
	jp := res.Actions[0].JitPreview
	var jobs []string
	for _, r := range rec.Jobs() {
		if !r.DryRun {
			jobs = append(jobs, r.Job.JobReference.JobId)
		}
	}
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

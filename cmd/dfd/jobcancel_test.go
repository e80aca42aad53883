package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// When the JiT deadline passes while a query job runs, `dfd jit` cancels
// the job before it returns: on the wire, the stand-in (whose job for this
// statement never finishes) receives jobs.cancel for the very job id that
// was submitted, in the job's location, and the call list says so.
func TestJitDeadlineCancelsTheJob(t *testing.T) {
	const slow = "SELECT slow FROM `test.d.big`"
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: test\ndefaultDataset: d\ndefaultLocation: EU\n",
		"definitions/slow.js": `publish("slow", { type: "table" }).jitCode(async (jctx) => {
  await jctx.adapter.execute({ statement: "` + strings.ReplaceAll(slow, "`", "\\`") + `", fetchResults: true });
  return "SELECT 1 AS never";
});
`,
	})
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	rec := bqrecorder.Start(t, bqrecorder.Options{SlowJob: func(stmt string) bool { return stmt == slow }})
	start := time.Now()
	res := runDFD(t, "jit", dir, "--action", "slow", "--endpoint", rec.URL, "--jit-timeout", "4s")
	elapsed := time.Since(start)
	if res.code == 0 {
		t.Fatalf("exit 0 although the JiT code never finished:\n%s", res.stdout)
	}
	var jobs []string
	for _, r := range rec.Jobs() {
		if !r.DryRun {
			jobs = append(jobs, r.Job.JobReference.JobId)
		}
	}
	if len(jobs) != 1 {
		t.Fatalf("%d real jobs submitted, want 1:\n%s", len(jobs), res.stderr)
	}
	if got := rec.Cancels(); !slices.Equal(got, jobs) {
		t.Fatalf("jobs.cancel for %v, want %v:\n%s", got, jobs, res.stderr)
	}
	for _, r := range rec.Requests() {
		if r.CancelJob != "" && r.Query.Get("location") != "EU" {
			t.Errorf("jobs.cancel without the job's location: %s?%s", r.Path, r.Query.Encode())
		}
	}
	if !strings.Contains(string(res.stderr), "job "+jobs[0]+" cancelled") {
		t.Errorf("the call list does not say the job was cancelled:\n%s", res.stderr)
	}
	if elapsed > 30*time.Second {
		t.Errorf("dfd jit took %v with a 4s deadline", elapsed)
	}
}

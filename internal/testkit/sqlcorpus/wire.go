package sqlcorpus

import (
	"net/http"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
)

// CheckPreviewWire fails t unless what a preview sent to BigQuery (reqs,
// recorded by a bqrecorder.Server) was safe: no DELETE request at all;
// every job that is not a dry run runs a statement the corpus says is
// read-only, with maximumBytesBilled == wantCap, the label dfd=preview
// and neither the JiT code's own location nor its reservation. It returns
// the number of real (not dry-run) jobs.
func CheckPreviewWire(t testing.TB, reqs []bqrecorder.Request, corpus []Entry, wantCap int64) (real int) {
	t.Helper()
	readOnly := map[string]bool{}
	known := map[string]bool{}
	for _, e := range corpus {
		known[e.SQL] = true
		readOnly[e.SQL] = readOnly[e.SQL] || e.ReadOnly()
	}
	for _, r := range reqs {
		if r.Method == http.MethodDelete {
			t.Errorf("a DELETE request reached BigQuery: %s", r.Path)
		}
		if !r.IsJob() {
			continue
		}
		j := r.Job
		if r.Labels["dfd"] != "preview" {
			t.Errorf("job without the dfd=preview label (labels %v): %.120q", r.Labels, r.Statement)
		}
		if j.JobReference != nil && j.JobReference.Location == HostileLocation {
			t.Errorf("job in the JiT code's own location %q: %.120q", HostileLocation, r.Statement)
		}
		if j.Configuration != nil && j.Configuration.Reservation == HostileReservation {
			t.Errorf("job on the JiT code's own reservation: %.120q", r.Statement)
		}
		if r.DryRun {
			continue
		}
		real++
		switch {
		case !known[r.Statement]:
			// Statements of dfd's own making would be listed here; a
			// preview makes none.
			t.Errorf("a statement that is not in the corpus ran for real: %.200q", r.Statement)
		case !readOnly[r.Statement]:
			t.Errorf("a statement that is not a read-only query ran for real: %.200q", r.Statement)
		}
		if r.MaximumBytesBilled != wantCap {
			t.Errorf("maximumBytesBilled = %d, want %d: %.120q", r.MaximumBytesBilled, wantCap, r.Statement)
		}
	}
	return real
}

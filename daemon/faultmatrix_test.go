package daemon_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/lsp"
	"github.com/dfdtools/dfd/workspace"
)

// The dfd serve part of issue 25's fault matrix (cmd/dfd/faults_test.go
// has the shell commands): under each mode of the stand-in for BigQuery,
// dfd/status's metadata state and detail are what docs/bigquery.md ("When
// BigQuery refuses or fails") says — refused credentials are an error,
// an unreachable BigQuery is stale —, and a JiT preview whose code asks
// BigQuery ends within a generous bound with the calls' errors saying
// what BigQuery said.
func TestServeFaultMatrix(t *testing.T) {
	const bound = 20 * time.Second // 2 s call limit, 3 s JiT deadline
	for _, tc := range []struct {
		mode   string
		fault  *bqrecorder.Fault
		tables int
		slow   bool
		state  string
		detail []string // in dfd/status's metadata detail
		call   string   // in a JiT call's error ("": the preview succeeds)
	}{
		{mode: "401", fault: bqrecorder.FaultUnauthenticated, state: workspace.MetadataError,
			detail: []string{"refused the credentials", "UNAUTHENTICATED", "(HTTP 401)", "fix:"}, call: "UNAUTHENTICATED"},
		{mode: "403", fault: bqrecorder.FaultForbidden, state: workspace.MetadataError,
			detail: []string{"denied access", "PERMISSION_DENIED", "(HTTP 403)"}, call: "PERMISSION_DENIED"},
		{mode: "429+Retry-After", fault: bqrecorder.Status(429, 1), state: workspace.MetadataStale,
			detail: []string{"RESOURCE_EXHAUSTED", "(HTTP 429)"}, call: "RESOURCE_EXHAUSTED"},
		{mode: "503", fault: bqrecorder.FaultUnavailable, state: workspace.MetadataStale,
			detail: []string{"could not answer", "UNAVAILABLE", "(HTTP 503)"}, call: "UNAVAILABLE"},
		{mode: "hang", fault: bqrecorder.FaultHang, state: workspace.MetadataStale,
			// The detail is whichever call noted last: the preview's
			// DEADLINE_EXCEEDED or the prefetch's outage finding
			// (UNAVAILABLE: BigQuery is not answering).
			// So may the call's error be: its own DEADLINE_EXCEEDED, or
			// the outage the prefetch found first; both say the limit.
			call: "no answer within"},
		{mode: "body cut short", fault: &bqrecorder.Fault{CutBody: true}, state: workspace.MetadataStale,
			detail: []string{"UNAVAILABLE"}, call: "UNAVAILABLE"},
		{mode: "malformed JSON", fault: &bqrecorder.Fault{Malformed: true}, state: workspace.MetadataStale,
			detail: []string{"UNAVAILABLE"}, call: "UNAVAILABLE"},
		{mode: "5000 tables", tables: 5000, state: workspace.MetadataOnline},
		{mode: "slow job", slow: true, state: workspace.MetadataOnline, call: "cancelled"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			rec := bqrecorder.Start(t, bqrecorder.Options{
				Fault:   bqrecorder.Always(tc.fault),
				Tables:  func(string) int { return tc.tables },
				SlowJob: func(string) bool { return tc.slow },
			})
			root := jitWorkspace(t)
			s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
				"metadata": map[string]any{"source": "bigquery"},
				"bigquery": map[string]any{"endpoint": rec.URL, "timeoutMs": 2000},
				"jit":      map[string]any{"timeoutMs": 3000},
			}})})
			s.init(t, root)
			start := time.Now()
			// daily_clicks.js asks for a table's metadata; checks.js runs
			// a query job, which the slow-job mode holds.
			file := "daily_clicks.js"
			if tc.slow {
				file = "checks.js"
			}
			var jp *lsp.JitPreview
			for _, a := range s.preview(t, filepath.Join(root, "definitions", "jit", file)).Actions {
				if a.JitPreview != nil {
					jp = a.JitPreview
					break
				}
			}
			if took := time.Since(start); took > bound {
				t.Errorf("the preview took %s", took.Round(time.Millisecond))
			}
			if jp == nil {
				t.Fatal("no JiT preview")
			}
			var errs []string
			for _, c := range jp.Calls {
				if c.Error != "" {
					errs = append(errs, c.Summary+": "+c.Error)
				}
			}
			if tc.call == "" && (jp.Error != "" || len(errs) > 0) {
				t.Errorf("preview failed: %s %v", jp.Error, errs)
			}
			if tc.call != "" && !strings.Contains(jp.Error+strings.Join(errs, "\n"), tc.call) {
				t.Errorf("preview error %q, calls %v: none says %q", jp.Error, errs, tc.call)
			}
			var m *workspace.MetadataStatus
			for deadline := time.Now().Add(bound); ; {
				m = projectStatus(t, s.status(t), filepath.Base(root)).Metadata
				if m != nil && m.State == tc.state || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			report := t.Errorf
			if m == nil || m.State != tc.state {
				report("metadata status %+v, want state %s", m, tc.state)
				return
			}
			for _, w := range tc.detail {
				if !strings.Contains(m.Detail, w) {
					report("status detail lacks %q: %s", w, m.Detail)
				}
			}
			if tc.slow && len(rec.Cancels()) == 0 {
				t.Errorf("the slow job was never cancelled")
			}
		})
	}
}

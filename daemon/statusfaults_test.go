package daemon_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/workspace"
)

// When BigQuery refuses the credentials or cannot answer, dfd/status says
// what dfd check says (who was asked, what BigQuery said) and, for refused
// credentials, the fix; the SQL hints say the schema could not be got and
// never tell the user to configure the source they configured.
func TestStatusBigQueryFaults(t *testing.T) {
	for _, tc := range []struct {
		fault *bqrecorder.Fault
		state string
		want  []string
	}{
		{bqrecorder.FaultUnauthenticated, "error", []string{"refused the credentials", "UNAUTHENTICATED", "(HTTP 401)", "fix: dfd.bigquery.endpoint is reached without authentication"}},
		{bqrecorder.FaultUnavailable, "stale", []string{"could not answer", "UNAVAILABLE", "(HTTP 503)"}},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			rec := bqrecorder.Start(t, bqrecorder.Options{Fault: bqrecorder.Always(tc.fault)})
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
				"workflow_settings.yaml": "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
				"definitions/src.sqlx":   "config { type: \"declaration\", schema: \"raw\", name: \"src\" }\n",
				"definitions/a.sqlx":     "config { type: \"view\" }\nSELECT id, name FROM ${ref(\"src\")}\n",
			})
			s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
				"metadata": map[string]any{"source": "bigquery"},
				"bigquery": map[string]any{"endpoint": rec.URL},
			}})})
			s.init(t, root)
			file := filepath.Join(root, "definitions", "a.sqlx")
			if err := s.ed.OpenText(s.ctx, file, "config { type: \"view\" }\nSELECT id, name FROM ${ref(\"src\")}\n"); err != nil {
				t.Fatal(err)
			}
			ds := s.awaitDiags(t, file, "the not-analysed hint", func(ds []protocol.Diagnostic) bool {
				for _, d := range ds {
					if strings.Contains(fakeeditor.Message(d), "SQL not checked") {
						return true
					}
				}
				return false
			})
			for _, d := range ds {
				if strings.Contains(fakeeditor.Message(d), "dfd.metadata.source setting") || strings.Contains(fakeeditor.Message(d), "--metadata FILE") {
					t.Errorf("a hint tells the user to configure the source they configured: %s", fakeeditor.Message(d))
				}
				if strings.Contains(fakeeditor.Message(d), "SQL not checked") && !strings.Contains(fakeeditor.Message(d), "whose schema dfd could not get") {
					t.Errorf("hint %q does not say the schema could not be got", fakeeditor.Message(d))
				}
			}
			var m *workspace.MetadataStatus
			for deadline := time.Now().Add(30 * time.Second); ; {
				m = projectStatus(t, s.status(t), filepath.Base(root)).Metadata
				if m != nil && m.State == tc.state || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if m == nil || m.State != tc.state {
				t.Fatalf("metadata status %+v, want state %s", m, tc.state)
			}
			if !strings.HasPrefix(m.Detail, "BigQuery (project p at "+rec.URL+")") {
				t.Errorf("status detail %q does not say who was asked", m.Detail)
			}
			for _, w := range tc.want {
				if !strings.Contains(m.Detail, w) {
					t.Errorf("status detail lacks %q: %s", w, m.Detail)
				}
			}
		})
	}
}

// A BigQuery source that cannot be opened (its credentials file is
// missing): a JiT preview's database calls fail with that reason, never
// with advice to configure a snapshot, as if no source were configured.
func TestJitPreviewBigQueryUnusable(t *testing.T) {
	root := jitWorkspace(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"credentials": filepath.Join(t.TempDir(), "missing-key.json")},
	}})})
	s.init(t, root)
	jp := s.preview(t, filepath.Join(root, "definitions", "jit", "daily_clicks.js")).Actions[0].JitPreview
	if jp == nil || len(jp.Calls) == 0 {
		t.Fatalf("preview: %+v", jp)
	}
	for _, c := range jp.Calls {
		if c.Error == "" || strings.Contains(c.Error, "dfd.metadata.snapshot") || !strings.Contains(c.Error, "missing-key.json") {
			t.Errorf("call %s: error %q, want the BigQuery source's own", c.Summary, c.Error)
		}
	}
}

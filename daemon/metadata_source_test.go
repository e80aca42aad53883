package daemon_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

func hoverText(t *testing.T, s *session, path, marker string, delta int) string {
	t.Helper()
	pos, err := s.ed.Pos(path, marker, delta)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.ed.Server.Hover(s.ctx, &protocol.HoverParams{TextDocumentPositionParams: tdpp(path, pos)})
	if err != nil || h == nil {
		t.Fatalf("hover at %s: %v %v", marker, h, err)
	}
	return h.Contents.(*protocol.MarkupContent).Value
}

// bqProject is a project whose declarations live in the emulator's
// project: landing.raw_clicks exists, landing.gone does not.
func bqProject(t *testing.T) string {
	return testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: " + bqtest.Project + "\ndefaultDataset: clicks\ndefaultLocation: US\n",
		"definitions/sources.js": `declare({database: "` + bqtest.Project + `", schema: "landing", name: "raw_clicks"});
declare({database: "` + bqtest.Project + `", schema: "landing", name: "gone"});`,
		"definitions/report.sqlx": "config { type: \"view\" }\nSELECT c.country FROM ${ref(\"raw_clicks\")} c\nJOIN ${ref(\"gone\")} g ON TRUE\n",
		"definitions/daily.js": `publish("daily").jitCode(async (jctx) => {
  const t = await jctx.adapter.getTable({target: {database: "` + bqtest.Project + `", schema: "landing", name: "raw_clicks"}});
  return "SELECT " + t.fields.map(f => f.name).join(", ") + " FROM landing.raw_clicks";
});`,
	})
}

// dfd.metadata.source "bigquery": previews and hovers read BigQuery (the
// emulator) through the metadata cache, and refs to declared tables that
// do not exist get a warning.
func TestMetadataSourceBigQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the BigQuery emulator")
	}
	emu, err := bqtest.Start(context.Background(), bqtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Stop)
	ctx := context.Background()
	client := emu.Client(t)
	if err := client.Dataset("landing").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := client.Dataset("landing").Table("raw_clicks").Create(ctx, &bigquery.TableMetadata{Schema: bigquery.Schema{
		{Name: "clicked_at", Type: bigquery.TimestampFieldType},
		{Name: "country", Type: bigquery.StringFieldType},
		{Name: "campaign_id", Type: bigquery.StringFieldType, Description: "Campaign of the click."},
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

	res := s.preview(t, filepath.Join(root, "definitions", "daily.js"))
	if len(res.Actions) != 1 || res.Actions[0].JitPreview == nil {
		t.Fatalf("preview: %+v", res)
	}
	jp := res.Actions[0].JitPreview
	if jp.Error != "" || jp.SQL.Query != "SELECT clicked_at, country, campaign_id FROM landing.raw_clicks" {
		t.Errorf("JiT preview: error %q, query %q", jp.Error, jp.SQL.Query)
	}
	if !strings.Contains(jp.Adapter, "BigQuery") || !strings.Contains(jp.Adapter, emu.URL) || len(jp.Warnings) != 0 {
		t.Errorf("adapter %q, warnings %q", jp.Adapter, jp.Warnings)
	}

	// BigQuery's "not found" is certain: the SQL analysis's error at the
	// ref, as dfd check says it, and not the missing-table warning too.
	report := filepath.Join(root, "definitions", "report.sqlx")
	ds := s.awaitDiags(t, report, "missing table error", func(ds []protocol.Diagnostic) bool {
		return hasMessage(ds, "BigQuery has no such table")
	})
	if len(ds) != 1 || ds[0].Severity != protocol.DiagnosticSeverityError ||
		fakeeditor.Message(ds[0]) != "Table not found: "+bqtest.Project+".landing.gone (BigQuery has no such table)" ||
		!strings.Contains(rangeText(t, report, ds[0].Range), `ref("gone")`) {
		t.Errorf("diagnostics: %q %+v", messages(ds), ds)
	}

	// Each successful compile prefetches the graph's datasets.
	for !strings.Contains(s.log.String(), "prefetched BigQuery metadata") {
		select {
		case <-s.ctx.Done():
			t.Fatal("no prefetch of BigQuery metadata")
		case <-time.After(20 * time.Millisecond):
		}
	}

	h := hoverText(t, s, report, `ref("raw_clicks")`, 6)
	for _, want := range []string{"Metadata", "BigQuery", "campaign_id", "STRING", "Campaign of the click."} {
		if !strings.Contains(h, want) {
			t.Errorf("hover lacks %q:\n%s", want, h)
		}
	}
}

// A BigQuery source that cannot be used is shown to the user, and
// previews say so, without failing.
func TestMetadataSourceBigQueryBadCredentials(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("DFD_BIGQUERY_ENDPOINT", "")
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{
		"dfd.metadata.source":      "bigquery",
		"dfd.bigquery.credentials": filepath.Join(t.TempDir(), "missing-credentials.json"),
	})})
	s.init(t, root)
	if err := s.ed.Await(s.ctx, "a message about BigQuery", func(st *fakeeditor.State) bool {
		for _, m := range st.Shown {
			if strings.Contains(m, "cannot connect to BigQuery") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	res := s.preview(t, filepath.Join(root, "definitions", "jit", "daily_clicks.js"))
	if len(res.Actions) != 1 || res.Actions[0].JitPreview == nil {
		t.Fatalf("preview: %+v", res)
	}
	jp := res.Actions[0].JitPreview
	if jp.Adapter != "none" || len(jp.Warnings) == 0 || !strings.Contains(jp.Warnings[0], "BigQuery cannot be used") {
		t.Errorf("adapter %q, warnings %q", jp.Adapter, jp.Warnings)
	}
}

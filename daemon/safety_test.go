package daemon_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/iterator"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/internal/testkit/sqlcorpus"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// TestPreviewSafetyOnTheWire: with BigQuery as the metadata source (a
// recording stand-in whose dry runs call everything a SELECT), the JiT
// check that runs by itself when a file is opened sends no billed query at
// all — every statement of the corpus goes out as a dry run — and an
// explicit dfd/preview runs only the corpus's read-only queries, each with
// the default 10 GiB cap, the dfd=preview label and dfd's own location;
// no DELETE reaches BigQuery either way. After that preview, the check of
// the next edit answers the read-only queries from the query cache: still
// nothing billed.
func TestPreviewSafetyOnTheWire(t *testing.T) {
	corpus := append(sqlcorpus.Load(t), sqlcorpus.Generated()...)
	readOnly := 0
	for _, e := range corpus {
		if e.ReadOnly() {
			readOnly++
		}
	}
	rec := bqrecorder.Start(t, bqrecorder.Options{})
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: test\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/probe.js":   sqlcorpus.ProbeAction("probe", corpus),
	})
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"endpoint": rec.URL},
		"jit":      map[string]any{"timeoutMs": 60000},
	}})})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	file := filepath.Join(root, "definitions", "probe.js")

	// Opening the file with an unsaved change compiles it, and runs its
	// JiT check after the compile.
	s.awaitChecked(t, 0)
	rec.Reset()
	mark := s.checksEnded()
	if err := s.ed.OpenText(s.ctx, file, sqlcorpus.ProbeAction("probe", corpus)+"\n// unsaved\n"); err != nil {
		t.Fatal(err)
	}
	s.awaitChecked(t, mark)
	jobs := rec.Jobs()
	if len(jobs) < len(corpus) {
		t.Fatalf("the check after opening sent %d jobs; did it run?", len(jobs))
	}
	if real := sqlcorpus.CheckPreviewWire(t, rec.Requests(), corpus, 10<<30); real != 0 {
		t.Errorf("the check after opening a file ran %d billed queries", real)
	}

	// An explicit preview runs the read-only queries, and nothing else.
	rec.Reset()
	res := s.preview(t, file)
	if len(res.Actions) != 1 || res.Actions[0].JitPreview == nil {
		t.Fatalf("preview: %+v", res)
	}
	if real := sqlcorpus.CheckPreviewWire(t, rec.Requests(), corpus, 10<<30); real != 2*readOnly {
		t.Errorf("the preview ran %d queries for real, want %d (each read-only query, twice)", real, 2*readOnly)
	}
	shown := false
	for _, c := range res.Actions[0].JitPreview.Calls {
		if strings.Contains(c.Statement, "SELECT 1 --␍; DROP TABLE `d.t`") && strings.Contains(c.Summary, "␍") && c.DryRun {
			shown = true
		}
	}
	if !shown {
		t.Errorf("dfd/preview does not show the carriage return of the hostile statement as ␍, as a dry run")
	}

	// The next check answers from what the preview left in the cache.
	rec.Reset()
	mark = s.checksEnded()
	if err := s.ed.SetText(s.ctx, file, s.ed.Text(file)+"\n// edited\n"); err != nil {
		t.Fatal(err)
	}
	s.awaitChecked(t, mark)
	if real := sqlcorpus.CheckPreviewWire(t, rec.Requests(), corpus, 10<<30); real != 0 {
		t.Errorf("the check after an edit ran %d billed queries", real)
	}
}

// TestPreviewSafetyAgainstTheEmulator runs the corpus, through the check
// after opening a file and an explicit preview, against the BigQuery
// emulator behind a recording proxy (which answers dry runs itself, as
// BigQuery does; the emulator would execute them): the wire shows only
// read-only queries ran for real, and the tables and rows of the dataset
// the hostile statements aim at, read back through the Go client, are as
// they were.
func TestPreviewSafetyAgainstTheEmulator(t *testing.T) {
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
	if err := client.Dataset("d").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t", "precious", "u"} {
		if err := client.Dataset("d").Table(name).Create(ctx, &bigquery.TableMetadata{Schema: bigquery.Schema{
			{Name: "a", Type: bigquery.IntegerFieldType}, {Name: "x", Type: bigquery.StringFieldType},
		}}); err != nil {
			t.Fatal(err)
		}
		q := client.Query(fmt.Sprintf("INSERT INTO d.%s (a, x) VALUES (1, 'keep'), (2, 'me')", name))
		if _, err := q.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	before := readDataset(t, client, "d")

	corpus := append(sqlcorpus.Load(t), sqlcorpus.Generated()...)
	rec := bqrecorder.Start(t, bqrecorder.Options{Upstream: emu.URL})
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: " + bqtest.Project + "\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/probe.js":   sqlcorpus.ProbeAction("probe", corpus),
	})
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"endpoint": rec.URL},
		"jit":      map[string]any{"timeoutMs": 60000},
	}})})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	file := filepath.Join(root, "definitions", "probe.js")
	s.awaitChecked(t, 0)
	mark := s.checksEnded()
	if err := s.ed.OpenText(s.ctx, file, sqlcorpus.ProbeAction("probe", corpus)+"\n// unsaved\n"); err != nil {
		t.Fatal(err)
	}
	s.awaitChecked(t, mark)
	if real := sqlcorpus.CheckPreviewWire(t, rec.Requests(), corpus, 10<<30); real != 0 {
		t.Errorf("the check after opening a file ran %d billed queries", real)
	}
	rec.Reset()
	if res := s.preview(t, file); len(res.Actions) != 1 || res.Actions[0].JitPreview == nil {
		t.Fatalf("preview: %+v", res)
	}
	if real := sqlcorpus.CheckPreviewWire(t, rec.Requests(), corpus, 10<<30); real == 0 {
		t.Errorf("the preview ran no query for real")
	}
	if after := readDataset(t, client, "d"); after != before {
		t.Errorf("the dataset changed during previews:\nbefore %s\nafter  %s", before, after)
	}
}

// readDataset describes a dataset's tables and rows as the Go client sees
// them.
func readDataset(t *testing.T, c *bigquery.Client, ds string) string {
	t.Helper()
	ctx := context.Background()
	var names []string
	it := c.Dataset(ds).Tables(ctx)
	for {
		tb, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tb.TableID)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		rows, err := c.Query(fmt.Sprintf("SELECT a, x FROM %s.%s ORDER BY a", ds, n)).Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s:", n)
		for {
			var r []bigquery.Value
			if err := rows.Next(&r); err == iterator.Done {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, " %v", r)
		}
		b.WriteString("; ")
	}
	return b.String()
}

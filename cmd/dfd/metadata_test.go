package main

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"

	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// TestMetadataCommands runs dfd metadata snapshot/status/refresh/clear
// against the BigQuery emulator, and reads the snapshot back as dfd's
// offline adapter does.
func TestMetadataCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the BigQuery emulator")
	}
	emu, err := bqtest.Start(context.Background(), bqtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Stop)
	client := emu.Client(t)
	ctx := context.Background()
	schema := bigquery.Schema{
		{Name: "id", Type: bigquery.IntegerFieldType},
		{Name: "geo", Type: bigquery.RecordFieldType, Repeated: true, Schema: bigquery.Schema{{Name: "country", Type: bigquery.StringFieldType}}},
	}
	for ds, tables := range map[string][]string{"raw": {"events", "users"}, "mart": {"daily"}, "unused": {"x"}} {
		if err := client.Dataset(ds).Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			if err := client.Dataset(ds).Table(tb).Create(ctx, &bigquery.TableMetadata{Schema: schema, Labels: map[string]string{"ds": ds}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cachePath := filepath.Join(t.TempDir(), "m.db")
	conn := []string{"--endpoint", emu.URL, "--project", bqtest.Project, "--cache", cachePath}

	// A project that declares raw.events, builds mart.daily from it and
	// writes to a dataset that does not exist yet.
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml":   "defaultProject: test\ndefaultDataset: mart\ndefaultLocation: US\n",
		"definitions/sources.sqlx": "config { type: \"declaration\", schema: \"raw\", name: \"events\" }",
		"definitions/daily.sqlx":   "config { type: \"table\" }\nSELECT id FROM ${ref(\"raw\", \"events\")}",
		"definitions/new.sqlx":     "config { type: \"view\", schema: \"not_yet\" }\nSELECT 1 AS x",
	})
	res := runDFD(t, append([]string{"metadata", "snapshot", dir}, conn...)...)
	if res.code != 0 {
		t.Fatalf("snapshot: exit %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(string(res.stderr), "dataset test.not_yet not found; skipped") || !strings.Contains(string(res.stderr), "3 tables from 3 datasets") {
		t.Errorf("stderr = %s", res.stderr)
	}
	snap, err := offline.Parse("snapshot", res.stdout, offline.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	for _, name := range []string{"raw.events", "raw.users", "mart.daily"} {
		schema, table, _ := strings.Cut(name, ".")
		m, err := snap.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: "test", Schema: schema, Name: table}})
		if err != nil || m.GetFields()[1].GetStruct().GetFields()[0].GetName() != "country" || m.GetLabels()["ds"] != schema {
			t.Errorf("%s: %v %v", name, m, err)
		}
	}
	if strings.Contains(string(res.stdout), "unused") {
		t.Error("snapshot has a dataset the project does not use")
	}
	// It lists the datasets it listed in full, and the one BigQuery says
	// does not exist: a table it lacks there does not exist.
	for _, ds := range []string{"raw", "mart", "not_yet"} {
		if !snap.Lists("test", ds) {
			t.Errorf("snapshot does not list dataset test.%s in full:\n%s", ds, res.stdout)
		}
	}
	if !strings.Contains(string(res.stdout), `"lastUpdatedMillis"`) || !strings.Contains(string(res.stdout), `"flags": [`) {
		t.Errorf("not lowerCamel protojson:\n%s", res.stdout)
	}

	// --datasets, without a project; served from the cache even with
	// BigQuery gone.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String()
	l.Close()
	res = runDFD(t, "metadata", "snapshot", "--datasets", "raw,test.mart", "--endpoint", dead, "--project", bqtest.Project, "--cache", cachePath)
	if res.code != 0 || strings.Count(string(res.stdout), `"target"`) != 3 {
		t.Errorf("offline snapshot: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = runDFD(t, "metadata", "snapshot", "--datasets", "unused", "--endpoint", dead, "--project", bqtest.Project, "--cache", cachePath)
	if res.code != 1 || !strings.Contains(string(res.stderr), "UNAVAILABLE") {
		t.Errorf("uncached dataset offline: exit %d\n%s", res.code, res.stderr)
	}

	res = runDFD(t, append([]string{"metadata", "status", "--json"}, conn...)...)
	var st struct {
		Backend string
		Path    string
		Tables  int
		Lists   int
	}
	if err := json.Unmarshal(res.stdout, &st); err != nil || res.code != 0 || st.Path != cachePath || st.Tables != 3 || st.Lists != 2 || !strings.Contains(st.Backend, "project test") {
		t.Errorf("status: %+v %v exit %d %s", st, err, res.code, res.stderr)
	}
	res = runDFD(t, append([]string{"metadata", "status"}, conn...)...)
	if !strings.Contains(string(res.stdout), "Entries:  3 tables (0 known missing), 2 dataset listings") {
		t.Errorf("status:\n%s", res.stdout)
	}
	res = runDFD(t, append([]string{"metadata", "refresh", "--datasets", "unused"}, conn...)...)
	if res.code != 0 || !strings.Contains(string(res.stdout), "Refreshed 1 entries") {
		t.Errorf("refresh: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runDFD(t, append([]string{"metadata", "clear"}, conn...)...)
	if res.code != 0 || !strings.Contains(string(res.stdout), "Cleared "+cachePath+" (4 tables, 3 dataset listings)") {
		t.Errorf("clear: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	// Usage errors.
	for _, args := range [][]string{{"metadata"}, {"metadata", "frobnicate"}, {"metadata", "snapshot", "a", "b"}} {
		if res := runDFD(t, args...); res.code != 2 {
			t.Errorf("%v: exit %d", args, res.code)
		}
	}
	if res := runDFD(t, "metadata", "snapshot", "--datasets", "a.b.c", "--endpoint", dead, "--project", "p", "--cache", "off"); res.code != 1 || !strings.Contains(string(res.stderr), `"a.b.c" is not dataset`) {
		t.Errorf("bad --datasets: %d %s", res.code, res.stderr)
	}
}

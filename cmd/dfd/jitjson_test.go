package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// dfd jit --json prints the response in one layout, whatever the build:
// protojson varies its spacing from build to build on purpose, so the
// output is re-indented (two spaces, `"key": value`).
func TestJitJSONLayout(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("jit_actions"), testenv.CoreVersion)
	res := runDFD(t, "jit", dir, "--action", "daily_clicks", "--metadata", snapshotPath(), "--json")
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, res.stdout); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, res.stdout)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	want.WriteByte('\n')
	if !bytes.Equal(res.stdout, want.Bytes()) {
		t.Errorf("--json output is not in the fixed layout:\n%s\nwant:\n%s", res.stdout, want.Bytes())
	}
	if !strings.Contains(string(res.stdout), "\n  \"table\": {\n") {
		t.Errorf("unexpected layout:\n%s", res.stdout)
	}
}

// Without --metadata, dfd jit opens BigQuery on the JiT code's first
// database call: code that makes none previews without credentials, and
// code that makes one fails then, with the error that says what to do.
func TestJitConnectsLazily(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("jit_actions"), testenv.CoreVersion)
	noKey := filepath.Join(dir, "no-such-key.json")

	res := runDFD(t, "jit", dir, "--action", "campaign_clicks", "--credentials", noKey)
	if res.code != 0 {
		t.Fatalf("a JiT action that makes no database call: exit %d:\n%s", res.code, res.stderr)
	}
	if !strings.Contains(string(res.stdout), "WHERE campaign_name IS NOT NULL") {
		t.Errorf("stdout:\n%s", res.stdout)
	}
	if strings.Contains(string(res.stderr), "connecting to BigQuery") {
		t.Errorf("BigQuery was opened for code that makes no call:\n%s", res.stderr)
	}

	// A call the code catches: the preview goes on, the call list says why it failed.
	res = runDFD(t, "jit", dir, "--action", "daily_clicks", "--credentials", noKey)
	if res.code != 0 {
		t.Fatalf("a JiT action that catches its failed call: exit %d:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"dfd jit: connecting to BigQuery:", "no-such-key.json", "(pass --metadata FILE to preview offline from a snapshot; see docs/bigquery.md)", "GetTable", "FAILED_PRECONDITION"} {
		if !strings.Contains(string(res.stderr), want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if n := strings.Count(string(res.stderr), "dfd jit: connecting to BigQuery:"); n != 1 {
		t.Errorf("the connection error is said %d times:\n%s", n, res.stderr)
	}
}

package lsp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
)

// The extension's unit tests render captured dfd/preview, dfd/status,
// dfd/lineage and dfd/graph answers (vscode-extension/test/fixtures, captured by its
// scripts/capture-fixtures.mjs), and dfd/rows answers (rows-*.json, captured by
// daemon/rows_test.go with DFD_CAPTURE_ROWS). They must still be answers this server
// could send: every field they hold is a field of the Go result types (a
// renamed or removed field fails here; the TypeScript types are generated
// from the same Go types by lsp/gen).
func TestExtensionFixturesMatchTheProtocol(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(), "vscode-extension", "test", "fixtures")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "diff-") {
			continue // dfd diff's report, not an LSP answer: TestExtensionDiffFixtures (cmd/dfd)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var v any = &lsp.PreviewResult{}
			switch name := filepath.Base(f); {
			case name == "status.json":
				v = &lsp.StatusResult{}
			case strings.HasPrefix(name, "lineage-"):
				v = &lsp.LineageResult{}
			case strings.HasPrefix(name, "graph-"):
				v = &lsp.GraphResult{}
			case strings.HasPrefix(name, "rows-"):
				v = &lsp.RowsResult{}
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(v); err != nil {
				t.Fatalf("not a %T the server could send: %v (recapture with vscode-extension/scripts/capture-fixtures.mjs)", v, err)
			}
		})
	}
}

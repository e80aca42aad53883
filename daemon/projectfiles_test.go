package daemon_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
)

// The files a compile reads are watched, whatever their kind — a notebook
// that actions.yaml names, a .yml a require() loads — and go-to-definition
// on a require() goes to the file the engine loaded (here: cfg.yml before
// cfg.json, as the engine's extension order has it; the graph says which
// one it read).
func TestProjectFilesWatchedAndRequired(t *testing.T) {
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml":   "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/actions.yaml": "actions:\n- notebook:\n    filename: nb.ipynb\n",
		"definitions/nb.ipynb":     `{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`,
		"definitions/cfg.yml":      "tag: yml\n",
		"definitions/cfg.json":     `{"asJson": {"tag": "json"}}`,
		"definitions/use.js":       "const cfg = require(\"./cfg\");\npublish(\"from_\" + cfg.asJson.tag).query(\"SELECT 1\");\n",
	})
	s := startServer(t, serverConfig{})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")

	var opts struct {
		Watchers []struct {
			GlobPattern json.RawMessage `json:"globPattern"`
		} `json:"watchers"`
	}
	st := s.ed.Snapshot()
	if len(st.Registrations) != 1 {
		t.Fatalf("registrations: %+v", st.Registrations)
	}
	if err := json.Unmarshal(st.Registrations[0].RegisterOptions, &opts); err != nil {
		t.Fatal(err)
	}
	var globs []string
	for _, w := range opts.Watchers {
		globs = append(globs, string(w.GlobPattern))
	}
	var g lsp.GraphResult
	if err := s.ed.Call(s.ctx, lsp.MethodGraph, map[string]any{"uri": uri.File(root)}, &g); err != nil {
		t.Fatal(err)
	}
	loaded := ""
	for _, a := range g.Projects[0].Actions {
		if tag, ok := strings.CutPrefix(a.Target.Name, "from_"); ok {
			loaded = "definitions/cfg." + tag
		}
	}
	// Core reads the notebook into the graph's notebookContents.
	if !watched(globs, "definitions/nb.ipynb") {
		t.Errorf("the notebook is read by the compile but not watched (%v)", globs)
	}
	if loaded == "" {
		t.Fatalf("no from_ action in %+v", g.Projects[0].Actions)
	}
	if !watched(globs, loaded) {
		t.Errorf("%s is read by the compile but not watched (%v)", loaded, globs)
	}

	use := filepath.Join(root, "definitions", "use.js")
	pos, err := s.ed.Pos(use, `"./cfg"`, 2)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.ed.Server.Definition(s.ctx, &protocol.DefinitionParams{TextDocumentPositionParams: tdpp(use, pos)})
	if err != nil {
		t.Fatal(err)
	}
	locs, _ := res.(protocol.LocationSlice)
	if len(locs) != 1 || locs[0].URI != uri.File(filepath.Join(root, filepath.FromSlash(loaded))) {
		t.Errorf("definition of require(\"./cfg\"): %+v, want %s (what the engine loaded)", locs, loaded)
	}
}

// watched reports whether one of the watchers' globs (JSON of a pattern or
// relative pattern "**/*.{a,b}") matches path.
func watched(globs []string, path string) bool {
	for _, g := range globs {
		i, j := strings.Index(g, "**/*.{"), strings.Index(g, "}")
		if i < 0 || j < i {
			continue
		}
		for _, ext := range strings.Split(g[i+len("**/*.{"):j], ",") {
			if strings.HasSuffix(path, "."+ext) {
				return true
			}
		}
	}
	return false
}

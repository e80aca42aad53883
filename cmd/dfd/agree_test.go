package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/lsp"
)

// editorOnly are the diagnostics the editor gives and dfd check does not,
// by design: each kind (source, code) with why. Everything else the
// editor shows on a project's files must be one of dfd check's findings,
// and the other way round.
var editorOnly = map[[2]string]string{
	{"dfd", "missing-table"}: "a warning on each ref of a declared table the metadata source says does not exist " +
		"where the SQL analysis does not say it (a statement it did not analyse); dfd check says it where the analysis does",
	{"dfd", "jit-failed"}: "JiT code of an open .js file that throws; dfd check leaves such an action out of the analysis " +
		"(--verbose lists it on stderr), as the editor does in the SQL analysis",
	{"dfd", "jit-free-variable"}: "a lint of JiT code's text (a name of its module, which the JiT runtime lacks), not a finding of the analysis",
	{"dfd", "duplicate-key"}:     "a lint of open files' text (a config key given twice), not a finding of the analysis",
	{"dfd", "not-regular-file"}:  "a file the compile left out; dfd check says so on stderr",
}

// checkOnly says why dfd check has a finding the editor does not show,
// when that is by design ("" when it is not).
func checkOnly(f checkFinding, withMetadata bool) string {
	if f.Code != "sql-skipped" {
		return ""
	}
	if !withMetadata {
		// Without a source, every statement reading a warehouse table is
		// skipped: dfd/status says the source is none instead.
		return "the editor leaves out the hints of skipped statements when there is no metadata source"
	}
	return ""
}

// agreeProject is a project of the repository with the metadata it is
// checked against ("" for none: dfd check --offline, the editor's source
// none).
type agreeProject struct {
	name, dir, core, snapshot string
}

func agreeProjects() []agreeProject {
	meta := func(name string) string { return filepath.Join(testenv.RepoRoot(), "testdata", "metadata", name) }
	example := filepath.Join(testenv.RepoRoot(), "examples", "clickstream")
	return []agreeProject{
		{"sql_check", testenv.Fixture("sql_check"), testenv.CoreVersion, meta("sql_check.json")},
		{"examples/clickstream", example, "", filepath.Join(example, "metadata.json")},
		{"jit_actions", testenv.Fixture("jit_actions"), testenv.CoreVersion, meta("clickstream.json")},
		{"jit_function_shapes", testenv.Fixture("jit_function_shapes"), testenv.CoreVersion, meta("clickstream.json")},
		{"sqlx_warehouse", testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion, ""},
		{"js_api", testenv.Fixture("js_api"), testenv.CoreVersion, ""},
		{"actions_yaml", testenv.Fixture("actions_yaml"), testenv.CoreVersion, ""},
		{"cli_overrides", testenv.Fixture("cli_overrides"), testenv.CoreVersion, ""},
		{"compile_errors", testenv.Fixture("compile_errors"), testenv.CoreVersion, ""},
		{"legacy_dataform_json", testenv.Fixture("legacy_dataform_json"), testenv.CoreVersion, ""},
		{"core_version_setting", testenv.Fixture("core_version_setting"), "", ""},
	}
}

// agreed is one finding as both sides can say it: 0-based positions,
// columns in UTF-16 code units.
type agreed struct {
	file, severity, code, message string
	line, col, endLine, endCol    int
}

func (a agreed) String() string {
	return fmt.Sprintf("%s:%d:%d-%d:%d %s [%s] %q", a.file, a.line+1, a.col+1, a.endLine+1, a.endCol+1, a.severity, a.code, a.message)
}

// The editor and dfd check agree: on every project of the repository, with
// its metadata, each of dfd check's findings (--json) is a diagnostic of
// `dfd serve` with every project file open, with the same severity,
// message, range and code, and the editor has no other diagnostic but the
// editor-only kinds above.
func TestCheckAndEditorAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and analyses every fixture twice")
	}
	// A snapshot of no table: every warehouse table is unknown, and every
	// declared one does not exist. The projects without metadata are
	// checked against it too, so that both sides' hints are compared.
	empty := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(empty, []byte(`{"tables": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var runs []agreeProject
	for _, p := range agreeProjects() {
		runs = append(runs, p)
		if p.snapshot == "" {
			p.name += "+empty-snapshot"
			p.snapshot = empty
			runs = append(runs, p)
		}
	}
	for _, p := range runs {
		t.Run(p.name, func(t *testing.T) {
			root := testenv.ProjectCopy(t, p.dir, p.core)
			cli := checkFindings(t, root, p.snapshot)
			ed := editorFindings(t, root, p.snapshot)
			compareFindings(t, cli, ed, p.snapshot != "")
		})
	}
}

// checkFindings runs dfd check --json on root.
func checkFindings(t *testing.T, root, snapshot string) []checkFinding {
	t.Helper()
	args := []string{"check", root, "--json", "--verbose"}
	if snapshot != "" {
		args = append(args, "--metadata", snapshot)
	} else {
		args = append(args, "--offline")
	}
	res := runDFD(t, args...)
	var out []checkFinding
	if err := json.Unmarshal(res.stdout, &out); err != nil {
		t.Fatalf("dfd check --json (exit %d): %v\nstdout:\n%s\nstderr:\n%s", res.code, err, res.stdout, res.stderr)
	}
	return out
}

// editorDiag is one diagnostic of the editor, on its project-relative
// file.
type editorDiag struct {
	file string
	d    protocol.Diagnostic
}

// editorFindings runs dfd serve's daemon in-process (its workers as
// processes), opens every file of the project as an editor would, and
// returns the diagnostics it shows once the compile and the check of the
// last version are out.
func editorFindings(t *testing.T, root, snapshot string) []editorDiag {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src := map[string]any{"source": "none"}
	if snapshot != "" {
		src = map[string]any{"source": "snapshot", "snapshot": snapshot}
	}
	client, server := net.Pipe()
	var logs strings.Builder
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(b)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	// As dfd serve runs by default: compiles and JiT code on worker
	// processes (this test binary as `dfd worker`, see TestMain), on goja
	// as dfd check compiles.
	pools := jit.NewPools(jit.PoolOptions{Workers: 1, Command: workerCommand, Logger: log.With("component", "jit")})
	defer pools.Close()
	opts := daemon.Options{Version: "test", Log: log}
	opts.Backend.NewRunner = daemon.NewPooledWith(pools, daemon.PooledOptions{Engine: daemon.EngineGoja})
	done := make(chan int, 1)
	go func() {
		done <- daemon.Serve(context.Background(), server, server, opts)
	}()
	ed := fakeeditor.New(context.Background(), client, fakeeditor.Config{InitializationOptions: map[string]any{"dfd": map[string]any{"metadata": src}}})
	defer func() {
		_ = ed.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Errorf("the server did not stop after the client closed the connection")
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("daemon log (end):\n%s", lastLogLines(logs.String(), 60))
			logMu.Unlock()
		}
	}()
	if _, err := ed.Initialize(ctx, root); err != nil {
		t.Fatal(err)
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		switch filepath.Ext(p) {
		case ".sqlx", ".js", ".sql", ".yaml", ".yml":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := ed.Open(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		t.Fatalf("no project file under %s", root)
	}
	// Opening a file as it is on disk only re-runs the later phase of the
	// compile there is, whose version stays: an edit (the same text)
	// makes a version that is compiled and checked with every file open.
	if err := ed.SetText(ctx, files[0], ed.Text(files[0])); err != nil {
		t.Fatal(err)
	}
	awaitChecked(ctx, t, ed, root)

	var out []editorDiag
	for u, ds := range ed.Snapshot().Diagnostics {
		rel, err := filepath.Rel(root, u.FsPath())
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("diagnostics outside the project: %s", u)
			continue
		}
		for _, d := range ds {
			out = append(out, editorDiag{filepath.ToSlash(rel), d})
		}
	}
	return out
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func lastLogLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// awaitChecked waits until the project's latest version is compiled and
// its later phase (metadata, JiT code, SQL) has ended: the server sends,
// in order, dfd/previewChanged for the version, then the progress of its
// check, begun and ended (after the check's diagnostics).
func awaitChecked(ctx context.Context, t *testing.T, ed *fakeeditor.Editor, root string) {
	t.Helper()
	var st lsp.StatusResult
	if err := ed.Call(ctx, lsp.MethodStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	var version int64 = -1
	for _, p := range st.Projects {
		if p.Root == uri.File(root) {
			version = p.Version
		}
	}
	if version < 0 {
		t.Fatalf("dfd/status has no project %s: %+v", root, st)
	}
	err := ed.Await(ctx, fmt.Sprintf("the check of version %d", version), func(s *fakeeditor.State) bool {
		compiled := false
		checking := map[string]bool{} // progress tokens of checks begun after the compile
		for _, n := range s.Notifications {
			switch n.Method {
			case "dfd/previewChanged":
				var p lsp.PreviewChangedParams
				if json.Unmarshal(n.Params, &p) == nil && p.Version >= version {
					compiled = true
				}
			case protocol.MethodProgress:
				if !compiled {
					continue
				}
				var p struct {
					Token json.RawMessage `json:"token"`
					Value struct{ Kind, Title, Message string }
				}
				if json.Unmarshal(n.Params, &p) != nil {
					continue
				}
				switch {
				case p.Value.Kind == "begin" && strings.HasPrefix(p.Value.Title, "dfd: checking"):
					checking[string(p.Token)] = true
				case p.Value.Kind == "end" && checking[string(p.Token)] && p.Value.Message != "superseded":
					return true // a superseded check is followed by another
				}
			}
		}
		return false
	})
	if err != nil {
		var ns []string
		for _, n := range ed.Snapshot().Notifications {
			if n.Method != protocol.MethodTextDocumentPublishDiagnostics {
				ns = append(ns, n.Method+" "+string(n.Params))
			}
		}
		t.Fatalf("%v\nnotifications:\n%s", err, strings.Join(ns, "\n"))
	}
}

// compareFindings fails with a readable diff unless dfd check's findings
// and the editor's diagnostics are the same, but for the kinds that are
// one side's by design.
func compareFindings(t *testing.T, cli []checkFinding, ed []editorDiag, withMetadata bool) {
	t.Helper()
	var fromCheck, fromEditor []agreed
	byDesign := map[string]int{} // why → how many left out
	for _, f := range cli {
		if why := checkOnly(f, withMetadata); why != "" {
			byDesign["dfd check only: "+why]++
			continue
		}
		msg := f.Message
		if f.Detail != "" {
			msg += "\n" + f.Detail
		}
		fromCheck = append(fromCheck, agreed{
			file: f.File, severity: f.Severity, code: f.Code, message: msg,
			line: f.Line - 1, col: f.Column - 1, endLine: f.EndLine - 1, endCol: f.EndColumn - 1,
		})
	}
	for _, e := range ed {
		src, _ := e.d.Source.Get()
		code := ""
		if c, ok := e.d.Code.(protocol.String); ok {
			code = string(c)
		} else if e.d.Code != nil {
			code = fmt.Sprint(e.d.Code)
		}
		if why, ok := editorOnly[[2]string{src, code}]; ok {
			byDesign["editor only, "+code+": "+why]++
			continue
		}
		if src == "dataform" && code == "" {
			code = "compile" // core's errors: dfd check's code for them
		}
		fromEditor = append(fromEditor, agreed{
			file: e.file, severity: severityName(e.d.Severity), code: code, message: fakeeditor.Message(e.d),
			line: int(e.d.Range.Start.Line), col: int(e.d.Range.Start.Character),
			endLine: int(e.d.Range.End.Line), endCol: int(e.d.Range.End.Character),
		})
	}
	only := func(a, b []agreed) []string {
		var out []string
		for _, x := range a {
			if i := slices.Index(b, x); i >= 0 {
				b = slices.Delete(slices.Clone(b), i, i+1)
				continue
			}
			out = append(out, x.String())
		}
		slices.Sort(out)
		return out
	}
	cliOnly, edOnly := only(fromCheck, fromEditor), only(fromEditor, fromCheck)
	if len(cliOnly)+len(edOnly) > 0 {
		t.Errorf("dfd check and the editor disagree (%d findings of dfd check, %d diagnostics of the editor compared)\nonly dfd check:\n  %s\nonly the editor:\n  %s",
			len(fromCheck), len(fromEditor), strings.Join(cliOnly, "\n  "), strings.Join(edOnly, "\n  "))
	}
	t.Logf("%d findings agree", len(fromCheck)-len(cliOnly))
	for why, n := range byDesign {
		t.Logf("left out by design: %d × %s", n, why)
	}
}

func severityName(s protocol.DiagnosticSeverity) string {
	switch s {
	case protocol.DiagnosticSeverityError:
		return "error"
	case protocol.DiagnosticSeverityWarning:
		return "warning"
	case protocol.DiagnosticSeverityInformation:
		return "info"
	}
	return "hint"
}

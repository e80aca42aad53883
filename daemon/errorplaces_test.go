package daemon_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

const errorPlacesSettings = "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n"

// officialCompile runs the official CLI's `dataform compile --json` on
// root and returns its stdout and stderr.
func officialCompile(t *testing.T, root string) (stdout, stderr string) {
	t.Helper()
	testenv.Node(t)
	cmd := exec.Command("node", testenv.CLIBundle(t), "compile", root, "--json")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run() // exit status 1 with compilation errors
	return out.String(), errb.String()
}

// A syntax error in a SQLX config block is where the official CLI puts it
// (the line and the caret of its stack), on goja too, which reports some
// unexpected tokens at the token after them.
func TestSyntaxErrorWhereTheCLISaysIt(t *testing.T) {
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": errorPlacesSettings,
		"package.json":           "{}\n",
		"definitions/a.sqlx":     "config {\n  type: \"table\",\n  description: \"x\",,\n  tags: [\"a\"]\n}\nSELECT 1\n",
	})
	stdout, _ := officialCompile(t, root)
	var graph struct {
		GraphErrors struct {
			CompilationErrors []struct{ FileName, Message, Stack string }
		}
	}
	if i := strings.Index(stdout, "{"); i < 0 || json.Unmarshal([]byte(stdout[i:]), &graph) != nil || len(graph.GraphErrors.CompilationErrors) != 1 {
		t.Fatalf("the CLI's output: %s", stdout)
	}
	// "<file>:LINE\n<source line>\n<spaces>^\n\nSyntaxError: …"
	lines := strings.Split(graph.GraphErrors.CompilationErrors[0].Stack, "\n")
	if len(lines) < 3 || !strings.Contains(lines[2], "^") {
		t.Fatalf("the CLI's stack: %q", graph.GraphErrors.CompilationErrors[0].Stack)
	}
	wantText, wantCol := lines[1], strings.Index(lines[2], "^")

	s := startServer(t, serverConfig{})
	s.init(t, root)
	a := filepath.Join(root, "definitions", "a.sqlx")
	ds := s.awaitDiags(t, a, "syntax error", func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	src, _ := os.ReadFile(a)
	got := strings.Split(string(src), "\n")[ds[0].Range.Start.Line]
	if got != wantText || int(ds[0].Range.Start.Character) != wantCol {
		t.Errorf("%q at %q column %d, want %q column %d (the official CLI's caret)", fakeeditor.Message(ds[0]), got, ds[0].Range.Start.Character, wantText, wantCol)
	}
}

// Two actions with one name, one with built-in assertions: core cannot
// tell which the assertions are about and says so from "index.js". That
// goes on both definitions, each pointing at the other, not on the
// settings file.
func TestAmbiguousNameOnTheDefinitions(t *testing.T) {
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": errorPlacesSettings,
		"definitions/d1.sqlx":    "config { type: \"table\", schema: \"s3\", name: \"dup\", assertions: { uniqueKey: [\"id\"] } }\nSELECT 1 AS id\n",
		"definitions/d2.sqlx":    "config { type: \"table\", schema: \"s3\", name: \"dup\" }\nSELECT 2 AS id\n",
	})
	s := startServer(t, serverConfig{})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	st := s.ed.Snapshot()
	settings := uri.File(filepath.Join(root, "workflow_settings.yaml"))
	for _, d := range st.Diagnostics[settings] {
		t.Errorf("on the settings file: %q", fakeeditor.Message(d))
	}
	for _, pair := range [][2]string{{"d1.sqlx", "d2.sqlx"}, {"d2.sqlx", "d1.sqlx"}} {
		path := filepath.Join(root, "definitions", pair[0])
		var found int
		for _, d := range st.Diagnostics[uri.File(path)] {
			if !strings.Contains(fakeeditor.Message(d), "Ambiguous Action name") {
				continue
			}
			found++
			if got := rangeText(t, path, d.Range); got != "config" {
				t.Errorf("%s: on %q, want the definition (config)", pair[0], got)
			}
			if len(d.RelatedInformation) != 1 || d.RelatedInformation[0].Location.URI != uri.File(filepath.Join(root, "definitions", pair[1])) {
				t.Errorf("%s: related %+v, want %s", pair[0], d.RelatedInformation, pair[1])
			}
		}
		if found != 1 {
			t.Errorf("%s: %d ambiguity diagnostics, want 1; all: %q", pair[0], found, messages(st.Diagnostics[uri.File(path)]))
		}
	}
}

// YAML that dfd's parser accepts but core's does not (an unknown tag) is
// marked where core's own message, as the official CLI prints it, says.
func TestSettingsErrorWhereCoreSaysIt(t *testing.T) {
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": errorPlacesSettings + "vars:\n  answer: !custom 42\n",
		"package.json":           "{}\n",
		"definitions/a.sqlx":     "SELECT 1\n",
	})
	stdout, stderr := officialCompile(t, root)
	m := regexp.MustCompile(`is not a valid YAML file: .*\((\d+):(\d+)\)`).FindStringSubmatch(stdout + stderr)
	if m == nil {
		t.Fatalf("the CLI did not refuse the settings: %s%s", stdout, stderr)
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])

	s := startServer(t, serverConfig{})
	s.init(t, root)
	settings := filepath.Join(root, "workflow_settings.yaml")
	ds := s.awaitDiags(t, settings, "settings error", func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	if got := ds[0].Range.Start; int(got.Line) != line-1 || int(got.Character) != col-1 {
		t.Errorf("%q at %d:%d, want %d:%d (core's)", fakeeditor.Message(ds[0]), got.Line+1, got.Character+1, line, col)
	}
	if msg := fakeeditor.Message(ds[0]); !strings.Contains(msg, "unknown tag") || strings.Contains(msg, "\n") {
		t.Errorf("message %q", msg)
	}
}

// A cycle made by an edit is on every file of the cycle — the edited one
// too — each on its ref to the other.
func TestCycleOnEveryFile(t *testing.T) {
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": errorPlacesSettings,
		"definitions/a.sqlx":     "config { type: \"view\" }\nSELECT * FROM ${ref(\"b\")}\n",
		"definitions/b.sqlx":     "config { type: \"view\" }\nSELECT 1 AS one\n",
	})
	s := startServer(t, serverConfig{})
	s.init(t, root)
	b := filepath.Join(root, "definitions", "b.sqlx")
	if err := s.ed.Open(s.ctx, b); err != nil {
		t.Fatal(err)
	}
	s.awaitPreviewChanged(t, 0, "")
	if err := s.ed.Replace(s.ctx, b, "SELECT 1 AS one", "SELECT * FROM ${ref(\"a\")}"); err != nil {
		t.Fatal(err)
	}
	ds := s.awaitDiags(t, b, "cycle on the edited file", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "Circular dependency") })
	chain := regexp.MustCompile(`"name":"(\w+)"`).FindAllStringSubmatch(fakeeditor.Message(ds[0]), -1)
	if len(chain) != 2 {
		t.Fatalf("chain of %q", fakeeditor.Message(ds[0]))
	}
	for i, c := range chain {
		next := chain[(i+1)%len(chain)][1]
		path := filepath.Join(root, "definitions", c[1]+".sqlx")
		ds := s.awaitDiags(t, path, "cycle", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "Circular dependency") })
		if len(ds) != 1 {
			t.Errorf("%s: %q", c[1], messages(ds))
		}
		text := s.ed.Text(path) // the edited buffer, else the disk
		if text == "" {
			b, _ := os.ReadFile(path)
			text = string(b)
		}
		if got := textRange(text, ds[0].Range); got != next {
			t.Errorf("%s: the cycle is on %q, want its ref to %s", c[1], got, next)
		}
	}
}

// A cycle of any length is on each file's mention of the action it
// depends on within the cycle, whichever way core's chain runs (against
// the dependencies for a simple cycle: "a > c > b > a" when a refs b, b
// refs c and c refs a) and where the chain's neighbours do not depend on
// each other (a component with more edges than a cycle). A file that only
// depends on the cycle is not part of it.
func TestCycleOnEachDependency(t *testing.T) {
	const view = "config { type: \"view\" }\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  map[string][]string // file: "line:col-line:col text" of each cycle diagnostic
	}{{
		name: "three: ref, ref, dependencies",
		files: map[string]string{
			"definitions/a.sqlx": view + "SELECT * FROM ${ref(\"b\")}\n",
			"definitions/b.sqlx": view + "SELECT * FROM ${ref(\"c\")}\n",
			"definitions/c.js":   "publish(\"c\", {type: \"view\", dependencies: [\"a\"]}).query(\"SELECT 1\");\n",
		},
		want: map[string][]string{
			"definitions/a.sqlx": {"1:21-1:22 b"},
			"definitions/b.sqlx": {"1:21-1:22 c"},
			"definitions/c.js":   {"0:44-0:45 a"},
		},
	}, {
		name: "four, and a file outside",
		files: map[string]string{
			"definitions/a.sqlx": view + "SELECT * FROM ${ref(\"b\")}\n",
			"definitions/b.sqlx": view + "SELECT * FROM ${ref(\"c\")}\n",
			"definitions/c.sqlx": view + "SELECT * FROM ${ref(\"d\")}\n",
			"definitions/d.sqlx": "config { type: \"view\", dependencies: [\"a\"] }\nSELECT 1 AS one\n",
			"definitions/x.sqlx": view + "SELECT * FROM ${ref(\"a\")}\n",
		},
		want: map[string][]string{
			"definitions/a.sqlx": {"1:21-1:22 b"},
			"definitions/b.sqlx": {"1:21-1:22 c"},
			"definitions/c.sqlx": {"1:21-1:22 d"},
			"definitions/d.sqlx": {"0:39-0:40 a"},
			"definitions/x.sqlx": nil,
		},
	}, {
		name: "a JavaScript file with an action outside the cycle",
		files: map[string]string{
			"definitions/a.sqlx": view + "SELECT * FROM ${ref(\"b\")}\n",
			"definitions/b.js": "publish(\"b\", {type: \"view\"}).query(ctx => `SELECT * FROM ${ctx.ref(\"a\")}`);\n" +
				"publish(\"x\", {type: \"view\"}).query(ctx => `SELECT * FROM ${ctx.ref(\"a\")}`);\n",
		},
		want: map[string][]string{
			"definitions/a.sqlx": {"1:21-1:22 b"},
			"definitions/b.js":   {"0:68-0:69 a"},
		},
	}, {
		name: "two cycles through one action",
		files: map[string]string{
			"definitions/a.sqlx": view + "SELECT * FROM ${ref(\"b\")} JOIN ${ref(\"c\")} USING (id)\n",
			"definitions/b.sqlx": view + "SELECT * FROM ${ref(\"a\")}\n",
			"definitions/c.sqlx": view + "SELECT * FROM ${ref(\"a\")}\n",
		},
		want: map[string][]string{
			"definitions/a.sqlx": {"1:21-1:22 b", "1:38-1:39 c"},
			"definitions/b.sqlx": {"1:21-1:22 a"},
			"definitions/c.sqlx": {"1:21-1:22 a"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"workflow_settings.yaml": errorPlacesSettings}
			maps.Copy(files, tc.files)
			root := testenv.WriteProject(t, testenv.CoreVersion, files)
			s := startServer(t, serverConfig{})
			s.init(t, root)
			s.awaitPreviewChanged(t, 0, "")
			for _, rel := range slices.Sorted(maps.Keys(tc.want)) {
				path := filepath.Join(root, filepath.FromSlash(rel))
				var ds []protocol.Diagnostic
				if tc.want[rel] != nil {
					ds = s.awaitDiags(t, path, "cycle", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "Circular dependency") })
				} else {
					ds = s.ed.Snapshot().Diagnostics[uri.File(path)]
				}
				var got []string
				for _, d := range ds {
					if strings.Contains(fakeeditor.Message(d), "Circular dependency") {
						r := d.Range
						got = append(got, fmt.Sprintf("%d:%d-%d:%d %s", r.Start.Line, r.Start.Character, r.End.Line, r.End.Character, rangeText(t, path, r)))
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, tc.want[rel]) {
					t.Errorf("%s: the cycle is on %q, want %q", rel, got, tc.want[rel])
				}
			}
		})
	}
}

// textRange is the text a one-line range covers in text (ASCII).
func textRange(text string, r protocol.Range) string {
	lines := strings.Split(text, "\n")
	if int(r.Start.Line) >= len(lines) || r.End.Line != r.Start.Line {
		return ""
	}
	l := lines[r.Start.Line]
	return l[min(int(r.Start.Character), len(l)):min(int(r.End.Character), len(l))]
}

// A dependency that does not resolve is on each entry of a dependencies
// list naming it (SQLX config, .dependencies(…), a JavaScript config) and
// on each ref, once per place, though core reports a ref twice ("Could not
// resolve", "Missing dependency") and an ambiguous name once per mention.
func TestUnresolvedDependencyPlaces(t *testing.T) {
	files := map[string]string{
		"workflow_settings.yaml":    errorPlacesSettings,
		"definitions/x1.sqlx":       "config { type: \"table\", schema: \"s1\", name: \"x\" }\nSELECT 1\n",
		"definitions/x2.sqlx":       "config { type: \"table\", schema: \"s2\", name: \"x\" }\nSELECT 2\n",
		"definitions/user.sqlx":     "config { type: \"view\", dependencies: [\"x\", \"nope1\"] }\nSELECT * FROM ${ref(\"x\")} JOIN ${ref(\"nope2\")} USING (id)\n",
		"definitions/api.js":        "publish(\"y\").dependencies([\"nope3\"]).query(\"SELECT 1\");\n",
		"definitions/config_obj.js": "publish(\"z\", { type: \"view\", dependencies: [\"nope4\"] }).query(\"SELECT 1\");\n",
	}
	root := testenv.WriteProject(t, testenv.CoreVersion, files)
	s := startServer(t, serverConfig{})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	st := s.ed.Snapshot()
	for rel := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		ds := st.Diagnostics[uri.File(path)]
		// One diagnostic per place.
		seen := map[protocol.Range]string{}
		for _, d := range ds {
			if prev, ok := seen[d.Range]; ok {
				t.Errorf("%s: two diagnostics on %q: %q and %q", rel, rangeText(t, path, d.Range), prev, fakeeditor.Message(d))
			}
			seen[d.Range] = fakeeditor.Message(d)
		}
		// Every mention of an unresolved or ambiguous name is marked.
		for _, name := range []string{"nope1", "nope2", "nope3", "nope4", "x"} {
			if strings.HasPrefix(rel, "definitions/x") {
				continue
			}
			for i := 0; ; {
				j := strings.Index(files[rel][i:], `"`+name+`"`)
				if j < 0 {
					break
				}
				at := i + j + 1
				i = at
				pos := fakeeditor.PositionOf(files[rel], at)
				found := false
				for _, d := range ds {
					if d.Range.Start == pos && rangeText(t, path, d.Range) == name && strings.Contains(fakeeditor.Message(d), name) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: no diagnostic on %q at %d:%d; got %q", rel, name, pos.Line+1, pos.Character+1, messages(ds))
				}
			}
		}
	}
}

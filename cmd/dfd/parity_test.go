package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/jit/nodeworker"
)

// fixtureExpectation is one line of testdata/README.md's outcome block.
type fixtureExpectation struct {
	name   string
	cores  []string
	errors bool
}

var expectationRE = regexp.MustCompile(`^([a-z0-9_]+): cores=([0-9.,]+) expect=(ok|errors)( errors=[0-9]+)? counts=(\S+)$`)

func fixtureExpectations(t *testing.T) []fixtureExpectation {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), "testdata", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fixtureExpectation
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := expectationRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		out = append(out, fixtureExpectation{name: m[1], cores: strings.Split(m[2], ","), errors: m[3] == "errors"})
	}
	if len(out) == 0 {
		t.Fatal("no fixture expectations found in testdata/README.md")
	}
	return out
}

// fixtureFlags reads <fixture>/dfd-test-flags.txt: one argument per line.
func fixtureFlags(t *testing.T, dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "dfd-test-flags.txt"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			flags = append(flags, l)
		}
	}
	return flags
}

type compileRun struct {
	stdout, stderr []byte
	code           int
}

func runOfficialCLI(t *testing.T, dir string, flags []string) compileRun {
	t.Helper()
	args := append([]string{testenv.CLIBundle(t), "compile", dir, "--json"}, flags...)
	cmd := exec.Command("node", args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the official CLI: %v", err)
	}
	return compileRun{stdout.Bytes(), stderr.Bytes(), code}
}

func runDFD(t *testing.T, args ...string) compileRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: os.Getenv}
	code := run(context.Background(), env, args)
	return compileRun{stdout.Bytes(), stderr.Bytes(), code}
}

// The official CLI compiles under vm2, which inserts this statement into
// every catch clause of user code, including JiT functions that end up in
// the graph as text. dfd's jitCode is the clean source.
var vm2CatchRE = regexp.MustCompile(`[A-Za-z_$][\w$]*=VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL\.handleException\([A-Za-z_$][\w$]*\);`)

// Engine-made errors are worded by V8 in the CLI and by goja in dfd.
var engineErrorRE = regexp.MustCompile(`(?m)^(SyntaxError|TypeError|ReferenceError|RangeError):`)

// normalize drops what may differ between the two engines: stack texts,
// and the message of an engine-made error (its class must still match).
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			switch k {
			case "stack":
				continue
			case "jitCode":
				if s, ok := val.(string); ok {
					val = vm2CatchRE.ReplaceAllString(s, "")
				}
			}
			out[k] = normalize(val)
		}
		if stack, ok := x["stack"].(string); ok {
			if m := engineErrorRE.FindStringSubmatch(stack); m != nil {
				out["message"] = "<" + m[1] + " worded by the engine>"
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

func parseGraph(t *testing.T, who string, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s printed no JSON graph: %v\n%s", who, err, b)
	}
	return v
}

// TestParityWithOfficialCLI compiles every fixture with the official
// `dataform compile --json` (npm @dataform/cli) and with `dfd compile --json`
// on the same copy of the project, with every core version the fixture is
// meant for, and requires the same graph, exit status and error files. dfd
// runs with each engine: --engine=goja (in process) and --engine=node (a
// Node.js worker; skipped when no Node.js ≥ 20 is installed).
func TestParityWithOfficialCLI(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is needed to run the official CLI")
	}
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	for _, fx := range fixtureExpectations(t) {
		for _, core := range fx.cores {
			t.Run(fx.name+"@"+core, func(t *testing.T) {
				src := testenv.Fixture(fx.name)
				install := core
				if _, err := os.Stat(filepath.Join(src, "package.json")); os.IsNotExist(err) {
					install = "" // a dataformCoreVersion project: each tool installs core itself
				}
				dir := testenv.ProjectCopy(t, src, install)
				flags := fixtureFlags(t, src)
				cli := runOfficialCLI(t, dir, flags)
				if want := map[bool]int{false: 0, true: 1}[fx.errors]; cli.code != want {
					t.Errorf("the official CLI exited %d, the fixture expects %d:\n%s", cli.code, want, cli.stderr)
				}
				cliGraph := normalize(parseGraph(t, "the CLI", cli.stdout))
				for _, eng := range []string{engineGoja, engineNode} {
					t.Run(eng, func(t *testing.T) {
						if eng == engineNode {
							if _, _, err := nodeworker.FindNode(); err != nil {
								t.Skipf("--engine=node not tested: %v", err)
							}
						}
						dfd := runDFD(t, append([]string{"compile", dir, "--json", "--engine=" + eng}, flags...)...)
						if cli.code != dfd.code {
							t.Errorf("exit status: CLI %d, dfd %d\nCLI stderr:\n%s\ndfd stderr:\n%s", cli.code, dfd.code, cli.stderr, dfd.stderr)
						}
						dfdGraph := normalize(parseGraph(t, "dfd", dfd.stdout))
						if d := cmp.Diff(cliGraph, dfdGraph); d != "" {
							t.Errorf("graphs differ (-CLI +dfd):\n%s", d)
						}
						if !fx.errors && !bytes.Equal(vm2CatchRE.ReplaceAll(cli.stdout, nil), dfd.stdout) {
							t.Errorf("stdout is not byte-identical to the CLI's although the graphs are equal")
						}
						for _, e := range compilationErrors(cliGraph) {
							if !bytes.Contains(dfd.stderr, []byte(e)) {
								t.Errorf("dfd's stderr does not name %q:\n%s", e, dfd.stderr)
							}
						}
					})
				}
			})
		}
	}
}

func compilationErrors(graph any) []string {
	g, _ := graph.(map[string]any)
	ge, _ := g["graphErrors"].(map[string]any)
	errs, _ := ge["compilationErrors"].([]any)
	var out []string
	for _, e := range errs {
		m, _ := e.(map[string]any)
		if f, _ := m["fileName"].(string); f != "" {
			out = append(out, f)
		}
	}
	return out
}

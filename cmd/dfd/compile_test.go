package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/jit/nodeworker"
)

const testSettings = "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\n"

func TestCompileBadProjects(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string // substrings of stderr
	}{
		{
			name:  "not a project",
			files: map[string]string{"README.md": "hello"},
			want:  []string{"workflow_settings.yaml"},
		},
		{
			name:  "no core installed",
			files: map[string]string{"workflow_settings.yaml": testSettings, "definitions/a.sqlx": "select 1"},
			want:  []string{"dataformCoreVersion must be specified either in workflow_settings.yaml or via a package.json"},
		},
		{
			name:  "a core version that cannot be installed",
			files: map[string]string{"workflow_settings.yaml": "dataformCoreVersion: 3.0.9999\n" + testSettings},
			want:  []string{"3.0.9999"},
		},
		{
			name:  "a core version that is not a version",
			files: map[string]string{"workflow_settings.yaml": "dataformCoreVersion: ../../evil\n" + testSettings},
			want:  []string{"../../evil"},
		},
		{
			name:  "malformed workflow_settings.yaml",
			files: map[string]string{"workflow_settings.yaml": "defaultProject: [unclosed\n"},
			want:  []string{"workflow_settings.yaml:"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && strings.Contains(c.name, "installed") {
				t.Skip("asks the npm registry")
			}
			t.Setenv("DFD_CACHE_DIR", t.TempDir())
			t.Setenv("npm_config_fetch_retries", "0")
			dir := testenv.WriteProject(t, "", c.files)
			res := runDFD(t, "compile", dir, "--json")
			if res.code != 1 {
				t.Errorf("exit status %d, want 1", res.code)
			}
			if len(res.stdout) != 0 {
				t.Errorf("printed on stdout: %s", res.stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(string(res.stderr), w) {
					t.Errorf("stderr does not mention %q:\n%s", w, res.stderr)
				}
			}
		})
	}
}

func TestCompileSummaryAndErrors(t *testing.T) {
	dir := cliProject(t, map[string]string{
		"workflow_settings.yaml": testSettings,
		"definitions/ok.sqlx":    "config { type: 'table' }\nselect 1 as id",
		"definitions/bad.js":     "throw new Error('broken on purpose');",
	})
	t.Setenv("NO_COLOR", "1")
	res := runDFD(t, "compile", dir)
	if res.code != 1 {
		t.Errorf("exit status %d, want 1", res.code)
	}
	if !strings.Contains(string(res.stdout), "Compiled 1 action(s).") || !strings.Contains(string(res.stdout), "ds.ok [table]") {
		t.Errorf("summary:\n%s", res.stdout)
	}
	if !strings.Contains(string(res.stderr), "definitions/bad.js: Error: broken on purpose\n    at CallSite {}") {
		t.Errorf("stderr:\n%s", res.stderr)
	}
}

func TestCompileFlags(t *testing.T) {
	dir := cliProject(t, map[string]string{
		"workflow_settings.yaml": testSettings,
		"definitions/ok.sqlx":    "config { type: 'table' }\nselect '${dataform.projectConfig.vars.region}' as r",
	})
	t.Chdir(dir)
	res := runDFD(t, "compile", "--json", "--schema-suffix=dev", "--vars=region=eu", "--timeout", "30s")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{`"schema": "ds_dev"`, `select 'eu' as r`} {
		if !strings.Contains(string(res.stdout), want) {
			t.Errorf("output lacks %s", want)
		}
	}
	if res := runDFD(t, "compile", filepath.Join(dir, "nope")); res.code != 1 {
		t.Errorf("missing dir: exit %d", res.code)
	}
	if res := runDFD(t, "compile", "--schema-suffix=bad-suffix"); res.code != 1 {
		t.Errorf("bad --schema-suffix: exit %d, want 1 (as the CLI)", res.code)
	}
	if res := runDFD(t, "compile", "--timeout=soon"); res.code != 2 {
		t.Errorf("bad --timeout: exit %d, want 2", res.code)
	}
}

// runDFDProcess runs dfd with args as a process of its own (the test
// binary, see TestMain), for what is the process's: its heap ceiling.
func runDFDProcess(t *testing.T, timeout time.Duration, env []string, args ...string) compileRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asDFDEnv+"=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("dfd %s did not finish within %s:\n%s", strings.Join(args, " "), timeout, stderr.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return compileRun{stdout.Bytes(), stderr.Bytes(), cmd.ProcessState.ExitCode()}
}

// needNode skips a test of the node engine only where no Node.js ≥ 20 is
// installed; a node that is there and fails is a failure.
func needNode(t *testing.T) {
	t.Helper()
	_, _, err := nodeworker.FindNode()
	if err == nil {
		return
	}
	if _, lerr := exec.LookPath("node"); lerr != nil && os.Getenv("DFD_NODE") == "" {
		t.Skipf("the node engine is not tested: %v", err)
	}
	if strings.Contains(err.Error(), fmt.Sprintf("needs %d or newer", nodeworker.MinNodeMajor)) {
		t.Skipf("the node engine is not tested: %v", err)
	}
	t.Fatal(err)
}

// A project whose JavaScript builds an ever-growing array must end with
// the memory error, on either engine, instead of eating the machine (the
// Node.js engine used to reach V8's default of several GB and then print a
// native stack trace).
func TestCompileMemoryLimit(t *testing.T) {
	dir := cliProject(t, map[string]string{
		"workflow_settings.yaml": testSettings,
		"definitions/ok.sqlx":    "config { type: 'table' }\nselect 1 as id",
		"definitions/grow.js":    "const a = [];\nfor (let i = 0; ; i++) a.push({ i, s: 'x' + i });\n",
	})
	for _, eng := range []string{engineGoja, engineNode} {
		t.Run(eng, func(t *testing.T) {
			if eng == engineNode {
				needNode(t)
			}
			start := time.Now()
			res := runDFDProcess(t, 2*time.Minute, []string{"DFD_CACHE_DIR=" + t.TempDir()},
				"compile", dir, "--engine="+eng, "--memory-limit=256MiB", "--timeout=10m")
			t.Logf("%s: exit %d after %s", eng, res.code, time.Since(start).Round(time.Millisecond))
			if res.code != 1 {
				t.Errorf("exit status %d, want 1", res.code)
			}
			stderr := string(res.stderr)
			for _, want := range []string{"exceeded the memory limit of 256 MiB", "--memory-limit"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr)
				}
			}
			for _, noise := range []string{"FATAL ERROR", "stack trace", "goroutine "} {
				if strings.Contains(stderr, noise) {
					t.Errorf("stderr has %q:\n%s", noise, stderr)
				}
			}
		})
	}
	// With the default ceiling, in-process compiles collect only as the
	// heap nears the soft limit (compileWith): the ceiling still holds.
	t.Run("goja, default ceiling", func(t *testing.T) {
		res := runDFDProcess(t, 2*time.Minute, []string{"DFD_CACHE_DIR=" + t.TempDir()},
			"compile", dir, "--engine=goja", "--timeout=10m")
		if res.code != 1 || !strings.Contains(string(res.stderr), "exceeded the memory limit of 1024 MiB") {
			t.Errorf("exit status %d, want 1 with the memory error:\n%s", res.code, res.stderr)
		}
	})
	// A project within the ceiling compiles as before.
	ok := cliProject(t, map[string]string{
		"workflow_settings.yaml": testSettings,
		"definitions/ok.sqlx":    "config { type: 'table' }\nselect 1 as id",
	})
	if res := runDFD(t, "compile", ok, "--memory-limit=256MiB"); res.code != 0 {
		t.Errorf("a small project under --memory-limit=256MiB: exit %d\n%s", res.code, res.stderr)
	}
	for _, bad := range []string{"--memory-limit=lots", "--memory-limit=1MiB", "--memory-limit=-1"} {
		if res := runDFD(t, "compile", ok, bad); res.code != 2 {
			t.Errorf("%s: exit %d, want 2", bad, res.code)
		}
	}
}

// Every command that compiles has --engine (or, for diff, whose
// revisions compile on goja, only --memory-limit): a project over the
// default ceiling on goja used to make `dfd check` fail with a message
// naming a flag it did not have. The memory error names the flag each
// command takes, on either engine.
func TestCommandsMemoryLimit(t *testing.T) {
	dir := cliProject(t, map[string]string{
		"workflow_settings.yaml": testSettings,
		"definitions/ok.sqlx":    "config { type: 'table' }\nselect 1 as id",
		"definitions/grow.js":    "const a = [];\nfor (let i = 0; ; i++) a.push({ i, s: 'x' + i });\n",
	})
	needNode(t)
	for _, c := range []struct {
		cmd  []string
		engs []string
	}{
		{[]string{"check", "--offline", "--allow-unchecked"}, []string{engineGoja, engineNode}},
		{[]string{"lineage", "--action", "ok", "--offline"}, []string{engineNode}},
		{[]string{"rows", "--action", "ok"}, []string{engineNode}},
		{[]string{"jit", "--action", "ok"}, []string{engineNode}},
	} {
		for _, eng := range c.engs {
			t.Run(c.cmd[0]+"/"+eng, func(t *testing.T) {
				args := append(append([]string{}, c.cmd...), dir, "--engine="+eng, "--memory-limit=256MiB", "--timeout=10m")
				res := runDFDProcess(t, 2*time.Minute, []string{"DFD_CACHE_DIR=" + t.TempDir()}, args...)
				if res.code != 1 {
					t.Errorf("exit status %d, want 1\n%s", res.code, res.stderr)
				}
				if !strings.Contains(string(res.stderr), "exceeded the memory limit of 256 MiB") {
					t.Errorf("stderr does not name the limit:\n%s", res.stderr)
				}
			})
		}
	}
	ok := cliProject(t, map[string]string{
		"workflow_settings.yaml": testSettings,
		"definitions/ok.sqlx":    "config { type: 'table' }\nselect 1 as id",
	})
	// --engine is honoured: node runs (through DFD_NODE) only when chosen.
	for _, eng := range []string{engineNode, engineGoja} {
		mark := filepath.Join(t.TempDir(), "ran")
		wrapper := filepath.Join(t.TempDir(), "node")
		node, err := exec.LookPath("node")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wrapper, []byte("#!/bin/sh\ntouch "+mark+"\nexec "+node+" \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		res := runDFDProcess(t, 2*time.Minute, []string{"DFD_CACHE_DIR=" + t.TempDir(), "DFD_NODE=" + wrapper},
			"check", ok, "--offline", "--allow-unchecked", "--engine="+eng)
		_, statErr := os.Stat(mark)
		if res.code != 0 || (statErr == nil) != (eng == engineNode) {
			t.Errorf("check --engine=%s: exit %d, node ran: %v\n%s", eng, res.code, statErr == nil, res.stderr)
		}
	}
	for _, cmd := range [][]string{{"check", "--offline"}, {"lineage", "--action", "ok"}, {"rows", "--action", "ok"}, {"jit", "--action", "ok"}, {"diff", "--project"}} {
		for _, bad := range []string{"--memory-limit=1MiB", "--engine=v8"} {
			if cmd[0] == "diff" && bad == "--engine=v8" {
				continue // diff has no --engine
			}
			res := runDFD(t, append(append([]string{}, cmd...), ok, bad)...)
			if res.code != 2 || !strings.Contains(string(res.stderr), strings.SplitN(bad, "=", 2)[0]) {
				t.Errorf("%v %s: exit %d, want 2 naming the flag\n%s", cmd, bad, res.code, res.stderr)
			}
		}
	}
}

// A core whose bundle.js an interrupted install left truncated: dfd compile
// names the file, says it looks truncated or corrupt and how to reinstall
// the core, on either engine (V8 alone would say only "SyntaxError"), for
// a core in the project's node_modules and one in dfd's cache.
func TestCompileDamagedCore(t *testing.T) {
	src := testenv.CoreDir(t, testenv.CoreVersion)
	for _, where := range []string{"node_modules", "cache"} {
		for _, eng := range []string{engineGoja, engineNode} {
			t.Run(where+"/"+eng, func(t *testing.T) {
				if eng == engineNode {
					needNode(t)
				}
				cache := t.TempDir()
				t.Setenv("DFD_CACHE_DIR", cache)
				files := map[string]string{"definitions/a.sqlx": "config { type: 'table' }\nselect 1 as id"}
				var dir, coreDir, advice string
				if where == "node_modules" {
					files["workflow_settings.yaml"] = testSettings
					files["package.json"] = `{"dependencies": {"@dataform/core": "` + testenv.CoreVersion + `"}}`
					dir = testenv.WriteProject(t, testenv.CoreVersion, files)
					coreDir = filepath.Join(dir, "node_modules", "@dataform", "core")
					advice = "run `rm -rf node_modules/@dataform/core && npm install` in " + dir
				} else {
					files["workflow_settings.yaml"] = "dataformCoreVersion: " + testenv.CoreVersion + "\n" + testSettings
					dir = testenv.WriteProject(t, "", files)
					versionDir := filepath.Join(cache, "core", testenv.CoreVersion)
					coreDir = filepath.Join(versionDir, "node_modules", "@dataform", "core")
					if err := testenv.CopyTree(src, coreDir); err != nil {
						t.Fatal(err)
					}
					advice = "delete " + versionDir
				}
				bundle := filepath.Join(coreDir, "bundle.js")
				fi, err := os.Stat(bundle)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(bundle, fi.Size()/2); err != nil {
					t.Fatal(err)
				}
				res := runDFD(t, "compile", dir, "--engine="+eng)
				if res.code != 1 {
					t.Errorf("exit status %d, want 1", res.code)
				}
				for _, want := range []string{bundle, "looks truncated or corrupt", advice} {
					if !strings.Contains(string(res.stderr), want) {
						t.Errorf("stderr does not say %q:\n%s", want, res.stderr)
					}
				}
			})
		}
	}
}

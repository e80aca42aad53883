package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// TestInstallRelease runs scripts/install-release.sh (what the GitHub
// Action, action.yml, installs dfd with) against a release served on
// loopback laid out as GitHub serves one: the binary is installed once its
// checksum matches SHA256SUMS, refused when it does not, and "latest"
// and a version are fetched from their own URLs.
func TestInstallRelease(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skipf("curl is not installed: %v", err)
	}
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" {
		t.Skipf("no release binary for linux/%s", runtime.GOARCH)
	}
	name := "dfd-linux-" + arch
	// The "binary": a script printing what dfd version prints; the script
	// under test only moves bytes.
	bin := []byte("#!/bin/sh\necho 'dfd 1.2.3 (commit abc)'\n")
	sums := fmt.Sprintf("%x  %s\n%x  dfd-windows-amd64.exe\n", sha256.Sum256(bin), name, sha256.Sum256([]byte("other")))
	var mu sync.Mutex // the server's goroutines and the test's
	tampered := false
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		paths = append(paths, r.URL.Path)
		switch {
		case strings.Contains(r.URL.Path, "/v9.9.9"):
			http.NotFound(w, r) // a release that does not exist
		case strings.HasSuffix(r.URL.Path, "/"+name):
			if tampered {
				_, _ = w.Write(append(bin, '#'))
				return
			}
			_, _ = w.Write(bin)
		case strings.HasSuffix(r.URL.Path, "/SHA256SUMS"):
			_, _ = w.Write([]byte(sums))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	fetched := func() []string {
		mu.Lock()
		defer mu.Unlock()
		p := paths
		paths = nil
		return p
	}
	install := func(args ...string) (string, string, int) {
		cmd := exec.Command("bash", append([]string{filepath.Join(testenv.RepoRoot(), "scripts", "install-release.sh")}, args...)...)
		cmd.Env = append(os.Environ(), "DFD_RELEASE_BASE_URL="+srv.URL+"/dfdtools/dfd/releases")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return strings.TrimSpace(stdout.String()), stderr.String(), cmd.ProcessState.ExitCode()
	}

	dir := filepath.Join(t.TempDir(), "bin")
	got, stderr, code := install("v1.2.3", dir)
	if code != 0 || got != filepath.Join(dir, "dfd") {
		t.Fatalf("exit %d, printed %q:\n%s", code, got, stderr)
	}
	out, err := exec.Command(got).Output()
	if err != nil || string(out) != "dfd 1.2.3 (commit abc)\n" {
		t.Errorf("installed binary: %q, %v", out, err)
	}
	if p, want := fetched(), "/dfdtools/dfd/releases/download/v1.2.3/"+name; len(p) == 0 || p[0] != want {
		t.Errorf("fetched %v, want %s first", p, want)
	}

	_, stderr, code = install("latest", dir)
	if p := fetched(); code != 0 || len(p) == 0 || p[0] != "/dfdtools/dfd/releases/latest/download/"+name {
		t.Errorf("latest: exit %d, fetched %v\n%s", code, p, stderr)
	}

	mu.Lock()
	tampered = true
	mu.Unlock()
	dir2 := filepath.Join(t.TempDir(), "bin")
	_, stderr, code = install("1.2.3", dir2)
	if code != 1 || !strings.Contains(stderr, "checksum") {
		t.Errorf("tampered binary: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir2, "dfd")); err == nil {
		t.Errorf("a binary whose checksum does not match was installed")
	}
	_, stderr, code = install("9.9.9-missing", dir2)
	if code != 1 || !strings.Contains(stderr, "download") {
		t.Errorf("missing release: exit %d\n%s", code, stderr)
	}
}

// TestGitHubAction runs the steps of action.yml as the Actions runner
// would (bash, the runner's variables and files, the ${{ … }} expressions
// substituted) against a release served on loopback whose binary is dfd
// (this test binary, through a wrapper): the install step puts dfd on
// GITHUB_PATH and in its output, the check step annotates the planted
// errors of the sql_check fixture and fails.
func TestGitHubAction(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs map[string]struct{ Default string }
		Runs   struct {
			Using string
			Steps []struct {
				ID, If, Shell, Run string
				Env                map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(b, &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if action.Runs.Using != "composite" || len(action.Runs.Steps) != 2 {
		t.Fatalf("action.yml runs %+v", action.Runs)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := []byte("#!/bin/sh\n" + asDFDEnv + "=1 exec '" + self + "' \"$@\"\n")
	name := "dfd-linux-" + runtime.GOARCH
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/dfdtools/dfd/releases/download/v0.9.0/" + name:
			_, _ = w.Write(bin)
		case "/dfdtools/dfd/releases/download/v0.9.0/SHA256SUMS":
			fmt.Fprintf(w, "%x  %s\n", sha256.Sum256(bin), name)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	proj := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	work := t.TempDir()
	inputs := map[string]string{"version": "0.9.0", "project": ".", "args": "--metadata " + sqlCheckMetadata(), "format": action.Inputs["format"].Default, "check": action.Inputs["check"].Default}
	if inputs["format"] != "github" {
		t.Errorf("the action's default format is %q, not github", inputs["format"])
	}
	outputs := map[string]string{}
	exprRE := regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)
	expand := func(s string) string {
		return exprRE.ReplaceAllStringFunc(s, func(m string) string {
			e := exprRE.FindStringSubmatch(m)[1]
			if in, ok := strings.CutPrefix(e, "inputs."); ok {
				return inputs[in]
			}
			if out, ok := strings.CutPrefix(e, "steps.install.outputs."); ok {
				return outputs[out]
			}
			t.Fatalf("action.yml: expression %q unknown to this test", e)
			return ""
		})
	}
	for i, step := range action.Runs.Steps {
		if step.If != "" && expand("${{ "+strings.ReplaceAll(step.If, " == 'true'", "")+" }}") != "true" {
			continue
		}
		ghOutput, ghPath := filepath.Join(work, fmt.Sprintf("output%d", i)), filepath.Join(work, "path")
		cmd := exec.Command("bash", "-e", "-c", expand(step.Run))
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "GITHUB_ACTION_PATH="+testenv.RepoRoot(), "GITHUB_OUTPUT="+ghOutput, "GITHUB_PATH="+ghPath,
			"RUNNER_TEMP="+work, "DFD_RELEASE_BASE_URL="+srv.URL+"/dfdtools/dfd/releases")
		for k, v := range step.Env {
			cmd.Env = append(cmd.Env, k+"="+expand(v))
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		switch step.ID {
		case "install":
			if err != nil {
				t.Fatalf("install step: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			o, _ := os.ReadFile(ghOutput)
			path, ok := strings.CutPrefix(strings.TrimSpace(string(o)), "path=")
			if !ok || !strings.HasPrefix(path, work) {
				t.Fatalf("install step's output %q", o)
			}
			outputs["path"] = path
			if p, _ := os.ReadFile(ghPath); strings.TrimSpace(string(p)) != filepath.Dir(path) {
				t.Errorf("GITHUB_PATH: %q, want %s", p, filepath.Dir(path))
			}
			if !strings.HasPrefix(stdout.String(), "dfd ") {
				t.Errorf("install step prints no version: %q", stdout.String())
			}
		default:
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("check step: exit %d, want 1 (the planted errors)\n%s", code, stderr.String())
			}
			got := parseGitHub(t, stdout.Bytes())
			if len(got) != 6 || got[0].command != "error" {
				t.Errorf("check step: %d annotations, want the 6 planted errors:\n%s", len(got), stdout.String())
			}
		}
	}
	if outputs["path"] == "" {
		t.Error("the install step did not run")
	}
}

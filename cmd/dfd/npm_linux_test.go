package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// TestNPMPackages lays out the npm packages as scripts/release.sh does
// (npm/make-platform.sh, npm/make-main.sh) around a dfd built here, packs
// them with `npm pack`, installs the tarballs into a scratch Dataform
// project offline (npm's registry set to a closed loopback port, so
// nothing can come from elsewhere), and requires `npx dfd compile --json`
// to print what the official CLI prints for the same project, and the
// launcher's errors to say what is missing.
func TestNPMPackages(t *testing.T) {
	testenv.Node(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm is needed: %v", err)
	}
	cpu := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if cpu == "" {
		t.Skipf("dfd ships no npm package for linux/%s", runtime.GOARCH)
	}
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	work := t.TempDir()
	// Stripped, as a release is: npm pack gzips the binary, and half the
	// bytes halve that time.
	bin := filepath.Join(work, "dfd")
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "./cmd/dfd")
	build.Dir = testenv.RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const version = "0.0.0-test.1"
	repo := testenv.RepoRoot()
	npmDir := filepath.Join(work, "npm")
	platform := filepath.Join(npmDir, "dfd-linux-"+cpu)
	sh := func(dir string, env []string, name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
		}
		return out
	}
	sh(repo, nil, "bash", "npm/make-platform.sh", version, "linux", cpu, bin, platform)
	sh(repo, nil, "bash", "npm/make-main.sh", version, filepath.Join(npmDir, "dfd"))

	// Offline: no registry answers (a closed port on loopback), and
	// --offline keeps npm to its cache; everything comes from the tarballs.
	offline := []string{"npm_config_registry=http://127.0.0.1:9/", "npm_config_offline=true", "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false"}
	tgz := filepath.Join(work, "tgz")
	if err := os.MkdirAll(tgz, 0o755); err != nil {
		t.Fatal(err)
	}
	var tarballs []string
	for _, pkg := range []string{filepath.Join(npmDir, "dfd"), platform, testenv.CoreDir(t, testenv.CoreVersion)} {
		name := strings.TrimSpace(string(sh(work, offline, "npm", "pack", "--silent", "--pack-destination", tgz, pkg)))
		tarballs = append(tarballs, filepath.Join(tgz, name))
	}

	// A scratch Dataform project with a package.json, as `dataform init`
	// makes: the example, its core a dependency rather than
	// dataformCoreVersion (with which the CLI refuses a node_modules).
	proj := testenv.ProjectCopy(t, filepath.Join(repo, "examples", "clickstream"), "")
	settings := filepath.Join(proj, "workflow_settings.yaml")
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.ReplaceAll(string(b), "dataformCoreVersion: "+testenv.CoreVersion+"\n", "")
	if kept == string(b) {
		t.Fatalf("%s names no dataformCoreVersion %s", settings, testenv.CoreVersion)
	}
	if err := os.WriteFile(settings, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "package.json"), []byte(`{"name": "scratch", "private": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh(proj, offline, "npm", append([]string{"install", "--offline", "--no-audit", "--no-fund"}, tarballs...)...)
	if _, err := os.Stat(filepath.Join(proj, "node_modules", "@dfdtools", "dfd-linux-"+cpu, "bin", "dfd")); err != nil {
		t.Fatalf("the platform package was not installed: %v", err)
	}

	npx := func(env []string, args ...string) compileRun {
		t.Helper()
		cmd := exec.Command("npx", append([]string{"--offline", "--no-install", "dfd"}, args...)...)
		cmd.Dir = proj
		cmd.Env = append(append(os.Environ(), offline...), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("npx dfd %s: %v", strings.Join(args, " "), err)
		}
		return compileRun{stdout.Bytes(), stderr.Bytes(), cmd.ProcessState.ExitCode()}
	}

	got := npx([]string{"NO_COLOR=1"}, "compile", "--json")
	cli := runOfficialCLI(t, proj, nil)
	if got.code != 0 || cli.code != 0 {
		t.Fatalf("exit: npx dfd %d, CLI %d\n%s\n%s", got.code, cli.code, got.stderr, cli.stderr)
	}
	// The CLI's vm2 inserts a statement into catch clauses of JiT code
	// (vm2CatchRE); the rest is byte for byte.
	if want := vm2CatchRE.ReplaceAll(cli.stdout, nil); !bytes.Equal(got.stdout, want) {
		t.Errorf("npx dfd compile --json differs from the CLI's output:\n%s\n---\n%s", got.stdout, want)
	}
	if res := npx(nil, "check", "--metadata", "metadata.json"); res.code != 0 {
		t.Errorf("npx dfd check: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	// No binary for this platform: the launcher says which platforms
	// exist and how else to get dfd (process.platform faked by a preload).
	fake := filepath.Join(work, "aix.js")
	if err := os.WriteFile(fake, []byte(`Object.defineProperty(process, "platform", { value: "aix" });`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := npx([]string{"NODE_OPTIONS=--require " + fake}, "version")
	if res.code != 1 || !strings.Contains(string(res.stderr), "no dfd binary is built for this platform (aix-"+cpu+")") {
		t.Errorf("unsupported platform: exit %d, stderr %s", res.code, res.stderr)
	}
	if !strings.Contains(string(res.stderr), "linux-"+cpu) || !strings.Contains(string(res.stderr), "go install github.com/dfdtools/dfd/cmd/dfd@latest") {
		t.Errorf("unsupported platform: the error names no alternative: %s", res.stderr)
	}
	// The optional dependency left out (npm install --omit=optional).
	if err := os.RemoveAll(filepath.Join(proj, "node_modules", "@dfdtools", "dfd-linux-"+cpu)); err != nil {
		t.Fatal(err)
	}
	res = npx(nil, "version")
	if res.code != 1 || !strings.Contains(string(res.stderr), "@dfdtools/dfd-linux-"+cpu+", which holds dfd's binary for this platform, is not installed") {
		t.Errorf("missing platform package: exit %d, stderr %s", res.code, res.stderr)
	}
}

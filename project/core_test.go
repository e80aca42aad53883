package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeCore writes a minimal @dataform/core package into dir.
func fakeCore(t *testing.T, dir, version string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "bundle.js"), "module.exports = {};\n")
	writeFile(t, filepath.Join(dir, "package.json"), fmt.Sprintf(`{"name": "@dataform/core", "version": %q}`, version))
}

// newProject writes a project with the given workflow_settings.yaml.
func newProject(t *testing.T, settings string) *Project {
	t.Helper()
	dir := realTempDir(t)
	writeFile(t, filepath.Join(dir, WorkflowSettingsFile), settings)
	p, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeNPM is a shell script standing in for npm. Every run appends its
// arguments to a log; then it behaves according to mode:
//
//	ok       install the version named in ./package.json (slowly, to widen races)
//	fail     print 30 numbered lines to stderr and exit 1
//	hang     start a child that sleeps and wait for it
//	other    install version 9.9.9 whatever was asked
type fakeNPM struct {
	path, log, childPID string
}

func newFakeNPM(t *testing.T, mode string) *fakeNPM {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("fake npm is a shell script")
	}
	dir := t.TempDir()
	f := &fakeNPM{
		path:     filepath.Join(dir, "npm"),
		log:      filepath.Join(dir, "calls.log"),
		childPID: filepath.Join(dir, "child.pid"),
	}
	script := fmt.Sprintf(`#!/bin/sh
echo "$*" >> %q
version=$(sed -n 's/.*"@dataform\/core": "\([^"]*\)".*/\1/p' package.json)
install() {
	sleep 0.3
	mkdir -p node_modules/@dataform/core
	echo 'module.exports = {};' > node_modules/@dataform/core/bundle.js
	printf '{"name": "@dataform/core", "version": "%%s"}\n' "$1" > node_modules/@dataform/core/package.json
}
case %q in
ok) install "$version" ;;
other) install 9.9.9 ;;
fail)
	i=1
	while [ $i -le 30 ]; do echo "npm error line $i" >&2; i=$((i+1)); done
	exit 1 ;;
hang)
	sleep 60 &
	echo $! > %q
	wait ;;
esac
`, f.log, mode, f.childPID)
	if err := os.WriteFile(f.path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// calls returns the argument lists npm was run with.
func (f *fakeNPM) calls(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(f.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

const noNPM = "/nonexistent/dfd-test/npm"

func TestResolveFromNodeModules(t *testing.T) {
	p := newProject(t, "defaultProject: p\n")
	coreDir := filepath.Join(p.Root, "node_modules", "@dataform", "core")
	fakeCore(t, coreDir, "3.0.1")

	r := &CoreResolver{CacheDir: t.TempDir(), NPM: noNPM}
	c, err := r.Resolve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	want := Core{Version: "3.0.1", Dir: coreDir, BundlePath: filepath.Join(coreDir, "bundle.js")}
	if *c != want {
		t.Errorf("Resolve() = %+v, want %+v", *c, want)
	}
}

func TestResolveNodeModulesWinsOverVersion(t *testing.T) {
	p := newProject(t, "dataformCoreVersion: 3.0.2\n")
	fakeCore(t, filepath.Join(p.Root, "node_modules", "@dataform", "core"), "3.0.1")
	var logs []string
	r := &CoreResolver{CacheDir: t.TempDir(), NPM: noNPM, Log: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }}
	c, err := r.Resolve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != "3.0.1" || c.FromCache {
		t.Errorf("Resolve() = %+v, want node_modules core 3.0.1", c)
	}
	if len(logs) != 1 || !strings.Contains(logs[0], "3.0.2") {
		t.Errorf("logs = %q, want a warning about the version mismatch", logs)
	}
}

func TestResolveIncompleteNodeModules(t *testing.T) {
	p := newProject(t, "dataformCoreVersion: 3.0.2\n")
	writeFile(t, filepath.Join(p.Root, "node_modules", "@dataform", "core", "package.json"), `{"version": "1.0.0"}`)
	r := &CoreResolver{CacheDir: t.TempDir(), NPM: noNPM}
	_, err := r.Resolve(context.Background(), p)
	if !errors.Is(err, ErrNoCore) || !strings.Contains(err.Error(), "bundle.js") || !strings.Contains(err.Error(), "npm install") {
		t.Errorf("Resolve() error = %v, want ErrNoCore about bundle.js with a fix", err)
	}
}

func TestResolveNoCore(t *testing.T) {
	yamlProject := newProject(t, "defaultProject: p\n")
	jsonDir := realTempDir(t)
	writeFile(t, filepath.Join(jsonDir, DataformJSONFile), "{}")
	jsonProject, err := Open(jsonDir)
	if err != nil {
		t.Fatal(err)
	}
	pkgProject := newProject(t, "")
	writeFile(t, filepath.Join(pkgProject.Root, "package.json"), `{"dependencies": {"@dataform/core": "3.0.0"}}`)
	tests := []struct {
		name    string
		p       *Project
		mention []string
	}{
		{"yaml", yamlProject, []string{"dataformCoreVersion", "npm install @dataform/core", yamlProject.Root}},
		{"json", jsonProject, []string{"dataformCoreVersion", "npm install @dataform/core", jsonProject.Root}},
		{"package.json", pkgProject, []string{"package.json", "run `npm install` in " + pkgProject.Root}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &CoreResolver{CacheDir: t.TempDir(), NPM: noNPM}
			_, err := r.Resolve(context.Background(), tt.p)
			if !errors.Is(err, ErrNoCore) {
				t.Fatalf("Resolve() error = %v, want ErrNoCore", err)
			}
			for _, s := range tt.mention {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestResolveBadVersion(t *testing.T) {
	npm := newFakeNPM(t, "ok")
	for _, v := range []string{
		"^3.0.0", "~3.0.1", "3.x", "3.0", "latest", "v3.0.0", ">=3.0.0", "3.0.0 || 4.0.0",
		"../x", "3.0.0/../../x", "file:../core", "01.0.0", "3.0.0-", "true",
	} {
		t.Run(v, func(t *testing.T) {
			p := newProject(t, fmt.Sprintf("dataformCoreVersion: %q\n", v))
			cache := t.TempDir()
			r := &CoreResolver{CacheDir: cache, NPM: npm.path}
			_, err := r.Resolve(context.Background(), p)
			if !errors.Is(err, ErrBadCoreVersion) || !strings.Contains(err.Error(), "exact version") ||
				!strings.Contains(err.Error(), WorkflowSettingsFile) {
				t.Errorf("Resolve() error = %v, want ErrBadCoreVersion naming the file", err)
			}
			if entries, _ := os.ReadDir(cache); len(entries) != 0 {
				t.Errorf("cache was touched: %v", entries)
			}
		})
	}
	if calls := npm.calls(t); calls != nil {
		t.Errorf("npm was run for bad versions: %q", calls)
	}
	for _, v := range []string{"3.0.0", "3.0.0-beta.1", "10.20.30-rc.1+build.5"} {
		if err := checkExactVersion(v); err != nil {
			t.Errorf("checkExactVersion(%q) = %v, want nil", v, err)
		}
	}
}

func TestResolveNPMMissing(t *testing.T) {
	p := newProject(t, "dataformCoreVersion: 3.0.0\n")
	r := &CoreResolver{CacheDir: t.TempDir(), NPM: noNPM}
	_, err := r.Resolve(context.Background(), p)
	if !errors.Is(err, ErrNPMNotFound) || !strings.Contains(err.Error(), "3.0.0") {
		t.Errorf("Resolve() error = %v, want ErrNPMNotFound naming the version", err)
	}
}

func TestResolveInstallsOnceThenReuses(t *testing.T) {
	npm := newFakeNPM(t, "ok")
	p := newProject(t, "dataformCoreVersion: 3.0.0\n")
	cache := t.TempDir()
	var logs []string
	r := &CoreResolver{CacheDir: cache, NPM: npm.path, Log: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }}

	c, err := r.Resolve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	wantDir := filepath.Join(cache, "core", "3.0.0", "node_modules", "@dataform", "core")
	want := Core{Version: "3.0.0", Dir: wantDir, BundlePath: filepath.Join(wantDir, "bundle.js"), FromCache: true, Installed: true}
	if *c != want {
		t.Errorf("first Resolve() = %+v, want %+v", *c, want)
	}
	if calls := npm.calls(t); len(calls) != 1 || !strings.HasPrefix(calls[0], "install --ignore-scripts") {
		t.Errorf("npm calls = %q, want one `install --ignore-scripts ...`", calls)
	}
	if len(logs) == 0 || !strings.Contains(logs[0], "installing @dataform/core@3.0.0") {
		t.Errorf("logs = %q, want an installing line", logs)
	}

	// The second time npm must not be needed at all.
	r.NPM = noNPM
	c, err = r.Resolve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	want.Installed = false
	if *c != want {
		t.Errorf("second Resolve() = %+v, want %+v", *c, want)
	}
	assertNoInstallLeftovers(t, cache)
}

func assertNoInstallLeftovers(t *testing.T, cache string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(cache, "core"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".install-") {
			t.Errorf("leftover temporary directory %s", e.Name())
		}
	}
}

func TestResolveConcurrentInstallsOnce(t *testing.T) {
	npm := newFakeNPM(t, "ok")
	cache := t.TempDir()
	cores := resolveConcurrently(t, 4, cache, npm.path, "3.0.0")
	installed := 0
	for _, c := range cores {
		if c.Installed {
			installed++
		}
		if c.Dir != cores[0].Dir {
			t.Errorf("Resolve() dirs differ: %s vs %s", c.Dir, cores[0].Dir)
		}
	}
	if calls := npm.calls(t); len(calls) != 1 || installed != 1 {
		t.Errorf("npm ran %d times, %d results say installed; want 1 and 1", len(calls), installed)
	}
	assertNoInstallLeftovers(t, cache)
}

// resolveConcurrently runs n Resolves of version at once (each with its own
// resolver and project, as separate dfd processes would) and returns the
// cores; any error fails the test.
func resolveConcurrently(t *testing.T, n int, cache, npm, version string) []*Core {
	t.Helper()
	cores := make([]*Core, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		p := newProject(t, "dataformCoreVersion: "+version+"\n")
		wg.Go(func() {
			r := &CoreResolver{CacheDir: cache, NPM: npm}
			cores[i], errs[i] = r.Resolve(context.Background(), p)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return cores
}

func TestResolveRepairsBrokenCache(t *testing.T) {
	npm := newFakeNPM(t, "ok")
	cache := t.TempDir()
	// A cached core without bundle.js, and a temp dir from a killed install.
	writeFile(t, filepath.Join(cache, "core", "3.0.0", "node_modules", "@dataform", "core", "package.json"), `{"version": "3.0.0"}`)
	writeFile(t, filepath.Join(cache, "core", ".install-3.0.0-123", "package.json"), "{}")

	p := newProject(t, "dataformCoreVersion: 3.0.0\n")
	c, err := (&CoreResolver{CacheDir: cache, NPM: npm.path}).Resolve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Installed {
		t.Errorf("Resolve() = %+v, want a reinstall", c)
	}
	if _, err := os.Stat(c.BundlePath); err != nil {
		t.Error(err)
	}
	assertNoInstallLeftovers(t, cache)
}

func TestResolveNPMFails(t *testing.T) {
	for _, mode := range []string{"fail", "other"} {
		t.Run(mode, func(t *testing.T) {
			npm := newFakeNPM(t, mode)
			cache := t.TempDir()
			p := newProject(t, "dataformCoreVersion: 3.0.0\n")
			_, err := (&CoreResolver{CacheDir: cache, NPM: npm.path}).Resolve(context.Background(), p)
			if !errors.Is(err, ErrCoreInstall) || !strings.Contains(err.Error(), "3.0.0") {
				t.Fatalf("Resolve() error = %v, want ErrCoreInstall naming the version", err)
			}
			if mode == "fail" {
				msg := err.Error()
				if !strings.Contains(msg, "npm error line 30") || strings.Contains(msg, "npm error line 15\n") ||
					!strings.Contains(msg, "npm view @dataform/core versions") {
					t.Errorf("error %q should show the last npm lines and what to do", msg)
				}
			}
			if _, err := os.Stat(filepath.Join(cache, "core", "3.0.0")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("failed install left %s behind (stat: %v)", filepath.Join(cache, "core", "3.0.0"), err)
			}
			assertNoInstallLeftovers(t, cache)
		})
	}
}

func TestResolveCancelKillsNPM(t *testing.T) {
	npm := newFakeNPM(t, "hang")
	cache := t.TempDir()
	p := newProject(t, "dataformCoreVersion: 3.0.0\n")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()

	start := time.Now()
	_, err := (&CoreResolver{CacheDir: cache, NPM: npm.path}).Resolve(ctx, p)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Resolve() error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Resolve() took %s after cancellation", d)
	}
	assertNoInstallLeftovers(t, cache)

	// npm's own children must be gone too, not just npm.
	data, err := os.ReadFile(npm.childPID)
	if err != nil {
		t.Fatalf("fake npm did not start its child: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("npm's child process %d survived cancellation", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processAlive reports whether pid is running (zombies count as dead: they
// only wait for a parent that may never reap them in a container).
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if runtime.GOOS == "linux" {
			return false
		}
		return exec.Command("kill", "-0", strconv.Itoa(pid)).Run() == nil
	}
	// Format: pid (comm) state ...
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestResolveCancelWhileWaitingForLock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("flock")
	}
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cache, "core"), 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockFile(context.Background(), filepath.Join(cache, "core", "3.0.0.lock"), func() {})
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()

	waiting := make(chan struct{}, 1)
	r := &CoreResolver{CacheDir: cache, NPM: noNPM, Log: func(f string, a ...any) {
		if strings.Contains(f, "waiting") {
			waiting <- struct{}{}
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-waiting; cancel() }()
	_, err = r.Resolve(ctx, newProject(t, "dataformCoreVersion: 3.0.0\n"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Resolve() error = %v, want context.Canceled", err)
	}
}

func TestCacheDirDefault(t *testing.T) {
	t.Setenv("DFD_CACHE_DIR", "/some/where")
	if d, _ := (&CoreResolver{}).cacheDir(); d != "/some/where" {
		t.Errorf("cacheDir() = %q with DFD_CACHE_DIR set", d)
	}
	if d, _ := (&CoreResolver{CacheDir: "/explicit"}).cacheDir(); d != "/explicit" {
		t.Errorf("cacheDir() = %q with CacheDir set", d)
	}
	t.Setenv("DFD_CACHE_DIR", "")
	if d, err := (&CoreResolver{}).cacheDir(); err == nil && filepath.Base(d) != "dfd" {
		t.Errorf("cacheDir() = %q, want .../dfd", d)
	}
}

// The tests below talk to the real npm registry.

func requireNPM(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the npm registry; skipped with -short")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not in PATH")
	}
}

func TestResolveRealNPM(t *testing.T) {
	requireNPM(t)
	const version = "3.0.59"
	cache := t.TempDir()
	p := newProject(t, "dataformCoreVersion: "+version+"\n")

	c, err := (&CoreResolver{CacheDir: cache, Log: t.Logf}).Resolve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != version || !c.Installed || !c.FromCache {
		t.Errorf("Resolve() = %+v, want a fresh install of %s", c, version)
	}
	if info, err := os.Stat(c.BundlePath); err != nil || info.Size() < 1000 {
		t.Errorf("bundle.js: %v", err)
	}

	// Reuse must not need npm.
	c2, err := (&CoreResolver{CacheDir: cache, NPM: noNPM}).Resolve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Installed || c2.Dir != c.Dir {
		t.Errorf("second Resolve() = %+v, want the cached %s", c2, c.Dir)
	}
}

func TestResolveRealNPMConcurrent(t *testing.T) {
	requireNPM(t)
	cache := t.TempDir()
	installed := 0
	for _, c := range resolveConcurrently(t, 4, cache, "npm", "3.0.59") {
		if c.Installed {
			installed++
		}
	}
	if installed != 1 {
		t.Errorf("%d of 4 concurrent Resolves installed, want 1", installed)
	}
	assertNoInstallLeftovers(t, cache)
}

func TestResolveRealNPMUnknownVersion(t *testing.T) {
	requireNPM(t)
	const version = "3.0.9999"
	cache := t.TempDir()
	p := newProject(t, "dataformCoreVersion: "+version+"\n")
	_, err := (&CoreResolver{CacheDir: cache}).Resolve(context.Background(), p)
	if !errors.Is(err, ErrCoreInstall) {
		t.Fatalf("Resolve() error = %v, want ErrCoreInstall", err)
	}
	msg := err.Error()
	t.Logf("error for unknown version:\n%s", msg)
	if !strings.Contains(msg, version) || !strings.Contains(msg, "ETARGET") && !strings.Contains(msg, "No matching version") {
		t.Errorf("error %q should name the version and carry npm's explanation", msg)
	}
	assertNoInstallLeftovers(t, cache)
}

// TestResolveRealNPMOffline points npm at a registry that refuses
// connections. It needs npm but no network.
func TestResolveRealNPMOffline(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not in PATH")
	}
	t.Setenv("npm_config_registry", "http://127.0.0.1:9/")
	t.Setenv("npm_config_fetch_retries", "0") // npm retries for a minute by default
	cache := t.TempDir()
	p := newProject(t, "dataformCoreVersion: 3.0.59\n")
	_, err := (&CoreResolver{CacheDir: cache}).Resolve(context.Background(), p)
	if !errors.Is(err, ErrCoreInstall) {
		t.Fatalf("Resolve() error = %v, want ErrCoreInstall", err)
	}
	msg := err.Error()
	t.Logf("error when offline:\n%s", msg)
	if !strings.Contains(msg, "3.0.59") || !strings.Contains(msg, "ECONNREFUSED") || strings.Contains(msg, " at ") {
		t.Errorf("error %q should name the version and npm's reason, without stack frames", msg)
	}
	assertNoInstallLeftovers(t, cache)
}

func TestNPMSummary(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "npm error line %d\n", i)
		fmt.Fprintf(&b, "npm error     at frame%d (/x.js:1:2)\nnpm error\n", i)
	}
	got := npmSummary(b.String())
	lines := strings.Split(got, "\n")
	if len(lines) != 15 || lines[0] != "npm error line 16" || lines[14] != "npm error line 30" {
		t.Errorf("npmSummary() = %q", got)
	}
}

// Reinstall names what to delete and the command to run for each origin of
// a core, resolved as Resolve resolves it.
func TestCoreReinstall(t *testing.T) {
	withPackageJSON := newProject(t, "defaultProject: p\n")
	writeFile(t, filepath.Join(withPackageJSON.Root, "package.json"), `{"dependencies": {"@dataform/core": "3.0.1"}}`)
	fakeCore(t, filepath.Join(withPackageJSON.Root, "node_modules", "@dataform", "core"), "3.0.1")
	bare := newProject(t, "defaultProject: p\n")
	fakeCore(t, filepath.Join(bare.Root, "node_modules", "@dataform", "core"), "3.0.1")
	cached := newProject(t, "dataformCoreVersion: 3.0.2\n")
	cacheDir := filepath.Join(realTempDir(t), "my cache")
	fakeCore(t, filepath.Join(cacheDir, "core", "3.0.2", "node_modules", "@dataform", "core"), "3.0.2")

	for _, tc := range []struct {
		name string
		p    *Project
		want string
	}{
		{"node_modules with package.json", withPackageJSON,
			"Reinstall it: run `rm -rf node_modules/@dataform/core && npm install` in " + withPackageJSON.Root + "."},
		{"node_modules without package.json", bare,
			"Reinstall it: run `rm -rf node_modules/@dataform/core && npm install @dataform/core@3.0.1` in " + bare.Root + "."},
		{"dfd's cache", cached,
			"dfd installed it into its cache: delete " + filepath.Join(cacheDir, "core", "3.0.2") +
				" (`rm -rf '" + filepath.Join(cacheDir, "core", "3.0.2") + "'`) and the next compile installs it again."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := (&CoreResolver{CacheDir: cacheDir, NPM: noNPM}).Resolve(context.Background(), tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Reinstall(); got != tc.want {
				t.Errorf("Reinstall() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if got := (&Core{Version: "3.0.1", Dir: "/opt/core"}).Reinstall(); got != "Reinstall @dataform/core@3.0.1 in /opt/core." {
		t.Errorf("a core outside node_modules: %s", got)
	}
}

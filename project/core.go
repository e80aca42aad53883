package project

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/dfdtools/dfd/internal/regfile"
)

// Errors returned (wrapped) by CoreResolver.Resolve; test with errors.Is.
var (
	// ErrNoCore: the project has neither node_modules/@dataform/core nor a
	// dataformCoreVersion to install, or its installed core is unusable.
	ErrNoCore = errors.New("no usable @dataform/core")
	// ErrBadCoreVersion: dataformCoreVersion is not an exact version.
	ErrBadCoreVersion = errors.New("invalid dataformCoreVersion")
	// ErrNPMNotFound: a core must be installed but npm cannot be run.
	ErrNPMNotFound = errors.New("npm not found")
	// ErrCoreInstall: npm ran but did not produce the requested core.
	ErrCoreInstall = errors.New("@dataform/core install failed")
)

// Core is a usable @dataform/core package.
type Core struct {
	Version    string // from the package's package.json
	Dir        string // the package directory, .../node_modules/@dataform/core
	BundlePath string // Dir/bundle.js, what the compiler loads
	FromCache  bool   // it lives in dfd's cache, not the project's node_modules
	Installed  bool   // this Resolve call ran npm to put it there
}

// Reinstall says how to replace a damaged install of c, such as a bundle.js
// truncated by an interrupted npm install: for dfd's cache, delete the
// version's directory (the next compile installs it again); for a
// project's node_modules, remove the package and run npm there. npm alone
// would not do: it does not check the files of a package it finds
// installed.
func (c *Core) Reinstall() string {
	pkgs := filepath.Dir(filepath.Dir(c.Dir)) // …/node_modules
	top := filepath.Dir(pkgs)                 // the cache's <version> directory, or the project
	switch {
	case filepath.Base(pkgs) != "node_modules" || filepath.Base(filepath.Dir(c.Dir)) != "@dataform":
		return fmt.Sprintf("Reinstall @dataform/core@%s in %s.", c.Version, c.Dir)
	case c.FromCache:
		return fmt.Sprintf("dfd installed it into its cache: delete %s (`rm -rf %s`) and the next compile installs it again.",
			top, shellQuote(top))
	}
	if ok, _ := isFile(filepath.Join(top, "package.json")); ok {
		return fmt.Sprintf("Reinstall it: run `rm -rf node_modules/@dataform/core && npm install` in %s.", top)
	}
	return fmt.Sprintf("Reinstall it: run `rm -rf node_modules/@dataform/core && npm install @dataform/core@%s` in %s.", c.Version, top)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CoreResolver finds the @dataform/core a project compiles with, installing
// it into a per-user cache when the project only names a version. The zero
// value is ready to use.
type CoreResolver struct {
	// CacheDir is the per-user cache. Default: $DFD_CACHE_DIR, else
	// os.UserCacheDir()/dfd. Cores go to
	// <CacheDir>/core/<version>/node_modules/@dataform/core.
	CacheDir string
	// NPM is the npm executable. Default: "npm" from PATH. It is only looked
	// up when an install is actually needed.
	NPM string
	// Log, if set, receives progress lines such as
	// "installing @dataform/core@3.0.0 ...".
	Log func(format string, args ...any)
}

// Resolve returns the core for p, in this order:
//
//  1. <Root>/node_modules/@dataform/core, as installed by the user from a
//     package.json;
//  2. the cached install of Settings.DataformCoreVersion, installing it
//     with npm first if needed.
//
// The official CLI refuses a project that has both node_modules and
// dataformCoreVersion; dfd prefers what is already on disk instead so an
// editor keeps working, and logs when the two versions disagree.
func (r *CoreResolver) Resolve(ctx context.Context, p *Project) (*Core, error) {
	local := filepath.Join(p.Root, "node_modules", "@dataform", "core")
	if _, err := os.Stat(local); err == nil {
		c, err := loadCore(local)
		if err != nil {
			return nil, fmt.Errorf("%w in project %s: %w; reinstall it with `npm install @dataform/core` in %s",
				ErrNoCore, p.Root, err, p.Root)
		}
		if v := p.Settings.DataformCoreVersion; v != "" && v != c.Version {
			r.logf("warning: %s: using @dataform/core %s from node_modules, not dataformCoreVersion %s from %s",
				p.Root, c.Version, v, p.SettingsFile)
		}
		return c, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("resolve @dataform/core for %s: %w", p.Root, err)
	}

	v := p.Settings.DataformCoreVersion
	if v == "" {
		return nil, noCoreError(p)
	}
	if err := checkExactVersion(v); err != nil {
		return nil, fmt.Errorf("%s: %w", p.SettingsPath(), err)
	}
	cacheDir, err := r.cacheDir()
	if err != nil {
		return nil, err
	}
	return r.install(ctx, cacheDir, v)
}

func noCoreError(p *Project) error {
	if ok, _ := isFile(filepath.Join(p.Root, "package.json")); ok {
		return fmt.Errorf("%w for project %s: it has a package.json but node_modules/@dataform/core is not installed; run `npm install` in %s",
			ErrNoCore, p.Root, p.Root)
	}
	if p.SettingsFile == DataformJSONFile {
		return fmt.Errorf("%w for project %s: node_modules/@dataform/core is not installed.\n"+
			"Fix it either way:\n"+
			"  - run `npm install @dataform/core` in %s, or\n"+
			"  - replace %s with a %s that sets `dataformCoreVersion: <exact version>` (dfd then installs that version into its cache)",
			ErrNoCore, p.Root, p.Root, DataformJSONFile, WorkflowSettingsFile)
	}
	return fmt.Errorf("%w for project %s: node_modules/@dataform/core is not installed and %s has no dataformCoreVersion.\n"+
		"Fix it either way:\n"+
		"  - add `dataformCoreVersion: <exact version, e.g. 3.0.0>` to %s (dfd then installs that version into its cache), or\n"+
		"  - run `npm install @dataform/core` in %s",
		ErrNoCore, p.Root, p.SettingsFile, p.SettingsPath(), p.Root)
}

// exactVersionRE is the semver.org regular expression. Only exact versions
// are accepted: core itself rejects any dataformCoreVersion that differs
// from its own version string, so a range or tag could never compile, and
// the version is also a directory name in the cache (no "../x").
var exactVersionRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

func checkExactVersion(v string) error {
	if len(v) > 100 || !exactVersionRE.MatchString(v) {
		return fmt.Errorf("%w %q: it must be an exact version such as 3.0.0 (ranges, tags and paths are not supported)",
			ErrBadCoreVersion, v)
	}
	return nil
}

func (r *CoreResolver) cacheDir() (string, error) {
	if r.CacheDir != "" {
		return r.CacheDir, nil
	}
	return CacheDir()
}

// CacheDir is dfd's per-user cache directory: $DFD_CACHE_DIR, else
// os.UserCacheDir()/dfd.
func CacheDir() (string, error) {
	if d := os.Getenv("DFD_CACHE_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locate dfd cache directory (set DFD_CACHE_DIR): %w", err)
	}
	return filepath.Join(d, "dfd"), nil
}

func (r *CoreResolver) logf(format string, args ...any) {
	if r.Log != nil {
		r.Log(format, args...)
	}
}

// install returns the cached core for version, installing it first if it is
// missing or broken. Installs happen in a temporary directory next to the
// final one and are renamed into place, so a reader that finds the final
// directory always finds a complete install and needs no lock; installers
// take a per-version file lock so concurrent dfd processes run npm once.
func (r *CoreResolver) install(ctx context.Context, cacheDir, version string) (*Core, error) {
	base := filepath.Join(cacheDir, "core")
	dest := filepath.Join(base, version)
	if c, err := loadCachedCore(dest, version); err == nil {
		return c, nil
	}

	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, fmt.Errorf("create core cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(base, version+".lock"), func() {
		r.logf("waiting for another dfd process installing @dataform/core@%s ...", version)
	})
	if err != nil {
		return nil, fmt.Errorf("lock core cache for @dataform/core@%s: %w", version, err)
	}
	defer unlock()

	// Someone may have finished the install while we waited for the lock.
	if c, err := loadCachedCore(dest, version); err == nil {
		return c, nil
	}
	// Leftovers from an interrupted install of this version (we hold its
	// lock, so no one else is using them) or a damaged final directory.
	stale, _ := filepath.Glob(filepath.Join(base, ".install-"+version+"-*"))
	if _, err := os.Lstat(dest); err == nil {
		r.logf("cached @dataform/core@%s in %s is incomplete; reinstalling", version, dest)
		trash, err := os.MkdirTemp(base, ".install-"+version+"-")
		if err != nil {
			return nil, fmt.Errorf("clean core cache: %w", err)
		}
		if err := os.Rename(dest, filepath.Join(trash, "old")); err != nil {
			return nil, fmt.Errorf("clean core cache: %w", err)
		}
		stale = append(stale, trash)
	}
	for _, s := range stale {
		_ = os.RemoveAll(s) // best effort: leftovers only cost disk space
	}

	tmp, err := os.MkdirTemp(base, ".install-"+version+"-")
	if err != nil {
		return nil, fmt.Errorf("install @dataform/core@%s: %w", version, err)
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename

	start := time.Now()
	r.logf("installing @dataform/core@%s into %s ...", version, dest)
	if err := r.runNPM(ctx, tmp, version); err != nil {
		return nil, err
	}
	tmpCore := filepath.Join(tmp, "node_modules", "@dataform", "core")
	if c, err := loadCore(tmpCore); err != nil {
		return nil, fmt.Errorf("%w: @dataform/core@%s: npm succeeded but %w", ErrCoreInstall, version, err)
	} else if c.Version != version {
		return nil, fmt.Errorf("%w: asked npm for @dataform/core@%s but got %s", ErrCoreInstall, version, c.Version)
	}
	if err := os.Rename(tmp, dest); err != nil {
		// Without a working file lock (non-unix) another process can win
		// the race; its complete install is as good as ours.
		if c, cerr := loadCachedCore(dest, version); cerr == nil {
			return c, nil
		}
		return nil, fmt.Errorf("install @dataform/core@%s: move into cache: %w", version, err)
	}
	r.logf("installed @dataform/core@%s in %s", version, time.Since(start).Round(100*time.Millisecond))

	c, err := loadCachedCore(dest, version)
	if err != nil {
		return nil, fmt.Errorf("install @dataform/core@%s: %w", version, err)
	}
	c.Installed = true
	return c, nil
}

// runNPM installs version into dir the way the CLI does (a package.json
// naming it, then `npm i --ignore-scripts`).
func (r *CoreResolver) runNPM(ctx context.Context, dir, version string) error {
	npm := r.NPM
	if npm == "" {
		npm = "npm"
	}
	npmPath, err := exec.LookPath(npm)
	if err != nil {
		return fmt.Errorf("%w: it is needed to install @dataform/core@%s (dataformCoreVersion in %s): %w.\n"+
			"Install Node.js and npm, or run `npm install @dataform/core@%s` in the project",
			ErrNPMNotFound, version, WorkflowSettingsFile, err, version)
	}

	pkg := fmt.Sprintf(`{"private": true, "dependencies": {"@dataform/core": %q}}`+"\n", version)
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		return fmt.Errorf("install @dataform/core@%s: %w", version, err)
	}

	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, npmPath, "install", "--ignore-scripts",
		"--no-audit", "--no-fund", "--no-update-notifier")
	cmd.Dir = dir
	cmd.Stdout = &stderr // npm's stdout is a summary; keep it for error reports
	cmd.Stderr = &stderr
	killProcessGroup(cmd) // npm spawns children; cancellation must reach them
	cmd.WaitDelay = 5 * time.Second

	err = cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("install @dataform/core@%s: %w", version, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("%w: `npm install @dataform/core@%s`: %w; npm said:\n%s\n"+
			"Check that %s is a published version (`npm view @dataform/core versions`) and that the npm registry is reachable, "+
			"or fix dataformCoreVersion in %s",
			ErrCoreInstall, version, err, indent(npmSummary(stderr.String())), version, WorkflowSettingsFile)
	}
	return nil
}

// loadCachedCore returns the cached core in dest if it is complete.
func loadCachedCore(dest, version string) (*Core, error) {
	c, err := loadCore(filepath.Join(dest, "node_modules", "@dataform", "core"))
	if err != nil {
		return nil, err
	}
	if c.Version != version {
		return nil, fmt.Errorf("%s holds version %s, not %s", c.Dir, c.Version, version)
	}
	c.FromCache = true
	return c, nil
}

// loadCore validates an installed core package directory: bundle.js must
// exist (cores too old to ship one cannot be compiled by the CLI either)
// and package.json must name a version.
func loadCore(dir string) (*Core, error) {
	bundle := filepath.Join(dir, "bundle.js")
	if info, err := os.Stat(bundle); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has no bundle.js (an incomplete install, or a core too old for the 3.x CLI)", dir)
	} else if err != nil {
		return nil, fmt.Errorf("check @dataform/core: %w", err)
	} else if info.IsDir() {
		return nil, fmt.Errorf("%s is a directory", bundle)
	}
	data, err := regfile.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, fmt.Errorf("read @dataform/core version: %w", err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return nil, fmt.Errorf("read @dataform/core version from %s: %w", filepath.Join(dir, "package.json"), err)
	}
	if pkg.Version == "" {
		return nil, fmt.Errorf("%s has no version", filepath.Join(dir, "package.json"))
	}
	return &Core{Version: pkg.Version, Dir: dir, BundlePath: bundle}, nil
}

// npmStackRE matches the JavaScript stack frames and empty "npm error"
// lines npm prints on network errors; they would push the useful lines
// (error code, reason) out of the tail we show.
var npmStackRE = regexp.MustCompile(`^(npm (error|ERR!))?\s*(at .*)?$`)

// npmSummary returns the last lines of npm's output worth showing a user.
func npmSummary(out string) string {
	const maxLines = 15
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if !npmStackRE.MatchString(strings.TrimSpace(l)) {
			lines = append(lines, strings.TrimRight(l, "\r"))
		}
	}
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	if strings.TrimSpace(s) == "" {
		return "  (npm printed nothing)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

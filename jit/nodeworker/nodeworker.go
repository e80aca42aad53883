// Package nodeworker is an alternative engine behind dfd's worker protocol
// (package jit/wire): a Node.js script, worker.js, that hosts
// @dataform/core in V8 instead of goja and speaks exactly the frames of
// `dfd worker`. A jit.Pool runs it when PoolOptions.Command is
// CommandFor(node, script, root, bundlePath): the pool appends
// jit.WorkerArgs as for any worker.
//
// The script sandboxes project code in a fresh vm context per request (see
// the comment at the top of worker.js) and runs under Node's permission
// model: it may read the project root, core's directory and itself, and
// nothing else; it may not write, start processes or threads. Node ≥ 20 is
// required.
package nodeworker

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/engine"
)

//go:embed worker.js
var workerSource string

// The markers where worker.js gets the engine's own JavaScript: the same
// `path` module as goja offers core and project code (engine/js/path.js),
// and the hooks that keep a compile's context for incremental compiles
// (engine/js/incremental.js).
const (
	pathMarker        = "/*@@ENGINE_PATH_JS@@*/\n"
	incrementalMarker = "/*@@ENGINE_INCREMENTAL_JS@@*/\n"
)

var script = []byte(strings.NewReplacer(
	pathMarker, engine.PathModuleSource(),
	incrementalMarker, engine.IncrementalSource(),
).Replace(workerSource))

// Script is the worker's source, as written to disk.
func Script() []byte { return script }

// MinNodeMajor is the oldest Node.js major version the worker runs on: it
// needs the permission model (--experimental-permission, Node 20).
const MinNodeMajor = 20

// ScriptName is the file name the script is written under (.cjs: Node then
// looks up no package.json to decide the module type, which the permission
// model would refuse to read).
const ScriptName = "worker.cjs"

// WriteScript writes the worker script once into a content-addressed
// directory under cacheDir (<cacheDir>/nodeworker/<sha256 prefix>/worker.cjs)
// and returns its path. Concurrent callers and processes are safe: the file
// is written to a temporary name and renamed into place.
func WriteScript(cacheDir string) (string, error) {
	if cacheDir == "" {
		return "", errors.New("nodeworker: no cache directory to write the worker script to")
	}
	sum := sha256.Sum256(script)
	dir := filepath.Join(cacheDir, "nodeworker", hex.EncodeToString(sum[:8]))
	p := filepath.Join(dir, ScriptName)
	if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, script) {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("nodeworker: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".worker-*.tmp")
	if err != nil {
		return "", fmt.Errorf("nodeworker: %w", err)
	}
	_, werr := tmp.Write(script)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("nodeworker: writing %s: %w", tmp.Name(), errors.Join(werr, cerr))
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("nodeworker: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("nodeworker: %w", err)
	}
	return p, nil
}

// CommandFor is the command that starts a Node worker for one pool (one
// project root and one core bundle): the value for jit.PoolOptions.Command,
// to which the pool appends jit.WorkerArgs. The permission flags let the
// process read the script, the root and the bundle's directory (each also
// by its real path when that differs) and nothing else.
func CommandFor(node, script, root, bundlePath string) []string {
	var paths []string
	for _, p := range []string{script, root, filepath.Dir(bundlePath)} {
		paths = append(paths, p)
		if r := realPath(p); r != "" && r != p {
			paths = append(paths, r)
		}
	}
	cmd := []string{node, "--experimental-permission"}
	// Node 20 denies access to an allowed directory itself when a path
	// below it is allowed too (core in <root>/node_modules): allow only the
	// outermost paths.
	for i, p := range paths {
		covered := false
		for j, q := range paths {
			if j != i && (q == p && j < i || within(p, q) && q != p) {
				covered = true
			}
		}
		if !covered {
			cmd = append(cmd, "--allow-fs-read="+p)
		}
	}
	return append(cmd,
		// Dynamic import() in project code is refused with an error of the
		// project's own realm; that callback needs vm modules.
		"--experimental-vm-modules",
		"--disable-warning=ExperimentalWarning",
		script)
}

// within reports whether p is below dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// HeapFlag is a node option that caps the worker's V8 heap at limit bytes
// (jit.PoolOptions.MemoryLimit): insert it before the script in CommandFor's
// result. A worker that crosses it dies (the pool sees a crash and replaces
// it); one that ends a request above limit answers RESOURCE_EXHAUSTED and
// exits, as the goja worker does.
func HeapFlag(limit int64) string {
	return "--max-old-space-size=" + strconv.FormatInt(max(limit>>20, 64), 10)
}

// OutOfMemory reports whether a worker's last lines of stderr
// (jit.CrashError.LastStderr) say that V8 ran out of heap: at the
// --max-old-space-size of HeapFlag, node prints "FATAL ERROR: … - JavaScript
// heap out of memory" and a native stack trace, and aborts.
func OutOfMemory(stderr []string) bool {
	for _, l := range stderr {
		if strings.Contains(l, "JavaScript heap out of memory") {
			return true
		}
	}
	return false
}

func realPath(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// Command finds node, writes the script under cacheDir and returns
// CommandFor's command for root and bundlePath.
func Command(cacheDir, root, bundlePath string) ([]string, error) {
	node, _, err := FindNode()
	if err != nil {
		return nil, err
	}
	s, err := WriteScript(cacheDir)
	if err != nil {
		return nil, err
	}
	return CommandFor(node, s, root, bundlePath), nil
}

var found struct {
	once          sync.Once
	path, version string
	err           error
	env           string
}

// FindNode finds the node binary: $DFD_NODE if set, else node on PATH. It
// must be Node.js MinNodeMajor or newer. The answer is computed once per
// process (per value of $DFD_NODE).
func FindNode() (path string, version string, err error) {
	env := os.Getenv("DFD_NODE")
	found.once.Do(func() {
		found.env = env
		found.path, found.version, found.err = findNode(env)
	})
	if env != found.env {
		return findNode(env)
	}
	return found.path, found.version, found.err
}

func findNode(env string) (string, string, error) {
	p := env
	if p == "" {
		var err error
		if p, err = exec.LookPath("node"); err != nil {
			return "", "", fmt.Errorf("nodeworker: node (Node.js %d or newer) not found on PATH; install it or set DFD_NODE", MinNodeMajor)
		}
	}
	cmd := exec.Command(p, "--version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = cmd.Output()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return "", "", fmt.Errorf("nodeworker: %s --version did not answer", p)
	}
	if err != nil {
		return "", "", fmt.Errorf("nodeworker: running %s --version: %w", p, err)
	}
	v := strings.TrimSpace(string(out))
	major, ok := nodeMajor(v)
	if !ok {
		return "", "", fmt.Errorf("nodeworker: %s --version printed %q, not a Node.js version", p, v)
	}
	if major < MinNodeMajor {
		return "", "", fmt.Errorf("nodeworker: %s is Node.js %s; the node engine needs %d or newer", p, v, MinNodeMajor)
	}
	return p, v, nil
}

func nodeMajor(v string) (int, bool) {
	if !strings.HasPrefix(v, "v") {
		return 0, false
	}
	m, _, _ := strings.Cut(v[1:], ".")
	n, err := strconv.Atoi(m)
	return n, err == nil
}

// Available reports whether a suitable node is installed.
func Available() bool {
	_, _, err := FindNode()
	return err == nil
}

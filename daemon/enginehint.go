package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/dfdtools/dfd/project"
)

// Engine hints: what `dfd compile --engine=auto` learnt from a project's
// last compiles, per engine: how long the whole compile took in that
// process (on Node.js, the worker's start included). The estimate of
// PreferNode reads the source's bytes; what it cannot see is JavaScript
// whose cost is in running, not in its size — a package that builds
// hundreds of actions in loops (a real 642-action project: 3.2 s on goja,
// 0.7 s on Node.js, from 70 KB of JavaScript) — nor how long Node.js takes
// to start on this machine. So each auto compile records its time, per
// project root, in dfd's cache, and AutoEngine picks the engine that was
// faster, trying the other once where it may be: a goja compile slower
// than a cold Node.js worker's start, a Node.js compile not much slower
// than that. The output is the same on both engines (parity tests); only
// the time differs.

// NodeColdStart is about what a cold Node.js worker costs before it
// compiles (process, permission model, core's bundle): a goja compile
// taking longer may be faster on Node.js, and a Node.js compile taking
// less than twice that may be faster on goja.
const NodeColdStart = 300 * time.Millisecond

type engineHint struct {
	GojaMs int64 `json:"gojaMs,omitempty"`
	NodeMs int64 `json:"nodeMs,omitempty"`
	// Last is the engine of the last compile recorded, and Runs how many
	// in a row were on it: the other engine's time grows stale as the
	// project changes, and after RetimeAfter AutoEngine times it again.
	Last string `json:"last,omitempty"`
	Runs int    `json:"runs,omitempty"`
}

// RetimeAfter is how many auto compiles in a row on one engine make the
// other engine's recorded time stale: the next compile runs there once.
const RetimeAfter = 20

// hintFile is where root's hint is kept ("" without a cache directory).
func hintFile(root string) string {
	dir, err := project.CacheDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "engine-hints", hex.EncodeToString(sum[:12])+".json")
}

// RecordCompile remembers how long a whole compile of root took on
// engine (EngineGoja or EngineNode). Failing to write it costs only the
// hint.
func RecordCompile(root, engine string, took time.Duration) {
	file := hintFile(root)
	if file == "" {
		return
	}
	h := readHint(root)
	ms := max(took.Milliseconds(), 1)
	switch engine {
	case EngineGoja:
		h.GojaMs = ms
	case EngineNode:
		h.NodeMs = ms
	default:
		return
	}
	if h.Last == engine {
		h.Runs++
	} else {
		h.Last, h.Runs = engine, 1
	}
	b, err := json.Marshal(h)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".hint-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// AutoEngine is the engine `dfd compile --engine=auto` compiles root on
// when Node.js is available: the faster of the two when both were timed
// (the other, once, after RetimeAfter compiles in a row on one); Node.js
// after a goja compile slower than NodeColdStart, and goja after a Node.js
// compile quicker than twice that, when only one was (to time the other
// once); else PreferNode's estimate.
func AutoEngine(root string, paths []string, bundlePath string) string {
	h := readHint(root)
	goja, node := time.Duration(h.GojaMs)*time.Millisecond, time.Duration(h.NodeMs)*time.Millisecond
	switch {
	case goja > 0 && node > 0:
		if h.Runs >= RetimeAfter {
			if h.Last == EngineNode {
				return EngineGoja
			}
			return EngineNode
		}
		if node < goja {
			return EngineNode
		}
		return EngineGoja
	case goja > 0:
		if goja >= NodeColdStart {
			return EngineNode
		}
		return EngineGoja
	case node > 0:
		if node < 2*NodeColdStart {
			return EngineGoja
		}
		return EngineNode
	}
	if PreferNode(root, paths, bundlePath, DefaultNodeMinFiles) {
		return EngineNode
	}
	return EngineGoja
}

// readHint is root's hint; an odd file in the cache (not a regular file,
// too big, not the JSON dfd writes) is no hint.
func readHint(root string) engineHint {
	file := hintFile(root)
	if file == "" {
		return engineHint{}
	}
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1024 {
		return engineHint{}
	}
	f, err := os.Open(file)
	if err != nil {
		return engineHint{}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return engineHint{}
	}
	var h engineHint
	if json.Unmarshal(b, &h) != nil || h.GojaMs < 0 || h.NodeMs < 0 || h.Runs < 0 {
		return engineHint{}
	}
	return h
}

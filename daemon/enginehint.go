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
// last compile on goja (the daemon's rule, PreferNodeWarm, does not need
// them). The estimate of PreferNode reads the source's bytes; what it cannot
// see is JavaScript whose cost is in running, not in its size — a package
// that builds hundreds of actions in loops (a real 642-action project:
// 3.2 s on goja, 0.7 s on Node.js, from 70 KB of JavaScript). So a compile
// on goja that took GojaSlowCompile or more is remembered, per project
// root, in dfd's cache, and the next auto choice for that project is
// Node.js. The output is the same on both engines (parity tests); only the
// time differs.

// GojaSlowCompile is the goja compile time from which auto prefers
// Node.js next time: above a cold Node.js worker's start (≈0.3 s) plus
// DefaultNodeMinExcess.
const GojaSlowCompile = time.Second

type engineHint struct {
	GojaMs int64 `json:"gojaMs"`
}

// hintFile is where root's hint is kept ("" without a cache directory).
func hintFile(root string) string {
	dir, err := project.CacheDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "engine-hints", hex.EncodeToString(sum[:12])+".json")
}

// RecordGojaCompile remembers how long a whole compile of root took on
// goja. Failing to write it costs only the hint.
func RecordGojaCompile(root string, took time.Duration) {
	file := hintFile(root)
	if file == "" {
		return
	}
	if took < GojaSlowCompile {
		_ = os.Remove(file) // fast now: forget an old hint
		return
	}
	b, err := json.Marshal(engineHint{GojaMs: took.Milliseconds()})
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

// gojaWasSlow reports whether root's last compile on goja took
// GojaSlowCompile or more. An odd file in the cache (not a regular file,
// too big, not the JSON dfd writes) is no hint.
func gojaWasSlow(root string) bool {
	file := hintFile(root)
	if file == "" {
		return false
	}
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1024 {
		return false
	}
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return false
	}
	var h engineHint
	if json.Unmarshal(b, &h) != nil {
		return false
	}
	return time.Duration(h.GojaMs)*time.Millisecond >= GojaSlowCompile
}

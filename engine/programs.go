package engine

import (
	"context"
	"crypto/sha256"
	"path"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// Compiled modules are kept by name and code for the life of the process.
// A goja.Program is not linked to a runtime and may run in several at once
// (goja's documentation), so every compile of a process — each edit in a
// `dfd worker`, each JiT-free compile of a daemon running in process —
// parses and compiles only the files whose text changed: the rest was
// 10–25% of a warm compile on goja. What a program is made from is exactly
// its key, so a hit runs what compiling would have made.
var modulePrograms = &programCache{max: maxProgramSourceBytes}

// maxProgramSourceBytes bounds the source the cache holds (a program keeps
// its source, and its compiled form is a few times larger); beyond it the
// cache starts again.
const maxProgramSourceBytes = 32 << 20

type programCache struct {
	mu    sync.Mutex // guards m and bytes
	m     map[[sha256.Size]byte]*programEntry
	bytes int
	max   int
}

// programEntry is one module's compile, done or in flight: done is closed
// when prog and err are set.
type programEntry struct {
	done chan struct{}
	prog *goja.Program
	err  error
}

func programKey(name, wrapped string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(wrapped))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// compile is compileModule(name, wrapped), once per process for the same
// name and code. A caller that finds the module being compiled (by
// Precompile) waits for that compile rather than doing it again.
func (c *programCache) compile(name, wrapped string) (*goja.Program, error) {
	e, owner := c.entry(name, wrapped)
	if owner {
		e.build(name, wrapped)
	}
	<-e.done
	return e.prog, e.err
}

// entry is the entry of name and code, and whether the caller must compile
// it (it was not there).
func (c *programCache) entry(name, wrapped string) (*programEntry, bool) {
	key := programKey(name, wrapped)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		return e, false
	}
	if c.m == nil || c.bytes+len(wrapped) > c.max {
		c.m, c.bytes = map[[sha256.Size]byte]*programEntry{}, 0
	}
	e := &programEntry{done: make(chan struct{})}
	c.m[key] = e
	c.bytes += len(wrapped)
	return e, true
}

// build compiles the entry's module and tells its waiters.
func (e *programEntry) build(name, wrapped string) {
	e.prog, e.err = compileModule(name, wrapped)
	close(e.done)
}

// Precompile compiles, ahead of a compile of the project at root, the
// modules of rels (project-relative paths) whose code it can know without
// core: JavaScript files as they are (core's compiler() hands them back
// unchanged) and the others (.sqlx, .yaml) whose transpiled code is in the
// transpile cache under bundleDigest (LoadBundleNotify tells it). It is meant to run on a
// second goroutine while the bundle compiles: a cold `dfd compile` then
// finds most of its modules compiled. It changes nothing a compile
// computes — a module whose code turns out different is compiled again
// under its own key — and returns when done or when ctx ends.
func Precompile(ctx context.Context, files Files, root, bundleDigest string, rels []string) {
	for _, rel := range rels {
		if ctx.Err() != nil {
			return
		}
		if strings.HasSuffix(rel, ".json") {
			continue // parsed, not compiled
		}
		isJS := strings.HasSuffix(rel, ".js")
		raw, err := files.ReadFile(rel)
		if err != nil {
			continue // the compile reports it
		}
		name := path.Join(root, rel)
		code := decodeUTF8(raw)
		if !isJS {
			var ok bool
			if code, ok = transpiles.get(transpileKey(bundleDigest, name, code)); !ok {
				continue
			}
		}
		wrapped := wrapModule(code)
		if e, owner := modulePrograms.entry(name, wrapped); owner {
			e.build(name, wrapped) // an error is the compile's to report
		}
	}
}

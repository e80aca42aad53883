package engine

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Core's compiler(code, path) turns a .sqlx (and .sql, .yaml, .ipynb, .md)
// file into the JavaScript module that defines its actions. It is a pure
// function of the core, the path and the content, and it is the single
// largest cost of a compile in goja: about 55 % of a 1,000-action project
// (SQLX lexing runs core's moo lexer on regexp2). Editors recompile after
// every keystroke with all but one file unchanged, so the results are
// memoized, in memory for the life of the process (a daemon's workers) and
// optionally on disk (cold `dfd compile` processes).
//
// Only successful results are kept: a file the compiler rejects is
// compiled again each time, so its error is always core's own.

// transpileMemoryLimit bounds the in-memory cache (sum of key and output
// sizes). A 3,000-action project needs about 15 MB.
const transpileMemoryLimit = 64 << 20

var transpiles = newTranspileCache(transpileMemoryLimit)

// SetTranspileCacheDir makes every runtime of this process also keep
// compiler() results in dir (created on demand; "" turns the disk layer
// off). Entries are written atomically and read without locks, so several
// processes may share dir.
func SetTranspileCacheDir(dir string) {
	transpiles.mu.Lock()
	transpiles.dir = dir
	transpiles.mu.Unlock()
}

// TranspileStats are counters of the process's compiler() cache.
type TranspileStats struct {
	Hits, DiskHits, Misses int64
	Entries                int
	Bytes                  int64
}

// TranspileCacheStats reports the cache's counters.
func TranspileCacheStats() TranspileStats {
	c := transpiles
	c.mu.Lock()
	defer c.mu.Unlock()
	return TranspileStats{Hits: c.hits, DiskHits: c.diskHits, Misses: c.misses, Entries: len(c.m), Bytes: c.bytes}
}

// ResetTranspileCache empties the in-memory layer and its counters (for
// benchmarks that measure the uncached path).
func ResetTranspileCache() {
	c := transpiles
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = map[string]*list.Element{}
	c.lru.Init()
	c.bytes, c.hits, c.diskHits, c.misses = 0, 0, 0, 0
}

type transpileCache struct {
	mu    sync.Mutex // guards everything below
	limit int64
	dir   string
	m     map[string]*list.Element // key → element holding *transpileEntry
	lru   list.List                // most recently used at the front
	bytes int64

	hits, diskHits, misses int64
}

type transpileEntry struct {
	key, out string
}

func newTranspileCache(limit int64) *transpileCache {
	return &transpileCache{limit: limit, m: map[string]*list.Element{}}
}

// transpileKey identifies compiler(code, path) under one core bundle.
func transpileKey(bundleDigest, path, code string) string {
	h := sha256.New()
	h.Write([]byte(bundleDigest))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write([]byte(code))
	return hex.EncodeToString(h.Sum(nil))
}

// get returns a cached result for key, from memory or disk.
func (c *transpileCache) get(key string) (string, bool) {
	c.mu.Lock()
	if el, ok := c.m[key]; ok {
		c.lru.MoveToFront(el)
		c.hits++
		out := el.Value.(*transpileEntry).out
		c.mu.Unlock()
		return out, true
	}
	dir := c.dir
	c.mu.Unlock()
	if dir == "" {
		c.count(&c.misses)
		return "", false
	}
	out, ok := readDiskEntry(c.diskPath(dir, key))
	if !ok {
		c.count(&c.misses)
		return "", false
	}
	c.mu.Lock()
	c.diskHits++
	c.insertLocked(key, out)
	c.mu.Unlock()
	return out, true
}

func (c *transpileCache) count(n *int64) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
}

// put records a result in memory and, when a directory is set, on disk.
// Disk errors are ignored: the cache is an optimization.
func (c *transpileCache) put(key, out string) {
	c.mu.Lock()
	c.insertLocked(key, out)
	dir := c.dir
	c.mu.Unlock()
	if dir != "" {
		_ = writeFileAtomic(c.diskPath(dir, key), diskEntry(out))
	}
}

func (c *transpileCache) insertLocked(key, out string) {
	if _, ok := c.m[key]; ok {
		return
	}
	size := int64(len(key) + len(out))
	if size > c.limit {
		return
	}
	c.m[key] = c.lru.PushFront(&transpileEntry{key: key, out: out})
	c.bytes += size
	for c.bytes > c.limit {
		el := c.lru.Back()
		e := el.Value.(*transpileEntry)
		c.lru.Remove(el)
		delete(c.m, e.key)
		c.bytes -= int64(len(e.key) + len(e.out))
	}
}

func (c *transpileCache) diskPath(dir, key string) string {
	return filepath.Join(dir, key[:2], key[2:]+".js")
}

// A disk entry is a header line carrying the output's SHA-256, then the
// output: a file damaged by anything other than dfd's atomic writes is
// detected and ignored (and removed) instead of being run as a module.
const diskMagic = "dfd-transpile-1 "

func diskEntry(out string) []byte {
	sum := sha256.Sum256([]byte(out))
	b := make([]byte, 0, len(diskMagic)+65+len(out))
	b = append(b, diskMagic...)
	b = hex.AppendEncode(b, sum[:])
	b = append(b, '\n')
	return append(b, out...)
}

func readDiskEntry(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	const head = len(diskMagic) + 64 + 1
	if len(b) < head || string(b[:len(diskMagic)]) != diskMagic || b[head-1] != '\n' {
		_ = os.Remove(path)
		return "", false
	}
	out := b[head:]
	sum := sha256.Sum256(out)
	if hex.EncodeToString(sum[:]) != string(b[len(diskMagic):head-1]) {
		_ = os.Remove(path)
		return "", false
	}
	return string(out), true
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return nil
}

// DefaultTranspileCacheDir is where cold processes keep compiler()
// results: $DFD_CACHE_DIR/transpile or the user cache directory's
// dfd/transpile. "" when neither can be found.
func DefaultTranspileCacheDir() string {
	if d := os.Getenv("DFD_CACHE_DIR"); d != "" {
		return filepath.Join(d, "transpile")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "dfd", "transpile")
}

// ClearTranspileCacheDir removes the disk layer's files under dir.
func ClearTranspileCacheDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clearing the transpile cache: %w", err)
	}
	return nil
}

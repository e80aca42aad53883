package engine

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Core's compiler(code, path) turns a .sqlx (and .sql, .yaml, .ipynb, .md)
// file into the JavaScript module that defines its actions. It is a pure
// function of the core, the path and the content. It was the single
// largest cost of a compile in goja, about 55 % of a 1,000-action project,
// while core's moo lexer ran on regexp2; with SQLX in Go (sqlx.go) it is
// about 3 %. Editors recompile after every keystroke with all but one file
// unchanged, so the results are memoized, in memory for the life of the
// process (a daemon's workers) and optionally on disk (cold `dfd compile`
// processes).
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
	// An output over the read bound would be written only to be refused.
	if dir != "" && len(out) <= maxDiskEntryOutput {
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

// maxDiskEntryOutput bounds the output of a disk entry that is read back.
// An entry is core's compiler() output for one source file, which is
// about the size of the file (the SQL inside a template literal, plus a
// wrapper of a few hundred bytes). The largest file dfd can compile is far
// smaller than 64 MiB: a worker request carries the project in one 64 MiB
// frame (jit/wire.DefaultMaxFrame), the editor sends a file in one 64 MiB
// message (lsp.DefaultMaxMessageBytes), and the memory layer refuses
// entries over its 64 MiB limit. So anything bigger was not written by dfd
// for a file it could compile, and reading it (a planted file, or a link to
// /dev/zero) could only exhaust memory.
const maxDiskEntryOutput = 64 << 20

// diskHead is the length of a disk entry's header line.
const diskHead = len(diskMagic) + 64 + 1

// readDiskEntry returns the output held in the entry at path. Anything
// but a regular file of a plausible size is refused without reading it:
// a FIFO would block the compile past its deadline (a read cannot be
// interrupted) and a device or a huge file would exhaust memory. A
// refused or damaged entry is removed (the name only: links are not
// followed, directories are left alone) and recomputed by the caller.
func readDiskEntry(path string) (string, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", false
	}
	if !plausibleDiskEntry(fi) {
		dropDiskEntry(path, fi)
		return "", false
	}
	// Lstat and open race with whoever else writes the directory: open
	// without following a link and without waiting for a FIFO's writer
	// (where the platform can), then check what was opened.
	f, err := os.OpenFile(path, os.O_RDONLY|openNoFollowNoBlock, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !plausibleDiskEntry(fi) {
		if err == nil {
			dropDiskEntry(path, fi)
		}
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(diskHead+maxDiskEntryOutput+1)))
	if err != nil {
		return "", false
	}
	if len(b) > diskHead+maxDiskEntryOutput || len(b) < diskHead ||
		string(b[:len(diskMagic)]) != diskMagic || b[diskHead-1] != '\n' {
		_ = os.Remove(path)
		return "", false
	}
	out := b[diskHead:]
	sum := sha256.Sum256(out)
	if hex.EncodeToString(sum[:]) != string(b[len(diskMagic):diskHead-1]) {
		_ = os.Remove(path)
		return "", false
	}
	return string(out), true
}

// plausibleDiskEntry reports whether fi may be an entry dfd wrote.
func plausibleDiskEntry(fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Size() <= int64(diskHead+maxDiskEntryOutput)
}

// dropDiskEntry removes a refused entry. os.Remove unlinks the name (a
// link, not its target; a FIFO without opening it); a directory is left
// alone rather than guessed at.
func dropDiskEntry(path string, fi fs.FileInfo) {
	if !fi.IsDir() {
		_ = os.Remove(path)
	}
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

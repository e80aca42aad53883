package project

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/dfdtools/dfd/internal/regfile"
)

// FilePaths returns the project files the official CLI hands to
// @dataform/core as compileConfig.filePaths: slash-separated, relative to
// Root, sorted lexically (the CLI's order is a walk order; core sorts what
// matters and we want determinism).
//
// The CLI computes the list with glob 13's
//
//	glob.sync("!(node_modules)/**/*.*", {cwd: projectDir})
//
// and this reproduces its semantics, established empirically against
// glob 13.0.6 (see TestFilePathsMatchesNodeGlob) and by reading its walker:
//
//   - Only paths at least two segments deep: files directly in the root
//     (workflow_settings.yaml, package.json, ...) are never listed.
//   - The first segment is any entry except "node_modules"; deeper
//     node_modules directories are crawled like any other.
//   - Names starting with "." never match and are never entered, at any
//     depth (glob's dot:false).
//   - The last segment must contain a "." (not as its first byte). It is
//     matched by name only, so directories ("sub.d"), broken symlinks and
//     symlinks to directories are listed too, not just files.
//   - A symlinked directory in the first segment is crawled like a real
//     one. A symlinked directory met deeper (by "**") is not crawled: only
//     its direct children are matched against "*.*". That is glob's
//     "follow one symlink" rule, which also keeps link cycles finite.
//   - Unreadable directories are silently skipped.
//   - On macOS and Windows glob matches case-insensitively by default, so
//     there "NODE_MODULES" is excluded in the first segment too.
//
// One departure: named pipes, sockets and devices (and symbolic links to
// them) are left out, though glob lists them. Reading a named pipe blocks
// until something writes to it, so core's require of definitions/p.sqlx
// would hang the compile where no deadline reaches; the official CLI hangs
// on such a project. ListFiles says which files were left out.
func (p *Project) FilePaths() ([]string, error) {
	paths, _, err := p.ListFiles()
	return paths, err
}

// SkippedFile is a file that FilePaths leaves out because dfd reads only
// regular files.
type SkippedFile struct {
	Path string // slash-separated, relative to Root
	Kind string // "named pipe", "socket", "character device", …
}

// Reason is why the file was left out, without its name: "not a regular
// file (named pipe); dfd reads only regular files".
func (s SkippedFile) Reason() string { return regfile.Reason(s.Kind) }

func (s SkippedFile) String() string { return s.Path + ": " + s.Reason() }

// ListFiles is FilePaths and the files it leaves out (sorted), for a
// caller that reports them.
func (p *Project) ListFiles() (paths []string, skipped []SkippedFile, err error) {
	return globFilePaths(p.Root)
}

func globFilePaths(root string) ([]string, []SkippedFile, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, fmt.Errorf("list project files: %w", err)
	}
	var w walk
	for _, e := range entries {
		name := e.Name()
		if isDotName(name) || isNodeModules(name) {
			continue
		}
		// Only directories (or links that may point to one) can hold
		// matches; readdir on anything else fails and glob ignores it.
		if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			w.crawl(filepath.Join(root, name), name)
		}
	}
	sort.Strings(w.out)
	sort.Slice(w.skipped, func(i, j int) bool { return w.skipped[i].Path < w.skipped[j].Path })
	return w.out, w.skipped, nil
}

// walk collects the matches of a crawl.
type walk struct {
	out     []string
	skipped []SkippedFile
}

// match adds the matching entry e, at dir/name, reachable as rel, unless it
// is a named pipe, a socket or a device, or a symbolic link to one. The
// entry's type answers without a system call for all but symbolic links,
// which are few; a link that cannot be followed stays (glob lists it, and
// reading it fails at once).
func (w *walk) match(dir string, e os.DirEntry, rel string) {
	m := e.Type()
	if m&os.ModeSymlink != 0 {
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
			m = fi.Mode()
		}
	}
	if k := regfile.Kind(m); k != "" {
		w.skipped = append(w.skipped, SkippedFile{Path: rel, Kind: k})
		return
	}
	w.out = append(w.out, rel)
}

// crawl is "**/*.*" in dir, which is reachable as rel. Errors reading a
// directory are ignored, as glob does.
func (w *walk) crawl(dir, rel string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if isDotName(name) {
			continue
		}
		childRel := path.Join(rel, name)
		if matchesStarDotStar(name) {
			w.match(dir, e, childRel)
		}
		switch {
		case e.IsDir():
			w.crawl(filepath.Join(dir, name), childRel)
		case e.Type()&os.ModeSymlink != 0:
			w.directMatches(filepath.Join(dir, name), childRel)
		}
	}
}

// directMatches lists the children of a symlinked directory that match
// "*.*" without descending further: glob's globstar does not traverse a
// symlink it meets, it only lets the rest of the pattern match inside it.
func (w *walk) directMatches(dir, rel string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if matchesStarDotStar(e.Name()) {
			w.match(dir, e, path.Join(rel, e.Name()))
		}
	}
}

// matchesStarDotStar is minimatch's "*.*" with dot:false.
func matchesStarDotStar(name string) bool {
	return !isDotName(name) && strings.Contains(name, ".")
}

func isDotName(name string) bool { return strings.HasPrefix(name, ".") }

func isNodeModules(name string) bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return strings.EqualFold(name, "node_modules")
	}
	return name == "node_modules"
}

package project

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
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
func (p *Project) FilePaths() ([]string, error) {
	return globFilePaths(p.Root)
}

func globFilePaths(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list project files: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if isDotName(name) || isNodeModules(name) {
			continue
		}
		// Only directories (or links that may point to one) can hold
		// matches; readdir on anything else fails and glob ignores it.
		if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			out = crawl(filepath.Join(root, name), name, out)
		}
	}
	sort.Strings(out)
	return out, nil
}

// crawl is "**/*.*" in dir, which is reachable as rel. Errors reading a
// directory are ignored, as glob does.
func crawl(dir, rel string, out []string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		name := e.Name()
		if isDotName(name) {
			continue
		}
		childRel := path.Join(rel, name)
		if matchesStarDotStar(name) {
			out = append(out, childRel)
		}
		switch {
		case e.IsDir():
			out = crawl(filepath.Join(dir, name), childRel, out)
		case e.Type()&os.ModeSymlink != 0:
			out = directMatches(filepath.Join(dir, name), childRel, out)
		}
	}
	return out
}

// directMatches lists the children of a symlinked directory that match
// "*.*" without descending further: glob's globstar does not traverse a
// symlink it meets, it only lets the rest of the pattern match inside it.
func directMatches(dir, rel string, out []string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if matchesStarDotStar(e.Name()) {
			out = append(out, path.Join(rel, e.Name()))
		}
	}
	return out
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

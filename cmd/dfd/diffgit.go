package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/project"
)

// What `dfd diff` reads of git. It shells out to the user's git, as a
// reviewer's shell would, and never touches the work tree or the index:
// a revision's files come from its objects (ls-tree, cat-file --batch).

// gitRepo is the repository holding a project, and where in it the
// project is.
type gitRepo struct {
	top    string // the work tree's top directory
	prefix string // the project's directory in the tree, "" or "a/b/"
}

func openGitRepo(ctx context.Context, dir string) (*gitRepo, error) {
	out, err := gitOutput(ctx, dir, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("%s is not in a git repository (dfd diff compares git revisions): %w", dir, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	r := &gitRepo{top: lines[0]}
	if len(lines) > 1 {
		r.prefix = lines[1]
	}
	return r, nil
}

// gitOutput runs git in dir and returns its standard output; the error
// carries git's own message.
func gitOutput(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), firstLine(msg))
		}
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// resolve is the commit a revision names, and a short label for people.
func (r *gitRepo) resolve(ctx context.Context, rev string) (commit, label string, err error) {
	if strings.HasPrefix(rev, "-") {
		return "", "", fmt.Errorf("%q is not a revision", rev)
	}
	out, err := gitOutput(ctx, r.top, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", "", fmt.Errorf("%q names no commit of %s", rev, r.top)
	}
	commit = strings.TrimSpace(string(out))
	return commit, rev + " (" + commit[:min(7, len(commit))] + ")", nil
}

// defaultBase is the merge base of HEAD with the default branch:
// origin/HEAD's branch, else main, else master.
func (r *gitRepo) defaultBase(ctx context.Context) (commit, label string, err error) {
	var candidates []string
	if out, err := gitOutput(ctx, r.top, "rev-parse", "--abbrev-ref", "origin/HEAD"); err == nil {
		if b := strings.TrimSpace(string(out)); b != "" && b != "origin/HEAD" {
			candidates = append(candidates, b)
		}
	}
	candidates = append(candidates, "main", "master")
	for _, b := range candidates {
		if _, err := gitOutput(ctx, r.top, "rev-parse", "--verify", "--quiet", b+"^{commit}"); err != nil {
			continue
		}
		out, err := gitOutput(ctx, r.top, "merge-base", "HEAD", b)
		if err != nil {
			return "", "", fmt.Errorf("no merge base of HEAD and %s: %w", b, err)
		}
		commit = strings.TrimSpace(string(out))
		return commit, "merge base with " + b + " (" + commit[:min(7, len(commit))] + ")", nil
	}
	return "", "", errors.New("no default branch to compare with (origin/HEAD, main, master): name the base revision, e.g. dfd diff HEAD~1")
}

// gitTree is the project's files in one commit: their contents, read
// from git's objects.
type gitTree struct {
	files map[string][]byte // root-relative slash path → content
	dirs  map[string]bool
	// skipped are the entries no file is made of (symbolic links,
	// submodules), which the compile does not see.
	skipped []string
}

// readTree reads the project's files at commit: everything below the
// project's directory but node_modules and dot-directories at its root,
// which the compile never reads.
func (r *gitRepo) readTree(ctx context.Context, commit string) (*gitTree, error) {
	args := []string{"ls-tree", "-r", "-z", "--full-tree", commit}
	if r.prefix != "" {
		args = append(args, "--", strings.TrimSuffix(r.prefix, "/"))
	}
	out, err := gitOutput(ctx, r.top, args...)
	if err != nil {
		return nil, err
	}
	t := &gitTree{files: map[string][]byte{}, dirs: map[string]bool{}}
	type entry struct{ rel, oid string }
	var blobs []entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		// "<mode> SP <type> SP <object> TAB <path>"
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("git ls-tree: unexpected entry %q", rec)
		}
		rel, ok := strings.CutPrefix(string(p), r.prefix)
		if !ok {
			continue
		}
		first, _, _ := strings.Cut(rel, "/")
		if first == "node_modules" || strings.HasPrefix(first, ".") && first != rel {
			continue
		}
		if f[1] != "blob" || f[0] == "120000" {
			t.skipped = append(t.skipped, rel)
			continue
		}
		blobs = append(blobs, entry{rel, f[2]})
	}
	if len(blobs) == 0 {
		return t, nil
	}
	// One cat-file process for every blob: a project of thousands of
	// files is read in one pass.
	cmd := exec.CommandContext(ctx, "git", "-C", r.top, "cat-file", "--batch")
	cmd.WaitDelay = 5 * time.Second
	var in bytes.Buffer
	for _, b := range blobs {
		in.WriteString(b.oid + "\n")
	}
	cmd.Stdin = &in
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	br := bufio.NewReader(stdout)
	readErr := func() error {
		for _, b := range blobs {
			header, err := br.ReadString('\n')
			if err != nil {
				return fmt.Errorf("reading %s: %w", b.rel, err)
			}
			// "<oid> SP <type> SP <size> LF" then the content and LF.
			f := strings.Fields(header)
			if len(f) != 3 || f[1] != "blob" {
				return fmt.Errorf("reading %s: unexpected answer %q", b.rel, strings.TrimSpace(header))
			}
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("reading %s: unexpected size in %q", b.rel, strings.TrimSpace(header))
			}
			buf := make([]byte, n+1)
			if _, err := io.ReadFull(br, buf); err != nil {
				return fmt.Errorf("reading %s: %w", b.rel, err)
			}
			t.files[b.rel] = buf[:n]
			for d := path.Dir(b.rel); d != "." && !t.dirs[d]; d = path.Dir(d) {
				t.dirs[d] = true
			}
		}
		return nil
	}()
	if readErr != nil {
		_ = cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	if readErr != nil {
		return nil, fmt.Errorf("git cat-file: %w", readErr)
	}
	if waitErr != nil {
		return nil, fmt.Errorf("git cat-file: %w: %s", waitErr, firstLine(strings.TrimSpace(stderr.String())))
	}
	return t, nil
}

// filePaths are the files the official CLI would hand to core, by
// project.FilePaths' rules on a tree of files: at least two segments
// deep, no segment starting with ".", the last one holding a ".".
// (Directories named like "a.b" are listed by glob too; they hold no
// source, and a git tree has no empty directories to list.)
func (t *gitTree) filePaths() []string {
	var out []string
	for rel := range t.files {
		segs := strings.Split(rel, "/")
		if len(segs) < 2 || segs[0] == "node_modules" {
			continue
		}
		ok := true
		for _, s := range segs {
			ok = ok && !strings.HasPrefix(s, ".")
		}
		last := segs[len(segs)-1]
		if ok && strings.Contains(last, ".") {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

// read is t's file rel, for the check's positions.
func (t *gitTree) read(rel string) ([]byte, bool) {
	b, ok := t.files[path.Clean(rel)]
	return b, ok
}

// gitFiles serves a gitTree to the compiler (engine.Files).
type gitFiles struct{ t *gitTree }

func (g gitFiles) clean(name string) (string, error) {
	c := path.Clean(strings.TrimPrefix(name, "./"))
	if c == ".." || strings.HasPrefix(c, "../") || path.IsAbs(c) {
		return "", fmt.Errorf("%s: %w", name, engine.ErrOutsideProject)
	}
	return c, nil
}

func (g gitFiles) ReadFile(name string) ([]byte, error) {
	c, err := g.clean(name)
	if err != nil {
		return nil, err
	}
	b, ok := g.t.files[c]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return b, nil
}

func (g gitFiles) Stat(name string) (fs.FileInfo, error) {
	c, err := g.clean(name)
	if err != nil {
		return nil, err
	}
	if b, ok := g.t.files[c]; ok {
		return treeInfo{name: path.Base(c), size: int64(len(b))}, nil
	}
	if c == "." || g.t.dirs[c] {
		return treeInfo{name: path.Base(c), dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

type treeInfo struct {
	name string
	size int64
	dir  bool
}

func (i treeInfo) Name() string { return i.name }
func (i treeInfo) Size() int64  { return i.size }
func (i treeInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i treeInfo) ModTime() time.Time { return time.Time{} }
func (i treeInfo) IsDir() bool        { return i.dir }
func (i treeInfo) Sys() any           { return nil }

// treeProject is the project as of a commit: its settings read from the
// tree, its root the directory on disk (for names only: every file comes
// from the tree). ok is false when the tree holds no project there.
func treeProject(root string, t *gitTree) (p *project.Project, ok bool, err error) {
	yaml, hasYAML := t.files[project.WorkflowSettingsFile]
	js, hasJSON := t.files[project.DataformJSONFile]
	p = &project.Project{Root: root}
	switch {
	case hasYAML && hasJSON:
		return nil, true, fmt.Errorf("both %s and %s exist; remove one", project.WorkflowSettingsFile, project.DataformJSONFile)
	case hasYAML:
		p.SettingsFile = project.WorkflowSettingsFile
		p.Settings, err = project.ParseSettings(p.SettingsPath(), yaml)
	case hasJSON:
		p.SettingsFile = project.DataformJSONFile
		p.Settings, err = project.ParseSettings(p.SettingsPath(), js)
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	return p, true, nil
}

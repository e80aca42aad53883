// Package project knows everything about a Dataform project on disk except
// how to compile it: where its root is, what its settings say, which files
// the official CLI would hand to @dataform/core, and where a usable
// @dataform/core lives (the project's node_modules or dfd's own cache).
package project

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Names of the files that mark a project root. workflow_settings.yaml is
// current; dataform.json is the legacy format that @dataform/core 3.x still
// accepts.
const (
	WorkflowSettingsFile = "workflow_settings.yaml"
	DataformJSONFile     = "dataform.json"
)

// ErrNotProject reports that a directory (or none of its parents, for
// FindRoot) holds a project settings file.
var ErrNotProject = errors.New("not a Dataform project")

// Project is a Dataform project root on disk.
type Project struct {
	// Root is absolute with symlinks resolved, like the CLI's
	// fs.realpathSync(path.resolve(dir)), so that paths we compute match the
	// ones core sees.
	Root string
	// SettingsFile is WorkflowSettingsFile or DataformJSONFile.
	SettingsFile string
	// Settings holds the few settings dfd itself needs.
	Settings Settings
}

// Settings are the project settings dfd needs outside of compilation. For
// dataform.json projects the legacy names are mapped onto these fields.
type Settings struct {
	DataformCoreVersion     string // workflow_settings.yaml only
	DefaultProject          string // dataform.json: defaultDatabase
	DefaultDataset          string // dataform.json: defaultSchema
	DefaultLocation         string // dataform.json: defaultLocation
	DefaultAssertionDataset string // dataform.json: assertionSchema
}

// SettingsPath is the absolute path of the project's settings file.
func (p *Project) SettingsPath() string {
	return filepath.Join(p.Root, p.SettingsFile)
}

// Open opens the project whose root is dir. dir itself must contain
// workflow_settings.yaml or dataform.json; use FindRoot to search upwards.
func Open(dir string) (*Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open project %s: %w", dir, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open project: %w", err)
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("open project: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("open project %s: %w: not a directory", root, ErrNotProject)
	}

	hasYAML, err := isFile(filepath.Join(root, WorkflowSettingsFile))
	if err != nil {
		return nil, fmt.Errorf("open project %s: %w", root, err)
	}
	hasJSON, err := isFile(filepath.Join(root, DataformJSONFile))
	if err != nil {
		return nil, fmt.Errorf("open project %s: %w", root, err)
	}

	p := &Project{Root: root}
	switch {
	case hasYAML && hasJSON:
		// @dataform/core refuses this combination; failing here gives the
		// user the same answer earlier and without a compile.
		return nil, fmt.Errorf("open project %s: both %s and %s exist; %s is deprecated and cannot be used alongside %s, remove one",
			root, WorkflowSettingsFile, DataformJSONFile, DataformJSONFile, WorkflowSettingsFile)
	case hasYAML:
		p.SettingsFile = WorkflowSettingsFile
		p.Settings, err = readWorkflowSettings(p.SettingsPath())
	case hasJSON:
		p.SettingsFile = DataformJSONFile
		p.Settings, err = readDataformJSON(p.SettingsPath())
	default:
		return nil, fmt.Errorf("open project %s: %w: neither %s nor %s found there",
			root, ErrNotProject, WorkflowSettingsFile, DataformJSONFile)
	}
	if err != nil {
		return nil, fmt.Errorf("open project %s: %w", root, err)
	}
	return p, nil
}

// FindRoot returns the nearest directory at or above path (a file or a
// directory, which need not exist yet, e.g. an unsaved editor buffer) that
// contains a project settings file.
//
// The walk is lexical on the absolute path and the result is not
// symlink-resolved: a file reached through a symlinked directory belongs to
// the project the user sees, not to wherever the link points. Open resolves
// symlinks in the root it is given.
func FindRoot(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("find project root for %s: %w", path, err)
	}
	dir := abs
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		// A file, or something not created yet: its project is its
		// directory's project.
		dir = filepath.Dir(abs)
	}
	for {
		ok, err := isRoot(dir)
		if err != nil {
			return "", fmt.Errorf("find project root for %s: %w", abs, err)
		}
		if ok {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find project root for %s: %w: no %s or %s in it or any parent directory",
				abs, ErrNotProject, WorkflowSettingsFile, DataformJSONFile)
		}
		dir = parent
	}
}

// Discover returns every project root at or below dir, sorted, including
// projects nested inside other projects (monorepos). It does not descend
// into node_modules or dot-directories (dependencies and VCS metadata
// hold no projects of the user's and can be huge), nor follow symlinked
// directories (which could loop). The results are absolute and
// symlink-resolved, like Project.Root.
func Discover(ctx context.Context, dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("discover projects in %s: %w", dir, err)
	}
	top, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("discover projects: %w", err)
	}
	var roots []string
	err = filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			if path == top {
				return err
			}
			// An unreadable corner of a workspace should not hide the
			// projects elsewhere in it.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if path != top && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return fs.SkipDir
		}
		ok, err := isRoot(path)
		if err != nil {
			return err
		}
		if ok {
			roots = append(roots, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("discover projects in %s: %w", top, err)
	}
	sort.Strings(roots)
	return roots, nil
}

// isRoot reports whether dir contains a project settings file.
func isRoot(dir string) (bool, error) {
	for _, name := range []string{WorkflowSettingsFile, DataformJSONFile} {
		ok, err := isFile(filepath.Join(dir, name))
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// isFile reports whether path exists and is not a directory. Missing paths
// (and paths under a non-directory) are simply false; other errors, such as
// permission problems, are returned so they are not mistaken for "absent".
func isFile(path string) (bool, error) {
	info, err := os.Stat(path)
	switch {
	case err == nil:
		return !info.IsDir(), nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return false, nil
	default:
		return false, err
	}
}

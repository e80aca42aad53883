package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/settings"
)

// DefaultDebounce is the as-you-type debounce, unless dfd.debounceMs says
// otherwise: while edits come faster than it, a project recompiles once
// none came for this long; the first edit after a pause, and a save,
// compile at once (Project.waitQuiet).
const DefaultDebounce = 150 * time.Millisecond

// Events is how the workspace tells its client (the LSP server) what
// happened. Calls come from the projects' goroutines, one project's in
// order; implementations must not block for long.
type Events interface {
	// Diagnostics replaces the project's diagnostics with diags: those of
	// snap's compile and of the later phases known so far (each call
	// carries all of them). A nil snap means the project is gone.
	Diagnostics(root string, snap *Snapshot, diags []Diagnostic)
	// Compiled says snap is the project's newest snapshot: previews may
	// have changed.
	Compiled(snap *Snapshot)
	// Warn is for the user (window/showMessage).
	Warn(msg string)
	// Progress starts reporting a piece of work (it may do nothing).
	Progress(ctx context.Context, title, msg string) Progress
}

// Progress reports one piece of work started by Events.Progress.
type Progress interface {
	Report(msg string)
	End(msg string)
}

// Options configure a Session.
type Options struct {
	Backend Backend
	Events  Events
	// Log receives the session's log; nil discards it.
	Log *slog.Logger
	// Debounce is the as-you-type compile delay when dfd.debounceMs does
	// not set one (default DefaultDebounce).
	Debounce time.Duration
}

// Session is the workspace of one client: its workspace folders, open
// documents, settings and the Dataform projects found in them. It is the
// one registry of projects: each Project owns its compile loop, its
// snapshots and its backend (workers, metadata source).
type Session struct {
	opts    Options
	log     *slog.Logger
	backend Backend
	events  Events

	// ctx ends with Close; every goroutine of the session derives from it
	// and is waited for by Close.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// bgMu orders every wg.Add before Close's wg.Wait: once bgClosed is
	// set no goroutine is started (a WaitGroup must not grow from zero
	// while it is waited for).
	bgMu     sync.Mutex
	bgClosed bool

	mu       sync.Mutex // guards settings, folders, projects, closed
	settings settings.Settings
	folders  []string
	projects map[string]*Project
	closed   bool // Shutdown or Close: no new projects

	docs  documents
	views diskViews

	invariantViolations atomic.Int64
}

// New starts a session. Close ends it.
func New(ctx context.Context, opts Options) *Session {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	return &Session{
		opts: opts, log: opts.Log, backend: opts.Backend, events: opts.Events,
		ctx: ctx, cancel: cancel,
		settings: settings.Defaults(),
		projects: map[string]*Project{},
	}
}

// Shutdown stops every project and refuses new ones; documents and
// settings stay readable.
func (s *Session) Shutdown() {
	s.mu.Lock()
	s.closed = true
	ps := s.projectsLocked()
	s.projects = map[string]*Project{}
	s.mu.Unlock()
	for _, p := range ps {
		p.close()
	}
}

// Close ends the session: every project is stopped and every goroutine the
// session started has returned.
func (s *Session) Close() {
	s.Shutdown()
	s.cancel()
	s.bgMu.Lock()
	s.bgClosed = true
	s.bgMu.Unlock()
	s.wg.Wait()
}

// InvariantViolations counts panics recovered and impossible states seen.
func (s *Session) InvariantViolations() int64 { return s.invariantViolations.Load() }

// goBackground runs f on a goroutine the session owns (Close waits for it).
// After Close it runs nothing.
func (s *Session) goBackground(f func(ctx context.Context)) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.bgClosed {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f(s.ctx)
	}()
}

// recovered runs f, turning a panic (a bug in the backend) into an error
// so that one bad compile never takes the daemon down.
func (s *Session) recovered(what string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.invariantViolations.Add(1)
			s.log.Error("panic in "+what, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = fmt.Errorf("dfd internal error in %s: %v (please report this)", what, v)
		}
	}()
	return f()
}

// --- settings ------------------------------------------------------------

// Settings are the client's settings now.
func (s *Session) Settings() settings.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// Configure applies next: the backend's part (its error is for the user)
// and the workspace's own (compiling as you type again compiles the edits
// held back).
func (s *Session) Configure(next settings.Settings) error {
	s.mu.Lock()
	prev := s.settings
	s.settings = next
	s.mu.Unlock()
	if !prev.CompileAsYouType && next.CompileAsYouType {
		for _, p := range s.Projects() {
			p.FlushDeferred()
		}
	}
	if s.backend == nil {
		return nil
	}
	errs := []error{s.backend.Configure(next)}
	for _, p := range s.Projects() {
		if r, ok := p.Latest().Backend().(Reconfigurer); ok {
			ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
			errs = append(errs, r.Reconfigure(ctx))
			cancel()
		}
	}
	return errors.Join(errs...)
}

// RefreshPreviews drops the JiT previews of every project's latest snapshot
// and says each was compiled again, so that clients ask for previews anew
// (the metadata source or the preview policy changed).
func (s *Session) RefreshPreviews() {
	for _, p := range s.Projects() {
		p.RefreshPreview()
	}
}

func (s *Session) debounce() time.Duration {
	if d := s.Settings().Debounce; d > 0 {
		return d
	}
	return s.opts.Debounce
}

// --- documents -----------------------------------------------------------

// Document is the open document of path, or nil.
func (s *Session) Document(path string) *Document { return s.docs.get(path) }

// Documents are the open documents below dir, by dir-relative slash path.
func (s *Session) Documents(dir string) map[string]*Document { return s.docs.under(dir) }

// ReadFile is the editor's view of a file: its open buffer, else the disk.
func (s *Session) ReadFile(path string) ([]byte, error) { return s.docs.readFile(path) }

// View is the editor's view of a file as a Document: its open buffer, else
// the file on disk (version 0, empty URI), read again only when its size
// or modification time changed. A Document's scans (SQLX, Refs,
// DefinitionSpan) are computed once, so requests should read files
// through View.
func (s *Session) View(path string) (*Document, error) {
	if d := s.docs.get(path); d != nil {
		return d, nil
	}
	return s.views.get(path)
}

// OpenDocument records a document the editor opened. Opening a file as it
// is on disk does not change what compiles, once the project has
// compiled, but its later-phase checks (which cover open files) run
// again; otherwise the project compiles at once.
func (s *Session) OpenDocument(d *Document) {
	s.docs.set(d)
	p := s.ProjectFor(d.Path)
	if p == nil {
		return
	}
	if onDisk, err := regfile.ReadFile(d.Path); err == nil && bytes.Equal(onDisk, d.Text) && p.Latest() != nil {
		p.recheck()
		return
	}
	p.Changed(ChangeUrgent)
}

// ChangeDocument replaces an open document with its edited version, which
// must have a higher version number (else the edit is refused: applied
// out of order, it would corrupt the text).
func (s *Session) ChangeDocument(d *Document) error {
	if err := s.docs.replace(d); err != nil {
		return err
	}
	if p := s.ProjectFor(d.Path); p != nil {
		if s.Settings().CompileAsYouType {
			p.Changed(0)
		} else {
			p.deferChange()
		}
	}
	return nil
}

// SaveDocument records that path was saved (with its text, when the
// client sends it) and compiles its project at once.
func (s *Session) SaveDocument(path string, text []byte) {
	if text != nil {
		if d := s.docs.get(path); d != nil {
			s.docs.set(NewDocument(d.URI, path, d.Version, text))
		}
	}
	p := s.ProjectFor(path)
	if p == nil {
		return
	}
	flags := ChangeUrgent
	if IsProjectConfigFile(p.root, path) {
		flags |= ChangeReopen
	}
	p.Changed(flags)
}

// CloseDocument forgets an open document; its project compiles again when
// the file on disk differs from the buffer.
func (s *Session) CloseDocument(path string) {
	d := s.docs.remove(path)
	if d == nil {
		return
	}
	if onDisk, err := regfile.ReadFile(path); err == nil && bytes.Equal(onDisk, d.Text) {
		return
	}
	if p := s.ProjectFor(path); p != nil {
		p.Changed(ChangeUrgent)
	}
}

// IsProjectConfigFile reports whether path is a file whose change means the
// project must be opened again: its settings, its package.json, or
// anything of its installed core.
func IsProjectConfigFile(root, path string) bool {
	rel, ok := RelSlash(root, path)
	if !ok {
		return false
	}
	switch rel {
	case project.WorkflowSettingsFile, project.DataformJSONFile, "package.json", "package-lock.json":
		return true
	}
	return strings.HasPrefix(rel, "node_modules/@dataform/core/")
}

// --- folders and projects ------------------------------------------------

// SetFolders starts the session's workspace folders (initialize): their
// projects are discovered in the background.
func (s *Session) SetFolders(folders []string) {
	s.mu.Lock()
	s.folders = append([]string(nil), folders...)
	s.mu.Unlock()
	for _, f := range folders {
		s.discover(f)
	}
}

// Folders are the workspace folders.
func (s *Session) Folders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.folders...)
}

// ChangeFolders adds and removes workspace folders. Additions are recorded
// first, so that a project inside both a removed and an added folder is
// kept rather than closed and found again.
func (s *Session) ChangeFolders(added, removed []string) {
	s.mu.Lock()
	s.folders = append(s.folders, added...)
	s.mu.Unlock()
	for _, dir := range removed {
		s.removeFolder(dir)
	}
	for _, dir := range added {
		s.discover(dir)
	}
}

// discover finds the projects of a folder in the background.
func (s *Session) discover(dir string) {
	s.goBackground(func(ctx context.Context) {
		roots, err := project.Discover(ctx, dir)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("discovering Dataform projects", "folder", dir, "error", err)
			}
			return
		}
		if len(roots) == 0 {
			s.log.Info("no Dataform project in workspace folder", "folder", dir)
		}
		for _, r := range roots {
			s.AddProject(r)
		}
	})
}

// removeFolder forgets the projects of a folder that are not inside
// another workspace folder.
func (s *Session) removeFolder(dir string) {
	s.mu.Lock()
	var others []string
	for _, f := range s.folders {
		if f != dir {
			others = append(others, f)
		}
	}
	s.folders = others
	s.mu.Unlock()
	for _, p := range s.Projects() {
		if _, in := RelSlash(dir, p.root); !in && p.root != dir {
			continue
		}
		keep := false
		for _, f := range others {
			if _, in := RelSlash(f, p.root); in || p.root == f {
				keep = true
			}
		}
		if !keep {
			s.RemoveProject(p.root)
		}
	}
}

// InWorkspace reports whether dir is a workspace folder or inside one.
func (s *Session) InWorkspace(dir string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.folders {
		if f == dir {
			return true
		}
		if _, ok := RelSlash(f, dir); ok {
			return true
		}
	}
	return false
}

func (s *Session) projectsLocked() []*Project {
	out := make([]*Project, 0, len(s.projects))
	for _, p := range s.projects {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].root < out[j].root })
	return out
}

// Projects are the session's projects, sorted by root.
func (s *Session) Projects() []*Project {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.projectsLocked()
}

// Project is the project at root, or nil.
func (s *Session) Project(root string) *Project {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.projects[root]
}

// Owner is the registered project containing path: the innermost one
// (nested projects are separate). Nil when none is registered.
func (s *Session) Owner(path string) *Project {
	var best *Project
	for _, p := range s.Projects() {
		if _, ok := RelSlash(p.root, path); ok && (best == nil || len(p.root) > len(best.root)) {
			best = p
		}
	}
	return best
}

// ProjectFor is the project a file belongs to: its owner, else the project
// found by walking up from the file (a file opened outside the workspace
// folders), which is then registered. Nil when the file is in no Dataform
// project.
func (s *Session) ProjectFor(path string) *Project {
	if p := s.Owner(path); p != nil {
		return p
	}
	root, err := project.FindRoot(path)
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if _, ok := RelSlash(root, path); !ok {
		return nil
	}
	return s.AddProject(root)
}

// AddProject registers the project at root (symbolic links resolved) and
// starts compiling it; it returns the existing project if there is one,
// and nil after Shutdown.
func (s *Session) AddProject(root string) *Project {
	s.mu.Lock()
	if p, ok := s.projects[root]; ok || s.closed {
		s.mu.Unlock()
		return p
	}
	p := newProject(s, root)
	s.projects[root] = p
	s.mu.Unlock()
	s.log.Info("project found", "root", root)
	s.goBackground(func(context.Context) { p.run() })
	p.Changed(ChangeUrgent | ChangeReopen)
	return p
}

// RemoveProject forgets the project at root at once and stops it in the
// background (its compile may take a moment to notice), then clears its
// diagnostics: a handler that removes a project never waits for it.
func (s *Session) RemoveProject(root string) {
	s.mu.Lock()
	p := s.projects[root]
	delete(s.projects, root)
	s.mu.Unlock()
	if p == nil {
		return
	}
	s.goBackground(func(context.Context) {
		p.close()
		s.events.Diagnostics(root, nil, nil)
		s.log.Info("project removed", "root", root)
	})
}

// FileChange is a change of a file on disk, outside the editor.
type FileChange struct {
	Path string // canonical (CanonicalPath)
	Kind FileChangeKind
}

// FileChangeKind says what happened to a file.
type FileChangeKind int

const (
	FileCreated FileChangeKind = iota + 1
	FileChanged
	FileDeleted
)

// FilesChanged handles files changed on disk (a git checkout, a
// generator, a rename in a terminal): a settings file appearing or
// disappearing adds or removes a project; a project file changing
// recompiles its project, and a settings or core file reopens it.
func (s *Session) FilesChanged(changes []FileChange) {
	touched := map[*Project]ChangeFlags{}
	for _, ev := range changes {
		path := ev.Path
		base := filepath.Base(path)
		dir := filepath.Dir(path)
		if (base == project.WorkflowSettingsFile || base == project.DataformJSONFile) && !inNodeModules(path) {
			switch ev.Kind {
			case FileCreated:
				if s.Project(dir) == nil && s.InWorkspace(dir) {
					s.AddProject(dir)
					continue
				}
			case FileDeleted:
				if p := s.Project(dir); p != nil {
					if _, err := project.Open(dir); errors.Is(err, project.ErrNotProject) {
						// Neither settings file is left: no longer a project.
						s.RemoveProject(dir)
						continue
					}
				}
			}
		}
		p := s.Owner(path)
		if p == nil {
			continue
		}
		flags := touched[p]
		if IsProjectConfigFile(p.root, path) {
			flags |= ChangeReopen
		} else if inNodeModules(path) {
			continue // dependencies other than core do not change what we compile
		}
		// An open buffer overrides the disk: a change on disk does not
		// change what is compiled for it, but other files may need it.
		touched[p] = flags
	}
	for p, flags := range touched {
		p.Changed(flags)
	}
}

func inNodeModules(path string) bool {
	return strings.Contains(filepath.ToSlash(path), "/node_modules/")
}

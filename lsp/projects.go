package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/project"
)

// registry holds the session's projects by root.
type registry struct {
	mu     sync.Mutex // guards m and closed
	m      map[string]*projectState
	closed bool
}

func (r *registry) init() { r.m = map[string]*projectState{} }

func (r *registry) get(root string) *projectState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[root]
}

// all returns the projects sorted by root.
func (r *registry) all() []*projectState {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*projectState, 0, len(r.m))
	for _, p := range r.m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].root < out[j].root })
	return out
}

// closeAll stops every project and refuses new ones (shutdown).
func (r *registry) closeAll() {
	r.mu.Lock()
	r.closed = true
	ps := make([]*projectState, 0, len(r.m))
	for _, p := range r.m {
		ps = append(ps, p)
	}
	r.mu.Unlock()
	for _, p := range ps {
		p.close()
	}
}

// canonicalPath resolves symbolic links in the directories of path, as
// project roots are resolved, so that files and roots compare. A path
// whose directory does not exist is returned cleaned.
func canonicalPath(path string) string {
	if path == "" {
		return ""
	}
	dir, base := filepath.Split(filepath.Clean(path))
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(real, base)
	}
	return filepath.Clean(path)
}

// projectFor is the project a file belongs to: the innermost registered
// root containing it, else the project found by walking up from the file
// (a file opened outside the workspace folders), which is then
// registered. Nil when the file is in no Dataform project.
func (s *Server) projectFor(path string) *projectState {
	var best *projectState
	for _, p := range s.projects.all() {
		if _, ok := relSlash(p.root, path); ok && (best == nil || len(p.root) > len(best.root)) {
			best = p
		}
	}
	if best != nil {
		return best
	}
	root, err := project.FindRoot(path)
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if _, ok := relSlash(root, path); !ok {
		return nil
	}
	return s.addProject(root)
}

// addFolder discovers the projects of a workspace folder in the background.
func (s *Server) addFolder(dir string) {
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
			s.addProject(r)
		}
	})
}

// removeFolder forgets the projects of a folder that are not inside
// another workspace folder.
func (s *Server) removeFolder(dir string) {
	s.mu.Lock()
	var others []string
	for _, f := range s.folders {
		if f != dir {
			others = append(others, f)
		}
	}
	s.folders = others
	s.mu.Unlock()
	for _, p := range s.projects.all() {
		if _, in := relSlash(dir, p.root); !in && p.root != dir {
			continue
		}
		keep := false
		for _, f := range others {
			if _, in := relSlash(f, p.root); in || p.root == f {
				keep = true
			}
		}
		if !keep {
			s.removeProject(p.root)
		}
	}
}

// addProject registers the project at root (symbolic links resolved) and
// starts compiling it; it returns the existing project if there is one.
func (s *Server) addProject(root string) *projectState {
	r := &s.projects
	r.mu.Lock()
	if p, ok := r.m[root]; ok || r.closed {
		r.mu.Unlock()
		return p
	}
	ctx, cancel := context.WithCancel(s.ctx)
	p := &projectState{
		s:      s,
		root:   root,
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		kick:   make(chan struct{}, 1),
		snapCh: make(chan struct{}),
	}
	r.m[root] = p
	r.mu.Unlock()
	s.log.Info("project found", "root", root)
	go p.run()
	p.changed(changeUrgent | changeReopen)
	return p
}

// removeProject stops a project and clears its diagnostics.
func (s *Server) removeProject(root string) {
	r := &s.projects
	r.mu.Lock()
	p := r.m[root]
	delete(r.m, root)
	r.mu.Unlock()
	if p == nil {
		return
	}
	p.close()
	s.backend.CloseProject(root)
	s.setDiagnostics(root, nil)
	s.log.Info("project removed", "root", root)
}

type changeFlags int

const (
	changeUrgent changeFlags = 1 << iota // compile without waiting (save, open)
	changeReopen                         // settings or core may have changed
)

// projectState is one Dataform project of the session. Its goroutine (run)
// owns compiling: edits only bump the modification counter and kick it.
type projectState struct {
	s    *Server
	root string

	ctx    context.Context // ends when the project is removed or the session ends
	cancel context.CancelFunc
	done   chan struct{} // closed when run returns
	kick   chan struct{} // a change is pending (capacity 1)
	info   ProjectInfo   // owned by run: the opened project

	mu     sync.Mutex // guards the fields below
	mod    int64      // modification counter: every change bumps it
	urgent bool       // the pending change should compile at once
	reopen bool       // settings/core must be read again
	snap   *Snapshot  // the latest snapshot
	snapCh chan struct{}

	// deferred: an edit was recorded without compiling
	// (dfd.compileAsYouType false); the next change or flushDeferred
	// compiles it.
	deferred bool
}

func (p *projectState) name() string { return filepath.Base(p.root) }

// changed records a change and wakes the project's goroutine, which
// cancels a compile in progress (it is superseded) and compiles again.
func (p *projectState) changed(flags changeFlags) {
	p.mu.Lock()
	p.mod++
	p.deferred = false // the compile this asks for reads every buffer
	p.urgent = p.urgent || flags&changeUrgent != 0
	p.reopen = p.reopen || flags&changeReopen != 0
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *projectState) close() {
	p.cancel()
	<-p.done
}

// latest is the latest snapshot (nil before the first compile ends).
func (p *projectState) latest() *Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snap
}

// currentVersion is the modification counter now: a snapshot with this
// version or later reflects every change made so far.
func (p *projectState) currentVersion() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mod
}

// await returns the first snapshot of at least version min.
func (p *projectState) await(ctx context.Context, min int64) (*Snapshot, error) {
	for {
		p.mu.Lock()
		snap, ch := p.snap, p.snapCh
		p.mu.Unlock()
		if snap != nil && snap.Version >= min {
			return snap, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-p.ctx.Done():
			return nil, fmt.Errorf("project %s was closed", p.root)
		}
	}
}

func (p *projectState) debounce() time.Duration {
	if d := p.s.currentSettings().Debounce; d > 0 {
		return d
	}
	return p.s.opts.Debounce
}

// run is the project's goroutine: wait for a change, debounce, (re)open if
// needed, compile, publish; a change during a compile cancels it.
func (p *projectState) run() {
	defer close(p.done)
	opened := false
	pending := false // a kick was consumed while compiling
	lastOpenErr := ""
	for {
		if !pending {
			select {
			case <-p.ctx.Done():
				return
			case <-p.kick:
			}
		}
		pending = false
		if !p.waitQuiet() {
			return
		}
		p.mu.Lock()
		version := p.mod
		reopen := p.reopen || !opened
		p.urgent, p.reopen = false, false
		p.mu.Unlock()

		if reopen {
			info, err := p.open()
			if p.ctx.Err() != nil {
				return
			}
			if err != nil {
				opened = false
				// Diagnostics on a settings file the user has not opened
				// go unseen in some editors: say it once per distinct error.
				if msg := err.Error(); msg != lastOpenErr {
					lastOpenErr = msg
					p.s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("dfd: cannot compile %s: %s", p.name(), firstLine(msg)))
				}
				// Retrying on every keystroke would rerun npm: wait for
				// a change of settings or core (changeReopen).
				diags := openErrorDiagnostics(p.root, err)
				p.publish(&Snapshot{Root: p.root, Version: version, Err: err, Compiled: time.Now()}, diags)
				p.waitReopen(err, diags)
				continue
			}
			opened = true
			lastOpenErr = ""
			p.info = info
		}

		superseded, ok := p.compile(version)
		if !ok {
			return
		}
		pending = superseded
	}
}

// waitQuiet waits until no change came for the debounce delay, unless the
// pending change is urgent. It returns false when the project ends.
func (p *projectState) waitQuiet() bool {
	for {
		p.mu.Lock()
		urgent := p.urgent
		p.mu.Unlock()
		if urgent {
			return true
		}
		t := time.NewTimer(p.debounce())
		select {
		case <-p.ctx.Done():
			t.Stop()
			return false
		case <-p.kick:
			t.Stop()
		case <-t.C:
			return true
		}
	}
}

// waitReopen blocks until a change asks for the project to be reopened.
// Other changes are answered with the same error at their version, so that
// requests waiting for them (dfd/preview) get the error instead of waiting.
func (p *projectState) waitReopen(err error, diags []Diagnostic) {
	for {
		p.mu.Lock()
		reopen, version := p.reopen, p.mod
		p.mu.Unlock()
		if reopen {
			select {
			case p.kick <- struct{}{}:
			default:
			}
			return
		}
		if cur := p.latest(); cur == nil || cur.Version < version {
			p.publish(&Snapshot{Root: p.root, Version: version, Err: err, Compiled: time.Now()}, diags)
		}
		select {
		case <-p.ctx.Done():
			return
		case <-p.kick:
		}
	}
}

func (p *projectState) open() (ProjectInfo, error) {
	prog := p.s.beginProgress(p.ctx, "dfd: opening "+p.name(), "reading settings and @dataform/core")
	var info ProjectInfo
	err := p.s.recovered("open project", func() error {
		var err error
		info, err = p.s.backend.OpenProject(p.ctx, p.root, func(msg string) {
			prog.report(msg)
			p.s.log.Info(msg, "project", p.root)
		})
		return err
	})
	if err != nil {
		prog.end("failed: " + firstLine(err.Error()))
		if p.ctx.Err() == nil {
			p.s.log.Warn("cannot open project", "root", p.root, "error", err)
		}
		return ProjectInfo{}, err
	}
	msg := "@dataform/core " + info.CoreVersion
	if info.CoreInstalled {
		msg += " installed"
	}
	prog.end(msg)
	for _, w := range info.Warnings {
		p.s.log.Warn(w, "project", p.root)
		p.s.showMessage(protocol.MessageTypeWarning, "dfd: "+p.name()+": "+w)
	}
	p.s.log.Info("project ready", "root", p.root, "core", info.CoreVersion, "installed", info.CoreInstalled)
	return info, nil
}

type compileOutcome struct {
	res *CompileResult
	err error
}

// compile compiles the project as of version. It returns superseded when a
// newer change cancelled it, and ok=false when the project ended.
func (p *projectState) compile(version int64) (superseded, ok bool) {
	docs := p.s.docs.under(p.root)
	overlays := make(map[string][]byte, len(docs))
	for rel, d := range docs {
		if strings.HasPrefix(rel, "node_modules/") {
			continue
		}
		overlays[rel] = d.text
	}
	cctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	prog := p.s.beginProgress(cctx, "dfd: compiling "+p.name(), "")
	out := make(chan compileOutcome, 1)
	start := time.Now()
	go func() {
		var o compileOutcome
		defer func() { out <- o }()
		o.err = p.s.recovered("compile", func() error {
			var err error
			o.res, err = p.s.backend.Compile(cctx, CompileRequest{Root: p.root, Overlays: overlays})
			return err
		})
	}()
	var o compileOutcome
	select {
	case o = <-out:
	case <-p.kick:
		cancel()
		<-out // the backend honours ctx; wait so compiles never overlap
		prog.end("superseded")
		p.s.log.Debug("compile superseded", "project", p.root, "version", version)
		return true, true
	case <-p.ctx.Done():
		cancel()
		<-out
		prog.end("stopped")
		return false, false
	}
	elapsed := time.Since(start)
	if o.err != nil && p.ctx.Err() != nil {
		prog.end("stopped")
		return false, false
	}
	snap := &Snapshot{Root: p.root, Version: version, Info: p.info, Docs: docs, Compiled: time.Now(), Elapsed: elapsed}
	var diags []Diagnostic
	if o.err != nil {
		// The compiler itself failed: keep the last good graph for
		// navigation, and say why on the settings file.
		snap.Err = o.err
		if prev := p.latest(); prev != nil {
			snap.Result = prev.Result
		}
		diags = compilerFailureDiagnostics(p.root, o.err)
		prog.end("failed")
		p.s.log.Warn("compile failed", "project", p.root, "error", o.err)
	} else {
		snap.Result = o.res
		diags = o.res.Diagnostics
		prog.end(fmt.Sprintf("%d actions, %d problems in %s", len(o.res.Actions), len(diags), elapsed.Round(time.Millisecond)))
		p.s.log.Debug("compiled", "project", p.root, "version", version, "actions", len(o.res.Actions),
			"errors", len(diags), "elapsed", elapsed)
	}
	p.publish(snap, diags)
	return false, true
}

// publish installs snap as the latest snapshot, publishes its diagnostics
// and tells clients that previews may have changed.
func (p *projectState) publish(snap *Snapshot, diags []Diagnostic) {
	snap.index()
	p.mu.Lock()
	if p.snap != nil && snap.Info.CoreVersion == "" && !snap.Info.CoreInstalled && len(snap.Info.Warnings) == 0 {
		snap.Info = p.snap.Info
	}
	p.snap = snap
	close(p.snapCh)
	p.snapCh = make(chan struct{})
	p.mu.Unlock()
	p.s.setDiagnostics(p.root, p.s.convertDiagnostics(snap, diags))
	p.s.notifyPreviewChanged(p, snap)
}

// recovered runs f, turning a panic (a bug in the backend) into an error
// so that one bad compile never takes the daemon down.
func (s *Server) recovered(what string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.invariantViolations.Add(1)
			s.log.Error("panic in "+what, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = fmt.Errorf("dfd internal error in %s: %v (please report this)", what, v)
		}
	}()
	return f()
}

// settingsFile is the project's settings file (workflow_settings.yaml
// unless only dataform.json exists).
func settingsFile(root string) string {
	y := filepath.Join(root, project.WorkflowSettingsFile)
	if _, err := os.Stat(y); err != nil {
		j := filepath.Join(root, project.DataformJSONFile)
		if _, err := os.Stat(j); err == nil {
			return j
		}
	}
	return y
}

// openErrorDiagnostics puts a failure to open a project on its settings
// file: at the problem for a settings error, else on the first line, with
// the resolver's message, which says what to do (install a core, set
// dataformCoreVersion, …).
func openErrorDiagnostics(root string, err error) []Diagnostic {
	var se *project.SettingsError
	if errors.As(err, &se) {
		line, col := max(se.Line-1, 0), max(se.Column-1, 0)
		return []Diagnostic{{Path: se.File, Line: line, Col: col, EndLine: -1, Severity: SeverityError, Message: se.Msg, Source: "dfd", Code: "settings"}}
	}
	code := "project"
	if errors.Is(err, project.ErrNoCore) || errors.Is(err, project.ErrCoreInstall) || errors.Is(err, project.ErrNPMNotFound) || errors.Is(err, project.ErrBadCoreVersion) {
		code = "core"
	}
	return []Diagnostic{{Path: settingsFile(root), EndLine: -1, Severity: SeverityError, Message: err.Error(), Source: "dfd", Code: code}}
}

// compilerFailureDiagnostics reports a compiler failure (not an error in
// the user's code, or one core could not attribute) on the settings file.
func compilerFailureDiagnostics(root string, err error) []Diagnostic {
	return []Diagnostic{{Path: settingsFile(root), EndLine: -1, Severity: SeverityError,
		Message: "compilation failed: " + err.Error(), Source: "dfd", Code: "compile"}}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

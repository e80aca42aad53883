package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/project"
)

// ChangeFlags qualify a change of a project.
type ChangeFlags int

const (
	// ChangeUrgent compiles without waiting for the debounce delay (a
	// save, an open).
	ChangeUrgent ChangeFlags = 1 << iota
	// ChangeReopen: the settings or the core may have changed; the
	// project is opened again before it compiles.
	ChangeReopen
)

var (
	errNoCompile = errors.New("the project has not compiled")
	errClosed    = errors.New("the project was closed")
)

// Project is one Dataform project of a session. Its goroutine (run) owns
// opening, compiling and checking: edits only bump the modification
// counter and kick it. It owns the project's backend (ProjectBackend):
// there is no other registry of projects.
//
// A compile publishes in phases, each for the same snapshot: first the
// compile's own errors, at once; then the later phase (Check: metadata
// warnings, JiT checks, SQL analysis), which the next change cancels.
// Until the later phase of a snapshot is known, the previous snapshot's
// later-phase diagnostics stay on the files whose text did not change.
type Project struct {
	s    *Session
	root string

	ctx    context.Context // ends when the project is removed or the session ends
	cancel context.CancelFunc
	done   chan struct{} // closed when run returns
	kick   chan struct{} // a change is pending (capacity 1)

	// Owned by run.
	backend ProjectBackend
	info    ProjectInfo
	// lastCompile is how long the last compile took (0: none yet), or a
	// superseded one if that was longer: waitQuiet waits no longer.
	lastCompile time.Duration

	mu           sync.Mutex    // guards the fields below
	mod          int64         // modification counter: every change bumps it
	urgent       bool          // the pending change should compile at once
	lastEdit     time.Time     // when the latest edit (a change that is not urgent) came
	editGap      time.Duration // how long before it the previous edit came (0: none before)
	reopen       bool          // settings/core must be read again
	recheckAsked bool          // only the later phase must run again (a file opened)
	snap         *Snapshot     // the latest snapshot
	snapCh       chan struct{}
	// compileDiags are the latest snapshot's compile-phase diagnostics;
	// later are the later-phase diagnostics and laterOf the snapshot
	// they were computed for (nil: none yet).
	compileDiags []Diagnostic
	later        []Diagnostic
	laterOf      *Snapshot
	checking     bool // the later phase of snap is running
	// deferred: an edit was recorded without compiling
	// (dfd.compileAsYouType false); the next change or FlushDeferred
	// compiles it.
	deferred bool
}

func newProject(s *Session, root string) *Project {
	ctx, cancel := context.WithCancel(s.ctx)
	return &Project{
		s: s, root: root, ctx: ctx, cancel: cancel,
		done:   make(chan struct{}),
		kick:   make(chan struct{}, 1),
		snapCh: make(chan struct{}),
	}
}

// Root is the project's directory (absolute, symbolic links resolved).
func (p *Project) Root() string { return p.root }

// Name is the project's directory name, for people.
func (p *Project) Name() string { return filepath.Base(p.root) }

// Changed records a change and wakes the project's goroutine, which
// cancels a compile in progress (it is superseded) and compiles again.
func (p *Project) Changed(flags ChangeFlags) {
	p.mu.Lock()
	if flags&ChangeUrgent == 0 { // an edit as you type: time it for the debounce
		now := time.Now()
		p.editGap = 0
		if !p.lastEdit.IsZero() {
			p.editGap = now.Sub(p.lastEdit)
		}
		p.lastEdit = now
	}
	p.mod++
	p.deferred = false // the compile this asks for reads every buffer
	p.urgent = p.urgent || flags&ChangeUrgent != 0
	p.reopen = p.reopen || flags&ChangeReopen != 0
	p.mu.Unlock()
	p.wake()
}

// recheck asks for the later phase to run again on the latest snapshot,
// with the documents open now.
func (p *Project) recheck() {
	p.mu.Lock()
	p.recheckAsked = true
	p.mu.Unlock()
	p.wake()
}

func (p *Project) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// deferChange records an edit that is not compiled yet.
func (p *Project) deferChange() {
	p.mu.Lock()
	p.deferred = true
	p.mu.Unlock()
}

// FlushDeferred asks for a compile (at once) when an edit was deferred, so
// that what the caller waits for next includes it.
func (p *Project) FlushDeferred() {
	p.mu.Lock()
	d := p.deferred
	p.mu.Unlock()
	if d {
		p.Changed(ChangeUrgent)
	}
}

// HasDeferred reports whether edits wait for a save or a request.
func (p *Project) HasDeferred() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.deferred
}

func (p *Project) close() {
	p.cancel()
	<-p.done
}

// Latest is the latest snapshot (nil before the first compile ends).
func (p *Project) Latest() *Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snap
}

// Version is the modification counter now: a snapshot with this version
// or later reflects every change made so far.
func (p *Project) Version() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mod
}

// RefreshPreview drops the JiT previews of the latest snapshot and says it
// was compiled again, so that clients ask for previews anew.
func (p *Project) RefreshPreview() {
	if snap := p.Latest(); snap != nil {
		snap.DropJitCache()
		p.s.events.Compiled(snap)
	}
}

// Checking reports whether the later phase of the latest snapshot is still
// running.
func (p *Project) Checking() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.checking
}

// Await returns the first snapshot of at least version min. It does not
// wait for the snapshot's later phase.
func (p *Project) Await(ctx context.Context, min int64) (*Snapshot, error) {
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
			return nil, fmt.Errorf("project %s: %w", p.root, errClosed)
		}
	}
}

// run is the project's goroutine: wait for a change, debounce, (re)open if
// needed, compile, publish, check; a change during a compile or a check
// cancels it.
func (p *Project) run() {
	defer close(p.done)
	defer p.closeBackend()
	opened := false
	pending := false // a kick was consumed while working
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
		p.mu.Lock()
		onlyRecheck := p.recheckAsked && p.snap != nil && p.snap.Version == p.mod && opened
		p.recheckAsked = false
		p.mu.Unlock()
		if onlyRecheck {
			if superseded, ok := p.check(p.Latest()); !ok {
				return
			} else {
				pending = superseded
			}
			continue
		}
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
					p.s.events.Warn(fmt.Sprintf("dfd: cannot compile %s: %s", p.Name(), firstLine(msg)))
				}
				// Retrying on every keystroke would rerun npm: wait for
				// a change of settings or core (ChangeReopen).
				diags := openErrorDiagnostics(p.root, err, p.s.docs.under(p.root))
				p.publish(&Snapshot{Root: p.root, Version: version, Err: err, Compiled: time.Now()}, diags)
				p.waitReopen(err)
				continue
			}
			opened = true
			lastOpenErr = ""
			p.info = info
		}

		snap, superseded, ok := p.compile(version)
		if !ok {
			return
		}
		if !superseded && snap != nil {
			superseded, ok = p.check(snap)
			if !ok {
				return
			}
		}
		if !superseded && snap != nil {
			superseded, ok = p.estimate(snap)
			if !ok {
				return
			}
		}
		pending = superseded
	}
}

func (p *Project) closeBackend() {
	if p.backend != nil {
		if err := p.backend.Close(); err != nil {
			p.s.log.Warn("closing the project's backend", "project", p.root, "error", err)
		}
		p.backend = nil
	}
}

// waitQuiet is the adaptive debounce: it returns at once for an urgent
// change (a save, an open) and for an edit that came after a pause (no
// edit in the debounce delay before it): the first edit after a pause is
// compiled at once, since no other edit is known to be coming to
// supersede it. While edits come faster than the debounce delay (typing),
// it waits until none came for that long. It returns false when the
// project ends.
func (p *Project) waitQuiet() bool {
	for {
		p.mu.Lock()
		urgent, last, gap := p.urgent, p.lastEdit, p.editGap
		p.mu.Unlock()
		d := p.debounce()
		if urgent || gap == 0 || gap >= d {
			return true
		}
		wait := d - time.Since(last)
		if wait <= 0 {
			return true
		}
		t := time.NewTimer(wait)
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

// debounce is the delay waitQuiet waits for while edits come: the
// session's (dfd.debounceMs, else dfd serve --debounce), shortened to half
// what the project's last compile took when that is less, at least
// minDebounce. Waiting is there so that typing does not pay for compiles
// it supersedes; a compile cheaper than the delay costs less than the
// wait (an incremental one: tens of milliseconds), and its result is
// what the user is waiting for. Half, not all of it: the last keystroke
// of a burst then waits half a compile and its compile rather than two
// compiles, for some compiles of keystrokes that come after all (at 3,000
// actions, typing went from 194 to 121 ms, p50 of lspbench's bursts).
func (p *Project) debounce() time.Duration {
	d := p.s.debounce()
	if c := p.lastCompile / 2; c > 0 && c < d {
		d = max(c, minDebounce)
	}
	return d
}

// minDebounce is the shortest delay debounce gives: keystrokes closer
// than that are one change.
const minDebounce = 20 * time.Millisecond

// waitReopen blocks until a change asks for the project to be reopened.
// Other changes are answered with the same error at their version, so that
// requests waiting for them (dfd/preview) get the error instead of waiting.
func (p *Project) waitReopen(err error) {
	for {
		p.mu.Lock()
		reopen, version := p.reopen, p.mod
		p.mu.Unlock()
		if reopen {
			p.wake()
			return
		}
		if cur := p.Latest(); cur == nil || cur.Version < version {
			// Against the settings buffer as it is now (an edit of it is
			// what kicked).
			diags := openErrorDiagnostics(p.root, err, p.s.docs.under(p.root))
			p.publish(&Snapshot{Root: p.root, Version: version, Err: err, Compiled: time.Now()}, diags)
		}
		select {
		case <-p.ctx.Done():
			return
		case <-p.kick:
		}
	}
}

// open (re)opens the project on the backend, closing the backend of the
// previous opening once the new one is ready.
func (p *Project) open() (ProjectInfo, error) {
	prog := p.s.events.Progress(p.ctx, "dfd: opening "+p.Name(), "reading settings and @dataform/core")
	var (
		info ProjectInfo
		pb   ProjectBackend
	)
	err := p.s.recovered("open project", func() error {
		var err error
		pb, info, err = p.s.backend.OpenProject(p.ctx, p.root, func(msg string) {
			prog.Report(msg)
			p.s.log.Info(msg, "project", p.root)
		})
		return err
	})
	if err != nil {
		prog.End("failed: " + firstLine(err.Error()))
		if p.ctx.Err() == nil {
			p.s.log.Warn("cannot open project", "root", p.root, "error", err)
		}
		return ProjectInfo{}, err
	}
	p.closeBackend()
	p.backend = pb
	if rn, ok := pb.(RecompileNotifier); ok {
		rn.SetRecompile(func() { p.Changed(ChangeUrgent) })
	}
	msg := "@dataform/core " + info.CoreVersion
	if info.CoreInstalled {
		msg += " installed"
	}
	prog.End(msg)
	for _, w := range info.Warnings {
		p.s.log.Warn(w, "project", p.root)
		p.s.events.Warn("dfd: " + p.Name() + ": " + w)
	}
	p.s.log.Info("project ready", "root", p.root, "core", info.CoreVersion, "installed", info.CoreInstalled)
	return info, nil
}

type compileOutcome struct {
	res *CompileResult
	err error
}

// overlays are the open buffers of the project, for the backend.
func overlays(docs map[string]*Document) map[string][]byte {
	out := make(map[string][]byte, len(docs))
	for rel, d := range docs {
		if strings.HasPrefix(rel, "node_modules/") {
			continue
		}
		out[rel] = d.Text
	}
	return out
}

// compile compiles the project as of version and publishes its first
// phase. It returns the snapshot (nil when the compiler failed),
// superseded when a newer change cancelled it, and ok=false when the
// project ended.
func (p *Project) compile(version int64) (snap *Snapshot, superseded, ok bool) {
	docs := p.s.docs.under(p.root)
	cctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	prog := p.s.events.Progress(cctx, "dfd: compiling "+p.Name(), "")
	out := make(chan compileOutcome, 1)
	start := time.Now()
	pb := p.backend
	if err := settingsBufferError(p.root, docs); err != nil {
		out <- compileOutcome{err: err}
	} else {
		go func() {
			var o compileOutcome
			defer func() { out <- o }()
			o.err = p.s.recovered("compile", func() error {
				var err error
				o.res, err = pb.Compile(cctx, CompileRequest{Overlays: overlays(docs)})
				return err
			})
		}()
	}
	var o compileOutcome
	select {
	case o = <-out:
	case <-p.kick:
		cancel()
		<-out // the backend honours ctx; wait so compiles never overlap
		// It took at least this long: a compile that gets costlier (an
		// edit that needs a full one) lengthens the debounce again, even
		// while each is superseded.
		p.lastCompile = max(p.lastCompile, time.Since(start))
		prog.End("superseded")
		p.s.log.Debug("compile superseded", "project", p.root, "version", version)
		return nil, true, true
	case <-p.ctx.Done():
		cancel()
		<-out
		prog.End("stopped")
		return nil, false, false
	}
	elapsed := time.Since(start)
	if o.err != nil && p.ctx.Err() != nil {
		prog.End("stopped")
		return nil, false, false
	}
	if o.err == nil {
		p.lastCompile = elapsed
	}
	snap = &Snapshot{Root: p.root, Version: version, Info: p.info, Docs: docs, Compiled: time.Now(), Elapsed: elapsed, backend: pb, session: p.s}
	if ce, ok := pb.(CostEstimator); ok && o.err == nil {
		if c := ce.CostsUnavailable(); c != nil {
			snap.costs.Store(c)
		}
	}
	var diags []Diagnostic
	if o.err != nil {
		// The compiler itself failed: keep the last good graph for
		// navigation, and say why on the settings file.
		snap.Err = o.err
		if prev := p.Latest(); prev != nil {
			snap.Result = prev.Result
		}
		diags = compilerFailureDiagnostics(p.root, o.err, docs)
		prog.End("failed")
		p.s.log.Warn("compile failed", "project", p.root, "error", o.err)
	} else {
		snap.Result = o.res
		diags = p.s.annotate(snap, o.res.Diagnostics) // with quick fixes and the open files' source checks (fixes.go)
		prog.End(fmt.Sprintf("%d actions, %d problems in %s", len(o.res.Actions), len(diags), elapsed.Round(time.Millisecond)))
		p.s.log.Debug("compiled", "project", p.root, "version", version, "actions", len(o.res.Actions),
			"errors", len(diags), "elapsed", elapsed)
	}
	if o.err == nil && snap.Result != nil && snap.backend != nil {
		// The later phase follows at once (run calls check): it is
		// running from the moment the compile phase is out, so that
		// whoever sees that publication sees Checking too.
		p.mu.Lock()
		p.checking = true
		p.mu.Unlock()
	}
	p.publish(snap, diags)
	if o.err != nil {
		return nil, false, true
	}
	return snap, false, true
}

// check runs the later phase of snap and publishes it with the compile's
// diagnostics. It returns superseded when a newer change cancelled it, and
// ok=false when the project ended.
func (p *Project) check(snap *Snapshot) (superseded, ok bool) {
	if snap == nil || snap.Result == nil || snap.backend == nil {
		p.mu.Lock()
		p.checking = false
		p.mu.Unlock()
		return false, true
	}
	cctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	// Reported as progress: editors show that more diagnostics may come,
	// and tests wait for its end.
	prog := p.s.events.Progress(cctx, "dfd: checking "+p.Name(), "metadata and JiT code")
	docs := p.s.docs.under(p.root)
	out := make(chan []Diagnostic, 1)
	start := time.Now()
	p.mu.Lock()
	p.checking = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.checking = false
		p.mu.Unlock()
	}()
	go func() {
		var diags []Diagnostic
		defer func() { out <- diags }()
		_ = p.s.recovered("check", func() error {
			diags = snap.backend.Check(cctx, CheckRequest{Result: snap.Result, Overlays: overlays(docs)})
			return nil
		})
	}()
	var later []Diagnostic
	select {
	case later = <-out:
	case <-p.kick:
		cancel()
		<-out
		prog.End("superseded")
		p.s.log.Debug("check superseded", "project", p.root, "version", snap.Version)
		return true, true
	case <-p.ctx.Done():
		cancel()
		<-out
		prog.End("stopped")
		return false, false
	}
	later = p.s.annotateChecks(snap, later) // quick fixes (sqlfixes.go); reads files, so before the lock
	p.mu.Lock()
	if p.snap != snap {
		p.mu.Unlock()
		prog.End("superseded")
		return false, true // a newer snapshot is out: these results are old
	}
	if later == nil {
		later = []Diagnostic{}
	}
	if c := snap.Costs(); c != nil {
		// A recheck (a file opened) of a snapshot whose cost phase is
		// over keeps BigQuery's verdicts.
		later = mergeVerdicts(later, c.Diagnostics)
	}
	p.later, p.laterOf = later, snap
	all := combine(p.compileDiags, later)
	p.mu.Unlock()
	p.s.log.Debug("checked", "project", p.root, "version", snap.Version, "diagnostics", len(later), "elapsed", time.Since(start))
	p.s.events.Diagnostics(p.root, snap, all)
	prog.End(fmt.Sprintf("%d problems in %s", len(later), time.Since(start).Round(time.Millisecond)))
	return false, true
}

// estimate runs the cost phase of snap (CostEstimator), after its
// diagnostics are out: the figures are set on snap, and BigQuery's
// verdicts join the later phase's diagnostics. It returns superseded when
// a newer change cancelled it, and ok=false when the project ended.
func (p *Project) estimate(snap *Snapshot) (superseded, ok bool) {
	ce, has := snap.backend.(CostEstimator)
	if snap.Result == nil || !has {
		return false, true
	}
	if c := snap.Costs(); c != nil && !c.Available {
		return false, true // said at publication (CostsUnavailable): no figure will come
	}
	cctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	docs := p.s.docs.under(p.root)
	out := make(chan *Costs, 1)
	start := time.Now()
	go func() {
		var c *Costs
		defer func() { out <- c }()
		_ = p.s.recovered("costs", func() error {
			c = ce.Costs(cctx, CheckRequest{Result: snap.Result, Overlays: overlays(docs)})
			return nil
		})
	}()
	var c *Costs
	select {
	case c = <-out:
	case <-p.kick:
		cancel()
		<-out
		p.s.log.Debug("cost estimate superseded", "project", p.root, "version", snap.Version)
		return true, true
	case <-p.ctx.Done():
		cancel()
		<-out
		return false, false
	}
	if c == nil {
		return false, true
	}
	var diags []Diagnostic
	p.mu.Lock()
	if p.snap != snap {
		p.mu.Unlock()
		return false, true // a newer snapshot is out: these figures are old
	}
	snap.costs.Store(c)
	if len(c.Diagnostics) > 0 && p.laterOf == snap {
		p.later = mergeVerdicts(p.later, c.Diagnostics)
		diags = combine(p.compileDiags, p.later)
	}
	p.mu.Unlock()
	if diags != nil {
		p.s.events.Diagnostics(p.root, snap, diags)
	}
	p.s.log.Debug("costs estimated", "project", p.root, "version", snap.Version, "available", c.Available, "elapsed", time.Since(start))
	if !c.Available {
		return false, true // nothing new to show: dfd/status says why
	}
	// Reported once it is known (tests wait for it): a progress for
	// every edit would flash in the editor for what is usually answered
	// from memory.
	p.s.events.Progress(cctx, "dfd: estimating the cost of "+p.Name(), "").End(c.Label)
	if l, ok := p.s.events.(CostListener); ok {
		l.CostsEstimated(snap)
	}
	return false, true
}

// mergeVerdicts adds the backend's own verdicts (BigQuery's refusals of
// the SQL) to the later phase's diagnostics: an error already reported at
// the same start of the same file (GoogleSQL's finding of the same
// mistake) becomes one diagnostic that names both, with BigQuery's words
// when they differ; the others are added. later is not modified.
func mergeVerdicts(later, verdicts []Diagnostic) []Diagnostic {
	out := append([]Diagnostic(nil), later...)
	for _, v := range verdicts {
		merged := false
		for i := range later {
			d := &out[i]
			if d.Path == v.Path && d.Line == v.Line && d.Col == v.Col && d.Severity == SeverityError && d.Source != v.Source {
				if !strings.Contains(d.Source, v.Source) {
					d.Source += ", " + v.Source
				}
				if v.Message != d.Message && !strings.Contains(d.Message, v.Message) {
					d.Message += "\n" + v.Source + ": " + v.Message
				}
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, v)
		}
	}
	return out
}

// publish installs snap as the latest snapshot with its compile-phase
// diagnostics, publishes them (with the previous later-phase diagnostics
// of files whose text did not change) and says the snapshot is out.
func (p *Project) publish(snap *Snapshot, diags []Diagnostic) {
	snap.index()
	p.mu.Lock()
	if p.snap != nil && snap.Info.CoreVersion == "" && !snap.Info.CoreInstalled && len(snap.Info.Warnings) == 0 {
		snap.Info = p.snap.Info
	}
	carried := carryForward(p.laterOf, snap, p.later)
	p.snap = snap
	p.compileDiags = diags
	close(p.snapCh)
	p.snapCh = make(chan struct{})
	all := combine(diags, carried)
	p.mu.Unlock()
	p.s.events.Diagnostics(p.root, snap, all)
	p.s.events.Compiled(snap)
}

// combine are a snapshot's diagnostics: those of its compile phase, but
// for those a later one replaces (Diagnostic.Replaces), and the later
// phase's.
func combine(compile, later []Diagnostic) []Diagnostic {
	type at struct {
		path, code string
		line, col  int
	}
	replaced := map[at]bool{}
	for _, d := range later {
		if d.Replaces != "" {
			replaced[at{d.Path, d.Replaces, d.Line, d.Col}] = true
		}
	}
	out := make([]Diagnostic, 0, len(compile)+len(later))
	for _, d := range compile {
		if !replaced[at{d.Path, d.Code, d.Line, d.Col}] {
			out = append(out, d)
		}
	}
	return append(out, later...)
}

// carryForward are the later-phase diagnostics of prev that still stand on
// next until next's own later phase is known: those on files next did not
// change (the same open buffer, or a file that is not open in either).
// Nothing is carried when next has no compile result (it failed to open).
func carryForward(prev, next *Snapshot, later []Diagnostic) []Diagnostic {
	if prev == nil || next.Result == nil || next.Err != nil {
		return nil
	}
	var out []Diagnostic
	for _, d := range later {
		path := d.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(next.Root, filepath.FromSlash(path))
		}
		rel, ok := RelSlash(next.Root, CanonicalPath(path))
		if !ok {
			continue
		}
		if prev.Docs[rel] != next.Docs[rel] {
			continue // edited (or opened, or closed) since
		}
		out = append(out, d)
	}
	return out
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
func openErrorDiagnostics(root string, err error, docs map[string]*Document) []Diagnostic {
	var se *project.SettingsError
	if errors.As(err, &se) {
		return savedSettingsDiagnostics(se, docs)
	}
	code := "project"
	if errors.Is(err, project.ErrNoCore) || errors.Is(err, project.ErrCoreInstall) || errors.Is(err, project.ErrNPMNotFound) || errors.Is(err, project.ErrBadCoreVersion) {
		code = "core"
	}
	return []Diagnostic{{Path: settingsFile(root), EndLine: -1, Severity: SeverityError, Message: err.Error(), Source: "dfd", Code: code}}
}

// settingsErrorDiagnostics puts a settings error at its line and column
// (1-based in the error; line 1 when it has none), to its end column or
// else to the end of the line.
func settingsErrorDiagnostics(se *project.SettingsError) []Diagnostic {
	line, col := max(se.Line-1, 0), max(se.Column-1, 0)
	d := Diagnostic{Path: se.File, Line: line, Col: col, EndLine: -1, Severity: SeverityError, Message: se.Msg, Source: "dfd", Code: "settings"}
	if se.Line > 0 && se.EndColumn > se.Column {
		d.EndLine, d.EndCol = line, se.EndColumn-1
	}
	return []Diagnostic{d}
}

// savedSettingsDiagnostics place the error of the settings file as saved
// (the project opens from the disk, and does not until a save) in the
// settings buffer when one is open with other text: on the buffer's own
// error when it has one, else on its first line, saying that the saved
// file is what fails — the buffer's lines are not the ones the error
// counts.
func savedSettingsDiagnostics(se *project.SettingsError, docs map[string]*Document) []Diagnostic {
	d := docs[filepath.Base(se.File)]
	if d == nil {
		return settingsErrorDiagnostics(se)
	}
	if saved, err := regfile.ReadFile(se.File); err != nil || string(saved) == string(d.Text) {
		return settingsErrorDiagnostics(se)
	}
	_, berr := project.ParseSettings(se.File, d.Text)
	var bse *project.SettingsError
	if errors.As(berr, &bse) {
		return settingsErrorDiagnostics(bse)
	}
	if berr != nil {
		return settingsErrorDiagnostics(se)
	}
	line := ""
	if se.Line > 0 {
		line = fmt.Sprintf(" (line %d)", se.Line)
	}
	return []Diagnostic{{Path: se.File, EndLine: -1, Severity: SeverityError, Source: "dfd", Code: "settings",
		Message: filepath.Base(se.File) + " as saved is invalid" + line + ": " + se.Msg + "; save the file to use the editor's text"}}
}

// settingsBufferError is dfd's refusal of the open, unsaved buffer of the
// project's settings file, if any. The project was opened with the file on
// disk, and an edit does not reopen it (a save does): without this the
// buffer would reach core alone, which fails on what dfd's reader refuses
// (a list for a string, …) with its internal errors ("e.charCodeAt is not
// a function"), where `dfd compile` of the saved file says what is wrong
// and where.
func settingsBufferError(root string, docs map[string]*Document) error {
	if docs[project.WorkflowSettingsFile] == nil && docs[project.DataformJSONFile] == nil {
		return nil // nothing open to read: no stat of the disk on every compile
	}
	path := settingsFile(root)
	d := docs[filepath.Base(path)]
	if d == nil {
		return nil
	}
	_, err := project.ParseSettings(path, d.Text)
	return err
}

// compilerFailureDiagnostics reports a compiler failure (not an error in
// the user's code, or one core could not attribute) on the settings file:
// dfd's refusal of its unsaved buffer; where core's own reading of it
// (docs' buffer, else the file) failed (YAML that dfd's parser accepted, a
// key core does not know); else on its first line.
func compilerFailureDiagnostics(root string, err error, docs map[string]*Document) []Diagnostic {
	var se *project.SettingsError
	if errors.As(err, &se) {
		return settingsErrorDiagnostics(se)
	}
	var text []byte
	if d := docs[project.WorkflowSettingsFile]; d != nil {
		text = d.Text
	} else {
		text, _ = regfile.ReadFile(filepath.Join(root, project.WorkflowSettingsFile))
	}
	if se, ok := project.CoreSettingsError(root, err.Error(), text); ok {
		return settingsErrorDiagnostics(se)
	}
	return []Diagnostic{{Path: settingsFile(root), EndLine: -1, Severity: SeverityError,
		Message: "compilation failed: " + err.Error(), Source: "dfd", Code: "compile"}}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

package workspace

import (
	"context"
	"errors"
	"path"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Snapshot is the state of a project after one compile: the compiled
// actions, indexed by file and name, and the buffers that were compiled.
// It never changes once published (except its JiT preview cache), so a
// request holding one reads a consistent view while newer compiles build
// the next.
type Snapshot struct {
	Root string
	// Version is the project's modification counter when the compile
	// started: the snapshot reflects every change up to it.
	Version int64
	Info    ProjectInfo
	// Result is nil when the project could not be opened; when the
	// compiler failed it is the previous result (Err says why).
	Result   *CompileResult
	Err      error
	Docs     map[string]*Document // open buffers compiled, by root-relative path
	Compiled time.Time
	Elapsed  time.Duration

	backend ProjectBackend // the project's, when it was compiled; nil if it could not be opened
	session *Session

	byFile     map[string][]*Action
	byName     map[string][]*Action // by target and canonical name
	dependents map[string][]*Action // by Target.String() of the dependency

	jitMu sync.Mutex // guards jit
	jit   map[string]*jitEntry

	// costs are set once, when the snapshot's cost phase ends (never for
	// a snapshot a newer one replaced first): a figure shown is always
	// of this snapshot's text.
	costs atomic.Pointer[Costs]
}

// Costs are the snapshot's cost figures, nil until they are known (or
// when there are none: no estimator, turned off).
func (s *Snapshot) Costs() *Costs { return s.costs.Load() }

// jitEntry is one action's JiT preview in this snapshot, computed once on
// the first request (done is closed when res/err are set).
type jitEntry struct {
	done chan struct{}
	res  *JitResult
	err  error
	// waiters and left count the requests that asked for the preview and
	// those that gave up on it (under Snapshot.jitMu); abandon, called
	// when the last one gives up, cuts the run short.
	waiters, left int
	abandoned     context.Context
	abandon       context.CancelFunc
}

// index makes the snapshot's maps of its actions, once: both the
// compile's fixes (annotate) and its publication need them, and at
// 10,000 actions each index was 7 ms on the way to the diagnostics. The
// snapshot is the project goroutine's until published, and its Result is
// set before either.
func (s *Snapshot) index() {
	if s.byFile == nil {
		s.buildIndex()
	}
}

func (s *Snapshot) buildIndex() {
	var n int
	if s.Result != nil {
		n = len(s.Result.Actions)
	}
	// (Sized for the actions: grown one by one, the maps were a third of
	// the index's 8 ms at 10,000 actions, BenchmarkSnapshotIndex.)
	s.byFile = make(map[string][]*Action, n)
	s.byName = make(map[string][]*Action, n)
	s.dependents = make(map[string][]*Action, n)
	if s.Result == nil {
		return
	}
	for _, a := range s.Result.Actions {
		f := path.Clean(a.File)
		s.byFile[f] = append(s.byFile[f], a)
		s.byName[a.Target.Name] = append(s.byName[a.Target.Name], a)
		if a.CanonicalTarget.Name != "" && a.CanonicalTarget.Name != a.Target.Name {
			s.byName[a.CanonicalTarget.Name] = append(s.byName[a.CanonicalTarget.Name], a)
		}
	}
	for _, a := range s.Result.Actions {
		for _, d := range a.Dependencies {
			k := d.String()
			s.dependents[k] = append(s.dependents[k], a)
		}
	}
}

// Actions are all actions (nil when none compiled).
func (s *Snapshot) Actions() []*Action {
	if s.Result == nil {
		return nil
	}
	return s.Result.Actions
}

// Files are the root-relative files that define actions, sorted.
func (s *Snapshot) Files() []string {
	out := make([]string, 0, len(s.byFile))
	for f := range s.byFile {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// ActionsIn are the actions defined in the root-relative file rel.
func (s *Snapshot) ActionsIn(rel string) []*Action { return s.byFile[path.Clean(rel)] }

// Lookup finds the actions a ref with these parts names. A reference by
// name alone matches the effective or the canonical name.
func (s *Snapshot) Lookup(database, schema, name string) []*Action {
	var out []*Action
	for _, a := range s.byName[name] {
		if a.Target.Matches(database, schema, name) || a.CanonicalTarget.Matches(database, schema, name) {
			out = append(out, a)
		}
	}
	return out
}

// Dependents are the actions that depend on a.
func (s *Snapshot) Dependents(a *Action) []*Action { return s.dependents[a.Target.String()] }

// JitPreview is the JiT preview of action t in this snapshot, computed on
// the first request by the project's backend — on a goroutine of the
// session, so that a request that gives up does not cancel it for the
// others — and shared by later requests. Once every request waiting for
// it has given up (the editor cancels a preview when a newer edit asks
// for another), the run is cut short: its queries would go on running
// and billing for nobody (the BigQuery adapter cancels their jobs). A
// preview cut short, by that or by the end of the session, is tried again
// by the next request; a failure of the JiT code itself is the answer for
// this snapshot (same inputs, same failure).
func (s *Snapshot) JitPreview(ctx context.Context, t Target) (*JitResult, error) {
	if s.backend == nil || s.Result == nil || s.session == nil {
		return nil, errNoCompile
	}
	s.jitMu.Lock()
	if s.jit == nil {
		s.jit = map[string]*jitEntry{}
	}
	e, ok := s.jit[t.String()]
	if !ok {
		e = &jitEntry{done: make(chan struct{})}
		e.abandoned, e.abandon = context.WithCancel(context.Background())
		s.jit[t.String()] = e
	}
	e.waiters++
	s.jitMu.Unlock()
	if !ok {
		s.session.goBackground(func(bctx context.Context) {
			defer close(e.done)
			bctx, cancel := context.WithCancel(bctx)
			stop := context.AfterFunc(e.abandoned, cancel)
			defer func() {
				stop()
				cancel()
				e.abandon() // frees the context
			}()
			start := time.Now()
			e.err = s.session.recovered("JiT preview", func() error {
				var err error
				e.res, err = s.backend.JitPreview(bctx, JitRequest{Graph: s.Result.Graph, Target: t})
				return err
			})
			if e.res != nil && e.res.Elapsed == 0 {
				e.res.Elapsed = time.Since(start)
			}
			if e.err != nil && (errors.Is(e.err, context.Canceled) || bctx.Err() != nil) {
				s.jitMu.Lock()
				if s.jit[t.String()] == e {
					delete(s.jit, t.String())
				}
				s.jitMu.Unlock()
			}
		})
	}
	select {
	case <-e.done:
		return e.res, e.err
	case <-ctx.Done():
		s.jitMu.Lock()
		e.left++
		if e.left == e.waiters {
			e.abandon()
			if s.jit[t.String()] == e {
				delete(s.jit, t.String()) // the next request starts afresh
			}
		}
		s.jitMu.Unlock()
		return nil, ctx.Err()
	}
}

// DropJitCache forgets JiT previews (the metadata source changed).
func (s *Snapshot) DropJitCache() {
	s.jitMu.Lock()
	s.jit = nil
	s.jitMu.Unlock()
}

// TableMetadata asks the project's backend what its metadata source knows
// about t.
func (s *Snapshot) TableMetadata(ctx context.Context, t Target) (*TableInfo, bool) {
	if s == nil || s.backend == nil {
		return nil, false
	}
	return s.backend.TableMetadata(ctx, t)
}

// Backend is the project's backend when this snapshot was compiled (nil
// when the project could not be opened).
func (s *Snapshot) Backend() ProjectBackend {
	if s == nil {
		return nil
	}
	return s.backend
}

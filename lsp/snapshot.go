package lsp

import (
	"path"
	"sync"
	"time"
)

// Snapshot is the state of a project after one compile: the compiled
// actions, indexed by file and name, and the buffers that were compiled.
// It never changes once published (except its JiT preview cache), so a
// request holding one reads a consistent view while newer compiles
// build the next.
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
	Docs     map[string]*document // open buffers compiled, by root-relative path
	Compiled time.Time
	Elapsed  time.Duration

	byFile     map[string][]*Action
	byName     map[string][]*Action // by target and canonical name
	dependents map[string][]*Action // by Target.String() of the dependency

	jitMu sync.Mutex // guards jit
	jit   map[string]*jitEntry
}

// jitEntry is one action's JiT preview in this snapshot, computed once on
// the first request (done is closed when res/err are set).
type jitEntry struct {
	done chan struct{}
	res  *JitResult
	err  error
}

func (s *Snapshot) index() {
	s.byFile = map[string][]*Action{}
	s.byName = map[string][]*Action{}
	s.dependents = map[string][]*Action{}
	if s.Result == nil {
		return
	}
	for _, a := range s.Result.Actions {
		s.byFile[path.Clean(a.File)] = append(s.byFile[path.Clean(a.File)], a)
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

// jitEntry returns the entry for t; created is true for the caller that
// must compute it.
func (s *Snapshot) jitEntry(t Target) (e *jitEntry, created bool) {
	s.jitMu.Lock()
	defer s.jitMu.Unlock()
	if s.jit == nil {
		s.jit = map[string]*jitEntry{}
	}
	e, ok := s.jit[t.String()]
	if !ok {
		e = &jitEntry{done: make(chan struct{})}
		s.jit[t.String()] = e
	}
	return e, !ok
}

// forgetJit drops a failed entry so that the next request tries again.
func (s *Snapshot) forgetJit(t Target, e *jitEntry) {
	s.jitMu.Lock()
	defer s.jitMu.Unlock()
	if s.jit[t.String()] == e {
		delete(s.jit, t.String())
	}
}

// dropJitCache forgets JiT previews (the metadata snapshot changed).
func (s *Snapshot) dropJitCache() {
	s.jitMu.Lock()
	s.jit = nil
	s.jitMu.Unlock()
}

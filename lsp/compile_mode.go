package lsp

// dfd.compileAsYouType false (Settings.ManualCompile): didChange records
// the buffer and marks the project deferred instead of compiling; a save,
// a change on disk or a request that needs the newest compile
// (dfd/preview, dfd/graph) compiles it.

// deferChange records an edit that is not compiled yet.
func (p *projectState) deferChange() {
	p.mu.Lock()
	p.deferred = true
	p.mu.Unlock()
}

// flushDeferred asks for a compile (at once) when an edit was deferred,
// so that what the caller waits for next includes it.
func (p *projectState) flushDeferred() {
	p.mu.Lock()
	d := p.deferred
	p.mu.Unlock()
	if d {
		p.changed(changeUrgent)
	}
}

// hasDeferred reports whether edits wait for a save or a request.
func (p *projectState) hasDeferred() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.deferred
}

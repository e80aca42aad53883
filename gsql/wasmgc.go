package gsql

import (
	"runtime"
	"sync/atomic"
)

// GoogleSQL's objects (parser and analyzer outputs, catalogs, the Go
// wrappers of AST and resolved nodes) live in its WebAssembly module's
// linear memory, and go-googlesql frees them only from Go finalizers: it
// has no Close. Go's collector cannot see that memory filling up — the
// linear memory is one large Go allocation that only grows — so it runs
// rarely, the finalizers wait, and GoogleSQL's malloc grows the memory
// instead of reusing what is already garbage. A cold check of 1,000
// statements peaked at 267 MB of resident memory that way; collecting
// after every wasmGCBudget of work (about 350 short statements) keeps it
// at 150 MB, and four checks in a row at 249 MB instead of 302, for no
// measurable CPU (the collections are of a small Go heap). A budget a
// third as large saved little more memory and cost ≈10% more CPU: frees
// interleaved with the analyses slow GoogleSQL's malloc.
//
// The work is measured in bytes of SQL handed to GoogleSQL, plus a fixed
// weight per call, since a short statement leaves about as much behind
// as a long one (the wrappers of its nodes, the outputs).
const (
	wasmGCBudget  = 384 << 10
	wasmCallBytes = 512
)

var wasmWork atomic.Int64

// wasmGarbage accounts for one call that hands sql to GoogleSQL
// (engine.parse and Catalog.Analyze), and collects Go's garbage — and with
// it, through the finalizers, GoogleSQL's — once the budget is spent. Only
// the caller that spends the budget pays.
func wasmGarbage(sql string) {
	if wasmWork.Add(int64(len(sql))+wasmCallBytes) < wasmGCBudget {
		return
	}
	wasmWork.Store(0)
	runtime.GC()
}

// wasmCollect collects at once, and starts the budget again. A new catalog
// is where a check starts (sqlcheck makes one per check): its built-in
// functions and types are several MiB of GoogleSQL's memory, which the
// budget above, counting SQL, did not see. Uncollected, the catalogs of
// the checks since the last collection piled up in a long editing session
// until GoogleSQL's memory doubled: 400 actions, a check after every edit,
// Go heap 160 → 320 MiB and 580 MB resident after a few hundred checks;
// collected before each new catalog, 74 MiB and 160 MB after 1,500. (The
// previous check's catalog is still referenced then, by the Checker, so
// two stay alive; and finalizers run after the collection returns.)
func wasmCollect() {
	wasmWork.Store(0)
	runtime.GC()
}

// Package jit runs compilations and JiT compilations of Dataform projects in
// warm worker processes: the worker (`dfd worker`, ServeWorker) and the
// host's pool of them (Pool).
//
// Why processes: goja's Interrupt stops JavaScript loops but not native
// code (a catastrophic regular expression runs on for seconds), and a
// script can allocate without bound. Only a process boundary gives a hard
// deadline and a hard memory ceiling, and it keeps a crash in one project's
// JavaScript away from the daemon.
//
// The worker compiles @dataform/core's bundle once, keeps fresh runtimes
// prepared in the background (DefaultSpares), serves one request at a time
// on a runtime of its own and drops the runtime afterwards, so JavaScript
// globals never leak between requests. JiT adapter calls go to the host as
// AdapterCall frames; the per-request deadline, the host's Cancel and a heap
// ceiling (sampled with runtime/metrics every 20 ms) interrupt the runtime.
// It exits when its stdin reaches EOF, after crossing the heap ceiling, or
// when the host breaks the protocol. The protocol is described in package
// jit/wire.
//
// The pool (one per project root, core version and engine; Pools keeps
// them and counts their users with Acquire and its release) starts
// workers from this executable with a minimal environment (no credentials)
// and a stdin pipe of its own (never the daemon's stdin, which carries the
// editor's JSON-RPC), in a process group of their own and, on Linux, with a
// parent-death signal. It queues requests when every worker is busy,
// enforces deadlines (Cancel, then kill after a grace period), replaces
// workers that crash, break the protocol, hit the heap ceiling or have
// served MaxRequests, stops workers that sit idle, and ends them all on
// Close. A request whose worker died before accepting it (wire's Accepted
// frame: a worker killed from outside while idle looks alive for a moment)
// has run nothing and is run on another worker. Errors are typed: *WorkerError for what the worker answered
// (JavaScript errors with their message and stack, deadlines wrapping
// engine.ErrTimeout), *CrashError for a worker that died under a request,
// with its last lines of stderr.
package jit

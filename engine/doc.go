// Package engine hosts a project's own @dataform/core in goja.
//
// It reproduces what the official CLI's vm2 sandbox gives core (see
// cli/vm/compile.ts in dataform-co/dataform): a CommonJS loader that runs every
// source file through core's compiler(), node_modules lookup with a fallback to
// the project root, "path" as the only builtin, a __dataform_current_file
// getter, `global`, V8's stack-trace API, timers and console. Nothing else of
// the host is reachable from JavaScript: no fs, no network, no environment, no
// file outside the project root. Functions' source text is V8's: core stores
// fn.toString() as an action's jitCode, and goja cuts arrow functions such as
// `(jctx) => ({ … })` short, so modules are compiled from an AST whose arrow
// functions' text is corrected (funcsource.go).
//
// A Bundle is core's bundle.js compiled once per core version and shared. A
// Runtime is a fresh goja runtime with core loaded, used for exactly one
// request and then dropped, because JavaScript globals must not leak from one
// compile into the next. Runtimes are cheap to prepare ahead of time.
//
// The package knows nothing of processes, LSP or BigQuery: requests and
// responses are the protobuf bytes core itself reads and writes.
package engine

// Package daemon is `dfd serve`: it wires the LSP server (package lsp) to
// dfd's compiler.
//
// The pieces:
//
//   - Backend implements lsp.Backend. It owns the opened projects (their
//     settings, their @dataform/core and a Runner each), turns compiled
//     graphs into the LSP's neutral model, maps compilation errors back to
//     file positions (errors.go), runs JiT previews under the preview
//     policy with the metadata snapshot adapter (jit.go), and serves table
//     metadata for hovers (metadata.go).
//   - Runner (runner.go) is the seam between the daemon and whatever
//     executes @dataform/core: "compile this project with these unsaved
//     buffers" and "run this JiT request, answering its database calls
//     with this function". InProcess implements it on the engine in this
//     process. The jit package's worker pool is meant to replace it: a
//     RunnerFactory that returns a pool-backed Runner is all it takes
//     (Options.NewRunner).
//   - Serve runs the whole thing over stdin/stdout.
//
// The LSP side never sees the engine, protobufs or BigQuery; this package
// is where they meet.
package daemon

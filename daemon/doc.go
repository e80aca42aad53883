// Package daemon is `dfd serve`: it wires the LSP server (package lsp) and
// the workspace (package workspace) to dfd's compiler, worker pools and
// metadata sources.
//
// The pieces:
//
//   - Backend (backend.go) implements workspace.Backend: it opens projects
//     and holds what they share — the settings, the core resolver, the
//     loaded metadata snapshot files (metadata.go) and background work.
//   - openProject implements workspace.ProjectBackend: one opened project,
//     owned by the workspace's project — its core's Runner, its metadata
//     source and BigQuery connection (source.go), what its JiT previews read
//     last (prefetch.go). Compile maps compilation errors back to file
//     positions (errors.go); Check, the later phase, warns on refs to
//     tables the metadata source says do not exist and runs the JiT code
//     of open files' actions under the check policy (jitdiag.go); JitPreview
//     runs one action's JiT code under the preview policy; TableMetadata
//     answers hovers and completion from what the metadata source has,
//     fetching what it lacks in the background (tablemeta.go); Status and
//     RefreshMetadata serve dfd/status and dfd/refreshMetadata (status.go).
//   - Runner (runner.go) is the seam between a project and whatever runs
//     @dataform/core: InProcess (goja in this process, for tests and
//     --in-process) or a pool of `dfd worker` / Node.js workers
//     (pooled.go, NewPooled).
//   - Serve (serve.go) runs the whole thing over stdin/stdout.
//
// This is where the LSP side, the engine, protobufs and BigQuery meet; it
// may import every package of dfd but cmd (internal/layers checks it).
package daemon

// Package workspace is dfd's model of what the user has open: a Session
// (one client) with its workspace folders, open documents and settings, and
// the Dataform projects found in them. It is the one registry of projects:
// each Project owns its compile loop, its immutable Snapshots and its
// backend (ProjectBackend: the workers, the metadata source, the BigQuery
// connection), so that a project's state has one owner and one lifetime.
// It is gopls' cache layer (Session → View → Snapshot) for Dataform.
//
// Scheduling: every change bumps a project's modification counter and
// wakes its goroutine, which debounces (adaptively: the first edit after a
// pause compiles at once, edits typed faster than the delay once they
// stop), (re)opens the project when its settings or core changed,
// compiles with the open buffers, and publishes in phases — the compile's errors at once, then the later phase (Check:
// metadata warnings, JiT checks, SQL analysis) of the same snapshot, which
// the next change cancels. Requests read the latest snapshot, or wait for
// one that covers the changes made so far (Project.Await); they never
// wait for a later phase or for I/O of another request.
//
// It speaks neither LSP nor protobuf: the LSP server (package lsp) turns
// its Events into notifications, and package daemon implements Backend.
// It imports source, project and settings, and nothing above them.
package workspace

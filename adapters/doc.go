// Package adapters is the database side of dfd's JiT previews: the DbAdapter
// service that Dataform JiT code reaches through jctx.adapter.
//
// A JiT function calls jctx.adapter.execute / listTables / getTable /
// deleteTable. @dataform/core turns each call into a protobufjs RPC (method
// name + encoded request), the dfd worker forwards it to the host, and the
// host answers it with [Dispatch], which decodes the request, calls a
// [DbAdapter] and encodes the reply.
//
// Backends and wrappers all implement the same [DbAdapter] interface so they
// stack, outermost first:
//
//	Recorder ─▶ policy ─▶ cache ─▶ BigQuery | offline snapshot
//
// The pieces:
//
//   - [Recorder] keeps a log of the calls for the preview ("which adapter calls
//     did this action make");
//   - package policy (adapters/policy) decides what a preview may do: only
//     read-only queries run for real (GoogleSQL parses one query statement,
//     and BigQuery's dry run agrees), everything else is a dry run, every
//     query is capped and labelled, and DeleteTable never reaches the
//     database;
//   - package offline (adapters/offline) answers from a JSON metadata snapshot,
//     so previews work without credentials;
//   - package gsql (the top-level gsql/) tells read-only queries from
//     everything else, with BigQuery's own parser.
//
// # Errors
//
// A failing call reaches the JiT code as a rejected promise whose message is
// the error text. Adapters return [*Error] values (see [Errorf]) so the text
// starts with a stable code the JiT code can test, e.g.
// "NOT_FOUND: table p.d.t not found". [Dispatch] turns every other error into
// an [*Error] too (see [AsError]).
//
// # Annotations
//
// Wrappers further down the stack tell the [Recorder] how a call was served
// through the context: [MarkCached] (answered from a cache), [MarkDryRun]
// (executed as a dry run) and [Note] (free-form, e.g. "stale"). They are
// no-ops when nobody records, so adapters can call them unconditionally.
package adapters

// Package source is dfd's text-level knowledge of Dataform files: positions
// in UTF-16 (what LSP speaks) and UTF-8 (what Go and the compiler speak),
// the top-level blocks of a SQLX file, the ref()/resolve() calls, includes
// and config keys a user types. It reads text only: it never compiles and
// knows nothing of @dataform/core's runtime, so the LSP handlers, the
// workspace and the daemon's error mapping all use it.
//
// It imports nothing of dfd's: it is the bottom of the stack.
package source

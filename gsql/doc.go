// Package gsql is dfd's one door to GoogleSQL, BigQuery's own SQL front end
// (github.com/goccy/go-googlesql: GoogleSQL compiled to WebAssembly and
// transpiled to pure Go). Every other package that needs to understand SQL
// goes through here, so only the binaries that really need the engine link
// its ≈70 MB, and there is one place that decides which language features
// dfd enables and how the engine is initialised.
//
// # The engine
//
// The engine is initialised on first use (≈50–150 ms, ≈70 MiB of heap that
// stays for the life of the process). It is a single WebAssembly instance
// behind one mutex inside go-googlesql: calls from several goroutines are
// safe and run one at a time. A call cannot be interrupted, so every entry
// point here bounds its input (MaxStatementBytes) instead; parsing is
// linear in the statement's length (≈1 µs per byte on a 2-core machine).
// The engine's linear memory grows with the largest input it has seen and
// never shrinks, which is one more reason for the bound.
//
// # Statement kinds for previews
//
// Classify decides whether a statement may run for real in a preview: only
// when GoogleSQL parses it as exactly one query statement, and that query
// calls nothing that runs on someone else's behalf (EXTERNAL_QUERY, remote
// or user-defined functions and table functions, ML./AI. models,
// connections). Everything else — scripts, DML, DDL, EXPORT DATA, CALL,
// EXECUTE IMMEDIATE, statements GoogleSQL rejects (including control
// characters its lexer refuses), statements over the size bound — is not a
// read-only query, and a preview sends it as a dry run. The parser is
// BigQuery's own, so a comment that ends at a lone carriage return, a
// triple-quoted string or a Unicode look-alike is read exactly as BigQuery
// reads it.
package gsql

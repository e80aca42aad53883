package sqlcheck

import (
	"context"
	"sort"
	"strings"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Cause is the root cause of statements not being analysed.
type Cause string

const (
	// CauseUnanswered: the metadata source could not answer about a table
	// it reads (BigQuery unreachable, credentials refused, no answer in
	// the time allowed). Blocked.Err says what the source said.
	CauseUnanswered Cause = "unanswered"
	// CauseNoMetadata: it reads a warehouse table and there is no
	// metadata source at all.
	CauseNoMetadata Cause = "no-metadata"
	// CauseUnknownTable: the metadata source answered, but has no schema
	// for a table it reads (a snapshot without it, a table BigQuery says
	// does not exist, a column type dfd cannot model).
	CauseUnknownTable Cause = "unknown-table"
	// CauseSyntax: GoogleSQL's parser does not take it, and BigQuery may
	// (a statement kind GoogleSQL does not know yet, and the like).
	CauseSyntax Cause = "syntax"
	// CauseJit: it reads a JiT action whose SQL the check did not get.
	CauseJit Cause = "jit"
	// CauseOther: anything else (an operation's output, which dfd does not
	// infer; an upstream action whose SQL has a problem; a statement kind
	// dfd does not analyse).
	CauseOther Cause = "other"
)

// Blocked is one root cause of statements not analysed.
type Blocked struct {
	Cause Cause
	// Table is the warehouse table (unanswered, no-metadata,
	// unknown-table) or the project's action (jit, other) at the root.
	Table string
	// Err is what the metadata source said (CauseUnanswered).
	Err error
	// Statements counts the statements not analysed for this cause,
	// directly or through the actions they read.
	Statements int
}

// CachedSource is a metadata source that can answer from what it holds
// without waiting for the warehouse (cache.Cache): once the time allowed
// for metadata is spent, a check still uses what it has cached, of any
// age, rather than leave those tables unknown.
type CachedSource interface {
	CachedTable(ctx context.Context, req *dataformpb.GetTableRequest) (meta *dataformpb.TableMetadata, ok bool, err error)
}

// ListingSource is a metadata source that may be partial (a snapshot) and
// knows which datasets it lists in full: only there does its lacking a
// table say that the table does not exist.
type ListingSource interface {
	Lists(database, schema string) bool
}

// blocker is a root cause, comparable (a map key): err is kept aside.
type blocker struct {
	cause Cause
	table string
	what  string // for the project's own actions: why it has no schema
}

// rank orders causes when a statement has several: the one a user can
// act on first wins.
func (b blocker) rank() int {
	switch b.cause {
	case CauseUnanswered:
		return 0
	case CauseNoMetadata:
		return 1
	case CauseUnknownTable:
		return 2
	case CauseJit:
		return 3
	case CauseSyntax:
		return 4
	}
	return 5
}

// describe is the root cause in a phrase that follows "because …".
func (b blocker) describe() string {
	switch b.cause {
	case CauseUnanswered:
		return "the metadata source could not answer about " + b.table
	case CauseNoMetadata:
		return b.table + "'s schema is unknown: there is no metadata source"
	case CauseUnknownTable:
		return "the metadata source has no schema for " + b.table
	}
	return b.table + " is " + b.what
}

// rootOf is why a skipped statement was not analysed, at the root.
func (c *checker) rootOf(an gsql.Analysis) blocker {
	var best *blocker
	for _, u := range an.Unknown {
		path := c.qualify(u)
		key := strings.ToLower(path)
		var b blocker
		switch w := c.k.warehouse[key]; {
		case c.own[key]:
			if up := c.ownWhy[key]; up != nil {
				b = *up
			} else {
				b = blocker{cause: CauseOther, table: path, what: "an action whose output schema dfd did not infer"}
			}
		case c.opts.Metadata == nil:
			b = blocker{cause: CauseNoMetadata, table: path}
		case w != nil && w.state == tableFailed:
			b = blocker{cause: CauseUnanswered, table: path}
		default:
			b = blocker{cause: CauseUnknownTable, table: path}
		}
		if best == nil || b.rank() < best.rank() {
			best = &b
		}
	}
	if best != nil {
		return *best
	}
	// What GoogleSQL's parser does not take but BigQuery may (statement
	// kinds it does not know yet, features still in development, a part
	// of a script on its own); a statement it certainly rejects is a
	// syntax error, a finding, not a skip.
	for _, prefix := range []string{"GoogleSQL cannot parse", "GoogleSQL does not know", "GoogleSQL parses it only"} {
		if strings.HasPrefix(an.Skipped, prefix) {
			return blocker{cause: CauseSyntax, table: c.current.name, what: "a statement GoogleSQL's parser does not take"}
		}
	}
	return blocker{cause: CauseOther, table: c.current.name, what: "a statement dfd does not analyse"}
}

// block counts one statement not analysed for b.
func (c *checker) block(b blocker) {
	e := c.blocked[b]
	if e == nil {
		e = &Blocked{Cause: b.cause, Table: b.table}
		if b.cause == CauseUnanswered {
			if w := c.k.warehouse[strings.ToLower(b.table)]; w != nil {
				e.Err = w.err
			}
		}
		c.blocked[b] = e
	}
	e.Statements++
}

// blockedList is the causes in a stable order: by cause, then table.
func (c *checker) blockedList() []Blocked {
	out := make([]Blocked, 0, len(c.blocked))
	for _, b := range c.blocked {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := blocker{cause: out[i].Cause}, blocker{cause: out[j].Cause}
		if a.rank() != b.rank() {
			return a.rank() < b.rank()
		}
		if out[i].Cause != out[j].Cause {
			return out[i].Cause < out[j].Cause
		}
		return out[i].Table < out[j].Table
	})
	return out
}

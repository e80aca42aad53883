package workspace

import (
	"context"
	"errors"
)

// LineageProvider is implemented by project backends that can trace an
// action's output columns through the project's SQL to the warehouse
// (dfd/lineage). Lineage may run a SQL analysis of the whole graph, so it
// can take a while; it must honour ctx and never hold up the project's
// compiles.
type LineageProvider interface {
	Lineage(ctx context.Context, req LineageRequest) (*Lineage, error)
}

// LineageRequest asks for the lineage of one action's columns.
type LineageRequest struct {
	Graph  any // CompileResult.Graph of the snapshot asked about
	Action *Action
	// Column is one output column, or a field below it as a dotted path
	// ("page.url"); empty: every output column.
	Column string
	// NoWait answers from what the last SQL check has, never running one
	// on the request's path (hovers): without its lineage, the columns'
	// types only, and the lineage is traced in the background for the
	// next request.
	NoWait bool
	// TypesOnly asks for the columns' types (NoWait, never their lineage;
	// it starts no trace): inlay hints.
	TypesOnly bool
}

// Lineage is an action's column lineage. When there is none, Reason says
// why (an assertion, SQL analysis off, SQL with an error, …): a result the
// editor shows, not a failure.
type Lineage struct {
	// Action is the target as the analysis names it: database.schema.name.
	Action  string
	Columns []ColumnLineage
	Reason  string
}

// ColumnLineage is one output column: the columns the action's SQL reads
// (Direct) and the warehouse columns its values come from through the
// project's own actions (Origins). Nested fields are dotted paths.
type ColumnLineage struct {
	Name    string
	Type    string
	Direct  []LineageInput
	Origins []LineageInput
	// Unresolved says what part of the lineage is not known, and why.
	Unresolved []string
}

// LineageInput is a column of a table (database.schema.name).
type LineageInput struct {
	Table, Column string
	// Computed: the values are computed from the column (an aggregate, a
	// function) rather than its values unchanged, at some hop.
	Computed bool
}

// ErrNoLineage is the error of Snapshot.Lineage when the project's backend
// cannot trace lineage at all.
var ErrNoLineage = errors.New("this project's backend does not trace column lineage")

// Lineage asks the project's backend for the lineage of a's columns in this
// snapshot's graph.
func (s *Snapshot) Lineage(ctx context.Context, a *Action, column string) (*Lineage, error) {
	return s.lineage(ctx, LineageRequest{Action: a, Column: column})
}

// ColumnTypes are the output columns of a with the types the last SQL
// check inferred, without lineage and without waiting (inlay hints).
func (s *Snapshot) ColumnTypes(ctx context.Context, a *Action) (*Lineage, error) {
	return s.lineage(ctx, LineageRequest{Action: a, NoWait: true, TypesOnly: true})
}

// CachedLineage is Lineage with NoWait: what a hover shows.
func (s *Snapshot) CachedLineage(ctx context.Context, a *Action, column string) (*Lineage, error) {
	return s.lineage(ctx, LineageRequest{Action: a, Column: column, NoWait: true})
}

func (s *Snapshot) lineage(ctx context.Context, req LineageRequest) (*Lineage, error) {
	if s == nil || s.backend == nil || s.Result == nil {
		return nil, errNoCompile
	}
	lp, ok := s.backend.(LineageProvider)
	if !ok {
		return nil, ErrNoLineage
	}
	var out *Lineage
	run := func() error {
		var err error
		req.Graph = s.Result.Graph
		out, err = lp.Lineage(ctx, req)
		return err
	}
	var err error
	if s.session != nil {
		err = s.session.recovered("column lineage", run)
	} else {
		err = run()
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

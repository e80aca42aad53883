package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/sqlcheck"
	"github.com/dfdtools/dfd/workspace"
)

// checkMetadataBudget bounds the warehouse lookups of one check phase
// (missing tables, SQL analysis): a table whose metadata does not arrive in
// time is left unknown (its readers are skipped, never reported), and the
// next check finds it in the cache.
func checkMetadataBudget(ms metaSource) time.Duration {
	if ms.kind == SourceBigQuery {
		return 3 * time.Second
	}
	return time.Second
}

// sqlState is a project's SQL analysis: the checker that remembers
// analyses between checks (so an edit re-analyses only what it changed)
// and the last check's result, whose inferred schemas hovers, completion
// and lineage read.
type sqlState struct {
	// turn is held during a check (one at a time per project, as a
	// Checker wants): a channel rather than a mutex, so that a lineage
	// request waiting for its turn can give up when it is cancelled.
	turnOnce sync.Once
	turn     chan struct{}
	checker  *sqlcheck.Checker
	// last is read by hovers and completion without waiting for a check
	// that runs.
	last atomic.Pointer[sqlChecked]
	// lineage is set by the first dfd/lineage request: from then on every
	// check records column lineage too. Off until asked for, since it
	// costs each check ≈15% more.
	lineage atomic.Bool
}

// sqlChecked is a check's result with the graph it checked and what it
// was given: the JiT actions' SQL (so that a lineage check of the same
// graph analyses them too) and whether it recorded lineage.
type sqlChecked struct {
	res     *sqlcheck.Result
	g       *dataformpb.CompiledGraph
	jit     map[string]*dataformpb.JitCompilationResponse
	lineage bool
}

// acquire waits for the project's turn to check, or for ctx to end.
func (st *sqlState) acquire(ctx context.Context) error {
	st.turnOnce.Do(func() { st.turn = make(chan struct{}, 1) })
	select {
	case st.turn <- struct{}{}:
		if st.checker == nil {
			st.checker = sqlcheck.NewChecker()
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (st *sqlState) release() { <-st.turn }

// sqlOptions are the options of a check of the project against metadata
// source ms, as the compile with these overlays saw the files.
func (op *openProject) sqlOptions(ms metaSource, overlays map[string][]byte, jitSQL map[string]*dataformpb.JitCompilationResponse, lineage bool) sqlcheck.Options {
	return sqlcheck.Options{
		Metadata: ms.adapter,
		// The adapter's identity too: a snapshot file that changed is
		// read again into a new adapter, whose tables the checker must
		// not take from the old one.
		MetadataID:      fmt.Sprintf("%s %p", ms.desc, ms.adapter),
		Read:            reader(op.p.Root, overlays),
		MetadataTimeout: checkMetadataBudget(ms),
		Jit:             jitSQL,
		Lineage:         lineage,
		// BigQuery's "not found" is the last word on a table, as in dfd
		// check; a snapshot's may be partial (a warning at the name).
		MissingIsCertain: ms.kind == SourceBigQuery,
	}
}

// sqlDiagnostics analyses the SQL of every action of the graph with
// GoogleSQL (package sqlcheck) against the metadata source's tables and
// the project's own inferred schemas, and returns the findings as
// diagnostics: errors only where the analyzer is certain, hints where a
// statement was not analysed. jitSQL are JiT actions' responses whose
// database calls were all answered for real.
//
// A table the metadata source says does not exist is a finding at its
// name (dropRestated leaves out missingTables' warning at the same ref).
func (op *openProject) sqlDiagnostics(ctx context.Context, ms metaSource, h *graphHandle, overlays map[string][]byte, jitSQL map[string]*dataformpb.JitCompilationResponse) []workspace.Diagnostic {
	st := &op.sql
	if st.acquire(ctx) != nil {
		return nil // the next change cancelled the check
	}
	defer st.release()
	lineage := st.lineage.Load()
	res, err := st.checker.Check(ctx, h.graph, op.sqlOptions(ms, overlays, jitSQL, lineage))
	if err != nil {
		if ctx.Err() == nil {
			op.b.log.Warn("SQL analysis failed", "project", op.p.Root, "err", err)
		}
		return nil
	}
	st.last.Store(&sqlChecked{res: res, g: h.graph, jit: jitSQL, lineage: lineage})
	// A lookup BigQuery refused or could not answer is what dfd/status
	// shows, as dfd check says it. One that only ran out of the check's
	// budget says nothing of BigQuery: the cache's fetch goes on.
	for _, b := range res.NotAnalysed {
		if b.Cause == sqlcheck.CauseUnanswered && b.Err != nil {
			if code := adapters.CodeOf(b.Err); code != adapters.DeadlineExceeded && code != adapters.Canceled {
				ms.bq.noteFetch(b.Err)
				break
			}
		}
	}
	// Which statements were not analysed is said where it helps: with no
	// metadata source, every statement reading a warehouse table would
	// carry the same hint (dfd/status says the source is none).
	var findings []sqlcheck.Finding
	for _, f := range res.Findings {
		if f.Code == sqlcheck.CodeSkipped && ms.adapter == nil {
			continue
		}
		findings = append(findings, f)
	}
	return sqlFindingsToDiagnostics(op.p.Root, findings, reader(op.p.Root, overlays))
}

// forgetWarehouse makes the next SQL check ask the metadata source again
// for every warehouse table (after a refresh of the metadata).
func (st *sqlState) forgetWarehouse() {
	// Never cancelled: a refresh waits for the check that runs.
	_ = st.acquire(context.Background())
	defer st.release()
	st.checker.Forget()
}

// sqlFindingsToDiagnostics converts findings to the workspace's
// diagnostics, whose columns are bytes of the line: from the findings'
// byte offsets in the files the compile read.
func sqlFindingsToDiagnostics(root string, findings []sqlcheck.Finding, read fileReader) []workspace.Diagnostic {
	var out []workspace.Diagnostic
	mappers := map[string]*source.Mapper{}
	for _, f := range findings {
		m, ok := mappers[f.File]
		if !ok {
			if text, found := read(f.File); found {
				m = source.NewMapper(text)
			}
			mappers[f.File] = m
		}
		if m == nil {
			continue // a finding is placed in a file the compile read
		}
		line := m.LineOf(f.Offset)
		endLine := m.LineOf(f.EndOffset)
		d := workspace.Diagnostic{
			Path:     filepath.Join(root, filepath.FromSlash(f.File)),
			Line:     line,
			Col:      f.Offset - m.OffsetBytes(line, 0),
			EndLine:  endLine,
			EndCol:   f.EndOffset - m.OffsetBytes(endLine, 0),
			Severity: sqlSeverity(f.Severity),
			Message:  f.Headline(),
			Source:   "GoogleSQL",
			Code:     f.Code,
		}
		if f.Detail != "" {
			d.Message += "\n" + f.Detail
		}
		if f.MappedToPlacement && f.Severity != sqlcheck.Hint {
			// The text came from a ${…}: say where in the compiled SQL.
			d.RelatedDescription = "in the compiled SQL of " + f.Action + ", line " + strconv.Itoa(f.StatementLine) + ", column " + strconv.Itoa(f.StatementColumn)
		}
		out = append(out, d)
	}
	return out
}

func sqlSeverity(s sqlcheck.Severity) workspace.Severity {
	switch s {
	case sqlcheck.Error:
		return workspace.SeverityError
	case sqlcheck.Warning:
		return workspace.SeverityWarning
	case sqlcheck.Info:
		return workspace.SeverityInfo
	}
	return workspace.SeverityHint
}

// inferredTable is the schema the last SQL check inferred for one of the
// project's actions (nil when it has none: not analysed, or not a table),
// as hovers and completion show a table: STRUCT fields as dotted names
// after their STRUCT, ARRAYs as REPEATED columns of their element type.
// Column descriptions are the action's own (its config's columns).
func (st *sqlState) inferredTable(t workspace.Target) *workspace.TableInfo {
	last := st.last.Load()
	if last == nil {
		return nil
	}
	g := last.g
	cols, ok := last.res.Schemas[t.String()]
	if !ok {
		return nil
	}
	info := &workspace.TableInfo{Target: t, Source: "inferred from the project's SQL by GoogleSQL"}
	descs := map[string]string{}
	if g != nil {
		for _, tb := range g.GetTables() {
			if target(tb.GetTarget()) != t {
				continue
			}
			info.Description = tb.GetActionDescriptor().GetDescription()
			for _, c := range tb.GetActionDescriptor().GetColumns() {
				descs[strings.ToLower(strings.Join(c.GetPath(), "."))] = c.GetDescription()
			}
		}
	}
	var walk func(prefix string, cols []gsql.Column)
	walk = func(prefix string, cols []gsql.Column) {
		for _, c := range cols {
			name := prefix + c.Name
			typ, mode := c.Type, ""
			if typ.Kind == "ARRAY" && typ.Elem != nil {
				typ, mode = *typ.Elem, "REPEATED"
			}
			col := workspace.Column{Name: name, Mode: mode, Description: descs[strings.ToLower(name)]}
			if col.Description == "" {
				col.Description = c.Description
			}
			if typ.Kind == "STRUCT" {
				col.Type = "STRUCT"
			} else {
				col.Type = typ.String()
			}
			info.Columns = append(info.Columns, col)
			if typ.Kind == "STRUCT" {
				walk(name+".", typ.Fields)
			}
		}
	}
	walk("", cols)
	return info
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/bigquery"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/adapters/rows"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// runRows is `dfd rows`: a data preview of one action, from BigQuery.
func runRows(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet("rows", env.stderr)
	actionName := fs.String("action", "", "the action: `name`, schema.name or database.schema.name (required)")
	fromTable := fs.Bool("table", false, "read the built table's rows with tabledata.list (no query, nothing billed) instead of running the action's query")
	incremental := fs.Bool("incremental", false, "run an incremental table's incremental query instead of its full-refresh one")
	limit := fs.Int64("limit", rows.DefaultLimit, "how many rows to show (at most 10000)")
	asJSON := fs.Bool("json", false, "print the preview as JSON: columns, rows, bytes, job id")
	yes := fs.Bool("yes", false, "run the query even when its dry run says it processes more than --threshold")
	threshold := byteSize(rows.DefaultThreshold)
	fs.Var(&threshold, "threshold", "the dry run's estimate above which the query runs only with --yes (default 1GiB)")
	maxBytes := fs.Int64("max-bytes-billed", 0, "the byte cap of the query (0: the preview's default, 10 GiB)")
	bq := addBigQueryFlags(fs)
	endpoint, credsFile := bq.endpoint, bq.credentials
	bqTimeout := fs.String("bigquery-timeout", "", "time limit of each BigQuery call, retries included (default $DFD_BIGQUERY_TIMEOUT, else 20s)")
	jitTimeout := fs.String("jit-timeout", "", "deadline of a JiT action's code, run for the SQL it produces (default 30s)")
	timeout := fs.String("timeout", "", "deadline of the project's compilation (default 60s)")
	overrides := overrideFlags(fs)
	eng := addEngineFlags(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: dfd rows [DIR] --action NAME [--table] [--limit N] [--json] [--yes] [flags]")
		fmt.Fprintln(env.stderr, "Previews an action's data from BigQuery: the rows its query returns now (run under")
		fmt.Fprintln(env.stderr, "the preview policy, after a dry run), or with --table the rows of its built table")
		fmt.Fprintln(env.stderr, "(tabledata.list: no query, nothing billed).")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageErr := func(format string, args ...any) int {
		fmt.Fprintf(env.stderr, "dfd rows: "+format+"\n", args...)
		return 2
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(env.stderr, "dfd rows: "+format+"\n", args...)
		return 1
	}
	switch {
	case len(pos) > 1:
		return usageErr("one project directory expected, got %d", len(pos))
	case *actionName == "":
		return usageErr("--action NAME is required")
	case *limit <= 0 || *limit > 10000:
		return usageErr("--limit must be between 1 and 10000, got %d", *limit)
	case *maxBytes < 0:
		return usageErr("--max-bytes-billed must not be negative (0: the preview's default cap)")
	case *fromTable && *incremental:
		return usageErr("--table reads the built table: --incremental chooses a query")
	}
	dir := "."
	if len(pos) == 1 {
		dir = pos[0]
	}
	jitDeadline, compileDeadline, callTimeout := defaultJitTimeout, time.Duration(0), time.Duration(0)
	for _, d := range []struct {
		flag, val string
		dst       *time.Duration
	}{{"--jit-timeout", *jitTimeout, &jitDeadline}, {"--timeout", *timeout, &compileDeadline}, {"--bigquery-timeout", *bqTimeout, &callTimeout}} {
		if d.val == "" {
			continue
		}
		if *d.dst, err = parseDuration(d.val); err != nil {
			return usageErr("%s: %v", d.flag, err)
		}
	}

	if err := eng.validate(); err != nil {
		fmt.Fprintf(env.stderr, "dfd rows: %v\n", err)
		return 2
	}

	// GoogleSQL, which decides what may run, starts while the project
	// compiles.
	gsqlReady := make(chan struct{})
	go func() { defer close(gsqlReady); _ = gsql.Init() }()
	defer func() { <-gsqlReady }()

	proj, res, err := compileDir(ctx, env, dir, eng.engine, compile.Options{Overrides: overrides(), Timeout: compileDeadline, Log: logTo(env.stderr), MemoryLimit: eng.limit()})
	if err != nil {
		return fail("%v", err)
	}
	if errs := res.Errors(); len(errs) > 0 {
		fmt.Fprintln(env.stderr, "dfd rows: the project has compilation errors")
		printErrors(env.stderr, errs)
		return 1
	}
	target, action, err := rowsAction(res.Graph, *actionName, *fromTable)
	if err != nil {
		return fail("%v", err)
	}
	if target.GetDatabase() == "" {
		target = &dataformpb.Target{Database: res.Graph.GetProjectConfig().GetDefaultDatabase(), Schema: target.GetSchema(), Name: target.GetName()}
	}

	backend, err := connect.Open(ctx, connect.Config{
		Config: credentials.Config{
			Endpoint: *endpoint, CredentialsFile: *credsFile, ProjectDir: proj.Root,
			DefaultProject: proj.Settings.DefaultProject, DefaultLocation: proj.Settings.DefaultLocation,
			Getenv: env.getenv,
		},
		BigQuery: bigquery.Options{CallTimeout: callTimeout},
		Log:      func(format string, args ...any) { fmt.Fprintf(env.stderr, "warning: "+format+"\n", args...) },
	})
	if err != nil {
		return fail("connecting to BigQuery: %v (see docs/bigquery.md)", err)
	}
	defer backend.Close()
	billing := backend.Credentials.Project
	pol := policy.Policy{Mode: policy.Preview, MaxBytesBilled: *maxBytes}

	var out *rows.Result
	if *fromTable {
		out, err = rows.Table(ctx, backend.BigQuery, target, *limit)
		if err != nil {
			return fail("%v", err)
		}
		out.ConsoleURL = rows.ConsoleTableURL(billing, target.GetDatabase(), target.GetSchema(), target.GetName())
	} else {
		stmt, why := "", ""
		if action.JitCode != "" {
			<-gsqlReady // the JiT code's queries are judged by GoogleSQL too
			resp, err := rowsJit(ctx, env, proj.Root, res, action, pol.Wrap(backend.Cache), jitDeadline)
			if err != nil {
				return fail("%s (%s): %v", action.Name(), action.FileName, err)
			}
			stmt, why = jitQuery(resp, *incremental)
		} else {
			stmt, why = graphQuery(res.Graph, action, *incremental)
		}
		if why != "" {
			return fail("%s: %s", action.Name(), why)
		}
		<-gsqlReady
		out, err = rows.Query(ctx, backend.Cache, rows.QueryRequest{
			Statement: stmt, Limit: *limit, Policy: pol, Threshold: int64(threshold), Confirmed: *yes,
		})
		if err != nil {
			return fail("%s: %v", action.Name(), err)
		}
		if out.Location == "" {
			out.Location = backend.Credentials.Location
		}
		switch {
		case out.NeedsConfirmation:
			return fail("%s: BigQuery's dry run says the query would process %s, more than --threshold %s: pass --yes to run it",
				action.Name(), rows.FormatBytes(out.EstimatedBytes), rows.FormatBytes(int64(threshold)))
		case out.Refused != "":
			return fail("%s: the query was not run: %s", action.Name(), out.Refused)
		}
		if out.JobID != "" {
			out.ConsoleURL = rows.ConsoleJobURL(billing, out.Location, out.JobID)
		}
	}
	if *asJSON {
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fail("%v", err)
		}
		_, _ = env.stdout.Write(append(b, '\n'))
	} else {
		printRows(env.stdout, out)
	}
	fmt.Fprintln(env.stderr, rowsSummary(out))
	return 0
}

// rowsAction finds the action to preview: a table, operation or assertion
// (compile.FindAction), or with --table also a declaration.
func rowsAction(g *dataformpb.CompiledGraph, name string, table bool) (*dataformpb.Target, compile.Action, error) {
	a, err := compile.FindAction(g, name)
	if err == nil {
		return a.Target, a, nil
	}
	if table {
		parts := strings.Split(name, ".")
		for _, d := range g.GetDeclarations() {
			t := d.GetTarget()
			full := []string{t.GetDatabase(), t.GetSchema(), t.GetName()}
			if strings.Join(full[3-min(len(parts), 3):], ".") == name {
				return t, compile.Action{Target: t, FileName: d.GetFileName()}, nil
			}
		}
	}
	return nil, compile.Action{}, err
}

// graphQuery is the statement whose rows an action previews: a table's
// query (an incremental table's incremental query with incremental), an
// assertion's query, an operation's only statement. why says why there is
// none.
func graphQuery(g *dataformpb.CompiledGraph, a compile.Action, incremental bool) (stmt, why string) {
	for _, t := range g.GetTables() {
		if proto.Equal(t.GetTarget(), a.Target) {
			return tableQuery(a.Kind, t.GetQuery(), t.GetIncrementalQuery(), incremental)
		}
	}
	for _, as := range g.GetAssertions() {
		if proto.Equal(as.GetTarget(), a.Target) {
			return as.GetQuery(), ""
		}
	}
	for _, o := range g.GetOperations() {
		if proto.Equal(o.GetTarget(), a.Target) {
			return operationQuery(o.GetQueries())
		}
	}
	return "", "no compiled SQL found for the action"
}

func tableQuery(kind compile.ActionKind, query, incQuery string, incremental bool) (string, string) {
	switch {
	case !incremental:
		return query, ""
	case kind != compile.KindIncremental:
		return "", "--incremental: the action is a " + string(kind) + ", not an incremental table"
	}
	return incQuery, ""
}

func operationQuery(queries []string) (string, string) {
	var kept []string
	for _, q := range queries {
		if strings.TrimSpace(q) != "" {
			kept = append(kept, q)
		}
	}
	if len(kept) != 1 {
		return "", fmt.Sprintf("an operation of %d statements: a preview runs one query (try --table for the table it writes)", len(kept))
	}
	return kept[0], ""
}

// jitQuery is graphQuery for the SQL a JiT action's code produced.
func jitQuery(resp *dataformpb.JitCompilationResponse, incremental bool) (string, string) {
	switch r := resp.GetResponse().(type) {
	case *dataformpb.JitCompilationResponse_Table:
		return tableQuery(compile.KindTable, r.Table.GetQuery(), "", incremental)
	case *dataformpb.JitCompilationResponse_IncrementalTable:
		return tableQuery(compile.KindIncremental, r.IncrementalTable.GetRegular().GetQuery(), r.IncrementalTable.GetIncremental().GetQuery(), incremental)
	case *dataformpb.JitCompilationResponse_Assertion:
		return r.Assertion.GetQuery(), ""
	case *dataformpb.JitCompilationResponse_Operation:
		return operationQuery(r.Operation.GetQueries())
	}
	return "", "the JiT code produced no SQL"
}

// rowsJit runs a JiT action's code under the preview policy (adapter is
// already wrapped in it) for the SQL it produces, as `dfd jit` does.
func rowsJit(ctx context.Context, env *cmdEnv, root string, res *compile.Result, action compile.Action, adapter adapters.DbAdapter, deadline time.Duration) (*dataformpb.JitCompilationResponse, error) {
	req, err := compile.JitRequest(res.Graph, action, compile.JitOptions{})
	if err != nil {
		return nil, err
	}
	reqBytes, err := compile.EncodeJitRequest(req, res.GraphWire)
	if err != nil {
		return nil, err
	}
	pool, err := jit.NewPool(jit.PoolOptions{
		Root: root, BundlePath: res.Core.BundlePath, CoreVersion: res.Core.Version,
		Workers: 1, MinWorkers: 1, Timeout: deadline, Command: workerCommand,
		Logger: slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	out, err := pool.Jit(ctx, jit.JitJob{Request: reqBytes, Timeout: deadline, Log: logTo(env.stderr)},
		func(ctx context.Context, method string, req []byte) ([]byte, error) {
			return adapters.Dispatch(ctx, adapter, method, req)
		})
	if err != nil {
		return nil, err
	}
	resp := &dataformpb.JitCompilationResponse{}
	if err := proto.Unmarshal(out.Response, resp); err != nil {
		return nil, fmt.Errorf("decoding the JiT response: %w", err)
	}
	return resp, nil
}

// printRows prints a preview as a text table: the columns' names, their
// types, then one line a row. NULL is NULL; STRUCT and ARRAY values are
// JSON; long values are cut at 60 characters; invisible characters are
// made visible.
func printRows(w io.Writer, r *rows.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	names, types, rules := make([]string, len(r.Columns)), make([]string, len(r.Columns)), make([]string, len(r.Columns))
	for i, c := range r.Columns {
		names[i], types[i] = c.Name, columnType(c)
		rules[i] = strings.Repeat("-", max(utf8.RuneCountInString(names[i]), utf8.RuneCountInString(types[i])))
	}
	for _, line := range [][]string{names, types, rules} {
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	for _, row := range r.Rows {
		cells := make([]string, len(row))
		for i, f := range row {
			cells[i] = cellText(f.Value)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// columnType is a column's type as GoogleSQL writes it: ARRAY<STRING>,
// STRUCT<name STRING, …>.
func columnType(c *adapters.Column) string {
	t := c.Type
	if t == "RECORD" || t == "STRUCT" {
		parts := make([]string, len(c.Fields))
		for i, f := range c.Fields {
			parts[i] = f.Name + " " + columnType(f)
		}
		t = "STRUCT<" + strings.Join(parts, ", ") + ">"
	}
	if c.Mode == "REPEATED" {
		t = "ARRAY<" + t + ">"
	}
	return t
}

func cellText(v any) string {
	var s string
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		s = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprintf("%v", v)
		}
		s = string(b)
	}
	s = strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
	s = adapters.Visible(s)
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:59]) + "…"
	}
	return s
}

// rowsSummary is the line on stderr after the rows: how many, from where,
// what it cost and where to see it in BigQuery.
func rowsSummary(r *rows.Result) string {
	var b strings.Builder
	switch r.Source {
	case rows.SourceTable:
		fmt.Fprintf(&b, "-- %d of %d row(s) of %s (tabledata.list: no query, nothing billed)", len(r.Rows), r.TotalRows, r.Target)
	default:
		more := ""
		if r.Truncated {
			more = " (the limit; there may be more)"
		}
		fmt.Fprintf(&b, "-- %d row(s)%s", len(r.Rows), more)
		if r.Cached {
			b.WriteString("; from dfd's query cache of an identical preview, nothing billed now")
		} else {
			fmt.Fprintf(&b, "; job %s: %s processed, %s billed", r.JobID, rows.FormatBytes(r.TotalBytesProcessed), rows.FormatBytes(r.TotalBytesBilled))
		}
	}
	if r.ConsoleURL != "" {
		b.WriteString("\n-- " + r.ConsoleURL)
	}
	return b.String()
}

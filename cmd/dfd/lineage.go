package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/sqlcheck"
)

// lineageJSON is `dfd lineage --json`: issue 14's shape, nested fields as
// dotted column paths.
type lineageJSON struct {
	Action  string              `json:"action"`
	Columns []lineageColumnJSON `json:"columns"`
}

type lineageColumnJSON struct {
	Name    string             `json:"name"`
	Type    string             `json:"type"`
	Direct  []lineageInputJSON `json:"direct"`
	Origins []lineageInputJSON `json:"origins"`
}

type lineageInputJSON struct {
	Table  string `json:"table"`
	Column string `json:"column"`
}

func runLineage(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet("lineage", env.stderr)
	actionName := fs.String("action", "", "the action whose columns to trace: name, schema.name or database.schema.name (required)")
	column := fs.String("column", "", "only this output column (a dotted path reaches a STRUCT field: s.id)")
	wf := addWarehouseFlags(fs, "offline metadata snapshot (JSON) with the warehouse tables' schemas; without it they come from BigQuery (cached), when credentials are found")
	metadata, offlineOnly, endpoint, credsFile := wf.metadata, wf.offline, wf.endpoint, wf.credentials
	asJSON := fs.Bool("json", false, `print {"action", "columns": [{"name", "type", "direct", "origins"}]}`)
	noJit := fs.Bool("no-jit", false, "do not run JiT actions' code to analyse the SQL it produces")
	timeout := fs.String("timeout", "", "time allowed for compilation, e.g. 30s, 2m (default 60s, as the CLI)")
	overrides := overrideFlags(fs)
	eng := addEngineFlags(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: dfd lineage [DIR] --action NAME [--column C] [--metadata FILE] [--offline] [--json]")
		fmt.Fprintln(env.stderr, "Compiles the project in DIR (default: the current directory), analyses its SQL with")
		fmt.Fprintln(env.stderr, "GoogleSQL as `dfd check` does, and prints, for each output column of the action,")
		fmt.Fprintln(env.stderr, "the columns its SQL reads (direct) and the warehouse columns their values come from")
		fmt.Fprintln(env.stderr, "through the project's own actions (origins). Nested fields are dotted paths.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(env.stderr, "dfd lineage: "+format+"\n", args...)
		return 1
	}
	switch {
	case len(pos) > 1:
		fmt.Fprintf(env.stderr, "dfd lineage: one project directory expected, got %d\n", len(pos))
		return 2
	case *actionName == "":
		fmt.Fprintln(env.stderr, "dfd lineage: --action NAME is required")
		return 2
	case *offlineOnly && (*endpoint != "" || *credsFile != ""):
		fmt.Fprintln(env.stderr, "dfd lineage: --offline and --endpoint/--credentials are mutually exclusive")
		return 2
	}
	dirArg := "."
	if len(pos) == 1 {
		dirArg = pos[0]
	}
	var d time.Duration
	if *timeout != "" {
		if d, err = parseDuration(*timeout); err != nil {
			fmt.Fprintf(env.stderr, "dfd lineage: --timeout: %v\n", err)
			return 2
		}
	}

	if err := eng.validate(); err != nil {
		fmt.Fprintf(env.stderr, "dfd lineage: %v\n", err)
		return 2
	}

	// GoogleSQL starts (≈150 ms) while the project compiles.
	gsqlReady := make(chan error, 1)
	go func() { gsqlReady <- gsql.Init() }()
	dir, err := filepath.Abs(dirArg)
	if err != nil {
		return fail("%v", err)
	}
	_, res, err := compileDir(ctx, env, dir, eng.engine, compile.Options{Overrides: overrides(), Timeout: d, Log: logTo(env.stderr), MemoryLimit: eng.limit()})
	if err != nil {
		return fail("%v", err)
	}
	if err := <-gsqlReady; err != nil {
		return fail("GoogleSQL: %v", err)
	}
	if n := len(res.Errors()); n > 0 {
		// The rest of the graph still has lineage; `dfd check` lists them.
		fmt.Fprintf(env.stderr, "dfd lineage: warning: the project has %d compilation error(s) (`dfd check` lists them)\n", n)
	}
	action, err := compile.FindAction(res.Graph, *actionName)
	if err != nil {
		return fail("%v", err)
	}
	defaultDB := res.Graph.GetProjectConfig().GetDefaultDatabase()
	target := action.Target.GetDatabase()
	if target == "" {
		target = defaultDB
	}
	target += "." + action.Target.GetSchema() + "." + action.Target.GetName()

	opts := sqlcheck.Options{
		Read: func(rel string) ([]byte, bool) {
			b, err := regfile.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			return b, err == nil
		},
		MetadataTimeout: 60 * time.Second,
		Lineage:         true,
	}
	source, closeSource, err := warehouseMetadata(ctx, env, dir, res, *metadata, *offlineOnly, *endpoint, *credsFile,
		"dfd lineage: warehouse tables have no schema: connecting to BigQuery: %v\n(pass --metadata FILE to use a snapshot, or --offline)\n")
	if err != nil {
		return fail("%v", err)
	}
	defer closeSource()
	if source != nil {
		opts.Metadata, opts.MissingIsCertain = source, *metadata == ""
		if !*noJit {
			opts.Jit, _ = runJitForCheck(ctx, env, dir, res, source)
		}
	}
	out, err := sqlcheck.Check(ctx, res.Graph, opts)
	if err != nil {
		return fail("%v", err)
	}
	cols, name, ok := out.ActionLineage(target)
	if !ok {
		return fail("%s has no column lineage: %s", target, whyNoLineage(out, action, target))
	}
	if *column != "" {
		l, ok := out.Column(name, *column)
		if !ok {
			var names []string
			for _, c := range cols {
				names = append(names, c.Name)
			}
			return fail("%s has no column %s (its columns: %s)", name, *column, strings.Join(names, ", "))
		}
		cols = []sqlcheck.ColumnLineage{l}
	}
	if *asJSON {
		doc := lineageJSON{Action: name, Columns: []lineageColumnJSON{}}
		for _, c := range cols {
			doc.Columns = append(doc.Columns, lineageColumnJSON{Name: c.Name, Type: c.Type.String(), Direct: inputsJSON(c.Direct), Origins: inputsJSON(c.Origins)})
			for _, why := range c.Unresolved {
				fmt.Fprintf(env.stderr, "dfd lineage: %s: not all of its lineage is known: %s\n", c.Name, why)
			}
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return fail("%v", err)
		}
		_, _ = env.stdout.Write(append(b, '\n'))
		return 0
	}
	printLineage(env.stdout, name, cols)
	return 0
}

// whyNoLineage says why the check has no lineage of an action: it has no
// output, or its SQL was not analysed (the check's finding says why).
func whyNoLineage(out *sqlcheck.Result, action compile.Action, target string) string {
	switch action.Kind {
	case compile.KindAssertion:
		return "an assertion outputs no table"
	case compile.KindOperation:
		return "an operation's output schema is not inferred"
	}
	if why, ok := out.WhyNotAnalysed(target); ok {
		return why
	}
	if action.JitCode != "" {
		return "its SQL comes from JiT code, which needs warehouse metadata to run (--metadata FILE, or BigQuery)"
	}
	return "dfd did not analyse its SQL"
}

func inputsJSON(ins []gsql.Input) []lineageInputJSON {
	out := []lineageInputJSON{}
	for _, in := range ins {
		out = append(out, lineageInputJSON{Table: in.Table, Column: in.Column})
	}
	return out
}

// printLineage prints each column, its direct inputs and origins, one a
// line; "(computed)" marks values computed from the input rather than
// its values unchanged.
func printLineage(w io.Writer, action string, cols []sqlcheck.ColumnLineage) {
	fmt.Fprintln(w, action)
	for _, c := range cols {
		fmt.Fprintf(w, "  %s %s\n", c.Name, c.Type)
		if len(c.Direct) == 0 && len(c.Unresolved) == 0 {
			fmt.Fprintln(w, "    computed from no column")
		}
		for _, group := range []struct {
			label string
			ins   []gsql.Input
		}{{"direct: ", c.Direct}, {"origin: ", c.Origins}} {
			for _, in := range group.ins {
				line := "    " + group.label + in.Table + "." + in.Column
				if !in.Identity {
					line += " (computed)"
				}
				fmt.Fprintln(w, line)
			}
		}
		for _, why := range c.Unresolved {
			fmt.Fprintln(w, "    unknown: "+why)
		}
	}
}

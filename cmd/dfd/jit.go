package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/bigquery"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// workerCommand starts `dfd worker` processes; nil means this executable.
// Tests point it at a built dfd binary, since their own executable is the
// test binary.
var workerCommand []string

// defaultJitTimeout is a JiT request's deadline, as the CLI flag.
const defaultJitTimeout = 30 * time.Second

func runJit(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet("jit", env.stderr)
	actionName := fs.String("action", "", "the JiT action: `name`, schema.name or database.schema.name (required)")
	metadata := fs.String("metadata", "", "offline metadata snapshot (JSON) that answers the JiT code's database calls; without it they go to BigQuery (cached, preview policy)")
	bq := addBigQueryFlags(fs)
	endpoint, credsFile := bq.endpoint, bq.credentials
	asJSON := fs.Bool("json", false, "print the JitCompilationResponse as protobuf JSON")
	jitTimeout := fs.String("jit-timeout", "", "deadline of the JiT compilation (default 30s)")
	timeout := fs.String("timeout", "", "deadline of the project's compilation (default 60s)")
	bqTimeout := fs.String("bigquery-timeout", "", "time limit of each BigQuery call, retries included (default $DFD_BIGQUERY_TIMEOUT, else 20s)")
	executionData := fs.Bool("execution-data", false, "give the JiT code a stand-in jctx.executionData (the CLI gives none)")
	maxBytes := fs.Int64("max-bytes-billed", 0, "byte cap for every query the JiT code runs (0: the default, 10 GiB)")
	unlimited := fs.Bool("unlimited-bytes-billed", false, "run the JiT code's read-only queries with no byte cap at all")
	overrides := overrideFlags(fs)
	eng := addEngineFlags(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: dfd jit [DIR] --action NAME [--metadata FILE | --endpoint URL --credentials FILE] [--json] [flags]")
		fmt.Fprintln(env.stderr, "Compiles the project, then runs one JiT action's jitCode in a dfd worker under")
		fmt.Fprintln(env.stderr, "the preview policy (nothing is deleted or changed) and prints the SQL it produces.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) > 1 || *actionName == "" {
		fs.Usage()
		return 2
	}
	dir := "."
	if len(pos) == 1 {
		dir = pos[0]
	}
	jitDeadline, compileDeadline, callTimeout := defaultJitTimeout, time.Duration(0), time.Duration(0)
	for _, d := range []struct {
		flag string
		val  string
		dst  *time.Duration
	}{{"--jit-timeout", *jitTimeout, &jitDeadline}, {"--timeout", *timeout, &compileDeadline}, {"--bigquery-timeout", *bqTimeout, &callTimeout}} {
		if d.val == "" {
			continue
		}
		if *d.dst, err = parseDuration(d.val); err != nil {
			fmt.Fprintf(env.stderr, "dfd jit: %s: %v\n", d.flag, err)
			return 2
		}
	}

	if err := eng.validate(); err != nil {
		fmt.Fprintf(env.stderr, "dfd jit: %v\n", err)
		return 2
	}

	// GoogleSQL, which the preview policy asks about every statement, starts
	// (≈150 ms) while the project compiles.
	gsqlReady := make(chan struct{})
	go func() { defer close(gsqlReady); _ = gsql.Init() }()
	defer func() { <-gsqlReady }()

	// The project's compile gets the ceiling `dfd compile` has by default.
	proj, res, err := compileDir(ctx, env, dir, eng.engine, compile.Options{Overrides: overrides(), Timeout: compileDeadline, Log: logTo(env.stderr), MemoryLimit: eng.limit()})
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd jit: %v\n", err)
		return 1
	}
	if errs := res.Errors(); len(errs) > 0 {
		fmt.Fprintln(env.stderr, "dfd jit: the project has compilation errors")
		printErrors(env.stderr, errs)
		return 1
	}
	action, err := compile.FindAction(res.Graph, *actionName)
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd jit: %v\n", err)
		return 1
	}
	var opts compile.JitOptions
	if *executionData {
		opts.ExecutionData = compile.PreviewExecutionData(action, time.Now())
	}
	req, err := compile.JitRequest(res.Graph, action, opts)
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd jit: %v\n", err)
		return 1
	}
	reqBytes, err := compile.EncodeJitRequest(req, res.GraphWire)
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd jit: %v\n", err)
		return 1
	}

	var source adapters.DbAdapter
	if *metadata != "" {
		snapshot, err := offline.Load(*metadata, offline.Options{DefaultDatabase: res.Graph.GetProjectConfig().GetDefaultDatabase()})
		if err != nil {
			fmt.Fprintf(env.stderr, "dfd jit: %v\n", err)
			return 1
		}
		source = snapshot
	} else {
		// BigQuery is opened on the JiT code's first database call: code
		// that makes none previews without credentials.
		bq := &lazyBigQuery{open: func(ctx context.Context) (*connect.Backend, error) {
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
				err = fmt.Errorf("connecting to BigQuery: %w\n(pass --metadata FILE to preview offline from a snapshot; see docs/bigquery.md)", err)
				fmt.Fprintf(env.stderr, "dfd jit: %v\n", err)
			}
			return backend, err
		}}
		defer bq.Close()
		source = bq
	}
	if *maxBytes < 0 {
		fmt.Fprintln(env.stderr, "dfd jit: --max-bytes-billed must not be negative (0: the default cap; --unlimited-bytes-billed: none)")
		return 2
	}
	if *unlimited {
		fmt.Fprintln(env.stderr, "warning: --unlimited-bytes-billed: the JiT code's queries run with no byte cap")
	}
	recorder := adapters.NewRecorder(policy.Policy{Mode: policy.Preview, MaxBytesBilled: *maxBytes, UnlimitedBytesBilled: *unlimited}.Wrap(source))

	pool, err := jit.NewPool(jit.PoolOptions{
		Root: proj.Root, BundlePath: res.Core.BundlePath, CoreVersion: res.Core.Version,
		Workers: 1, MinWorkers: 1, Timeout: jitDeadline, Command: workerCommand,
		Logger: slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd jit: %v\n", err)
		return 1
	}
	defer pool.Close()
	out, err := pool.Jit(ctx, jit.JitJob{Request: reqBytes, Timeout: jitDeadline, Log: logTo(env.stderr)},
		func(ctx context.Context, method string, req []byte) ([]byte, error) {
			return adapters.Dispatch(ctx, recorder, method, req)
		})
	calls := recorder.Calls()
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd jit: %s (%s): %v\n", action.Name(), action.FileName, err)
		printCalls(env.stderr, calls)
		return 1
	}
	var resp dataformpb.JitCompilationResponse
	if err := proto.Unmarshal(out.Response, &resp); err != nil {
		fmt.Fprintf(env.stderr, "dfd jit: decoding the JiT response: %v\n", err)
		return 1
	}
	if *asJSON {
		b, err := jitJSON(&resp)
		if err != nil {
			fmt.Fprintf(env.stderr, "dfd jit: %v\n", err)
			return 1
		}
		_, _ = env.stdout.Write(b)
	} else {
		printJitSQL(env.stdout, &resp)
	}
	fmt.Fprintf(env.stderr, "-- %s (%s): JiT-compiled in %s on a worker (engine %s), %d adapter call(s)\n",
		action.Name(), action.Kind, out.Stats.Total.Round(10*time.Microsecond), out.Stats.Run.Round(10*time.Microsecond), len(calls))
	printCalls(env.stderr, calls)
	return 0
}

// printJitSQL prints the SQL of a JiT response the way a user reads it:
// pre-operations, the query (and for incremental tables both variants),
// post-operations, each statement ending with a semicolon.
func printJitSQL(w io.Writer, resp *dataformpb.JitCompilationResponse) {
	section := func(title string, stmts ...string) {
		var kept []string
		for _, s := range stmts {
			if strings.TrimSpace(s) != "" {
				kept = append(kept, strings.TrimSpace(s))
			}
		}
		if len(kept) == 0 {
			return
		}
		fmt.Fprintf(w, "-- %s\n", title)
		for _, s := range kept {
			s = strings.TrimSuffix(s, ";")
			lines := strings.Split(s, "\n")
			if strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), "--") {
				s += "\n" // a trailing comment would swallow the semicolon
			}
			fmt.Fprintf(w, "%s;\n", s)
		}
		fmt.Fprintln(w)
	}
	table := func(prefix string, t *dataformpb.JitTableResult) {
		section(prefix+"pre_operations", t.GetPreOps()...)
		section(prefix+"query", t.GetQuery())
		section(prefix+"post_operations", t.GetPostOps()...)
	}
	switch r := resp.GetResponse().(type) {
	case *dataformpb.JitCompilationResponse_Table:
		table("", r.Table)
	case *dataformpb.JitCompilationResponse_IncrementalTable:
		table("", r.IncrementalTable.GetRegular())
		table("incremental ", r.IncrementalTable.GetIncremental())
	case *dataformpb.JitCompilationResponse_Operation:
		section("operation", r.Operation.GetQueries()...)
	case *dataformpb.JitCompilationResponse_Assertion:
		section("assertion", r.Assertion.GetQuery())
	default:
		fmt.Fprintln(w, "-- the JiT code produced no result")
	}
}

// printCalls lists the adapter calls, one line each; a statement that ran
// for real follows its line in full when the line cannot show all of it.
// Every text is shown with invisible characters made visible
// (adapters.Visible), so that what ran is what is shown.
func printCalls(w io.Writer, calls []adapters.Call) {
	for _, c := range calls {
		var tags []string
		if c.Cached {
			tags = append(tags, "cached")
		}
		if c.DryRun {
			tags = append(tags, "dry run")
		}
		tags = append(tags, c.Notes...)
		switch {
		case c.Error != "":
			tags = append(tags, adapters.Visible(c.Error)) // starts with the code
		case c.Code != "":
			tags = append(tags, string(c.Code))
		}
		extra := ""
		if len(tags) > 0 {
			extra = " [" + strings.Join(tags, "; ") + "]"
		}
		fmt.Fprintf(w, "--   %d. %s %s (%s)%s\n", c.Seq, c.Method, c.Summary, c.Duration.Round(time.Microsecond), extra)
		if c.Method == adapters.MethodExecute && !c.DryRun && !c.Cached && strings.Contains(strings.TrimSpace(c.Statement), "\n") {
			for line := range strings.Lines(strings.TrimSpace(c.Statement)) {
				fmt.Fprintf(w, "--        %s", line)
			}
			fmt.Fprintln(w)
		}
	}
}

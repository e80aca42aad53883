package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/sqlcheck"
)

// checkFinding is one line of `dfd check --json`: positions are 1-based,
// columns in UTF-16 code units (what editors and LSP count).
type checkFinding struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	Severity  string `json:"severity"`
	Message   string `json:"message"`
	Action    string `json:"action,omitempty"`
	Code      string `json:"code,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

func runCheck(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet("check", env.stderr)
	wf := addWarehouseFlags(fs, "offline metadata snapshot (JSON) with the warehouse tables' schemas; without it they come from BigQuery (cached), when credentials are found")
	metadata, offlineOnly, endpoint, credsFile := wf.metadata, wf.offline, wf.endpoint, wf.credentials
	report := addReportFlags(fs, true)
	verbose := fs.Bool("verbose", false, "also print the statements dfd did not analyse, and why (hints)")
	noJit := fs.Bool("no-jit", false, "do not run JiT actions' code to analyse the SQL it produces")
	timeout := fs.String("timeout", "", "time allowed for compilation, e.g. 30s, 2m (default 60s, as the CLI)")
	metadataTimeout := fs.String("metadata-timeout", "", "time allowed for BigQuery's metadata in all, e.g. 20s, 2m (default 60s): past it, BigQuery is reported as not answering")
	allowUnchecked := fs.Bool("allow-unchecked", false, "exit 0, not 3, when statements could not be checked (BigQuery did not answer, or no metadata): the causes are still printed")
	costOpts := addCostFlags(fs, "also print each action's bytes processed and cost for one run, from BigQuery's dry runs, and the project's totals")
	overrides := overrideFlags(fs)
	eng := addEngineFlags(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: dfd check [DIR] [--metadata FILE | --offline] [--allow-unchecked] [--format text|json|github|sarif] [--fail-on error|warning] [--cost] [compile flags]")
		fmt.Fprintln(env.stderr, "Compiles the project in DIR (default: the current directory) and analyses every")
		fmt.Fprintln(env.stderr, "action's SQL with GoogleSQL, BigQuery's analyzer, against the warehouse's schemas")
		fmt.Fprintln(env.stderr, "and the schemas the project's own actions produce. Prints")
		fmt.Fprintln(env.stderr, "  file:line:column: severity: message (action)")
		fmt.Fprintln(env.stderr, "(1-based; columns in UTF-16 code units), or JSON, GitHub annotations or SARIF")
		fmt.Fprintln(env.stderr, "(--format). Exit status: 0 clean; 1 errors (compilation errors included; with")
		fmt.Fprintln(env.stderr, "--fail-on warning, warnings too) or dfd failed; 2 usage; 3 could not check:")
		fmt.Fprintln(env.stderr, "statements were not analysed because BigQuery could not answer (credentials")
		fmt.Fprintln(env.stderr, "refused, unreachable, timed out) or there is no metadata (--offline without")
		fmt.Fprintln(env.stderr, "--metadata); each cause is printed first. --allow-unchecked makes that 0.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(pos) > 1 {
		fmt.Fprintf(env.stderr, "dfd check: one project directory expected, got %d\n", len(pos))
		return exitUsage
	}
	if err := report.resolve(); err != nil {
		fmt.Fprintf(env.stderr, "dfd check: %v\n", err)
		return exitUsage
	}
	asJSON := report.format == reportJSON
	dirArg := "."
	if len(pos) == 1 {
		dirArg = pos[0]
	}
	var d time.Duration
	if *timeout != "" {
		if d, err = parseDuration(*timeout); err != nil {
			fmt.Fprintf(env.stderr, "dfd check: --timeout: %v\n", err)
			return exitUsage
		}
	}
	mdTimeout := defaultMetadataTimeout
	if *metadataTimeout != "" {
		if mdTimeout, err = parseDuration(*metadataTimeout); err != nil {
			fmt.Fprintf(env.stderr, "dfd check: --metadata-timeout: %v\n", err)
			return exitUsage
		}
	}
	pricing, err := costOpts.pricing()
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd check: %v\n", err)
		return exitUsage
	}
	if *offlineOnly && (*endpoint != "" || *credsFile != "") {
		fmt.Fprintln(env.stderr, "dfd check: --offline and --endpoint/--credentials are mutually exclusive")
		return exitUsage
	}

	if err := eng.validate(); err != nil {
		fmt.Fprintf(env.stderr, "dfd check: %v\n", err)
		return 2
	}

	// GoogleSQL starts (≈150 ms) while the project compiles.
	gsqlReady := make(chan error, 1)
	go func() { gsqlReady <- gsql.Init() }()
	defer func() {
		select {
		case <-gsqlReady:
		default:
		}
	}()

	dir, err := filepath.Abs(dirArg)
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd check: %v\n", err)
		return 1
	}
	p, res, err := compileDir(ctx, env, dir, eng.engine, compile.Options{Overrides: overrides(), Timeout: d, Log: logTo(env.stderr), MemoryLimit: eng.limit()})
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd check: %v\n", err)
		return 1
	}
	if err := <-gsqlReady; err != nil {
		gsqlReady <- err
		fmt.Fprintf(env.stderr, "dfd check: GoogleSQL: %v\n", err)
		return 1
	}
	gsqlReady <- nil

	read := func(rel string) ([]byte, bool) {
		b, err := regfile.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		return b, err == nil
	}
	// The compile's own errors come first: they are errors too.
	findings := compileFindings(dir, p.SettingsFile, res, read)

	opts := sqlcheck.Options{
		Read: read,
	}
	// One budget for every metadata call of the check, JiT actions'
	// included: CI waits for BigQuery rather than skip, but not forever.
	mdDeadline := time.Now().Add(mdTimeout)
	wh, err := openCheckWarehouse(ctx, env, dir, res, *metadata, *offlineOnly, *endpoint, *credsFile, mdDeadline)
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd check: %v\n", err)
		return exitFindings
	}
	defer wh.close()
	if wh.source != nil {
		opts.Metadata, opts.MissingIsCertain = wh.source, *metadata == ""
	}
	// As in the editor, the SQL is analysed only in a graph without
	// compilation errors: core leaves broken actions out of it, and their
	// readers would be checked against tables missing only for now (with
	// BigQuery as the source, reported as not found).
	analyse := len(res.Errors()) == 0
	if !*noJit && opts.Metadata != nil && analyse {
		jitSQL, note := runJitForCheck(ctx, env, dir, res, opts.Metadata)
		opts.Jit = jitSQL
		if note != "" && *verbose {
			fmt.Fprintln(env.stderr, note)
		}
	}
	// What the JiT actions left of the budget; a spent one still lets the
	// check use what the cache holds.
	opts.MetadataTimeout = max(time.Until(mdDeadline), time.Millisecond)
	out := &sqlcheck.Result{}
	if analyse {
		if out, err = sqlcheck.Check(ctx, res.Graph, opts); err != nil {
			fmt.Fprintf(env.stderr, "dfd check: %v\n", err)
			return 1
		}
	} else {
		fmt.Fprintf(env.stderr, "dfd check: SQL not analysed: fix the project's %d compilation error(s) first\n", len(res.Errors()))
	}
	errorsSeen, warnings := len(res.Errors()), 0
	for _, f := range out.Findings {
		switch f.Severity {
		case sqlcheck.Error:
			errorsSeen++
		case sqlcheck.Warning:
			warnings++
		}
		findings = append(findings, checkFinding{
			File: f.File, Line: f.Line + 1, Column: f.Col + 1, EndLine: f.EndLine + 1, EndColumn: f.EndCol + 1,
			Severity: f.Severity.String(), Message: f.Headline(), Action: f.Action, Code: f.Code, Detail: f.Detail,
		})
	}
	// Why the check could not look comes first: it says what the rest is
	// worth. On stderr, so that --json's stdout stays the findings array.
	causes := wh.uncheckedCauses(out, mdTimeout)
	unchecked := 0
	for _, c := range causes {
		unchecked += c.statements
		fmt.Fprintf(env.stderr, "dfd check: %d statement(s) not checked: %s\n", c.statements, c.line)
	}
	if line := wh.staleLine(); line != "" {
		fmt.Fprintf(env.stderr, "dfd check: %s\n", line)
	}
	var cost *costReport
	if *costOpts.on {
		cost = estimateCosts(ctx, wh, res.Graph, opts.Jit, pricing, mdTimeout)
		if !cost.Available {
			fmt.Fprintf(env.stderr, "dfd check: cost not available: %s\n", cost.Reason)
		}
	}
	// The exit status first: SARIF's invocation records it.
	code := exitOK
	switch {
	case report.fails(errorsSeen, warnings):
		code = exitFindings
	case unchecked > 0 && !*allowUnchecked:
		code = exitUnchecked
	}
	// Why the check could not look is said in every format: in GitHub's
	// and SARIF's too, a green run must not hide it.
	causeLevel := "error"
	if *allowUnchecked {
		causeLevel = "warning"
	}
	switch report.format {
	case reportJSON:
		if findings == nil {
			findings = []checkFinding{}
		}
		// With --cost, one object: the findings and the cost.
		var v any = findings
		if cost != nil {
			v = struct {
				Findings []checkFinding `json:"findings"`
				Cost     *costReport    `json:"cost"`
			}{findings, cost}
		}
		if err := writeJSON(env.stdout, v); err != nil {
			fmt.Fprintf(env.stderr, "dfd check: %v\n", err)
			return 1
		}
	case reportGitHub:
		sortFindings(findings)
		printGitHub(env.stdout, findings, reportBase(dir), *verbose)
		for _, c := range causes {
			printGitHubNotice(env.stdout, causeLevel, "dfd check could not check", fmt.Sprintf("%d statement(s) not checked: %s", c.statements, c.line))
		}
		// The cost table is plain lines, which the runner shows as log.
		if cost != nil && cost.Available {
			printCost(env.stdout, cost)
		}
	case reportSARIF:
		sortFindings(findings)
		var notes []sarifNotification
		for _, c := range causes {
			notes = append(notes, sarifNotification{Level: causeLevel, Message: sarifText{fmt.Sprintf("%d statement(s) not checked: %s", c.statements, c.line)}})
		}
		if err := writeJSON(env.stdout, sarifReport(findings, reportBase(dir), *verbose, notes, code)); err != nil {
			fmt.Fprintf(env.stderr, "dfd check: %v\n", err)
			return 1
		}
		// SARIF has no place for it: on stderr, stdout stays the log.
		if cost != nil && cost.Available {
			printCost(env.stderr, cost)
		}
	default:
		printFindings(env.stdout, findings, *verbose)
		if cost != nil && cost.Available {
			printCost(env.stdout, cost)
		}
	}
	fmt.Fprintf(env.stderr, "dfd check: %d statement(s) analysed, %d not%s; %d error(s), %d warning(s)\n",
		out.Analysed, out.Skipped, map[bool]string{true: " (--verbose says why)", false: ""}[out.Skipped > 0 && !*verbose && !asJSON], errorsSeen, warnings)
	if n := syntaxSkipped(out); n > 0 {
		fmt.Fprintf(env.stderr, "dfd check: GoogleSQL's parser does not take %d of the statements not analysed, which BigQuery may run (--verbose says where)\n", n)
	}
	switch {
	case code == exitFindings:
	case unchecked > 0 && *allowUnchecked:
		fmt.Fprintf(env.stderr, "dfd check: %d statement(s) could not be checked; accepted (--allow-unchecked)\n", unchecked)
	case unchecked > 0:
		fmt.Fprintf(env.stderr, "dfd check: could not check %d statement(s) (exit status 3; --allow-unchecked accepts that)\n", unchecked)
	}
	return code
}

// syntaxSkipped counts the statements not analysed because GoogleSQL's
// parser does not take them (BigQuery may: see gsql's notYetInGoogleSQL).
func syntaxSkipped(out *sqlcheck.Result) int {
	n := 0
	for _, b := range out.NotAnalysed {
		if b.Cause == sqlcheck.CauseSyntax {
			n += b.Statements
		}
	}
	return n
}

// compileFindings are the compilation errors as findings, placed and
// worded as the editor shows them (daemon.CompileErrorDiagnostics). They
// name no action: the message does when it is about one.
func compileFindings(root, settingsRel string, res *compile.Result, read func(string) ([]byte, bool)) []checkFinding {
	errs := res.Errors()
	if len(errs) == 0 {
		return nil
	}
	var out []checkFinding
	for _, d := range daemon.CompileErrorDiagnostics(root, settingsRel, errs, read, res.Graph) {
		rel, err := filepath.Rel(root, d.Path)
		if err != nil {
			rel = d.Path
		}
		rel = filepath.ToSlash(rel)
		f := checkFinding{File: rel, Line: 1, Column: 1, EndLine: 1, EndColumn: 1, Severity: "error", Message: d.Message, Code: "compile"}
		if text, ok := read(rel); ok {
			l, c, el, ec := d.Range(source.NewMapper(text))
			f.Line, f.Column, f.EndLine, f.EndColumn = l+1, c+1, el+1, ec+1
		}
		out = append(out, f)
	}
	return out
}

func printFindings(w io.Writer, findings []checkFinding, hints bool) {
	sortFindings(findings)
	for _, f := range findings {
		if f.Severity == "hint" && !hints {
			continue
		}
		line := fmt.Sprintf("%s:%d:%d: %s: %s", f.File, f.Line, f.Column, f.Severity, f.Message)
		if f.Action != "" {
			line += " (" + f.Action + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// runJitForCheck runs every JiT action's code under the check policy
// (nothing billed runs: queries are answered from the query cache or as
// dry runs) and returns the responses whose database calls were all
// answered for real, by target; note says what was left out.
func runJitForCheck(ctx context.Context, env *cmdEnv, dir string, res *compile.Result, source adapters.DbAdapter) (map[string]*dataformpb.JitCompilationResponse, string) {
	var actions []compile.Action
	var left []string
	add := func(t *dataformpb.Target, code string) {
		if code == "" {
			return
		}
		a, err := compile.FindAction(res.Graph, adapters.TargetString(t))
		if err != nil {
			left = append(left, adapters.TargetString(t)+": "+err.Error())
			return
		}
		actions = append(actions, a)
	}
	for _, t := range res.Graph.GetTables() {
		add(t.GetTarget(), t.GetJitCode())
	}
	for _, o := range res.Graph.GetOperations() {
		add(o.GetTarget(), o.GetJitCode())
	}
	for _, a := range res.Graph.GetAssertions() {
		add(a.GetTarget(), a.GetJitCode())
	}
	if len(actions) == 0 {
		return nil, ""
	}
	pool, err := jit.NewPool(jit.PoolOptions{
		Root: dir, BundlePath: res.Core.BundlePath, CoreVersion: res.Core.Version,
		Workers: 1, MinWorkers: 1, Timeout: defaultJitTimeout, Command: workerCommand,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, fmt.Sprintf("dfd check: JiT actions are not analysed: %v", err)
	}
	defer pool.Close()
	out := map[string]*dataformpb.JitCompilationResponse{}
	for _, a := range actions {
		name := adapters.TargetString(a.Target)
		why := func() string {
			req, err := compile.JitRequest(res.Graph, a, compile.JitOptions{AllowDisabled: true, ExecutionData: compile.PreviewExecutionData(a, time.Now())})
			if err != nil {
				return err.Error()
			}
			enc, err := compile.EncodeJitRequest(req, res.GraphWire)
			if err != nil {
				return err.Error()
			}
			rec := adapters.NewRecorder(policy.Policy{Mode: policy.Check}.Wrap(source))
			got, err := pool.Jit(ctx, jit.JitJob{Request: enc, Timeout: defaultJitTimeout},
				func(ctx context.Context, method string, req []byte) ([]byte, error) {
					return adapters.Dispatch(ctx, rec, method, req)
				})
			if err != nil {
				return err.Error()
			}
			for _, c := range rec.Calls() {
				if c.Code != "" || c.Error != "" || c.DryRun {
					return "a database call was not answered for real (" + c.Method + ")"
				}
			}
			var resp dataformpb.JitCompilationResponse
			if err := proto.Unmarshal(got.Response, &resp); err != nil {
				return err.Error()
			}
			out[name] = &resp
			return ""
		}()
		if why != "" {
			left = append(left, name+": "+why)
		}
	}
	if len(left) == 0 {
		return out, ""
	}
	return out, "dfd check: JiT actions not analysed:\n  " + strings.Join(left, "\n  ")
}

// warehouseMetadata is where dfd check and dfd lineage read warehouse
// tables: the snapshot file when given, else BigQuery through the metadata
// cache unless offlineOnly. A failed connection is said on stderr
// (unconnected, a format for the error) and leaves no source: what needs no
// warehouse table still runs. closeFn releases the connection.
func warehouseMetadata(ctx context.Context, env *cmdEnv, dir string, res *compile.Result, snapshot string, offlineOnly bool, endpoint, credsFile, unconnected string) (md adapters.DbAdapter, closeFn func(), err error) {
	noop := func() {}
	defaultDB := res.Graph.GetProjectConfig().GetDefaultDatabase()
	if snapshot != "" {
		a, err := offline.Load(snapshot, offline.Options{DefaultDatabase: defaultDB})
		if err != nil {
			return nil, noop, err
		}
		return a, noop, nil
	}
	if offlineOnly {
		return nil, noop, nil
	}
	backend, err := connect.Open(ctx, connect.Config{
		Config: credentials.Config{
			Endpoint: endpoint, CredentialsFile: credsFile, ProjectDir: dir,
			DefaultProject: defaultDB, DefaultLocation: res.Graph.GetProjectConfig().GetDefaultLocation(),
			Getenv: env.getenv,
		},
		Log: func(format string, args ...any) { fmt.Fprintf(env.stderr, "warning: "+format+"\n", args...) },
	})
	if err != nil {
		fmt.Fprintf(env.stderr, unconnected, err)
		return nil, noop, nil
	}
	return backend.Cache, func() { backend.Close() }, nil
}

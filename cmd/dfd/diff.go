package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/drycost"
	"github.com/dfdtools/dfd/changes"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/sqlcheck"
)

// Exit status of dfd diff when it could not compare (git failed, a
// revision did not compile at all): CI must not take that for "nothing
// breaking".
const exitDiffFailed = 3

// diffFormats are --format's values.
var diffFormats = []string{"text", "markdown", "json", "github"}

func runDiff(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet("diff", env.stderr)
	projectDir := fs.String("project", ".", "the Dataform project's directory, inside a git repository")
	format := fs.String("format", "text", "output: text (a terminal summary), markdown (a pull-request comment), json (docs/diff.schema.json), github (GitHub Actions annotations on the changed lines)")
	failOn := fs.String("fail-on", "", "exit 1 when a change of this category or worse is found: breaking, non-breaking or metadata-only (default: never)")
	wf := addWarehouseFlags(fs, "offline metadata snapshot (JSON) with the warehouse tables' schemas, for both revisions; without it they come from BigQuery (cached), when credentials are found")
	metadata, offlineOnly, endpoint, credsFile := wf.metadata, wf.offline, wf.endpoint, wf.credentials
	noJit := fs.Bool("no-jit", false, "do not run JiT actions' code to analyse the SQL it produces")
	timeout := fs.String("timeout", "", "time allowed for each compilation, e.g. 30s, 2m (default 60s, as the CLI)")
	metadataTimeout := fs.String("metadata-timeout", "", "time allowed for BigQuery's metadata in all, e.g. 20s, 2m (default 60s)")
	costOpts := addCostFlags(fs, "also dry-run both revisions' actions in BigQuery and report what one run costs at BASE and at HEAD, and the actions whose figure changed")
	overrides := overrideFlags(fs)
	eng := addEngineFlags(fs, false) // revisions compile from git's objects, which only goja reads
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: dfd diff [BASE] [HEAD] [--project DIR] [--format text|markdown|json|github] [--fail-on breaking] [--metadata FILE | --offline] [--cost]")
		fmt.Fprintln(env.stderr, "Compiles the project at two git revisions and analyses both with GoogleSQL against the")
		fmt.Fprintln(env.stderr, "same warehouse metadata, then reports each action added, removed, renamed or changed:")
		fmt.Fprintln(env.stderr, "output columns, config, SQL changed in meaning or only in layout, and the downstream")
		fmt.Fprintln(env.stderr, "actions and columns that read what was removed, renamed or retyped. Each change is")
		fmt.Fprintln(env.stderr, "breaking, non-breaking or metadata-only. BASE defaults to the merge base with the")
		fmt.Fprintln(env.stderr, "default branch (origin/HEAD, else main, else master); HEAD to the working tree as saved.")
		fmt.Fprintln(env.stderr, "Nothing is checked out: revisions are read from git's objects. With --cost and BigQuery,")
		fmt.Fprintln(env.stderr, "both revisions are dry-run against the warehouse as it is now.")
		fmt.Fprintln(env.stderr, "Exit status: 0; 1 a change of --fail-on's category or worse; 2 usage; 3 could not compare.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	usageErr := func(format string, args ...any) int {
		fmt.Fprintf(env.stderr, "dfd diff: "+format+"\n", args...)
		return exitUsage
	}
	if len(pos) > 2 {
		return usageErr("at most two revisions expected (BASE and HEAD), got %d", len(pos))
	}
	if !contains(diffFormats, *format) {
		return usageErr("--format %q: want one of text, markdown, json, github", *format)
	}
	var failCat changes.Category
	if *failOn != "" {
		failCat = changes.Category(*failOn)
		if !contains([]string{string(changes.Breaking), string(changes.NonBreaking), string(changes.MetadataOnly)}, *failOn) {
			return usageErr("--fail-on %q: want breaking, non-breaking or metadata-only", *failOn)
		}
	}
	pricing, err := costOpts.pricing()
	if err != nil {
		return usageErr("%v", err)
	}
	if *offlineOnly && (*endpoint != "" || *credsFile != "") {
		return usageErr("--offline and --endpoint/--credentials are mutually exclusive")
	}
	var d time.Duration
	if *timeout != "" {
		if d, err = parseDuration(*timeout); err != nil {
			return usageErr("--timeout: %v", err)
		}
	}
	mdTimeout := defaultMetadataTimeout
	if *metadataTimeout != "" {
		if mdTimeout, err = parseDuration(*metadataTimeout); err != nil {
			return usageErr("--metadata-timeout: %v", err)
		}
	}
	if err := eng.validate(); err != nil {
		return usageErr("%v", err)
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(env.stderr, "dfd diff: "+format+"\n", args...)
		return exitDiffFailed
	}

	gsqlReady := make(chan error, 1)
	go func() { gsqlReady <- gsql.Init() }()
	defer func() {
		select {
		case <-gsqlReady:
		default:
		}
	}()

	dir, err := filepath.Abs(*projectDir)
	if err != nil {
		return fail("%v", err)
	}
	p, err := project.Open(dir)
	if err != nil {
		return fail("%v", err)
	}
	dir = p.Root
	repo, err := openGitRepo(ctx, dir)
	if err != nil {
		return fail("%v", err)
	}
	var baseRev, headRev string
	if len(pos) > 0 {
		baseRev = pos[0]
	}
	if len(pos) > 1 {
		headRev = pos[1]
	}
	var baseCommit, baseLabel string
	if baseRev == "" {
		baseCommit, baseLabel, err = repo.defaultBase(ctx)
	} else {
		baseCommit, baseLabel, err = repo.resolve(ctx, baseRev)
	}
	if err != nil {
		return fail("%v", err)
	}
	opts := compile.Options{Overrides: overrides(), Timeout: d, Log: logTo(env.stderr), MemoryLimit: eng.limit()}

	// Head first: its graph names the default project the metadata
	// source needs.
	var head, base *diffSide
	if headRev == "" {
		head, err = compileWorkTree(ctx, env, p, opts)
	} else {
		var commit, label string
		if commit, label, err = repo.resolve(ctx, headRev); err == nil {
			head, err = compileCommit(ctx, env, repo, dir, commit, label, opts)
		}
	}
	if err != nil {
		return fail("HEAD: %v", err)
	}
	if base, err = compileCommit(ctx, env, repo, dir, baseCommit, baseLabel, opts); err != nil {
		return fail("BASE: %v", err)
	}
	if err := <-gsqlReady; err != nil {
		gsqlReady <- err
		return fail("GoogleSQL: %v", err)
	}
	gsqlReady <- nil

	wh, err := openCheckWarehouse(ctx, env, dir, head.res, *metadata, *offlineOnly, *endpoint, *credsFile, time.Now().Add(mdTimeout))
	if err != nil {
		return fail("%v", err)
	}
	defer wh.close()
	if wh.connectErr != nil {
		fmt.Fprintf(env.stderr, "dfd diff: warehouse tables have no schema: connecting to BigQuery: %v\n(pass --metadata FILE to use a snapshot, or --offline)\n", wh.connectErr)
	}
	// One checker for both sides: a statement the change left alone,
	// reading tables whose schemas it left alone, is analysed once (the
	// checker remembers analyses by all they depend on).
	checker := sqlcheck.NewChecker()
	for _, s := range []*diffSide{base, head} {
		if err := s.analyse(ctx, env, checker, dir, wh.source, *metadata == "", !*noJit, mdTimeout); err != nil {
			return fail("%s: %v", s.rev.Label, err)
		}
	}
	rep, err := changes.Compare(ctx, base.rev, head.rev)
	if err != nil {
		return fail("%v", err)
	}
	rep.Notes = append(append(append([]string{}, base.notes...), head.notes...), rep.Notes...)
	var cost *drycost.Comparison
	if *costOpts.on {
		cost = diffCosts(ctx, wh, base, head, pricing, mdTimeout)
		if !cost.Available {
			fmt.Fprintf(env.stderr, "dfd diff: cost not available: %s\n", cost.Reason)
		}
	}
	if err := writeDiff(env.stdout, rep, cost, *format, repo.prefix); err != nil {
		return fail("%v", err)
	}
	if *format != "json" {
		for _, n := range rep.Notes {
			fmt.Fprintf(env.stderr, "dfd diff: note: %s\n", n)
		}
	}
	if failCat != "" && failsOn(rep, failCat) {
		return exitFindings
	}
	return exitOK
}

// failsOn says whether rep has a change of category c or a worse one.
func failsOn(rep *changes.Report, c changes.Category) bool {
	limit := 0
	for i, k := range changes.Categories {
		if k == c {
			limit = i
		}
	}
	for i, k := range changes.Categories {
		if i <= limit && rep.Has(k) {
			return true
		}
	}
	return false
}

// diffSide is one revision compiled, then analysed.
type diffSide struct {
	rev   changes.Revision
	res   *compile.Result
	jit   map[string]*dataformpb.JitCompilationResponse // the SQL its JiT actions produced
	notes []string
}

// diffCosts dry-runs both sides' actions with one service, so that a
// statement the change left alone is dry-run once.
func diffCosts(ctx context.Context, wh *checkWarehouse, base, head *diffSide, p drycost.Pricing, timeout time.Duration) *drycost.Comparison {
	svc, reason := costService(wh)
	if svc == nil {
		return drycost.NotComparable(reason, p)
	}
	defer svc.Close()
	side := func(s *diffSide) *drycost.Report {
		switch {
		case s.res == nil: // no project at this revision: nothing runs
			return estimateWith(ctx, svc, &dataformpb.CompiledGraph{}, nil, p, timeout)
		case len(s.res.Errors()) > 0:
			return drycost.NotAvailable(s.rev.Label+" has compilation errors: its actions are not all in the graph", p)
		}
		return estimateWith(ctx, svc, s.res.Graph, s.jit, p, timeout)
	}
	return drycost.Compare(side(base), side(head), p)
}

// compileWorkTree compiles the project as saved on disk.
func compileWorkTree(ctx context.Context, env *cmdEnv, p *project.Project, opts compile.Options) (*diffSide, error) {
	core, err := resolveCore(ctx, env, p)
	if err != nil {
		return nil, err
	}
	res, _, err := compileWith(ctx, env, p, core, opts, engineGoja)
	if err != nil {
		return nil, err
	}
	read := func(rel string) ([]byte, bool) {
		b, err := regfile.ReadFile(filepath.Join(p.Root, filepath.FromSlash(rel)))
		return b, err == nil
	}
	return &diffSide{rev: changes.Revision{Label: "working tree", Graph: res.Graph, Read: read}, res: res}, nil
}

// compileCommit compiles the project as of commit, from git's objects:
// the user's tree is not touched.
func compileCommit(ctx context.Context, env *cmdEnv, repo *gitRepo, root, commit, label string, opts compile.Options) (*diffSide, error) {
	tree, err := repo.readTree(ctx, commit)
	if err != nil {
		return nil, err
	}
	side := &diffSide{rev: changes.Revision{Label: label, Read: tree.read}}
	for _, s := range tree.skipped {
		side.notes = append(side.notes, label+": "+s+" is not a regular file in git (a symbolic link or a submodule): not compiled")
	}
	p, ok, err := treeProject(root, tree)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	if !ok {
		// No project there yet: every action of the other side is new.
		side.rev.Graph = &dataformpb.CompiledGraph{}
		side.notes = append(side.notes, label+": no Dataform project in "+repo.prefixOrRoot()+" at this revision")
		return side, nil
	}
	core, err := resolveCore(ctx, env, p)
	if err != nil {
		return nil, err
	}
	opts.Files = gitFiles{tree}
	opts.FilePaths = tree.filePaths()
	res, _, err := compileWith(ctx, env, p, core, opts, engineGoja)
	if err != nil {
		return nil, err
	}
	side.rev.Graph, side.res = res.Graph, res
	return side, nil
}

func (r *gitRepo) prefixOrRoot() string {
	if r.prefix == "" {
		return "the repository's root"
	}
	return r.prefix
}

// analyse runs GoogleSQL over the side's graph, with lineage, as dfd
// check does; a graph with compilation errors is not analysed (core
// leaves broken actions out of it).
func (s *diffSide) analyse(ctx context.Context, env *cmdEnv, checker *sqlcheck.Checker, dir string, source adapters.DbAdapter, missingIsCertain, runJit bool, mdTimeout time.Duration) error {
	if s.res == nil {
		s.rev.Check = &sqlcheck.Result{}
		return nil
	}
	if n := len(s.res.Errors()); n > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%s has %d compilation error(s) (`dfd check` lists them): its SQL is not analysed", s.rev.Label, n))
		return nil
	}
	opts := sqlcheck.Options{Read: s.rev.Read, Lineage: true, MetadataTimeout: mdTimeout}
	if source != nil {
		opts.Metadata, opts.MissingIsCertain = source, missingIsCertain
		if runJit {
			opts.Jit, _ = runJitForCheck(ctx, env, dir, s.res, source)
			s.jit = opts.Jit
		}
	}
	out, err := checker.Check(ctx, s.res.Graph, opts)
	if err != nil {
		return err
	}
	s.rev.Check = out
	return nil
}

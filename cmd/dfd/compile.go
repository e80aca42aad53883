package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/heapwatch"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/nodeworker"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// overrideFlags registers the project-config override flags of
// `dataform compile` on fs.
func overrideFlags(fs *flag.FlagSet) func() compile.Overrides {
	var o compile.Overrides
	var vars string
	fs.StringVar(&o.DefaultDatabase, "default-database", "", "override the default database (Google Cloud project ID)")
	fs.StringVar(&o.DefaultSchema, "default-schema", "", "override the default schema (dataset)")
	fs.StringVar(&o.DefaultLocation, "default-location", "", "override the default BigQuery location")
	fs.StringVar(&o.AssertionSchema, "assertion-schema", "", "override the default assertion schema")
	fs.StringVar(&o.DatabaseSuffix, "database-suffix", "", "suffix appended to database names")
	fs.StringVar(&o.SchemaSuffix, "schema-suffix", "", "suffix appended to schema names (letters, digits, _)")
	fs.StringVar(&o.TablePrefix, "table-prefix", "", "prefix added to table names")
	fs.StringVar(&vars, "vars", "", "variables, as `key=value,key2=value2`")
	fs.BoolVar(&o.DisableAssertions, "disable-assertions", false, "disable all assertions, built-in and manual")
	fs.StringVar(&o.DefaultReservation, "default-reservation", "", "default BigQuery reservation")
	return func() compile.Overrides {
		o.Vars = compile.ParseVars(vars)
		return o
	}
}

func runCompile(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet("compile", env.stderr)
	asJSON := fs.Bool("json", false, "print the compiled graph as JSON, as `dataform compile --json` does")
	dot := fs.Bool("dot", false, "print the compiled graph in Graphviz dot, as `dataform compile --dot` does")
	watch := fs.Bool("watch", false, "compile and print again whenever a file of the project changes, until interrupted")
	timeout := fs.String("timeout", "", "time allowed for compilation, e.g. 30s, 2m (default 60s, as the CLI)")
	quiet := fs.Bool("quiet", false, "less output: counts instead of lists, errors without their stacks")
	verbose := fs.Bool("verbose", false, "say which @dataform/core and engine compile the project (on stderr)")
	var outActions, outTags listFlag
	fs.Var(&outActions, "output-actions", "print only these `actions` (name or database.schema.name; comma-separated, or one per argument)")
	fs.Var(&outTags, "output-tags", "print only the actions that have one of these `tags`")
	includeDeps := fs.Bool("output-include-deps", false, "with --output-actions or --output-tags: also print the selected actions' dependencies")
	includeDependents := fs.Bool("output-include-dependents", false, "with --output-actions or --output-tags: also print the selected actions' dependents (downstream)")
	showVersion := fs.Bool("version", false, "print dfd's version")
	eng := addEngineFlags(fs, true)
	overrides := overrideFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: dfd compile [DIR] [flags]")
		fmt.Fprintln(env.stderr, "Compiles the Dataform project in DIR (default: the current directory), as `dataform compile` does.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, expandArrayFlags(args, "output-actions", "output-tags"))
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		return runVersion(ctx, env, nil)
	}
	if len(pos) > 1 {
		fmt.Fprintf(env.stderr, "dfd compile: one project directory expected, got %d\n", len(pos))
		return 2
	}
	dirArg := "."
	if len(pos) == 1 {
		dirArg = pos[0]
	}
	var d time.Duration
	if *timeout != "" {
		if d, err = parseDuration(*timeout); err != nil {
			fmt.Fprintf(env.stderr, "dfd compile: --timeout: %v\n", err)
			return 2
		}
	}
	if err := eng.validate(); err != nil {
		fmt.Fprintf(env.stderr, "dfd compile: %v\n", err)
		return 2
	}

	// The CLI's checks of its arguments, in its order, with its messages.
	out := newCLIOut(env)
	dir, err := project.CLIProjectDir(dirArg)
	if err != nil {
		out.fatal(err)
		return 1
	}
	o := overrides()
	for _, c := range []struct {
		bad bool
		msg string
	}{
		{*asJSON && *dot, "Arguments --json and --dot are mutually exclusive."},
		{*includeDeps && !outActions.given && !outTags.given, "The --output-include-deps flag should only be supplied along with --output-actions or --output-tags."},
		{*includeDependents && !outActions.given && !outTags.given, "The --output-include-dependents flag should only be supplied along with --output-actions or --output-tags."},
		{*quiet && *verbose, "Arguments --verbose and --quiet are mutually exclusive."},
		{o.SchemaSuffix != "" && !validSchemaSuffix(o.SchemaSuffix), "--schema-suffix should contain only alphanumeric characters and/or underscores."},
	} {
		if c.bad {
			out.fatal(errors.New(c.msg))
			return 1
		}
	}

	format := formatSummary
	switch {
	case *asJSON:
		format = formatJSON
	case *dot:
		format = formatDot
	}
	sel := outputSelection{actions: outActions.values, tags: outTags.values, includeDeps: *includeDeps, includeDepsOf: *includeDependents}
	opts := compile.Options{Overrides: o, Timeout: d, Log: logTo(env.stderr), MemoryLimit: eng.limit()}
	// compileAndPrint reports whether the graph had compilation errors, and
	// whether the compile failed altogether (the error is printed).
	compileAndPrint := func() (hadErrors, failed bool) {
		if format == formatSummary {
			out.print("Compiling...\n")
		}
		res, err := compileForCLI(ctx, env, dir, opts, eng.engine, *verbose)
		if err == nil {
			hadErrors, err = printCompiled(out, res, format, *quiet, sel, interactiveStdout(env))
		}
		if err != nil {
			if ctx.Err() == nil { // else interrupted (--watch): nothing to say
				out.fatal(err)
			}
			return false, true
		}
		return hadErrors, false
	}
	hadErrors, failed := compileAndPrint()
	if failed || !*watch {
		if failed || hadErrors {
			return 1
		}
		return 0
	}
	return watchProject(ctx, out, dir, func() { compileAndPrint() })
}

// compileForCLI compiles the project in dir (as the CLI's compile would
// find it) for `dfd compile`: with the CLI's checks of the project and of
// its core first.
func compileForCLI(ctx context.Context, env *cmdEnv, dir string, opts compile.Options, engineName string, verbose bool) (*compile.Result, error) {
	p, err := project.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := project.CheckForCLI(dir, p); err != nil {
		return nil, err
	}
	core, err := resolveCore(ctx, env, p)
	if err != nil {
		return nil, err
	}
	if err := compile.CheckCLICore(core); err != nil {
		return nil, err
	}
	if verbose && core.FromCache {
		// The CLI says how it set up the core of a dataformCoreVersion
		// project (a copy of the project, npm there); dfd's equivalent is
		// its cache, installed into once.
		how := "installed there before"
		if core.Installed {
			how = "installed there now"
		}
		fmt.Fprintf(env.stderr, "Using isolated environment for @dataform/core@%s\n", core.Version)
		fmt.Fprintf(env.stderr, "Using dfd's cache, not a copy of the project: %s (%s)\n", core.Dir, how)
	}
	start := time.Now()
	res, used, err := compileWith(ctx, env, p, core, opts, engineName)
	if verbose && core.FromCache && err == nil {
		fmt.Fprintf(env.stderr, "Compiled on the %s engine in %dms\n", used, time.Since(start).Milliseconds())
	}
	return res, err
}

// minMemoryLimit is the smallest --memory-limit: core's bundle alone needs
// tens of MiB, and nodeworker.HeapFlag gives V8 no less.
const minMemoryLimit = 64 << 20

// engineFlags are how a command compiles the project: --engine (when the
// command can compile on either engine) and --memory-limit. Every command
// that compiles has them: a project too big for the default ceiling on
// one engine may fit on the other, and the memory error names the flag.
type engineFlags struct {
	engine string
	memory byteSize
}

// addEngineFlags registers the flags on fs; without choose, the command
// compiles on goja and has only --memory-limit.
func addEngineFlags(fs *flag.FlagSet, choose bool) *engineFlags {
	e := &engineFlags{engine: engineGoja, memory: byteSize(jit.DefaultMemoryLimit)}
	if choose {
		fs.StringVar(&e.engine, "engine", engineAuto, "JavaScript engine: goja (in process), node (a Node.js ≥ 20 worker, sandboxed; faster on large projects), "+
			"or auto (node for projects of "+fmt.Sprint(daemon.DefaultNodeMinFiles)+" source files or more when node is installed, else goja)")
	}
	fs.Var(&e.memory, "memory-limit", "the heap `size` above which the compile fails with an error, as dfd's workers have a ceiling "+
		"(e.g. 512MiB, 2GiB; 0: none)")
	return e
}

// validate checks the flags' values, as a usage error.
func (e *engineFlags) validate() error {
	if e.memory != 0 && e.memory < minMemoryLimit {
		return fmt.Errorf("--memory-limit: %s is below the smallest ceiling, %s (0: none)", e.memory, byteSize(minMemoryLimit))
	}
	if e.engine != engineGoja && e.engine != engineNode && e.engine != engineAuto {
		return fmt.Errorf("--engine: %q is not an engine (goja, node, auto)", e.engine)
	}
	return nil
}

// limit is compile.Options.MemoryLimit.
func (e *engineFlags) limit() int64 { return int64(e.memory) }

// Engines of `dfd compile --engine`.
const (
	engineGoja = daemon.EngineGoja
	engineNode = daemon.EngineNode
	engineAuto = daemon.EngineAuto
)

// compileDir opens the project in dir, resolves its core and compiles it
// on the engine named by --engine.
func compileDir(ctx context.Context, env *cmdEnv, dir, engineName string, opts compile.Options) (*project.Project, *compile.Result, error) {
	p, err := project.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	core, err := resolveCore(ctx, env, p)
	if err != nil {
		return nil, nil, err
	}
	res, _, err := compileWith(ctx, env, p, core, opts, engineName)
	return p, res, err
}

// resolveCore finds (installing it if need be) the core p compiles with;
// progress goes to stderr.
func resolveCore(ctx context.Context, env *cmdEnv, p *project.Project) (*project.Core, error) {
	resolver := &project.CoreResolver{Log: func(format string, args ...any) {
		fmt.Fprintf(env.stderr, format+"\n", args...)
	}}
	return resolver.Resolve(ctx, p)
}

// compileWith compiles p with core on the engine named by --engine, and
// says which engine that was.
func compileWith(ctx context.Context, env *cmdEnv, p *project.Project, core *project.Core, opts compile.Options, engineName string) (*compile.Result, string, error) {
	if opts.FilePaths == nil {
		// Listed once, here, for every engine: the compile uses this list,
		// and the files it leaves out are said on stderr (never on stdout,
		// whose --json graph stays the CLI's).
		paths, skipped, err := p.ListFiles()
		if err != nil {
			return nil, engineName, fmt.Errorf("listing project files: %w", err)
		}
		warnSkipped(env, skipped)
		opts.FilePaths = paths
	}
	auto := engineName == engineAuto
	if auto {
		// Whether node is installed is asked only when the choice is node:
		// running `node --version` is 4 ms of a small project's 0.15 s.
		engineName = daemon.AutoEngine(p.Root, opts.FilePaths, core.BundlePath)
		if engineName == engineNode && !nodeworker.Available() {
			engineName = engineGoja
		}
	}
	start := time.Now()
	// What auto learns for next time (daemon.AutoEngine).
	learn := func(err error) {
		if auto && err == nil {
			daemon.RecordCompile(p.Root, engineName, time.Since(start))
		}
	}
	if engineName == engineNode {
		res, err := compileWithNode(ctx, env, p, core, opts)
		learn(err)
		return res, engineName, err
	}
	if opts.MemoryLimit > 0 {
		// The compile runs in this process: give it the collector settings
		// of a goja worker, which the heap ceiling relies on.
		heapwatch.SetLimits(jit.DefaultGCPercent, jit.DefaultSoftMemoryLimit, opts.MemoryLimit)
		if opts.MemoryLimit >= 2*jit.DefaultSoftMemoryLimit {
			// Unlike a worker's, this process's heap starts empty for one
			// compile: it is collected only as it nears the soft limit,
			// not each time it grows by GOGC. A small project then is not
			// collected at all (marketing_analytics_jumpstart: -10 ms of
			// 0.14 s, -30 ms CPU, peak RSS +20 MB), and a large one is
			// collected by the soft limit either way. Garbage still never
			// reaches the ceiling, twice the soft limit or more. What
			// follows the compile (dfd check's analysis) gets GOGC back.
			prev := debug.SetGCPercent(-1)
			defer debug.SetGCPercent(prev)
		}
	}
	res, err := compile.Run(ctx, p, core, opts)
	learn(err)
	return res, engineName, err
}

// warnSkipped says on stderr which project files are not compiled because
// they are not regular files (project.ListFiles).
func warnSkipped(env *cmdEnv, skipped []project.SkippedFile) {
	for _, f := range skipped {
		fmt.Fprintf(env.stderr, "dfd: warning: %s; skipped\n", f)
	}
}

// compileWithNode compiles p on one Node.js worker (package jit/nodeworker)
// through a worker pool, as the daemon would.
func compileWithNode(ctx context.Context, env *cmdEnv, p *project.Project, core *project.Core, opts compile.Options) (*compile.Result, error) {
	node, _, err := nodeworker.FindNode()
	if err != nil {
		return nil, err
	}
	cacheDir, err := project.CacheDir()
	if err != nil {
		return nil, err
	}
	script, err := nodeworker.WriteScript(cacheDir)
	if err != nil {
		return nil, err
	}
	paths := opts.FilePaths
	if paths == nil {
		if paths, err = p.FilePaths(); err != nil {
			return nil, fmt.Errorf("listing project files: %w", err)
		}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = compile.DefaultTimeout
	}
	req, err := compile.Request(p.Root, paths, opts.Overrides, timeout)
	if err != nil {
		return nil, err
	}
	// The ceiling of a goja worker, as dfd serve gives its Node workers:
	// V8's own (nodeworker.HeapFlag), and the worker's check as a request
	// ends (MemoryLimit).
	command := nodeworker.CommandFor(node, script, p.Root, core.BundlePath)
	memoryLimit := int64(-1)
	if opts.MemoryLimit > 0 {
		memoryLimit = opts.MemoryLimit
		last := len(command) - 1
		command = append(append(command[:last:last], nodeworker.HeapFlag(opts.MemoryLimit)), command[last])
	}
	pool, err := jit.NewPool(jit.PoolOptions{
		Root:        p.Root,
		BundlePath:  core.BundlePath,
		CoreVersion: core.Version,
		Workers:     1,
		Spares:      1,
		Timeout:     timeout,
		MemoryLimit: memoryLimit,
		Command:     command,
		Logger:      slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	start := time.Now()
	out, err := pool.Compile(ctx, jit.CompileJob{Request: req, Timeout: timeout, Log: opts.Log})
	if err != nil {
		var crash *jit.CrashError
		switch {
		case errors.Is(err, engine.ErrTimeout):
			return nil, &compile.TimeoutError{Timeout: timeout}
		case opts.MemoryLimit > 0 && errors.Is(err, jit.ErrMemoryLimit),
			// V8 aborts the process at --max-old-space-size; what it
			// prints then is a native stack trace, not for the user.
			opts.MemoryLimit > 0 && errors.As(err, &crash) && nodeworker.OutOfMemory(crash.LastStderr):
			return nil, &compile.MemoryLimitError{Limit: opts.MemoryLimit}
		case ctx.Err() == nil:
			// A damaged bundle.js is a bare SyntaxError in V8: say what it
			// is and how to reinstall core, as the goja engine does.
			if cerr := compile.CheckCore(core, p.Root); cerr != nil {
				return nil, cerr
			}
		}
		return nil, err
	}
	res, err := compile.Decode(out.Response)
	if err != nil {
		return nil, err
	}
	res.Core = core
	res.Prepare = out.Stats.Prepare
	res.Run = time.Since(start)
	return res, nil
}

func logTo(w io.Writer) func(level, msg string) {
	return func(level, msg string) {
		if level == "log" || level == "info" {
			fmt.Fprintln(w, msg)
			return
		}
		fmt.Fprintf(w, "[%s] %s\n", level, msg)
	}
}

func validSchemaSuffix(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// parseDuration accepts Go durations ("90s", "2m") and, as the CLI's
// parse-duration does, a bare number of milliseconds and "d" for days.
func parseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	var n float64
	if _, err := fmt.Sscanf(s, "%g", &n); err == nil && fmt.Sprint(n) == s {
		return time.Duration(n * float64(time.Millisecond)), nil
	}
	if strings.HasSuffix(s, "d") {
		var days float64
		if _, err := fmt.Sscanf(strings.TrimSuffix(s, "d"), "%g", &days); err == nil {
			return time.Duration(days * 24 * float64(time.Hour)), nil
		}
	}
	return 0, fmt.Errorf("cannot parse %q as a duration (examples: 30s, 2m, 1h)", s)
}

func colorOn(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func paint(w io.Writer, code int, s string) string {
	if !colorOn(w) {
		return s
	}
	return fmt.Sprintf("\x1b[%dm%s\x1b[0m", code, s)
}

const (
	red  = 91
	cyan = 36
)

func printErrors(w io.Writer, errs []*dataformpb.CompilationError) {
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %s\n", paint(w, red, "Compilation errors:"))
	for _, e := range errs {
		fmt.Fprintf(w, "  %s: %s\n", paint(w, cyan, e.GetFileName()), paint(w, red, e.GetMessage()))
	}
}

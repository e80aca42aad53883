// Command dfd is a language-server daemon and command-line tool for Dataform.
//
//	dfd compile [DIR] [--json]   compile a project (drop-in for `dataform compile`)
//
// Run `dfd help` for every command.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit"
)

// version and commit are set at build time (scripts/release.sh):
// -ldflags "-X main.version=… -X main.commit=…". A binary built by
// `go install …/cmd/dfd@vX` without them takes the module's version from
// its build information (buildVersion).
var (
	version = "dev"
	commit  = ""
)

func init() { version, commit = buildVersion(version, commit) }

// buildVersion fills what -ldflags left unset from the binary's build
// information: the main module's version (set by `go install …@vX`) and
// the VCS revision (when built with -buildvcs).
func buildVersion(v, c string) (string, string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v, c
	}
	if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if c == "" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				c = s.Value
			}
		}
	}
	return v, c
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cmdEnv, args []string) int
}

// cmdEnv is what a command may touch of the process, so tests can run
// commands in-process.
type cmdEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

func commands() []command {
	return []command{
		{"check", "Analyse every action's SQL with GoogleSQL, BigQuery's analyzer: unknown columns and tables, type errors (for CI)", runCheck},
		{"compile", "Compile a Dataform project; --json prints the graph like `dataform compile --json`", runCompile},
		{"diff", "Review a change: what a branch does to each action, its columns and its readers downstream (breaking, non-breaking, metadata-only)", runDiff},
		{"format", "Format the SQL of .sqlx files with GoogleSQL's formatter; --check for CI", runFormat},
		{"jit", "Preview the SQL a JiT action produces (runs its jitCode under the preview policy)", runJit},
		{"lineage", "Column-level lineage of an action: each column's direct inputs and its warehouse origins", runLineage},
		{"metadata", "BigQuery metadata: snapshot (offline file), refresh, status, clear the cache", runMetadata},
		{"rows", "Preview an action's data from BigQuery: its query's rows, or its built table's (--table)", runRows},
		{"serve", "Run the Dataform language server (LSP) on stdin/stdout", runServe},
		{"version", "Print dfd's version", runVersion},
		{"worker", "Serve compile and JiT requests for dfd's worker pool (started by dfd itself)", runWorker},
	}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	stop := exitOnSignal(cancel, signalGrace, func(code int) {
		jit.KillWorkers()
		os.Exit(code)
	})
	env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	code := run(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}

// signalGrace is how long a command has, after SIGINT or SIGTERM, to
// return by itself before the process exits anyway. A command that
// watches its context returns in tens of milliseconds (workers stopped
// included); 750 ms leaves room for that on a loaded machine and still
// ends the process within the second dfd promises.
const signalGrace = 750 * time.Millisecond

// exitOnSignal makes SIGINT and SIGTERM end the process within grace,
// whatever the command is doing.
//
// The first signal cancels the command's context (cancel): every command
// watches it between steps, stops its workers and returns with its own
// status (`dfd compile --watch` returns 1, as the CLI does). But a command
// may be blocked where no context reaches: in a system call (a read from a
// terminal, a named pipe, a hung network file system), in JavaScript that
// does not return. So if the command has not returned grace after the
// signal, or at a second signal, exit is called with the shell's status
// for death by that signal, 128+n: 130 for SIGINT, 143 for SIGTERM.
// main's exit first kills the worker processes the command started
// (jit.KillWorkers: on Linux they would die with dfd through Pdeathsig;
// elsewhere nothing else ends them). Deferred cleanups of the command do
// not run then; what dfd writes survives that (the metadata cache is
// crash-safe, files are replaced by rename).
//
// The returned stop ends the watch: call it once the command returned,
// so a late signal cannot race its exit status.
func exitOnSignal(cancel context.CancelFunc, grace time.Duration, exit func(code int)) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-done:
			return
		}
		cancel()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-sigs:
		case <-done:
			return
		}
		exit(signalStatus(sig))
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
		<-finished
	}
}

// signalStatus is the exit status of a process ended by sig, as a shell
// reports it: 128 + the signal's number.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

func run(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if c.name == "compile" || c.name == "jit" || c.name == "check" || c.name == "lineage" || c.name == "diff" || c.name == "rows" {
				engine.SetTranspileCacheDir(transpileCacheDir(env))
			}
			return c.run(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.stderr, "dfd: unknown command %q\n\n", args[0])
	usage(env.stderr)
	return 2
}

// transpileCacheDir is where compiler() results are kept between
// processes: $DFD_TRANSPILE_CACHE ("off" disables it), else dfd's cache
// directory. A cold `dfd compile` of a project compiled before then skips
// SQLX transpiling, the largest part of a compile.
func transpileCacheDir(env *cmdEnv) string {
	switch d := env.getenv("DFD_TRANSPILE_CACHE"); d {
	case "off":
		return ""
	case "":
		return engine.DefaultTranspileCacheDir()
	default:
		return d
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "dfd — a fast language server and compiler for Dataform projects")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: dfd <command> [arguments]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `dfd <command> --help` for a command's flags.")
}

// runVersion prints `dfd VERSION`, and ` (commit HASH)` when the commit
// is known.
func runVersion(_ context.Context, env *cmdEnv, _ []string) int {
	if commit != "" {
		fmt.Fprintf(env.stdout, "dfd %s (commit %s)\n", version, commit)
		return 0
	}
	fmt.Fprintf(env.stdout, "dfd %s\n", version)
	return 0
}

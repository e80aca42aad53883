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
	"syscall"

	"github.com/dfdtools/dfd/engine"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

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
		{"format", "Format the SQL of .sqlx files with GoogleSQL's formatter; --check for CI", runFormat},
		{"jit", "Preview the SQL a JiT action produces (runs its jitCode under the preview policy)", runJit},
		{"lineage", "Column-level lineage of an action: each column's direct inputs and its warehouse origins", runLineage},
		{"metadata", "BigQuery metadata: snapshot (offline file), refresh, status, clear the cache", runMetadata},
		{"serve", "Run the Dataform language server (LSP) on stdin/stdout", runServe},
		{"version", "Print dfd's version", runVersion},
		{"worker", "Serve compile and JiT requests for dfd's worker pool (started by dfd itself)", runWorker},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	os.Exit(run(ctx, env, os.Args[1:]))
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
			if c.name == "compile" || c.name == "jit" || c.name == "check" || c.name == "lineage" {
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

func runVersion(_ context.Context, env *cmdEnv, _ []string) int {
	fmt.Fprintf(env.stdout, "dfd %s\n", version)
	return 0
}

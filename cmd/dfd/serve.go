package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/jit"
)

// runServe is `dfd serve`: the language server on stdin/stdout.
func runServe(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet("serve", env.stderr)
	// vscode-languageclient appends --stdio; stdio is the only transport.
	_ = fs.Bool("stdio", true, "talk LSP on stdin/stdout (the default and only transport)")
	verbose := fs.Bool("v", false, "log debug messages to stderr")
	debounce := fs.Duration("debounce", 0, "delay between an edit and the recompile (default 150ms)")
	inProcess := fs.Bool("in-process", false, "run @dataform/core inside the daemon instead of in dfd worker processes (debugging)")
	workers := fs.Int("workers", 0, "worker processes per project (default: half the CPUs, at least 2)")
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: dfd serve [--stdio] [-v]")
		fmt.Fprintln(env.stderr, "Runs the Dataform language server on stdin/stdout (LSP). Logs go to stderr.")
		fs.PrintDefaults()
	}
	if _, err := parseInterspersed(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	level := new(slog.LevelVar) // info; dfd.logLevel changes it
	if *verbose {
		level.Set(slog.LevelDebug)
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level}))
	// An editor that dies closes our stdout: a write to it must be an
	// error the server handles (it stops), not a SIGPIPE that kills the
	// process without a word on stderr.
	signal.Ignore(syscall.SIGPIPE)
	defer signal.Reset(syscall.SIGPIPE)
	opts := daemon.Options{Version: version, Log: log, LogLevel: level, Debounce: *debounce}
	if !*inProcess {
		// Workers: a runaway compile or JiT preview costs a process, never
		// the daemon, and each project keeps warm ones ready.
		pools := jit.NewPools(jit.PoolOptions{Workers: *workers, Command: workerCommand,
			TranspileCache: transpileCacheDir(env), Logger: log.With("component", "jit")})
		defer pools.Close()
		opts.Backend.NewRunner = daemon.NewPooled(pools)
	}
	start := time.Now()
	code := daemon.Serve(ctx, env.stdin, env.stdout, opts)
	log.Info("dfd serve exiting", "code", code, "uptime", time.Since(start).Round(time.Millisecond))
	return code
}

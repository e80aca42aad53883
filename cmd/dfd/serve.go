package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/nodeworker"
	"github.com/dfdtools/dfd/project"
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
	engineName := fs.String("engine", daemon.EngineAuto, "where compiles run: goja (dfd's own engine), node (a Node.js worker, needs node >= 20), "+
		"or auto (node when node is installed, unless the project recompiles faster on goja: mostly multi-megabyte .sqlx files); JiT code always runs on goja")
	cpuProfile := fs.String("cpuprofile", "", "write the daemon's CPU profile (go tool pprof) to this file when it exits")
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
		popts := jit.PoolOptions{Workers: *workers, Command: workerCommand,
			TranspileCache: transpileCacheDir(env), Logger: log.With("component", "jit")}
		switch *engineName {
		case daemon.EngineGoja:
		case daemon.EngineNode, daemon.EngineAuto:
			if nodeEngine, err := nodeEngineCommand(); err == nil {
				popts.Engines = map[string]jit.EngineCommand{jit.EngineNode: nodeEngine}
			} else if *engineName == daemon.EngineNode {
				fmt.Fprintf(env.stderr, "dfd serve: --engine=node: %v\n", err)
				return 2
			} else {
				log.Info("compiling on goja only", "reason", err)
			}
		default:
			fmt.Fprintf(env.stderr, "dfd serve: --engine must be goja, node or auto, not %q\n", *engineName)
			return 2
		}
		pools := jit.NewPools(popts)
		defer pools.Close()
		opts.Backend.NewRunner = daemon.NewPooledWith(pools, daemon.PooledOptions{Engine: *engineName})
	}
	if *cpuProfile != "" {
		// For performance work (docs/performance.md): the daemon's own
		// CPU, not its workers'.
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(env.stderr, "dfd serve: --cpuprofile: %v\n", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				log.Warn("writing the CPU profile", "err", err)
			}
		}()
	}
	start := time.Now()
	code := daemon.Serve(ctx, interruptibleStdin(env.stdin), env.stdout, opts)
	log.Info("dfd serve exiting", "code", code, "uptime", time.Since(start).Round(time.Millisecond))
	return code
}

// nodeEngineCommand is how pools start Node.js workers, when a suitable
// node is installed: node is found and its script written under dfd's cache
// directory once; each pool gets the command for its project and core.
func nodeEngineCommand() (jit.EngineCommand, error) {
	node, _, err := nodeworker.FindNode()
	if err != nil {
		return nil, err
	}
	dir, err := project.CacheDir()
	if err != nil {
		return nil, err
	}
	script, err := nodeworker.WriteScript(dir)
	if err != nil {
		return nil, err
	}
	return func(root, bundlePath string) ([]string, error) {
		cmd := nodeworker.CommandFor(node, script, root, bundlePath)
		// V8's own heap ceiling, as goja workers have jit.DefaultMemoryLimit:
		// a runaway compile crashes that worker, which the pool replaces.
		last := len(cmd) - 1
		return append(append(cmd[:last:last], nodeworker.HeapFlag(jit.DefaultMemoryLimit)), cmd[last]), nil
	}, nil
}

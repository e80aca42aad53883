package jit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// WorkerOptions configure one worker process (`dfd worker`).
type WorkerOptions struct {
	// BundlePath and CoreVersion name the @dataform/core the worker hosts.
	BundlePath  string
	CoreVersion string
	// Root is the project directory runtimes are prepared for.
	Root string
	// MemoryLimit is the heap ceiling in bytes (0: none). A request that
	// pushes the Go heap over it is interrupted and answered with
	// RESOURCE_EXHAUSTED, and the worker exits so its memory goes back to
	// the system. It is also the runtime's soft memory limit
	// (debug.SetMemoryLimit), so the collector works harder before garbage
	// alone could reach the ceiling.
	MemoryLimit int64
	// GCPercent is passed to debug.SetGCPercent; 0 leaves GOGC as it is.
	GCPercent int
	// SoftMemoryLimit, when positive and below MemoryLimit, is the Go
	// runtime's soft memory limit instead of MemoryLimit: with GCPercent's
	// large heap goal, a big compile would otherwise let garbage grow to
	// several times its live heap before collecting. Near the soft limit
	// the collector runs more often; only MemoryLimit fails a request.
	SoftMemoryLimit int64
	// MaxFrame is the largest frame accepted from the host (default
	// wire.DefaultMaxFrame).
	MaxFrame int
	// Spares is how many fresh runtimes are kept prepared (default
	// DefaultSpares).
	Spares int
	// TranspileCache is a directory where core's compiler() results are
	// kept across worker processes (engine.SetTranspileCacheDir); "": in
	// memory only.
	TranspileCache string
	// SampleEvery is the heap sampling period while a request runs
	// (default 20 ms).
	SampleEvery time.Duration
}

// DefaultGCPercent is the worker's GOGC. Goja allocates heavily and most
// of it dies with the request's runtime; a larger heap goal trades memory
// (bounded by MemoryLimit) for less collector time. BenchmarkCompileGC
// (400 chained .sqlx files, worker CPU time per compile, 2 cores):
// GOGC=100 3.73 s and 72 MiB peak heap, 200 3.05 s / 112 MiB, 400 2.84 s /
// 207 MiB, 800 2.77 s / 266 MiB. Past 400 the heap grows for little gain.
const DefaultGCPercent = 400

// DefaultSoftMemoryLimit is the pool's default WorkerOptions.SoftMemoryLimit.
// Measured on a generated 1,000-action project (cold dfd compile, transpile
// cache warm): GOGC 400 alone peaks at 326 MB RSS and 4.6 s CPU; with a
// 200 MiB soft limit 218 MB and 4.7 s; GOGC 100 189 MB and 5.2–6.2 s.
// Small projects never reach it and keep GOGC 400's speed.
const DefaultSoftMemoryLimit = 200 << 20

// DefaultSpares is how many prepared runtimes a worker keeps. One is
// needed so that a request never waits for the 10–30 ms preparation; a
// second makes a burst of two requests warm too, for ≈3 MiB.
const DefaultSpares = 2

// WorkerArgs renders opts as the arguments of `dfd worker` (after the
// command name). ParseWorkerArgs reads them back.
func WorkerArgs(opts WorkerOptions) []string {
	args := []string{
		"--bundle=" + opts.BundlePath,
		"--core-version=" + opts.CoreVersion,
		"--root=" + opts.Root,
	}
	if opts.MemoryLimit > 0 {
		args = append(args, "--memory-limit="+strconv.FormatInt(opts.MemoryLimit, 10))
	}
	if opts.GCPercent != 0 {
		args = append(args, "--gc-percent="+strconv.Itoa(opts.GCPercent))
	}
	if opts.SoftMemoryLimit > 0 {
		args = append(args, "--soft-memory-limit="+strconv.FormatInt(opts.SoftMemoryLimit, 10))
	}
	if opts.MaxFrame > 0 {
		args = append(args, "--max-frame="+strconv.Itoa(opts.MaxFrame))
	}
	if opts.Spares > 0 {
		args = append(args, "--spares="+strconv.Itoa(opts.Spares))
	}
	if opts.TranspileCache != "" {
		args = append(args, "--transpile-cache="+opts.TranspileCache)
	}
	return args
}

// ParseWorkerArgs reads the arguments of `dfd worker`. Usage and errors go
// to stderr; flag.ErrHelp is returned for -h.
func ParseWorkerArgs(args []string, stderr io.Writer) (WorkerOptions, error) {
	var o WorkerOptions
	fs := flag.NewFlagSet("dfd worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.BundlePath, "bundle", "", "path of @dataform/core's bundle.js")
	fs.StringVar(&o.CoreVersion, "core-version", "", "version of that core")
	fs.StringVar(&o.Root, "root", "", "project directory (absolute, symbolic links resolved)")
	fs.Int64Var(&o.MemoryLimit, "memory-limit", 0, "heap ceiling in bytes; 0: none")
	fs.IntVar(&o.GCPercent, "gc-percent", DefaultGCPercent, "GOGC for the worker; 0: leave GOGC as it is")
	fs.Int64Var(&o.SoftMemoryLimit, "soft-memory-limit", 0, "the Go runtime's soft memory limit in bytes, when below --memory-limit; 0: --memory-limit")
	fs.IntVar(&o.MaxFrame, "max-frame", 0, "largest frame accepted, in bytes")
	fs.IntVar(&o.Spares, "spares", DefaultSpares, "fresh runtimes kept prepared")
	fs.StringVar(&o.TranspileCache, "transpile-cache", "", "directory for core's compiler() results shared by workers; empty: memory only")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: dfd worker --bundle=PATH --core-version=V --root=DIR [flags]")
		fmt.Fprintln(stderr, "Serves compile and JiT requests of dfd's worker pool on stdin/stdout (length-delimited")
		fmt.Fprintln(stderr, "protobuf frames, see package jit/wire); logs go to stderr. Started by dfd itself.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("dfd worker: unexpected argument %q", fs.Arg(0))
	}
	if o.BundlePath == "" || o.CoreVersion == "" || o.Root == "" {
		return o, errors.New("dfd worker: --bundle, --core-version and --root are required")
	}
	return o, nil
}

// Exit statuses of a worker process.
const (
	ExitOK       = 0 // stdin reached EOF
	ExitFailure  = 1 // could not start, or the host's side of the pipe broke
	ExitUsage    = 2
	ExitMemory   = 3 // a request crossed the heap ceiling
	ExitProtocol = 4 // the host sent a malformed or oversized frame
)

// WorkerMain is `dfd worker`: it parses args and serves on stdin/stdout
// until stdin reaches EOF, returning the process exit status.
func WorkerMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := ParseWorkerArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitUsage
	}
	err = ServeWorker(ctx, stdin, stdout, stderr, opts)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrMemoryLimit):
		return ExitMemory
	case errors.Is(err, errHostProtocol):
		return ExitProtocol
	default:
		fmt.Fprintf(stderr, "dfd worker %d: %v\n", os.Getpid(), err)
		return ExitFailure
	}
}

// Package compile compiles a Dataform project with its own @dataform/core:
// it builds the request the official CLI builds, runs it in the engine and
// hands back both the decoded graph and the wire bytes (which keep the
// presence information that the CLI's JSON output depends on).
package compile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/heapwatch"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// DefaultTimeout is the official CLI's default compilation timeout.
const DefaultTimeout = 60 * time.Second

// Overrides are the project-config override flags of `dataform compile`.
// Empty fields are not sent, as the CLI sends only the flags that were given.
type Overrides struct {
	DefaultDatabase    string
	DefaultSchema      string
	DefaultLocation    string
	AssertionSchema    string
	DatabaseSuffix     string
	SchemaSuffix       string
	TablePrefix        string
	DefaultReservation string
	// Vars are --vars in the order given: core prints them in the order
	// its request has them, as the CLI's JavaScript object keeps them.
	Vars              []Var
	DisableAssertions bool
}

// Var is one of --vars.
type Var struct{ Name, Value string }

// ParseVars reads --vars the way the CLI does: "a=1,b=2"; for "a=b=c" the
// value is "b", and a pair without "=" gets an empty value. A name given
// twice keeps its first place and its last value, as assigning to a
// JavaScript object does.
func ParseVars(s string) []Var {
	if s == "" {
		return nil
	}
	var vars []Var
	at := map[string]int{}
	for _, kv := range strings.Split(s, ",") {
		parts := strings.Split(kv, "=")
		v := ""
		if len(parts) > 1 {
			v = parts[1]
		}
		if i, ok := at[parts[0]]; ok {
			vars[i].Value = v
			continue
		}
		at[parts[0]] = len(vars)
		vars = append(vars, Var{parts[0], v})
	}
	return vars
}

func (o Overrides) config() *dataformpb.ProjectConfig {
	return &dataformpb.ProjectConfig{
		DefaultDatabase:    o.DefaultDatabase,
		DefaultSchema:      o.DefaultSchema,
		DefaultLocation:    o.DefaultLocation,
		AssertionSchema:    o.AssertionSchema,
		DatabaseSuffix:     o.DatabaseSuffix,
		SchemaSuffix:       o.SchemaSuffix,
		TablePrefix:        o.TablePrefix,
		DefaultReservation: o.DefaultReservation,
		DisableAssertions:  o.DisableAssertions,
	}
}

// Options tune one compilation.
type Options struct {
	Overrides Overrides
	// Timeout bounds the compilation; zero means DefaultTimeout.
	Timeout time.Duration
	// Files overrides what is read from disk (editor buffers); nil reads the
	// project directory.
	Files engine.Files
	// FilePaths overrides the project's file list; nil lists the project.
	FilePaths []string
	// Log receives console output of the project's JavaScript.
	Log func(level, msg string)
	// MemoryLimit is the heap ceiling of the compile in bytes (0: none),
	// as dfd's goja workers have one: when the process's Go heap crosses it
	// the compile is interrupted and fails with a *MemoryLimitError. The
	// heap measured is the whole process's, so this is for a process that
	// compiles one project, as `dfd compile`; it should also have set its
	// collector's limits with heapwatch.SetLimits.
	MemoryLimit int64
	// Keeper and Mode run the compile through a kept context for
	// incremental recompiles (engine.Keeper); the zero Mode ignores Keeper.
	Keeper *engine.Keeper
	Mode   engine.Mode
}

// Result is a compiled project.
type Result struct {
	Graph *dataformpb.CompiledGraph
	// GraphWire is the CompiledGraph exactly as core encoded it.
	GraphWire []byte
	Core      *project.Core
	// Prepare is the time to get a runtime with core loaded; Run the time
	// core took to compile.
	Prepare, Run time.Duration
	// Incremental says how a compile with a Mode ran; nil when the engine
	// has no incremental compiles.
	Incremental *engine.Outcome
}

// Errors reports whether the graph has compilation errors.
func (r *Result) Errors() []*dataformpb.CompilationError {
	return r.Graph.GetGraphErrors().GetCompilationErrors()
}

// TimeoutError is returned when a compilation runs past its deadline.
type TimeoutError struct{ Timeout time.Duration }

// Error is the official CLI's message: the timeout in seconds, as a
// JavaScript number prints (60, 0.5).
func (e *TimeoutError) Error() string {
	secs := strconv.FormatFloat(float64(e.Timeout.Milliseconds())/1000, 'f', -1, 64)
	return fmt.Sprintf("Compilation timed out after %s seconds. To allow more time, re-run with a longer --timeout (e.g. --timeout=2m, --timeout=1h).", secs)
}

// MemoryLimitError is returned when a compilation needs more memory than
// its ceiling (Options.MemoryLimit): a project that builds ever-growing
// data, or one too big for the limit.
type MemoryLimitError struct{ Limit int64 }

func (e *MemoryLimitError) Error() string {
	return fmt.Sprintf("Compilation exceeded the memory limit of %d MiB. To allow more memory, re-run with a larger --memory-limit (e.g. --memory-limit=%dMiB).", e.Limit>>20, 2*(e.Limit>>20))
}

// Run compiles p with core.
func Run(ctx context.Context, p *project.Project, core *project.Core, opts Options) (*Result, error) {
	start := time.Now()
	if opts.FilePaths == nil {
		paths, err := p.FilePaths()
		if err != nil {
			return nil, fmt.Errorf("listing project files: %w", err)
		}
		opts.FilePaths = paths
	}
	if opts.Files == nil {
		d, err := engine.OpenDir(p.Root)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		opts.Files = d
	}
	// While the bundle compiles (a cold process: 100–250 ms on one core),
	// a second goroutine compiles the project's modules it can know
	// already (engine.Precompile); the compile then finds them done.
	preCtx, stopPre := context.WithCancel(ctx)
	var pre sync.WaitGroup
	defer func() { stopPre(); pre.Wait() }() // before the files close
	bundle, err := engine.LoadBundleNotify(core.BundlePath, core.Version, func(digest string) {
		pre.Add(1)
		go func() {
			defer pre.Done()
			engine.Precompile(preCtx, opts.Files, p.Root, digest, opts.FilePaths)
		}()
	})
	if err != nil {
		return nil, damagedCore(core, err)
	}
	rt, err := bundle.NewRuntime(engine.Options{Root: p.Root, Log: opts.Log})
	if err != nil {
		return nil, damagedCore(core, err)
	}
	prepared := time.Now()
	res, err := RunPrepared(ctx, rt, p, opts)
	if err != nil {
		return nil, err
	}
	res.Core = core
	res.Prepare = prepared.Sub(start)
	return res, nil
}

// CheckCore loads core's bundle for root as Run does and returns the error
// of a damaged one, saying how to reinstall it; nil when it loads. A host
// of another engine calls it when core fails there, to tell a damaged
// bundle (whose error in V8 is a bare SyntaxError) from other failures.
func CheckCore(core *project.Core, root string) error {
	bundle, err := engine.LoadBundle(core.BundlePath, core.Version)
	if err == nil {
		_, err = bundle.NewRuntime(engine.Options{Root: root})
	}
	var be *engine.BundleError
	if errors.As(err, &be) {
		return damagedCore(core, err)
	}
	return nil
}

// damagedCore adds how to reinstall core to an error that says its bundle
// is damaged (*engine.BundleError).
func damagedCore(core *project.Core, err error) error {
	var be *engine.BundleError
	if !errors.As(err, &be) {
		return err
	}
	return fmt.Errorf("%w.\n%s", err, core.Reinstall())
}

// RunPrepared compiles p on a runtime prepared ahead of time for p.Root.
func RunPrepared(ctx context.Context, rt *engine.Runtime, p *project.Project, opts Options) (*Result, error) {
	files := opts.Files
	if files == nil {
		d, err := engine.OpenDir(p.Root)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		files = d
	}
	paths := opts.FilePaths
	if paths == nil {
		var err error
		if paths, err = p.FilePaths(); err != nil {
			return nil, fmt.Errorf("listing project files: %w", err)
		}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	req, err := Request(p.Root, paths, opts.Overrides, timeout)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var heap *heapwatch.Watch
	if opts.MemoryLimit > 0 {
		heap = heapwatch.Start(opts.MemoryLimit, 0, func() { stop(errOverMemory) })
	}
	start := time.Now()
	var resp []byte
	var outcome *engine.Outcome
	if opts.Mode != engine.ModeFull && opts.Keeper != nil {
		var o engine.Outcome
		resp, o, err = opts.Keeper.Compile(ctx, func() (*engine.Runtime, error) { return rt, nil }, files, req, opts.Mode)
		outcome = &o
	} else {
		resp, err = rt.Compile(ctx, files, req)
	}
	if heap != nil {
		heap.Stop()
	}
	if err != nil {
		switch {
		case errors.Is(context.Cause(ctx), errOverMemory):
			return nil, &MemoryLimitError{Limit: opts.MemoryLimit}
		case errors.Is(err, engine.ErrTimeout):
			return nil, &TimeoutError{Timeout: timeout}
		}
		return nil, err
	}
	res, err := Decode(resp)
	if err != nil {
		return nil, err
	}
	res.Run = time.Since(start)
	res.Incremental = outcome
	return res, nil
}

// errOverMemory is the cause of a compile's interruption by its heap
// watcher.
var errOverMemory = errors.New("over the memory limit")

// Request encodes the dataform.CoreExecutionRequest the CLI sends to core.
// It is built level by level so that the override's vars keep their order
// (a proto map is repeated entries, which protobufjs reads in order; Go's
// proto.Marshal writes a map in Go's random order).
func Request(root string, filePaths []string, o Overrides, timeout time.Duration) ([]byte, error) {
	override, err := proto.Marshal(o.config())
	if err != nil {
		return nil, fmt.Errorf("encoding compile request: %w", err)
	}
	for _, v := range o.Vars {
		var entry []byte
		entry = protowire.AppendTag(entry, 1, protowire.BytesType) // map key
		entry = protowire.AppendString(entry, v.Name)
		entry = protowire.AppendTag(entry, 2, protowire.BytesType) // map value
		entry = protowire.AppendString(entry, v.Value)
		override = appendMessageField(override, projectConfigVars, entry)
	}
	config, err := proto.Marshal(&dataformpb.CompileConfig{
		ProjectDir:    root,
		FilePaths:     filePaths,
		TimeoutMillis: int32(min(timeout.Milliseconds(), 1<<31-1)),
	})
	if err != nil {
		return nil, fmt.Errorf("encoding compile request: %w", err)
	}
	config = appendMessageField(config, compileConfigOverride, override)
	compile := appendMessageField(nil, compileRequestConfig, config)
	return appendMessageField(nil, coreRequestCompile, compile), nil
}

// Field numbers of the compile request (core.proto; TestRequestWritesVarsInOrder
// decodes what Request writes with them).
const (
	coreRequestCompile    = 1  // CoreExecutionRequest.compile
	compileRequestConfig  = 1  // CompileExecutionRequest.compile_config
	compileConfigOverride = 3  // CompileConfig.project_config_override
	projectConfigVars     = 14 // ProjectConfig.vars
)

// appendMessageField appends the encoded message msg as field num.
func appendMessageField(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

// Decode reads an encoded dataform.CoreExecutionResponse, as core's main()
// returns it (in this process or in a dfd worker).
func Decode(resp []byte) (*Result, error) {
	graphWire, err := graphBytes(resp)
	if err != nil {
		return nil, err
	}
	g := &dataformpb.CompiledGraph{}
	if err := proto.Unmarshal(graphWire, g); err != nil {
		return nil, decodeError(err)
	}
	return &Result{Graph: g, GraphWire: graphWire}, nil
}

// graphBytes returns the encoded CompiledGraph in an encoded
// CoreExecutionResponse.
func graphBytes(resp []byte) ([]byte, error) {
	// CoreExecutionResponse.compile (1) → CompileExecutionResponse.compiled_graph (1).
	compileMsg, err := lastField(resp, 1)
	if err != nil {
		return nil, fmt.Errorf("decoding core's response: %w", err)
	}
	graphWire, err := lastField(compileMsg, 1)
	if err != nil {
		return nil, fmt.Errorf("decoding core's response: %w", err)
	}
	return graphWire, nil
}

// lastField returns the bytes of the last occurrence of a length-delimited
// field, as protobufjs (which replaces rather than merges) would see it.
func lastField(b []byte, num protowire.Number) ([]byte, error) {
	var out []byte
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			out = v
			b = b[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		b = b[l:]
	}
	return out, nil
}

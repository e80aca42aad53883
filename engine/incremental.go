package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// Incremental compiles (docs/architecture.md, "Incremental compiles").
//
// A full compile run with CompileKeep leaves its runtime alive as a Kept:
// core's session, the includes loaded, the module cache, and per
// definitions file the slice of actions, tests, compilation errors and
// jitData keys its run produced (js/incremental.js). Recompile of an edit
// of one definitions file re-runs only that file in that context, puts its
// new results back in the file's place, and runs core's graph stage and
// the encoding. Anything else is ErrNotIncremental: the caller compiles in
// full, in a fresh runtime.

//go:embed js/incremental.js
var incrementalSource string

var (
	incrementalOnce sync.Once
	incrementalProg *goja.Program
	incrementalErr  error
)

// IncrementalSource is js/incremental.js: an expression evaluating to a
// function of loadCount, for other hosts of core (the Node.js worker).
func IncrementalSource() string { return incrementalSource }

// The two statements of core 3.x's main() that the hooks go around, with
// core's minified names captured. Each must be found exactly once, or the
// bundle is left as it is and has no incremental compiles.
var (
	// definitions/*.sqlx|.js are required one by one, errors recorded.
	incrLoopRE = mustPrefixedRE(`\.sort\(\)\.forEach\(\(([\w$]+)=>\{try\{([\w$]+)\.nativeRequire\(([\w$]+)\)\}catch\(([\w$]+)\)\{([\w$]+)\.compileError\(([\w$]+),([\w$]+)\)\}\}\)\)`)
	// session.compile()'s check of the whole graph against the proto
	// (found by findVerifies).
	incrVerifyRE = regexp.MustCompile(`^[\w$]+\.verifyObjectMatchesProto\([\w$]+\.dataform\.CompiledGraph,[\w$]+,[\w$]+\.VerifyProtoErrorBehaviour\.SUGGEST_REPORTING_TO_DATAFORM_TEAM\)`)
	// the graph stage and the response (found by findGraphs).
	incrGraphRE = regexp.MustCompile(`^const ([\w$]+)=([\w$]+)\.dataform\.CoreExecutionResponse\.create\(\{compile:\{compiledGraph:([\w$]+)\.compile\(\)\}\}\);`)
)

// patchIncremental adds the hooks js/incremental.js uses to core's main(),
// and says whether it could. Without the hooks set (every compile that is
// not kept) the patched code does what the original does.
func patchIncremental(code string) (string, bool) {
	loops := incrLoopRE.findAll(code, 2)
	graphs := findGraphs(code)
	verifies := findVerifies(code)
	if len(loops) != 1 || len(graphs) != 1 || len(verifies) != 1 {
		return code, false
	}
	// A recompile skips the check of the whole graph: each action's own
	// check ran when it was compiled, the graph-level one only throws on a
	// graph core itself built wrong, and the full compile every recompile
	// is verified against runs it.
	v := verifies[0]
	verify := "(global.__dfdSkipGraphVerify||" + code[v[0]:v[1]] + ")"
	l, gr := loops[0], graphs[0]
	sub := func(m []int, i int) string { return code[m[2*i]:m[2*i+1]] }
	e, mod, arg, r, sess, r2, e2 := sub(l, 1), sub(l, 2), sub(l, 3), sub(l, 4), sub(l, 5), sub(l, 6), sub(l, 7)
	if arg != e || e2 != e || r2 != r {
		return code, false
	}
	// Without the hooks the original statement runs inline, so that error
	// stacks of plain compiles have no extra frame.
	body := fmt.Sprintf(`try{%[2]s.nativeRequire(%[1]s)}catch(%[3]s){%[4]s.compileError(%[3]s,%[1]s)}`, e, mod, r, sess)
	loop := fmt.Sprintf(`.sort().forEach((%[1]s=>{if(global.__dfdRunFile)return global.__dfdRunFile(%[1]s,()=>{%[2]s});%[2]s}))`, e, body)
	protos, session := sub(gr, 2), sub(gr, 3)
	graph := fmt.Sprintf(`const %[3]s=%[1]s.dataform.CoreExecutionResponse.create({compile:{compiledGraph:global.__dfdGraphStage?global.__dfdGraphStage(%[2]s,function(){return %[2]s.compile()},function(__dfdGraph){return %[1]s.dataform.CoreExecutionResponse.encode(%[1]s.dataform.CoreExecutionResponse.create({compile:{compiledGraph:__dfdGraph}})).finish()}):%[2]s.compile()}});`, protos, session, sub(gr, 1))
	out := applyEdits(code, []textEdit{
		{l[0], l[1], loop},
		{gr[0], gr[1], graph},
		{v[0], v[1], verify},
	})
	return out, out != code
}

// Literals in every match of incrVerifyRE and incrGraphRE, right after
// their first names.
const (
	incrVerifyLit = ".verifyObjectMatchesProto("
	incrGraphLit  = ".dataform.CoreExecutionResponse.create({compile:{compiledGraph:"
)

// findVerifies and findGraphs are the matches of incrVerifyRE and
// incrGraphRE in code (without their anchors), stopping at two: enough to
// tell "exactly once". Both start with names, or a word common in the
// bundle (25 ms of a 160 ms cold compile when the first was searched for
// over the whole bundle), so they are found from their literals
// (findAround).
func findVerifies(code string) [][]int {
	return findAround(code, incrVerifyRE, incrVerifyLit, 2, nameStart)
}

func findGraphs(code string) [][]int {
	return findAround(code, incrGraphRE, incrGraphLit, 2, func(code string, i int) int {
		// const X=Y<lit>
		y := nameStart(code, i)
		if y == i || y == 0 || code[y-1] != '=' {
			return i
		}
		x := nameStart(code, y-1)
		if x == y-1 || !strings.HasSuffix(code[:x], "const ") {
			return i
		}
		return x - len("const ")
	})
}

// PatchIncremental is patchIncremental for other hosts of core.
func PatchIncremental(code string) (string, bool) { return patchIncremental(code) }

// ErrNotIncremental is wrapped by Recompile's errors for edits it cannot
// compile incrementally; the caller compiles in full. The message says why.
var ErrNotIncremental = errors.New("not incremental")

// Kept is a runtime kept after a full compile for incremental recompiles.
// It is not safe for concurrent use; after any error it is spent.
type Kept struct {
	r       *Runtime
	request []byte
	ctl     *goja.Object
	rerun   goja.Callable
	unsafe  goja.Callable
	// read is what the compile read: file → digest of its content ("" for
	// a file that could not be read). An edit is the one file whose
	// content changed.
	read  map[string][32]byte
	defs  map[string]bool // definitions files main() ran, root-relative
	spent string
}

// CompileKeep is Compile, keeping the runtime for Recompile when the
// compile and the bundle allow it (k is nil otherwise, with the reason).
func (r *Runtime) CompileKeep(ctx context.Context, files Files, request []byte) (response []byte, k *Kept, why string, err error) {
	if !r.bundle.incremental {
		resp, err := r.Compile(ctx, files, request)
		return resp, nil, fmt.Sprintf("@dataform/core %s is not one incremental compiles know", r.bundle.Version), err
	}
	if r.used {
		return nil, nil, "", ErrUsed
	}
	k = &Kept{r: r, request: append([]byte(nil), request...), read: map[string][32]byte{}, defs: map[string]bool{}}
	err = r.guard(func() error {
		ctl, err := r.installIncremental()
		if err != nil {
			return err
		}
		k.ctl = ctl
		k.rerun, _ = goja.AssertFunction(ctl.Get("rerun"))
		k.unsafe, _ = goja.AssertFunction(ctl.Get("unsafe"))
		return nil
	})
	if err != nil {
		return nil, nil, "", fmt.Errorf("engine: incremental hooks: %w", err)
	}
	r.loader.onRead = func(name string, b []byte) { k.read[name] = sha256.Sum256(b) }
	response, err = r.Compile(ctx, files, request)
	r.loader.onRead = nil
	if err != nil {
		return nil, nil, "", err
	}
	if len(r.timers.pending) > 0 {
		return response, nil, "timers are still pending after the compile", nil
	}
	var ready bool
	var order []string
	err = r.guard(func() error {
		f, _ := goja.AssertFunction(k.ctl.Get("ready"))
		v, err := f(goja.Undefined())
		if err != nil {
			return err
		}
		ready = v.ToBoolean()
		f, _ = goja.AssertFunction(k.ctl.Get("files"))
		v, err = f(goja.Undefined())
		if err != nil {
			return err
		}
		return r.vm.ExportTo(v, &order)
	})
	if err != nil || !ready {
		return response, nil, "core's main() did not reach its graph stage", nil
	}
	for _, f := range order {
		k.defs[f] = true
	}
	return response, k, "", nil
}

// installIncremental runs js/incremental.js in the runtime.
func (r *Runtime) installIncremental() (*goja.Object, error) {
	incrementalOnce.Do(func() {
		incrementalProg, incrementalErr = goja.Compile("dfd:incremental.js", incrementalSource, true)
	})
	if incrementalErr != nil {
		return nil, incrementalErr
	}
	v, err := r.vm.RunProgram(incrementalProg)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, errors.New("incremental.js is not a function")
	}
	count := r.vm.ToValue(func(goja.FunctionCall) goja.Value { return r.vm.ToValue(r.loader.loads) })
	out, err := fn(goja.Undefined(), count)
	if err != nil {
		return nil, err
	}
	return out.ToObject(r.vm), nil
}

// Changed returns the files whose content differs from what the kept
// compile read (at most max+1 of them: more than max means a full compile).
func (k *Kept) Changed(files Files, max int) ([]string, error) {
	var out []string
	for name, sum := range k.read {
		b, err := files.ReadFile(name)
		if err != nil {
			out = append(out, name)
		} else if sha256.Sum256(b) != sum {
			out = append(out, name)
		}
		if len(out) > max {
			break
		}
	}
	return out, nil
}

// Unsafe says why an edit of file needs a full compile, or "".
func (k *Kept) Unsafe(file string) string {
	if !k.defs[file] {
		return file + " is not a definitions file the compile ran"
	}
	v, err := k.unsafe(goja.Undefined(), k.r.vm.ToValue(file))
	if err != nil {
		return err.Error()
	}
	return v.String()
}

// Recompile compiles request again over files, which must differ from the
// kept compile's in at most one definitions file's content. It returns the
// encoded response and the file re-run ("" when none changed). An edit it
// cannot compile incrementally is an error wrapping ErrNotIncremental; after
// any error the Kept is spent.
func (k *Kept) Recompile(ctx context.Context, files Files, request []byte) ([]byte, string, error) {
	if k.spent != "" {
		return nil, "", fmt.Errorf("%w: %s", ErrNotIncremental, k.spent)
	}
	if !bytes.Equal(request, k.request) {
		return nil, "", k.spend("the compile request changed (settings or the list of files)")
	}
	changed, err := k.Changed(files, 1)
	if err != nil {
		return nil, "", k.spend(err.Error())
	}
	file := ""
	switch len(changed) {
	case 0:
	case 1:
		file = changed[0]
		if why := k.Unsafe(file); why != "" {
			return nil, "", k.spend(why)
		}
	default:
		return nil, "", k.spend("more than one file changed")
	}
	resp, err := k.recompile(ctx, files, file)
	if err != nil {
		k.spent = err.Error()
		return nil, file, err
	}
	return resp, file, nil
}

func (k *Kept) spend(why string) error {
	k.spent = why
	return fmt.Errorf("%w: %s", ErrNotIncremental, why)
}

func (k *Kept) recompile(ctx context.Context, files Files, file string) ([]byte, error) {
	r := k.r
	stop := r.watch(ctx)
	defer stop()
	l := r.loader
	l.files, l.stats = files, nil
	if file != "" {
		delete(l.modules, r.opts.Root+"/"+file)
		l.onRead = func(name string, b []byte) { k.read[name] = sha256.Sum256(b) }
		defer func() { l.onRead = nil }()
	}
	var response []byte
	err := r.guard(func() error {
		r.files = append(r.files[:0], r.opts.Root+"/index.js")
		out, err := k.rerun(goja.Undefined(), r.vm.ToValue(file))
		r.files = r.files[:0]
		if err != nil {
			var ex *goja.Exception
			if errors.As(err, &ex) {
				if o, ok := ex.Value().(*goja.Object); ok && o.Get("dfdNotIncremental") != nil && o.Get("dfdNotIncremental").ToBoolean() {
					return fmt.Errorf("%w: %s", ErrNotIncremental, strings.TrimPrefix(o.Get("message").String(), "not incremental: "))
				}
			}
			return err
		}
		response, err = r.bytesOf(out)
		if err != nil {
			return err
		}
		if len(r.timers.pending) > 0 {
			return fmt.Errorf("%w: %s left timers pending", ErrNotIncremental, file)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotIncremental) {
			return nil, err
		}
		return nil, describe(err, "incremental compile")
	}
	return response, nil
}

// Mode is how a compile uses a Keeper's kept context.
type Mode int

const (
	// ModeFull compiles in a fresh runtime without the hooks and keeps
	// nothing: what every compile did before incremental compiles.
	ModeFull Mode = iota
	// ModeFullHooked compiles in a fresh runtime with the hooks and keeps
	// nothing: the full compile an incremental result is verified against
	// (the hooks' frames show in some error stacks; both sides have them).
	ModeFullHooked
	// ModeKeep compiles in a fresh runtime with the hooks and keeps it.
	ModeKeep
	// ModeIncremental re-runs the one edited file in the kept context when
	// it can, else compiles as ModeKeep.
	ModeIncremental
)

// String names the mode, for logs.
func (m Mode) String() string {
	switch m {
	case ModeFull:
		return "full"
	case ModeFullHooked:
		return "full-hooked"
	case ModeKeep:
		return "keep"
	case ModeIncremental:
		return "incremental"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Outcome says how a compile with a Keeper ran.
type Outcome struct {
	Rerun  bool   // an incremental recompile
	File   string // the file re-run ("" when Rerun and nothing changed)
	Kept   bool   // the Keeper holds a context after the compile
	Reason string // when not Rerun (and the mode asked for one): why
}

// Keeper holds the kept context of one project's last full compile. It is
// not safe for concurrent use: its owner runs one compile at a time on it.
type Keeper struct {
	kept *Kept
	// lastKeep is how long the last compile that kept a context took: what
	// losing the context costs the next compile.
	lastKeep time.Duration
}

// maxRerunGrace bounds how long a canceled rerun may go on: well inside
// the time a host waits for a canceled request before it kills the worker
// (jit.DefaultGrace, 2 s).
const maxRerunGrace = time.Second

// rerunContext is ctx for a rerun. A rerun stopped halfway leaves the kept
// context unusable, and the next compile must then be a full one; so a
// cancellation (a newer edit while typing) stops it only after grace,
// what a full compile would cost at most, and a rerun that ends within it
// answers and keeps the context. A deadline stops it at once.
func rerunContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	if ctx.Done() == nil || grace <= 0 {
		return ctx, func() {}
	}
	base, cancelDeadline := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		base, cancelDeadline = context.WithDeadline(base, dl)
	}
	out, cancel := context.WithCancelCause(base)
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
		case <-stopped:
			return
		}
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-t.C:
			case <-stopped:
				return
			}
		}
		cancel(context.Cause(ctx))
	}()
	return out, func() {
		close(stopped)
		wg.Wait()
		cancel(context.Canceled)
		cancelDeadline()
	}
}

// Drop forgets the kept context (its memory goes with the runtime).
func (k *Keeper) Drop() { k.kept = nil }

// Compile compiles request over files in mode; fresh returns a new runtime
// when one is needed (not for a rerun).
func (k *Keeper) Compile(ctx context.Context, fresh func() (*Runtime, error), files Files, request []byte, mode Mode) ([]byte, Outcome, error) {
	var out Outcome
	if mode == ModeIncremental {
		if k.kept == nil {
			out.Reason = "no kept context"
		} else {
			rctx, stop := rerunContext(ctx, min(k.lastKeep, maxRerunGrace))
			resp, file, err := k.kept.Recompile(rctx, files, request)
			stop()
			if err == nil {
				return resp, Outcome{Rerun: true, File: file, Kept: true}, nil
			}
			k.kept = nil
			if ctx.Err() != nil {
				return nil, out, describe(ctx.Err(), "compile")
			}
			out.Reason = strings.TrimPrefix(err.Error(), ErrNotIncremental.Error()+": ")
		}
		mode = ModeKeep
	}
	rt, err := fresh()
	if err != nil {
		return nil, out, err
	}
	switch mode {
	case ModeFull:
		resp, err := rt.Compile(ctx, files, request)
		out.Kept = k.kept != nil
		return resp, out, err
	case ModeFullHooked:
		resp, _, _, err := rt.CompileKeep(ctx, files, request)
		out.Kept = k.kept != nil
		return resp, out, err
	}
	k.kept = nil
	start := time.Now()
	resp, kept, why, err := rt.CompileKeep(ctx, files, request)
	if err != nil {
		return nil, out, err
	}
	k.kept, k.lastKeep = kept, time.Since(start)
	out.Kept = kept != nil
	if kept == nil && out.Reason == "" {
		out.Reason = why
	}
	return resp, out, nil
}

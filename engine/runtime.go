package engine

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

//go:embed js/prelude.js
var preludeSource string

//go:embed js/path.js
var pathSource string

// PathModuleSource is the `path` module core and project code get: an
// expression evaluating to the module. Other hosts of core (the Node.js
// worker) offer the same one.
func PathModuleSource() string { return pathSource }

var (
	compileShimsOnce sync.Once
	preludeProgram   *goja.Program
	pathProgram      *goja.Program
	compileShimsErr  error
)

func shims() (*goja.Program, *goja.Program, error) {
	compileShimsOnce.Do(func() {
		preludeProgram, compileShimsErr = goja.Compile("dfd:prelude.js", preludeSource, true)
		if compileShimsErr == nil {
			pathProgram, compileShimsErr = goja.Compile("dfd:path.js", pathSource, true)
		}
	})
	return preludeProgram, pathProgram, compileShimsErr
}

// DefaultMaxCallStackSize bounds JavaScript recursion. Node's default stack
// allows roughly this depth; without a bound an infinite recursion would grow
// memory until the deadline.
const DefaultMaxCallStackSize = 10000

// Options configure a Runtime.
type Options struct {
	// Root is the project directory: absolute, symbolic links resolved.
	Root string
	// Log receives console output of user code and core (level is "log",
	// "info", "warn", "error" or "debug"). Nil discards it.
	Log func(level, msg string)
	// MaxCallStackSize overrides DefaultMaxCallStackSize when positive.
	MaxCallStackSize int
}

// Runtime is one goja runtime with core loaded, for a single request.
type Runtime struct {
	bundle *Bundle
	opts   Options
	vm     *goja.Runtime

	coreExports *goja.Object
	compiler    goja.Callable
	jsonParse   goja.Callable
	pathExports goja.Value
	loader      *loader // one module registry for core and user code, as in the CLI's sandbox

	files  []string // stack of files being loaded, for __dataform_current_file
	timers timerQueue
	used   bool

	immediate func(method string, request []byte) ([]byte, bool) // SetImmediate
}

// ErrUsed is returned when a Runtime is asked to serve a second request.
var ErrUsed = errors.New("engine: a runtime serves one request; prepare a new one")

// NewRuntime prepares a fresh runtime with core loaded for the project at
// opts.Root. It is meant to be called ahead of the request it will serve.
func (b *Bundle) NewRuntime(opts Options) (*Runtime, error) {
	prelude, _, err := shims()
	if err != nil {
		return nil, fmt.Errorf("engine shims: %w", err)
	}
	if opts.MaxCallStackSize <= 0 {
		opts.MaxCallStackSize = DefaultMaxCallStackSize
	}
	vm := goja.New()
	vm.SetMaxCallStackSize(opts.MaxCallStackSize)
	r := &Runtime{bundle: b, opts: opts, vm: vm}

	if _, err := vm.RunProgram(prelude); err != nil {
		return nil, fmt.Errorf("engine prelude: %w", err)
	}
	r.installGlobals()
	jp, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	r.jsonParse = jp

	// Core is loaded as if from <root>/node_modules/@dataform/core, which is
	// where the CLI loads it from, even when dfd took it from its cache.
	coreDir := path.Join(opts.Root, "node_modules", "@dataform", "core")
	coreFile := path.Join(coreDir, "bundle.js")
	fn, err := b.load(vm)
	if err != nil {
		return nil, fmt.Errorf("loading @dataform/core %s: %w", b.Version, err)
	}
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	_ = module.Set("id", coreFile)
	_ = module.Set("filename", coreFile)
	r.loader = &loader{rt: r, root: opts.Root, files: noFiles{}, modules: map[string]*goja.Object{}}
	r.files = append(r.files, coreFile)
	_, err = fn(exports, exports, r.loader.requireFunc(coreDir, "node_modules/@dataform/core/bundle.js"), module, vm.ToValue(coreFile), vm.ToValue(coreDir))
	r.files = r.files[:0]
	if err != nil {
		return nil, fmt.Errorf("loading @dataform/core %s: %w", b.Version, err)
	}
	r.coreExports = module.Get("exports").ToObject(vm)
	if c, ok := goja.AssertFunction(r.coreExports.Get("compiler")); ok {
		r.compiler = c
	} else {
		return nil, &BundleError{Path: b.Path, Version: b.Version, NoCompiler: true}
	}
	return r, nil
}

// noFiles is the core bundle's view of the project while it loads: core
// requires nothing from the project at load time.
type noFiles struct{}

func (noFiles) ReadFile(name string) ([]byte, error)  { return nil, errNoProjectYet }
func (noFiles) Stat(name string) (fs.FileInfo, error) { return nil, errNoProjectYet }

var errNoProjectYet = errors.New("no project files while core loads")

func (r *Runtime) installGlobals() {
	vm := r.vm
	g := vm.GlobalObject()
	_ = g.DefineAccessorProperty("__dataform_current_file", vm.ToValue(func(goja.FunctionCall) goja.Value {
		if len(r.files) == 0 {
			return goja.Null()
		}
		return vm.ToValue(r.files[len(r.files)-1])
	}), nil, goja.FLAG_TRUE, goja.FLAG_FALSE)

	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug", "trace"} {
		level := level
		_ = console.Set(level, func(call goja.FunctionCall) goja.Value {
			if r.opts.Log != nil {
				r.opts.Log(level, r.formatLog(call.Arguments))
			}
			return goja.Undefined()
		})
	}
	_ = g.Set("console", console)
	r.timers.install(r)
	r.installUTF8Read()
	r.installSQLX()
	r.installUTF8Write()
}

// formatLog renders console arguments roughly as Node's util.format does.
func (r *Runtime) formatLog(args []goja.Value) string {
	parts := make([]string, 0, len(args))
	stringify, _ := goja.AssertFunction(r.vm.Get("JSON").ToObject(r.vm).Get("stringify"))
	for _, a := range args {
		if a == nil || goja.IsUndefined(a) {
			parts = append(parts, "undefined")
			continue
		}
		if o, ok := a.(*goja.Object); ok {
			if _, isFn := goja.AssertFunction(o); !isFn && o.ClassName() != "Error" {
				if s, err := stringify(goja.Undefined(), o); err == nil && !goja.IsUndefined(s) {
					parts = append(parts, s.String())
					continue
				}
			}
			if o.ClassName() == "Error" {
				if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
					parts = append(parts, st.String())
					continue
				}
			}
		}
		parts = append(parts, a.String())
	}
	return strings.Join(parts, " ")
}

func (r *Runtime) pathModule() goja.Value {
	if r.pathExports == nil {
		_, p, _ := shims()
		v, err := r.vm.RunProgram(p)
		if err != nil {
			r.throw(fmt.Errorf("path module: %w", err))
		}
		r.pathExports = v
	}
	return r.pathExports
}

// jsError is an error to be thrown into JavaScript as a new ctor(msg),
// with stack as its stack when that is set.
type jsError struct {
	ctor  string
	msg   string
	stack string
}

func (e *jsError) Error() string { return e.ctor + ": " + e.msg }

// throw raises err in JavaScript. Uncatchable goja errors (interrupts) pass
// through untouched; a stack overflow becomes a catchable RangeError, as in
// Node, so that it is reported against the file that caused it.
func (r *Runtime) throw(err error) {
	var ex *goja.Exception
	var so *goja.StackOverflowError
	var ie *goja.InterruptedError
	var je *jsError
	var me *moduleError
	switch {
	case errors.As(err, &so):
		panic(r.newError("RangeError", "Maximum call stack size exceeded"))
	case errors.As(err, &ie):
		panic(ie)
	case errors.As(err, &ex):
		panic(ex.Value())
	case errors.As(err, &je):
		o := r.newError(je.ctor, je.msg)
		if je.stack != "" {
			_ = o.DefineDataProperty("stack", r.vm.ToValue(je.stack), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
		panic(o)
	case errors.As(err, &me):
		o := r.newError("Error", me.msg)
		if me.notFound {
			// vm2's VMError (set before the stack is first read, which
			// words it with the name).
			_ = o.Set("name", "VMError")
			_ = o.Set("code", "ENOTFOUND")
		}
		panic(o)
	default:
		panic(r.newError("Error", err.Error()))
	}
}

func (r *Runtime) newError(ctor, msg string) *goja.Object {
	o, err := r.vm.New(r.vm.Get(ctor), r.vm.ToValue(msg))
	if err != nil {
		return r.vm.NewGoError(errors.New(msg))
	}
	return o
}

// watch interrupts the runtime when ctx ends; call the returned stop func
// when the request is over.
func (r *Runtime) watch(ctx context.Context) (stop func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			r.vm.Interrupt(ctx.Err())
		case <-done:
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// ErrTimeout is wrapped by errors of requests that ran past their deadline.
var ErrTimeout = errors.New("deadline exceeded")

// ErrCanceled is wrapped by errors of requests whose context was canceled.
var ErrCanceled = errors.New("canceled")

// describe turns an error from goja into one for the caller: the message of
// a thrown JavaScript error, a deadline or cancellation, or a stack overflow.
func describe(err error, what string) error {
	var ie *goja.InterruptedError
	var so *goja.StackOverflowError
	var ex *goja.Exception
	switch {
	case errors.As(err, &ie):
		if errors.Is(ie, context.DeadlineExceeded) {
			return fmt.Errorf("%s: %w", what, ErrTimeout)
		}
		return fmt.Errorf("%s: %w", what, ErrCanceled)
	case errors.As(err, &so):
		return &ScriptError{Message: "RangeError: Maximum call stack size exceeded"}
	case errors.As(err, &ex):
		return scriptError(ex)
	}
	var se *ScriptError
	if errors.As(err, &se) {
		return se
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ScriptError is a JavaScript exception that escaped to the host.
type ScriptError struct {
	Message string // "TypeError: x is not a function"
	Stack   string
}

func (e *ScriptError) Error() string { return e.Message }

func scriptError(ex *goja.Exception) *ScriptError {
	return valueError(ex.Value(), ex.String())
}

// valueError describes a thrown or rejected JavaScript value: "Name:
// message" for errors, "Uncaught <value>" for anything else thrown.
func valueError(v goja.Value, fallbackStack string) *ScriptError {
	se := &ScriptError{Stack: fallbackStack}
	o, isObj := v.(*goja.Object)
	if isObj {
		if msg := o.Get("message"); msg != nil && !goja.IsUndefined(msg) {
			name := "Error"
			if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
				name = n.String()
			}
			se.Message = name + ": " + msg.String()
			if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
				se.Stack = st.String()
			}
			return se
		}
	}
	if v == nil {
		se.Message = "Uncaught undefined"
	} else {
		se.Message = "Uncaught " + v.String()
	}
	return se
}

// timerQueue runs setTimeout/setInterval callbacks in virtual time: a
// request never sleeps; callbacks run in due order once the script yields.
type timerQueue struct {
	next    int64
	now     float64
	pending []*timer
}

type timer struct {
	id       int64
	due      float64
	seq      int64
	fn       goja.Callable
	args     []goja.Value
	interval float64
	repeat   bool
}

func (q *timerQueue) install(r *Runtime) {
	vm := r.vm
	add := func(repeat bool) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			fn, ok := goja.AssertFunction(call.Argument(0))
			if !ok {
				panic(vm.NewTypeError(`The "callback" argument must be of type function`))
			}
			delay := call.Argument(1).ToFloat()
			if !(delay >= 1) { // NaN, negative and < 1 all mean 1ms in Node
				delay = 1
			}
			q.next++
			var args []goja.Value
			if len(call.Arguments) > 2 {
				args = append(args, call.Arguments[2:]...)
			}
			q.pending = append(q.pending, &timer{id: q.next, due: q.now + delay, seq: q.next, fn: fn, args: args, interval: delay, repeat: repeat})
			return vm.ToValue(q.next)
		}
	}
	clear := func(call goja.FunctionCall) goja.Value {
		id := call.Argument(0).ToInteger()
		for i, t := range q.pending {
			if t.id == id {
				q.pending = append(q.pending[:i], q.pending[i+1:]...)
				break
			}
		}
		return goja.Undefined()
	}
	g := vm.GlobalObject()
	_ = g.Set("setTimeout", add(false))
	_ = g.Set("setInterval", add(true))
	_ = g.Set("setImmediate", func(call goja.FunctionCall) goja.Value {
		args := append([]goja.Value{call.Argument(0), vm.ToValue(0)}, call.Arguments[min(1, len(call.Arguments)):]...)
		return add(false)(goja.FunctionCall{This: call.This, Arguments: args})
	})
	_ = g.Set("clearTimeout", clear)
	_ = g.Set("clearInterval", clear)
	_ = g.Set("clearImmediate", clear)
	_, _ = vm.RunString(`globalThis.queueMicrotask = function (fn) { Promise.resolve().then(fn); };`)
}

// runOne fires the earliest timer. It reports false when none is pending.
func (q *timerQueue) runOne() (bool, error) {
	if len(q.pending) == 0 {
		return false, nil
	}
	sort.SliceStable(q.pending, func(i, j int) bool {
		a, b := q.pending[i], q.pending[j]
		if a.due != b.due {
			return a.due < b.due
		}
		return a.seq < b.seq
	})
	t := q.pending[0]
	q.pending = q.pending[1:]
	if t.due > q.now {
		q.now = t.due
	}
	if t.repeat {
		q.next++
		t.seq = q.next
		t.due = q.now + t.interval
		q.pending = append(q.pending, t)
	}
	_, err := t.fn(goja.Undefined(), t.args...)
	return true, err
}

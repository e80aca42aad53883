package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dop251/goja"
)

// RPC answers one DbAdapter call of JiT code. method is the service method
// name core passes ("Execute", "ListTables", "GetTable", "DeleteTable");
// request and response are the encoded messages of jit.proto. It is called
// on its own goroutine, with a context that ends when the JiT request does.
// A nil response is sent to JavaScript as empty bytes: protobufjs never
// settles a call answered with null.
type RPC func(ctx context.Context, method string, request []byte) ([]byte, error)

// vm2Passthrough lets jitCode compiled by the official CLI run here: vm2
// rewrites every `catch (e) {` of user code to call this object, and that
// text ends up in the graph's jitCode.
const vm2Passthrough = `Object.defineProperty(globalThis, "VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL", {
  value: Object.freeze({ handleException: function (e) { return e; } }),
  enumerable: false
});`

type rpcResult struct {
	cb       goja.Callable
	response []byte
	err      error
}

// SetImmediate gives the next JitCompile answers it may use without asking
// its RPC: f is asked first, on the runtime's goroutine, for every adapter
// call, and when it has the answer (ok) the call is settled from the
// runtime's own loop, as asynchronously as an RPC answer but without a
// goroutine and a channel hop. f must be quick and must not block.
func (r *Runtime) SetImmediate(f func(method string, request []byte) (response []byte, ok bool)) {
	r.immediate = f
}

// JitCompile runs core's jitCompiler on an encoded dataform.JitCompilationRequest
// and returns the encoded dataform.JitCompilationResponse. It sets up what
// the CLI's JiT sandbox gives the code: `require` for project files and
// @dataform packages (no builtins, no compiler), and the DbAdapter answered
// by rpc. Timers run in virtual time. JavaScript that throws or rejects
// becomes a *ScriptError; the deadline or cancellation of ctx an error
// wrapping ErrTimeout or ErrCanceled.
func (r *Runtime) JitCompile(ctx context.Context, files Files, request []byte, rpc RPC) ([]byte, error) {
	if r.used {
		return nil, ErrUsed
	}
	r.used = true
	stop := r.watch(ctx)
	defer stop()

	rpcCtx, cancelRPCs := context.WithCancel(ctx)
	var inflight sync.WaitGroup
	defer inflight.Wait() // after cancelRPCs below: every adapter call has returned
	defer cancelRPCs()
	results := make(chan rpcResult)
	var ready []rpcResult // answered by r.immediate, not yet delivered
	pending := 0

	var response []byte
	err := r.guard(func() error {
		vm := r.vm
		l := r.loader
		l.files, l.stats = files, nil
		l.jit = true
		if _, err := vm.RunString(vm2Passthrough); err != nil {
			return err
		}
		if err := vm.GlobalObject().Set("require", l.requireFunc(r.opts.Root, "index.js")); err != nil {
			return err
		}
		newCompiler, ok := goja.AssertFunction(r.coreExports.Get("jitCompiler"))
		if !ok {
			return &ScriptError{Message: fmt.Sprintf("@dataform/core %s has no jitCompiler: JiT actions need a newer core", r.bundle.Version)}
		}
		callback := vm.ToValue(func(call goja.FunctionCall) goja.Value {
			method := call.Argument(0).String()
			req, err := r.bytesOf(call.Argument(1))
			if err != nil {
				panic(vm.NewTypeError("DbAdapter request is not a Uint8Array"))
			}
			cb, ok := goja.AssertFunction(call.Argument(2))
			if !ok {
				panic(vm.NewTypeError("DbAdapter callback is not a function"))
			}
			pending++
			if r.immediate != nil {
				if resp, ok := r.immediate(method, req); ok {
					ready = append(ready, rpcResult{cb: cb, response: resp})
					return goja.Undefined()
				}
			}
			inflight.Add(1)
			go func() {
				defer inflight.Done()
				resp, err := rpc(rpcCtx, method, req)
				select {
				case results <- rpcResult{cb: cb, response: resp, err: err}:
				case <-rpcCtx.Done():
				}
			}()
			return goja.Undefined()
		})
		compiler, err := newCompiler(goja.Undefined(), callback)
		if err != nil {
			return err
		}
		compile, ok := goja.AssertFunction(compiler.ToObject(vm).Get("compile"))
		if !ok {
			return errors.New("core's jitCompiler() returned no compile()")
		}
		req, err := r.uint8Array(request)
		if err != nil {
			return err
		}
		// A syntax error in jitCode or an unknown target type throws here
		// rather than rejecting the promise.
		pv, err := compile(compiler, req)
		if err != nil {
			return err
		}
		promise, ok := pv.Export().(*goja.Promise)
		if !ok {
			return fmt.Errorf("core's jitCompiler().compile() returned %s, not a promise", pv)
		}
		for {
			switch promise.State() {
			case goja.PromiseStateFulfilled:
				response, err = r.bytesOf(promise.Result())
				if err != nil {
					return fmt.Errorf("JiT compilation returned %s: %w", promise.Result(), err)
				}
				return nil
			case goja.PromiseStateRejected:
				return valueError(promise.Result(), "")
			}
			// Adapter answers first; timers fire when nothing else is ready
			// (virtual time: a timer never waits for a real clock).
			if len(ready) > 0 {
				res := ready[0]
				ready = ready[1:]
				pending--
				if err := r.deliver(res); err != nil {
					return err
				}
				continue
			}
			select {
			case res := <-results:
				pending--
				if err := r.deliver(res); err != nil {
					return err
				}
				continue
			default:
			}
			if ran, err := r.timers.runOne(); ran || err != nil {
				if err != nil && !r.logTimerError(err) {
					return err
				}
				continue
			}
			if pending == 0 {
				return &ScriptError{Message: "JiT code is waiting for something that never happens: no adapter call or timer is pending"}
			}
			select {
			case res := <-results:
				pending--
				if err := r.deliver(res); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("JiT compilation: %w", ErrTimeout)
		}
		if errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("JiT compilation: %w", ErrCanceled)
		}
		return nil, describe(err, "JiT compilation")
	}
	return response, nil
}

// deliver settles one adapter call in JavaScript, as the CLI's worker does:
// callback(new Error(message)) or callback(null, bytes).
func (r *Runtime) deliver(res rpcResult) error {
	if res.err != nil {
		_, err := res.cb(goja.Undefined(), r.newError("Error", res.err.Error()))
		return err
	}
	b, err := r.uint8Array(res.response)
	if err != nil {
		return err
	}
	_, err = res.cb(goja.Undefined(), goja.Null(), b)
	return err
}

// logTimerError logs an exception thrown by a timer callback, as Node
// prints it, and reports whether err was one (anything else, such as an
// interrupt, must end the request).
func (r *Runtime) logTimerError(err error) bool {
	var ex *goja.Exception
	if !errors.As(err, &ex) {
		return false
	}
	if r.opts.Log != nil {
		r.opts.Log("error", "uncaught exception in a timer callback: "+scriptError(ex).Stack)
	}
	return true
}

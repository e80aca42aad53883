package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"

	"github.com/dop251/goja"
)

// Compile runs core's main() on an encoded dataform.CoreExecutionRequest and
// returns the encoded dataform.CoreExecutionResponse. It does what the
// CLI's sandbox script does: expose workflow_settings.yaml / dataform.json to
// core through globals, then call main() as if from <root>/index.js.
//
// Errors in user code are not errors here: core records them in the graph.
// An error is returned when core itself fails (for example on a malformed
// workflow_settings.yaml), on deadline or cancellation of ctx, or when the
// runtime was already used.
func (r *Runtime) Compile(ctx context.Context, files Files, request []byte) ([]byte, error) {
	if r.used {
		return nil, ErrUsed
	}
	r.used = true
	stop := r.watch(ctx)
	defer stop()

	l := r.loader
	l.files, l.stats = files, nil
	var response []byte
	err := r.guard(func() error {
		g := r.vm.GlobalObject()
		for _, s := range []struct{ file, global string }{
			{"workflow_settings.yaml", "workflowSettingsYaml"},
			{"dataform.json", "dataformJson"},
		} {
			if _, err := files.Stat(s.file); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return fmt.Errorf("reading %s: %w", s.file, err)
			}
			v, err := l.require(r.opts.Root, "./"+s.file, "index.js")
			if err != nil {
				return err
			}
			if err := g.Set(s.global, v); err != nil {
				return err
			}
		}
		main, ok := goja.AssertFunction(r.coreExports.Get("main"))
		if !ok {
			return fmt.Errorf("@dataform/core %s exports no main()", r.bundle.Version)
		}
		if err := r.guardActionCompiles(); err != nil {
			return err
		}
		req, err := r.uint8Array(request)
		if err != nil {
			return err
		}
		r.files = append(r.files, r.opts.Root+"/index.js")
		out, err := main(r.coreExports, req)
		r.files = r.files[:0]
		if err != nil {
			return err
		}
		response, err = r.bytesOf(out)
		if err != nil {
			return fmt.Errorf("core's main() returned %s: %w", out, err)
		}
		return r.drainTimers(ctx)
	})
	if err != nil {
		return nil, describe(err, "compile")
	}
	return response, nil
}

// guard runs f, turning a Go panic inside the engine into an error so that a
// bug in one request never takes the process down.
func (r *Runtime) guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				var ie *goja.InterruptedError
				if errors.As(e, &ie) {
					err = ie
					return
				}
			}
			err = fmt.Errorf("engine: internal error: %v\n%s", p, debug.Stack())
		}
	}()
	return f()
}

// drainTimers runs pending timers; an exception in a timer callback is
// logged, as Node would print it, and does not fail the request.
func (r *Runtime) drainTimers(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ran, err := r.timers.runOne()
		if err != nil && !r.logTimerError(err) {
			return err
		}
		if !ran {
			return nil
		}
	}
}

// uint8Array copies b into a new JavaScript Uint8Array.
func (r *Runtime) uint8Array(b []byte) (goja.Value, error) {
	buf := r.vm.NewArrayBuffer(append([]byte(nil), b...))
	return r.vm.New(r.vm.Get("Uint8Array"), r.vm.ToValue(buf))
}

// bytesOf copies the bytes out of a Uint8Array (goja shares the backing
// store with JavaScript, so the copy is needed).
func (r *Runtime) bytesOf(v goja.Value) ([]byte, error) {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil, errors.New("not a Uint8Array")
	}
	buf, ok := o.Get("buffer").Export().(goja.ArrayBuffer)
	if !ok {
		return nil, errors.New("not a Uint8Array")
	}
	off, n := int(o.Get("byteOffset").ToInteger()), int(o.Get("byteLength").ToInteger())
	all := buf.Bytes()
	if off < 0 || n < 0 || off+n > len(all) {
		return nil, errors.New("Uint8Array out of range")
	}
	return append([]byte(nil), all[off:off+n]...), nil
}

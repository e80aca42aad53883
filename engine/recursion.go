package engine

import (
	"fmt"

	"github.com/dop251/goja"
)

// A runaway recursion is a catchable RangeError in V8, so under the CLI
// core records it as a compilation error on the file that caused it. In
// goja the call-depth limit raises an uncatchable *goja.StackOverflowError
// instead, which unwinds through every JavaScript catch up to the nearest
// Go call. The loader is such a call for code that runs while a file loads;
// guardActionCompiles adds one around each action's compile() for code that
// runs in core's compile phase (a SQLX js {} block, a .query(ctx => …)
// closure), where core's compileGraphChunk catches errors per action. There
// the overflow becomes a RangeError (Runtime.throw), which core records
// with the action's file and target as it does under the CLI.
const guardCompilesSource = `(function (session, boundary) {
  "use strict";
  var proto = Object.getPrototypeOf(session);
  var chunk = proto && proto.compileGraphChunk;
  if (typeof chunk !== "function") return;
  var guarded = new WeakSet();
  function guard(p) {
    for (; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      var d = Object.getOwnPropertyDescriptor(p, "compile");
      if (!d) continue;
      if (typeof d.value !== "function" || guarded.has(d.value) || !d.configurable) return;
      var orig = d.value;
      var compile = function compile() {
        var self = this, args = arguments;
        return boundary(function () { return orig.apply(self, args); });
      };
      guarded.add(compile);
      Object.defineProperty(p, "compile", { value: compile, writable: d.writable, enumerable: d.enumerable, configurable: true });
      return;
    }
  }
  Object.defineProperty(proto, "compileGraphChunk", {
    value: function compileGraphChunk(actions) {
      if (actions && typeof actions.forEach === "function") {
        actions.forEach(function (a) { if (a !== null && typeof a === "object") guard(Object.getPrototypeOf(a)); });
      }
      return chunk.apply(this, arguments);
    },
    writable: true, enumerable: false, configurable: true
  });
})`

// guardActionCompiles installs the Go boundary around every action's
// compile() (see guardCompilesSource). Cores without session or
// compileGraphChunk are left as they are.
func (r *Runtime) guardActionCompiles() error {
	session, ok := r.coreExports.Get("session").(*goja.Object)
	if !ok {
		return nil
	}
	install, err := r.vm.RunString(guardCompilesSource)
	if err != nil {
		return fmt.Errorf("engine: compile guard: %w", err)
	}
	fn, _ := goja.AssertFunction(install)
	boundary := r.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		thunk, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(r.vm.NewTypeError("not a function"))
		}
		v, err := thunk(goja.Undefined())
		if err != nil {
			r.throw(err) // a stack overflow becomes a RangeError; anything else is rethrown as it was
		}
		return v
	})
	if _, err := fn(goja.Undefined(), session, boundary); err != nil {
		return fmt.Errorf("engine: compile guard: %w", err)
	}
	return nil
}

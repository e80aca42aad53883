// Runs in every fresh runtime before @dataform/core. It gives core what
// Node + vm2 would: `global`, and enough of V8's stack-trace API that core's
// caller-file lookup works. Like vm2, it hands out no structured call sites, so
// core falls back to global.__dataform_current_file, exactly as under the CLI.
(function (g) {
  "use strict";
  g.global = g;

  var NativeError = g.Error;
  function DataformError() {
    var err = Reflect.construct(NativeError, arguments, new.target || DataformError);
    var prepare = DataformError.prepareStackTrace;
    if (typeof prepare === "function") {
      Object.defineProperty(err, "stack", {
        value: prepare(err, []),
        writable: true,
        configurable: true,
        enumerable: false
      });
    }
    return err;
  }
  DataformError.prototype = NativeError.prototype;
  Object.defineProperty(NativeError.prototype, "constructor", {
    value: DataformError,
    writable: true,
    configurable: true,
    enumerable: false
  });
  Object.setPrototypeOf(DataformError, NativeError);
  DataformError.stackTraceLimit = 10;
  DataformError.captureStackTrace = function (target) {
    if (target === null || (typeof target !== "object" && typeof target !== "function")) {
      throw new TypeError("Error.captureStackTrace called on non-object");
    }
    var prepare = DataformError.prepareStackTrace;
    var stack = typeof prepare === "function" ? prepare(target, []) : new NativeError().stack;
    Object.defineProperty(target, "stack", {
      value: stack,
      writable: true,
      configurable: true,
      enumerable: false
    });
  };
  Object.defineProperty(g, "Error", {
    value: DataformError,
    writable: true,
    configurable: true,
    enumerable: false
  });
})(globalThis);

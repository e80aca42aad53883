// JiT parity oracle (test-only; run by jit_parity_test.go).
//
// Usage: node jit_oracle.js <core bundle.js> [<@dataform/cli node_modules dir>]
//
// Reads one JSON object from stdin:
//
//   {
//     "request": "<base64 dataform.JitCompilationRequest>",
//     "build": {"graph": "<base64 CompiledGraph>", "target": "db.schema.name",
//               "jitCode": "<optional replacement>"},
//     "answers": [
//       {"method": "GetTable", "request": "<base64>", "response": "<base64>"},
//       {"method": "GetTable", "request": "<base64>", "error": "NOT_FOUND: ..."}
//     ],
//     "cliWorker": "<project dir>"
//   }
//
// and runs <bundle>'s jitCompiler(rpc).compile(requestBytes) in plain Node,
// the call the CLI's JiT worker makes (cli/vm/jit_worker.ts:87-108).
// DbAdapter calls are answered from "answers" by (method, request bytes),
// asynchronously like the worker's IPC round trip: an error as
// callback(new Error(msg)), a response as a Uint8Array (never null, as the
// worker does: `resBytes ? new Uint8Array(resBytes) : new Uint8Array()`). A
// call with no answer is answered with an error and reported.
//
// The bundle is loaded the way the CLI's sandbox loads it rather than with
// Node's require: as CommonJS whose `require` offers no Node builtin and no
// package (jit_worker.ts:74-85: builtin: [], external: @dataform/* only).
// That matters: core 3.0.59's protobufjs probes require("buffer"), which
// the sandbox refuses, and then writes strings with its own UTF-8 code (a
// non-string field becomes ""); with Node's require it would use Buffer,
// which throws on one. (Core 3.0.62's protobufjs takes the global Buffer,
// which Node and vm2 both have.) Node globals are otherwise left as they are.
//
// With "cliWorker", the request runs in the official CLI's own JiT worker
// (@dataform/cli's worker_bundle.js: vm2 sandbox, the project's core) in a
// child process, driven with the CLI's IPC messages (compiler.ts), and its
// calls are answered the same way. Its "error" is what the worker sends:
// the error's stack (or nothing for a thrown non-Error).
//
// Instead of "request", "build" makes the request the way the CLI's runner
// does, from the graph bytes core produced, with the pbjs static code of the
// CLI bundle (needs the second argument): compile.ts:93-94 decodes the graph,
// build.ts:82-123 makes the execution action, run.ts:585-604 creates the
// request, compiler.ts:60-64 sends it to the worker as JSON and
// jit_worker.ts:69-70 rebuilds and encodes it. "jitCode" replaces the
// action's jitCode first (test-local JiT code on a real action).
//
// Prints one JSON object:
//   {"request": b64 (with "build"), "response": b64} or {..., "error": msg}
//   ("error": null when the CLI's worker sent no message),
//   plus "calls": [{"method", "request"}] in call order and, when there were
//   any, "unexpected": ["Method <b64>", ...].
// error is formatted as dfd's engine does (engine.ScriptError): "Name:
// message" for an Error, "Uncaught <value>" for anything else thrown.
"use strict";
const fs = require("fs");
const path = require("path");

const bundlePath = path.resolve(process.argv[2]);
const cliNodeModules = process.argv[3];
const input = JSON.parse(fs.readFileSync(0, "utf8"));

const b64 = (bytes) => Buffer.from(bytes).toString("base64");
// A Uint8Array that is not a Node Buffer, as the worker passes them.
const bytesOf = (s) => new Uint8Array(Buffer.from(s || "", "base64"));

// vm2 (the CLI's sandbox) rewrites `catch (e) {` in user code to call this
// and defines it; the CLI-compiled jitCode in a graph keeps those calls. The
// pass-through keeps such code runnable here, as it is in the CLI.
if (!("VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL" in globalThis)) {
  Object.defineProperty(globalThis, "VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL", {
    value: Object.freeze({ handleException: (e) => e }),
    enumerable: false
  });
}

function describe(v) {
  if (v !== null && (typeof v === "object" || typeof v === "function") && v.message !== undefined) {
    const name = v.name !== undefined ? String(v.name) : "Error";
    return name + ": " + String(v.message);
  }
  return "Uncaught " + String(v);
}

// --- Building the request as the CLI does ---------------------------------

// The generated static module (dataform.*, google.protobuf.*) of the CLI
// bundle, evaluated against the CLI's protobufjs/minimal (the same technique
// as graphjson/testdata/oracle.js).
function loadStatic(nm) {
  const minimal = require(path.join(nm, "protobufjs/minimal"));
  const src = fs.readFileSync(path.join(nm, "@dataform/cli/bundle.js"), "utf8");
  const start = src.indexOf("const $Reader = $protobuf__namespace.Reader");
  const g = src.indexOf("const google = $root.google = (() => {", start);
  const endMark = "\n    return google;\n})();";
  const end = src.indexOf(endMark, g);
  if (start < 0 || g < 0 || end < 0) throw new Error("static protobuf code not found in the CLI's bundle.js");
  const code = src.slice(start, end + endMark.length);
  const ns = Object.assign({}, minimal, { roots: {} });
  return new Function("$protobuf__namespace", code + "\nreturn $root;")(ns);
}

// core/targets.ts targetAsReadableString.
function targetAsReadableString(t) {
  const parts = [t.name, t.schema];
  if (t.database) parts.push(t.database);
  return parts.reverse().join(".");
}

function buildRequest(build) {
  if (!cliNodeModules) throw new Error("\"build\" needs the CLI's node_modules directory as the second argument");
  const { dataform } = loadStatic(cliNodeModules);
  // compile.ts:93-94.
  const graph = dataform.CompiledGraph.create(dataform.CompiledGraph.decode(bytesOf(build.graph)));
  const tableTypeEnumToString = (e) => dataform.TableType[e].toLowerCase(); // core/utils.ts:475
  // core/utils.ts:479 setOrValidateTableEnumType, as prune.ts:11 applies it.
  const setEnumType = (table) => {
    let fromStr = null;
    if (table.type !== "" && table.type !== undefined) {
      fromStr = { table: dataform.TableType.TABLE, incremental: dataform.TableType.INCREMENTAL, view: dataform.TableType.VIEW }[table.type];
      if (fromStr === undefined) throw new Error(`Unexpected table type: ${table.type}`);
    }
    if (table.enumType === dataform.TableType.UNKNOWN_TYPE || table.enumType === undefined) table.enumType = fromStr;
    else if (fromStr !== null && table.enumType !== fromStr) throw new Error("type and enumType are not equivalent");
  };
  // build.ts:109-123.
  const partial = (action) => {
    const executionAction = dataform.ExecutionAction.create({
      target: action.target,
      fileName: action.fileName,
      dependencyTargets: action.dependencyTargets,
      actionDescriptor: action.actionDescriptor
    });
    if (action.jitCode && !action.disabled) executionAction.jitCode = action.jitCode;
    return executionAction;
  };
  graph.tables.forEach(setEnumType);
  const actions = [].concat(
    graph.tables.map((t) => ({ ...partial(t), type: "table", tableType: tableTypeEnumToString(t.enumType) })),
    graph.operations.map((o) => ({ ...partial(o), type: "operation" })),
    graph.assertions.map((a) => ({ ...partial(a), type: "assertion" }))
  );
  const action = actions.find((a) => targetAsReadableString(a.target) === build.target);
  if (!action) throw new Error(`oracle: no action ${build.target} in the graph`);
  if (build.jitCode !== undefined) action.jitCode = build.jitCode;
  // run.ts:585-604.
  let compilationTargetType = dataform.JitCompilationTargetType.JIT_COMPILATION_TARGET_TYPE_UNSPECIFIED;
  if (action.type === "table") {
    compilationTargetType = action.tableType === "incremental"
      ? dataform.JitCompilationTargetType.JIT_COMPILATION_TARGET_TYPE_INCREMENTAL_TABLE
      : dataform.JitCompilationTargetType.JIT_COMPILATION_TARGET_TYPE_TABLE;
  } else if (action.type === "operation") {
    compilationTargetType = dataform.JitCompilationTargetType.JIT_COMPILATION_TARGET_TYPE_OPERATION;
  } else if (action.type === "assertion") {
    compilationTargetType = dataform.JitCompilationTargetType.JIT_COMPILATION_TARGET_TYPE_ASSERTION;
  }
  const jitRequest = dataform.JitCompilationRequest.create({
    target: action.target,
    dependencies: action.dependencyTargets,
    jitCode: action.jitCode,
    compilationTargetType,
    jitData: graph.jitData
  });
  // compiler.ts:60-64: child.send() with Node's default JSON serialization.
  const sent = JSON.parse(JSON.stringify({ type: "jit_compile", request: jitRequest })).request;
  // jit_worker.ts:69-70.
  const requestMessage = dataform.JitCompilationRequest.fromObject(sent);
  return new Uint8Array(dataform.JitCompilationRequest.encode(requestMessage).finish());
}

// --- Running core's jitCompiler -------------------------------------------

const out = {};
const calls = [];
const unexpected = [];
const answers = new Map();
for (const a of input.answers || []) {
  const key = a.method + " " + (a.request || "");
  if (!answers.has(key)) answers.set(key, a); // the adapter is deterministic: the first answer stands for all
}

// rpc is the callback core's jitCompiler gets in Node: answers arrive on a
// later turn of the event loop, as the worker's IPC answers do.
function rpc(method, reqBytes, callback) {
  answer(method, reqBytes, (err, res) => setImmediate(() => (err ? callback(err) : callback(null, res))));
}

let done = false;
function finish(result) {
  if (done) return;
  done = true;
  Object.assign(out, result);
  out.calls = calls;
  if (unexpected.length) out.unexpected = unexpected;
  process.stdout.write(JSON.stringify(out), () => process.exit(0));
}

// Node would end the process on an unhandled rejection; the CLI's result is
// decided by the compile() promise alone, so ignore them here.
process.on("unhandledRejection", () => {});
process.on("beforeExit", () =>
  finish({ error: "JiT code is waiting for something that never happens: no adapter call or timer is pending" }));

let requestBytes;
try {
  if (input.build) {
    requestBytes = buildRequest(input.build);
    out.request = b64(requestBytes);
  } else {
    requestBytes = bytesOf(input.request);
  }
} catch (e) {
  process.stderr.write(String(e && e.stack || e) + "\n");
  process.exit(2);
}

// loadCore evaluates the bundle as CommonJS with a require that fails for
// everything, as vm2's does for what the CLI does not allow. Core's
// protobufjs looks modules up with eval("require"), which finds this one.
function loadCore(file) {
  const src = fs.readFileSync(file, "utf8");
  const sandboxRequire = (name) => {
    const e = new Error(`Cannot find module '${name}'`);
    e.code = "MODULE_NOT_FOUND";
    throw e;
  };
  const module = { exports: {} };
  new Function("exports", "require", "module", "__filename", "__dirname", src)(
    module.exports, sandboxRequire, module, file, path.dirname(file));
  return module.exports;
}

function answer(method, reqBytes, callback) {
  const req = b64(reqBytes);
  calls.push({ method, request: req });
  const key = method + " " + req;
  const a = answers.get(key);
  if (!a) {
    unexpected.push(key);
    callback(new Error(`oracle: unexpected DbAdapter call ${method}(${req})`));
  } else if (a.error !== undefined) {
    callback(new Error(a.error));
  } else {
    callback(null, bytesOf(a.response));
  }
}

function runInNode() {
  const { jitCompiler } = loadCore(bundlePath);
  let promise;
  try {
    // A syntax error in jitCode or an unknown target type throws here, not
    // in the promise.
    promise = jitCompiler(rpc).compile(requestBytes);
  } catch (e) {
    finish({ error: describe(e) });
    return;
  }
  Promise.resolve(promise).then(
    (bytes) => finish({ response: b64(bytes) }),
    (e) => finish({ error: describe(e) })
  );
}

// runInCLIWorker plays the CLI's side of compiler.ts: boot the worker, send
// the request as the JSON the CLI's IPC carries, answer rpc_request
// messages, and take jit_response (re-encoded with the CLI's own protobuf
// code, as the CLI decodes it) or jit_error.
function runInCLIWorker(projectDir) {
  if (!cliNodeModules) throw new Error("\"cliWorker\" needs the CLI's node_modules directory as the second argument");
  const { dataform } = loadStatic(cliNodeModules);
  const request = dataform.JitCompilationRequest.decode(requestBytes).toJSON();
  const { fork } = require("child_process");
  const child = fork(path.join(cliNodeModules, "@dataform/cli/worker_bundle.js"), [], {
    stdio: ["ignore", "ignore", "inherit", "ipc"]
  });
  const end = (result) => {
    clearTimeout(timer);
    child.kill("SIGKILL");
    finish(result);
  };
  const timer = setTimeout(() => end({ error: "oracle: the CLI's JiT worker did not answer within 60s" }), 60000);
  let sent = false;
  child.on("message", (m) => {
    switch (m && m.type) {
      case "worker_booted": // the worker bundle announces itself twice
        if (!sent) {
          sent = true;
          child.send({ type: "jit_compile", request, projectDir });
        }
        break;
      case "rpc_request":
        answer(m.method, new Uint8Array(m.request), (err, resBytes) =>
          child.send(err
            ? { type: "rpc_response", correlationId: m.correlationId, error: err.message }
            : { type: "rpc_response", correlationId: m.correlationId, response: Array.from(resBytes) }));
        break;
      case "jit_response": {
        const msg = dataform.JitCompilationResponse.fromObject(m.response);
        end({ response: b64(dataform.JitCompilationResponse.encode(msg).finish()) });
        break;
      }
      case "jit_error":
        end({ error: m.error === undefined ? null : m.error });
        break;
      // Anything else is the worker's static-compile listener answering our
      // rpc_response messages (it handles every message but jit_compile).
    }
  });
  child.on("exit", (code) => end({ error: `oracle: the CLI's JiT worker exited (${code})` }));
}

if (input.cliWorker) {
  runInCLIWorker(input.cliWorker);
} else {
  runInNode();
}

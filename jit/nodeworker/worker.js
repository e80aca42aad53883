// dfd's Node.js worker: the same worker protocol as `dfd worker` (package
// jit, frames of jit/wirepb/wire.proto on stdin/stdout), with V8 instead of
// goja running @dataform/core. It is started by dfd's worker pool as
//
//   node --experimental-permission --allow-fs-read=<this script> \
//        --allow-fs-read=<project root> --allow-fs-read=<core's directory> \
//        --experimental-vm-modules --disable-warning=ExperimentalWarning \
//        worker.js --bundle=… --core-version=… --root=… [--memory-limit=…] …
//
// (see nodeworker.go, CommandFor). It mirrors the goja host of package
// engine: a fresh vm context per request, core's bundle compiled once,
// CommonJS loader confined to the project root, __dataform_current_file,
// no call sites for Error.prepareStackTrace (as vm2), virtual-time timers,
// console → Log frames.
//
// Sandbox. Nothing made in this (host) realm is ever handed to code running
// in a context: the shims (require, console, timers, the stack-trace API)
// are written below as contextPrelude, which is evaluated *inside* each
// context and closes over a small bridge of host functions that take and
// return only primitives (strings, numbers, booleans) or objects of the
// context's own realm. Errors never cross from host to context: the bridge
// reports failures as values, and the prelude throws context-realm errors.
// The context's global object is backed by a null-prototype object (so
// `this.constructor` is the context's Object), dynamic import() gets a
// context-realm rejection (every script is compiled with an
// importModuleDynamically callback, which needs --experimental-vm-modules),
// and code runs under vm's timeout with the context's own microtask queue.
// The process itself runs under Node's permission model (reads of the
// project, core and this script only; no writes, children or workers), and
// networking is disabled in it before any project code runs.
"use strict";

const fs = require("fs");
const vm = require("vm");
const crypto = require("crypto");
const util = require("util");
const v8 = require("v8");

// @@WIRE-BEGIN@@ (generated from jit/wirepb/wire.proto and jit/wire by
// TestWireConstants; do not edit: go test ./jit/nodeworker -run TestWireConstants -update)
const PROTOCOL_VERSION = 2;
const F = {
  Frame: { hello: 1, request: 2, response: 3, cancel: 4, adapter_call: 5, adapter_result: 6, log: 7, accepted: 8 },
  Hello: { protocol_version: 1, core_version: 2, pid: 3, bundle_path: 4, root: 5, startup_micros: 6, memory_limit_bytes: 7, interrupted_by_sigint: 8 },
  Request: { id: 1, compile: 2, jit: 3 },
  Compile: { request: 1, root: 2, overlay: 3, timeout_ms: 4, mode: 5, disk: 6 },
  Compile_OverlayEntry: { key: 1, value: 2 },
  DiskState: { paths: 1, signatures: 2 },
  Incremental: { rerun: 1, file: 2, kept: 3, reason: 4 },
  Jit: { request: 1, root: 2, overlay: 3, timeout_ms: 4, prefetched: 5 },
  Jit_OverlayEntry: { key: 1, value: 2 },
  PrefetchedCall: { method: 1, request: 2, response: 3 },
  Response: { id: 1, result: 2, error: 3, stats: 4, incremental: 5 },
  Error: { code: 1, message: 2, stack: 3 },
  Stats: { prepare_micros: 1, wait_micros: 2, run_micros: 3, peak_heap_bytes: 4, requests_served: 5 },
  Accepted: { id: 1 },
  Cancel: { id: 1 },
  AdapterCall: { call_id: 1, request_id: 2, method: 3, request: 4, prefetched: 5 },
  AdapterResult: { call_id: 1, response: 2, error: 3 },
  Log: { request_id: 1, level: 2, message: 3 },
};
const COMPILEMODE = { COMPILE_FULL: 0, COMPILE_FULL_HOOKED: 1, COMPILE_KEEP: 2, COMPILE_INCREMENTAL: 3 };
const CODE = { CODE_UNSPECIFIED: 0, SCRIPT_ERROR: 1, DEADLINE_EXCEEDED: 2, CANCELED: 3, RESOURCE_EXHAUSTED: 4, INVALID_ARGUMENT: 5, INTERNAL: 6, UNAVAILABLE: 7 };
// @@WIRE-END@@
const DEFAULT_MAX_FRAME = 64 << 20;
const STALL_TIMEOUT_MS = 10000;
const EXIT_OK = 0, EXIT_FAILURE = 1, EXIT_USAGE = 2, EXIT_MEMORY = 3, EXIT_PROTOCOL = 4;

function diag(msg) {
  try { fs.writeSync(2, "dfd node worker " + process.pid + ": " + msg + "\n"); } catch (_) { /* stderr gone */ }
}

// --- Arguments (jit.WorkerArgs) ---------------------------------------------

function parseArgs(argv) {
  const o = { bundle: "", coreVersion: "", root: "", memoryLimit: 0, gcPercent: 0, softMemoryLimit: 0, maxFrame: 0, spares: 1, transpileCache: "", selfTest: false };
  const names = {
    "bundle": "bundle", "core-version": "coreVersion", "root": "root", "memory-limit": "memoryLimit",
    "gc-percent": "gcPercent", "max-frame": "maxFrame", "spares": "spares",
    // Go-runtime settings of the goja worker, meaningless here.
    "soft-memory-limit": "softMemoryLimit",
    // The goja worker's on-disk transpile cache: this worker keeps its own
    // in memory (the permission model lets it write nothing).
    "transpile-cache": "transpileCache",
  };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    if (a === "-h" || a === "--help" || a === "-help") {
      fs.writeSync(2, "Usage: node worker.js --bundle=PATH --core-version=V --root=DIR [--memory-limit=BYTES] [--max-frame=BYTES] [--spares=N]\n");
      process.exit(EXIT_OK);
    }
    if (a === "--self-test") { o.selfTest = true; continue; }
    if (!a.startsWith("-")) throw new Error(`dfd worker: unexpected argument "${a}"`);
    a = a.replace(/^--?/, "");
    let name = a, value;
    const eq = a.indexOf("=");
    if (eq >= 0) { name = a.slice(0, eq); value = a.slice(eq + 1); }
    const key = names[name];
    if (!key) {
      // A flag of a newer host: ignore it (with a word on stderr) rather
      // than refuse to start. Only the --name=value form can be skipped.
      if (value === undefined) throw new Error(`flag provided but not defined: -${name}`);
      diag(`ignoring unknown flag -${name}`);
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new Error(`flag needs an argument: -${name}`);
      value = argv[++i];
    }
    if (typeof o[key] === "number") {
      const n = Number(value);
      if (!Number.isFinite(n) || String(value).trim() === "") throw new Error(`invalid value "${value}" for flag -${name}`);
      o[key] = n;
    } else {
      o[key] = value;
    }
  }
  if (!o.bundle || !o.coreVersion || !o.root) throw new Error("dfd worker: --bundle, --core-version and --root are required");
  if (o.maxFrame <= 0) o.maxFrame = DEFAULT_MAX_FRAME;
  if (o.spares <= 0) o.spares = 1;
  o.spares = Math.min(o.spares, 2);
  return o;
}

// --- Network lockdown (defence in depth) --------------------------------------

function lockdown() {
  const deny = (what) => function () {
    throw new Error(`dfd node worker: network access is disabled (${what})`);
  };
  const net = require("net");
  net.Socket.prototype.connect = deny("net.Socket.connect");
  net.connect = net.createConnection = deny("net.connect");
  net.Server.prototype.listen = deny("net.Server.listen");
  const tls = require("tls");
  tls.connect = deny("tls.connect");
  const dgram = require("dgram");
  dgram.createSocket = deny("dgram.createSocket");
  dgram.Socket.prototype.send = deny("dgram.Socket.send");
  dgram.Socket.prototype.bind = deny("dgram.Socket.bind");
  const dns = require("dns");
  for (const k of Object.keys(dns)) {
    if (typeof dns[k] === "function" && /^(lookup|resolve|reverse)/.test(k)) dns[k] = deny("dns." + k);
  }
  if (dns.promises) {
    for (const k of Object.keys(dns.promises)) {
      if (typeof dns.promises[k] === "function" && /^(lookup|resolve|reverse)/.test(k)) dns.promises[k] = deny("dns.promises." + k);
    }
  }
  dns.Resolver = function () { throw new Error("dfd node worker: network access is disabled (dns.Resolver)"); };
  for (const m of ["http", "https"]) {
    const mod = require(m);
    mod.request = deny(m + ".request");
    mod.get = deny(m + ".get");
    mod.Agent.prototype.createConnection = deny(m + ".Agent.createConnection");
  }
  require("http2").connect = deny("http2.connect");
  const cp = require("child_process");
  for (const k of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) cp[k] = deny("child_process." + k);
  for (const k of ["fetch", "WebSocket", "EventSource"]) {
    if (k in globalThis) {
      try { Object.defineProperty(globalThis, k, { value: deny(k), writable: false, configurable: false }); } catch (_) { /* keep going */ }
    }
  }
  for (const k of ["binding", "_linkedBinding", "dlopen"]) {
    try { delete process[k]; } catch (_) { /* keep going */ }
    if (typeof process[k] === "function") {
      try { Object.defineProperty(process, k, { value: deny("process." + k), writable: false, configurable: false }); } catch (_) { /* keep going */ }
    }
  }
  // The host realm's stack-trace hook can never be set (from here or from
  // anything that would reach this realm).
  Object.defineProperty(Error, "prepareStackTrace", { value: undefined, writable: false, configurable: false, enumerable: false });
}

// --- Protobuf (just dfd.wire) ---------------------------------------------------

const EMPTY = Buffer.alloc(0);

function varint(v) {
  const out = [];
  if (typeof v === "bigint") {
    while (v >= 128n) { out.push(Number(v & 127n) | 128); v >>= 7n; }
    out.push(Number(v));
  } else {
    if (v < 0) return varint(BigInt.asUintN(64, BigInt(v)));
    while (v >= 128) { out.push((v % 128) | 128); v = Math.floor(v / 128); }
    out.push(v);
  }
  return Buffer.from(out);
}
const tag = (num, wt) => varint(num * 8 + wt);
function fVarint(num, v) {
  if (!v) return EMPTY; // proto3: defaults are not written
  return Buffer.concat([tag(num, 0), varint(v)]);
}
// Chunks is an encoding too big to copy, as the buffers that make it up,
// written one after the other: a 3,000-action compile's response is
// 2.6 MB, and building its frame by concatenation copied it four times.
class Chunks {
  constructor(list, length) {
    this.list = list;
    this.length = length;
  }
}
const COPY_MAX = 1 << 16;
function fBytes(num, b, always) {
  if (!always && b.length === 0) return EMPTY;
  if (!(b instanceof Chunks) && b.length <= COPY_MAX) return Buffer.concat([tag(num, 2), varint(b.length), b]);
  const head = Buffer.concat([tag(num, 2), varint(b.length)]);
  return new Chunks([head].concat(b instanceof Chunks ? b.list : [b]), head.length + b.length);
}
// joined is parts one after the other: a Buffer, or Chunks when one of
// them is.
function joined(parts) {
  if (!parts.some((p) => p instanceof Chunks)) return Buffer.concat(parts);
  let list = [], n = 0;
  for (const p of parts) {
    list = list.concat(p instanceof Chunks ? p.list : [p]);
    n += p.length;
  }
  return new Chunks(list, n);
}
const fString = (num, s) => fBytes(num, Buffer.from(s || "", "utf8"), false);
const fMessage = (num, parts) => fBytes(num, joined(parts), true);

class ProtoError extends Error {}

function readVarint(buf, pos) {
  let result = 0, mul = 1, big = null;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) throw new ProtoError("truncated varint");
    const b = buf[pos++];
    if (big === null && mul < 2 ** 49) {
      result += (b & 127) * mul;
      mul *= 128;
    } else {
      if (big === null) big = BigInt(result);
      big += BigInt(b & 127) << BigInt(7 * i);
    }
    if (b < 128) {
      if (big !== null) {
        big = BigInt.asUintN(64, big);
        return [big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big, pos];
      }
      return [result, pos];
    }
  }
  throw new ProtoError("varint too long");
}

// fields decodes one message into [number, wireType, value] triples; value
// is a number/bigint for varints and a Buffer for length-delimited fields.
function fields(buf) {
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    if (typeof key !== "number") throw new ProtoError("bad field key");
    const num = Math.floor(key / 8), wt = key % 8;
    if (num === 0) throw new ProtoError("field number 0");
    switch (wt) {
      case 0: {
        let v;
        [v, pos] = readVarint(buf, pos);
        out.push([num, wt, v]);
        break;
      }
      case 1:
        if (pos + 8 > buf.length) throw new ProtoError("truncated fixed64");
        pos += 8;
        break;
      case 2: {
        let n;
        [n, pos] = readVarint(buf, pos);
        if (typeof n !== "number" || pos + n > buf.length) throw new ProtoError("truncated bytes");
        out.push([num, wt, buf.subarray(pos, pos + n)]);
        pos += n;
        break;
      }
      case 5:
        if (pos + 4 > buf.length) throw new ProtoError("truncated fixed32");
        pos += 4;
        break;
      default:
        throw new ProtoError("unsupported wire type " + wt);
    }
  }
  return out;
}

// decodeJob decodes a Compile or a Jit (m: its field numbers, entry: those
// of its overlay's map entries); Jit's prefetched answers are not used.
function decodeJob(buf, m, entry) {
  const job = { request: EMPTY, root: "", overlay: new Map(), timeoutMs: 0, mode: COMPILEMODE.COMPILE_FULL, disk: null };
  for (const [num, wt, v] of fields(buf)) {
    if (num === m.request && wt === 2) job.request = v;
    else if (num === m.root && wt === 2) job.root = v.toString("utf8");
    else if (num === m.overlay && wt === 2) {
      let k = "", val = EMPTY;
      for (const [n2, w2, v2] of fields(v)) {
        if (n2 === entry.key && w2 === 2) k = v2.toString("utf8");
        else if (n2 === entry.value && w2 === 2) val = v2;
      }
      job.overlay.set(k, Buffer.from(val));
    } else if (num === m.timeout_ms && wt === 0) job.timeoutMs = Number(v);
    else if (num === m.mode && wt === 0) job.mode = Number(v);
    else if (num === m.disk && wt === 2) {
      let paths = EMPTY, sigs = EMPTY;
      for (const [n2, w2, v2] of fields(v)) {
        if (n2 === F.DiskState.paths && w2 === 2) paths = v2;
        else if (n2 === F.DiskState.signatures && w2 === 2) sigs = v2;
      }
      job.disk = { paths, sigs };
    }
  }
  return job;
}

function decodeError(buf) {
  const e = { code: 0, message: "", stack: "" };
  for (const [num, wt, v] of fields(buf)) {
    if (num === F.Error.code && wt === 0) e.code = Number(v);
    else if (num === F.Error.message && wt === 2) e.message = v.toString("utf8");
    else if (num === F.Error.stack && wt === 2) e.stack = v.toString("utf8");
  }
  return e;
}

// decodeFrame returns {kind, ...} for the frames a host sends.
function decodeFrame(buf) {
  let frame = null;
  for (const [num, wt, v] of fields(buf)) {
    if (wt !== 2) continue;
    switch (num) {
      case F.Frame.request: {
        const r = { kind: "request", id: 0, compile: null, jit: null };
        for (const [n, w, x] of fields(v)) {
          if (n === F.Request.id && w === 0) r.id = x;
          else if (n === F.Request.compile && w === 2) { r.compile = decodeJob(x, F.Compile, F.Compile_OverlayEntry); r.jit = null; }
          else if (n === F.Request.jit && w === 2) { r.jit = decodeJob(x, F.Jit, F.Jit_OverlayEntry); r.compile = null; }
        }
        frame = r;
        break;
      }
      case F.Frame.cancel: {
        const c = { kind: "cancel", id: 0 };
        for (const [n, w, x] of fields(v)) if (n === F.Cancel.id && w === 0) c.id = x;
        frame = c;
        break;
      }
      case F.Frame.adapter_result: {
        const a = { kind: "adapterResult", callId: 0, response: null, error: null };
        for (const [n, w, x] of fields(v)) {
          if (n === F.AdapterResult.call_id && w === 0) a.callId = x;
          else if (n === F.AdapterResult.response && w === 2) { a.response = Buffer.from(x); a.error = null; }
          else if (n === F.AdapterResult.error && w === 2) { a.error = decodeError(x); a.response = null; }
        }
        frame = a;
        break;
      }
      case F.Frame.hello: case F.Frame.response: case F.Frame.adapter_call: case F.Frame.log: case F.Frame.accepted:
        frame = { kind: "unexpected", num };
        break;
      default:
        break; // unknown field: skipped
    }
  }
  return frame;
}

// --- Frames out -------------------------------------------------------------------

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function writeAll(buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(1, buf, off, buf.length - off);
    } catch (e) {
      if (e.code === "EAGAIN") { Atomics.wait(sleeper, 0, 0, 1); continue; }
      throw e;
    }
  }
}

function writeFrame(kindNum, parts) {
  const body = fMessage(kindNum, parts);
  const frame = joined([varint(body.length), body]);
  try {
    if (frame instanceof Chunks) frame.list.forEach(writeAll);
    else writeAll(frame);
  } catch (e) {
    // The host is gone (EPIPE): nothing to answer to.
    diag("writing a frame: " + e.message);
    process.exit(EXIT_FAILURE);
  }
}

function sendHello(opts, startupMicros) {
  const h = F.Hello;
  writeFrame(F.Frame.hello, [
    fVarint(h.protocol_version, PROTOCOL_VERSION),
    fString(h.core_version, opts.coreVersion),
    fVarint(h.pid, process.pid),
    fString(h.bundle_path, opts.bundle),
    fString(h.root, opts.root),
    fVarint(h.startup_micros, Math.max(0, Math.round(startupMicros))),
    fVarint(h.memory_limit_bytes, opts.memoryLimit > 0 ? opts.memoryLimit : 0),
    fVarint(h.interrupted_by_sigint, 1), // see call()
  ]);
}

// sendAccepted is the receipt for request id: sent when it is read, before
// any of it runs (see jit/wire).
function sendAccepted(id) {
  writeFrame(F.Frame.accepted, [fVarint(F.Accepted.id, id)]);
}

function encodeError(code, message, stack) {
  return [fVarint(F.Error.code, code), fString(F.Error.message, message), fString(F.Error.stack, stack)];
}

function sendResponse(id, outcome, stats) {
  const r = F.Response, s = F.Stats;
  const parts = [fVarint(r.id, id)];
  if (outcome.result !== undefined) parts.push(fBytes(r.result, outcome.result, true));
  else parts.push(fMessage(r.error, encodeError(outcome.code, outcome.message, outcome.stack || "")));
  parts.push(fMessage(r.stats, [
    fVarint(s.prepare_micros, Math.round(stats.prepareMicros || 0)),
    fVarint(s.wait_micros, Math.round(stats.waitMicros || 0)),
    fVarint(s.run_micros, Math.round(stats.runMicros || 0)),
    fVarint(s.peak_heap_bytes, Math.round(stats.peakHeap || 0)),
    fVarint(s.requests_served, stats.served || 0),
  ]));
  const inc = outcome.incremental;
  if (inc) {
    const f = F.Incremental, m = [];
    if (inc.rerun) m.push(fVarint(f.rerun, 1));
    if (inc.file) m.push(fString(f.file, inc.file));
    if (inc.kept) m.push(fVarint(f.kept, 1));
    if (inc.reason) m.push(fString(f.reason, inc.reason));
    parts.push(fMessage(r.incremental, m));
  }
  writeFrame(F.Frame.response, parts);
}

function sendAdapterCall(callId, requestId, method, bytes) {
  const c = F.AdapterCall;
  writeFrame(F.Frame.adapter_call, [fVarint(c.call_id, callId), fVarint(c.request_id, requestId), fString(c.method, method), fBytes(c.request, bytes, false)]);
}

function sendLog(requestId, level, message) {
  const l = F.Log;
  writeFrame(F.Frame.log, [fVarint(l.request_id, requestId), fString(l.level, level), fString(l.message, message)]);
}

// --- Paths (Go's path package) -------------------------------------------------

function clean(p) {
  if (p === "") return ".";
  const rooted = p[0] === "/";
  const out = [];
  for (const s of p.split("/")) {
    if (s === "" || s === ".") continue;
    if (s === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!rooted) out.push("..");
      continue;
    }
    out.push(s);
  }
  const j = out.join("/");
  if (rooted) return "/" + j;
  return j === "" ? "." : j;
}
function dirname(p) {
  const i = p.lastIndexOf("/");
  return clean(p.slice(0, i + 1));
}

// --- Project files: confined to the root, with the overlay on top ----------------

const ENOENT = 0, IS_FILE = 1, IS_DIR = 2;

class ProjectFiles {
  constructor(root, overlay, disk) {
    this.root = root;
    this.disk = disk ? new DiskSignatures(disk) : null;
    this.overlay = new Map();
    if (overlay) for (const [k, v] of overlay) this.overlay.set(clean(k), v);
    // The directories of unsaved files are directories, on disk or not.
    this.overlayDirs = new Set();
    for (const k of this.overlay.keys()) {
      for (let d = dirname(k); d !== "." && !this.overlayDirs.has(d); d = dirname(d)) this.overlayDirs.add(d);
    }
    this.hashes = new Map(); // rel → sha256 of the content last read
    this.dirCache = new Map(); // absolute directory → inside the root?
  }
  abs(rel) { return rel === "." ? this.root : this.root + "/" + rel; }
  // signature is rel's on disk, the host's when it sent one.
  signature(rel) {
    const sig = this.disk !== null ? this.disk.signature(rel) : undefined;
    return sig !== undefined ? sig : fileSignature(this.abs(rel));
  }
  inside(real) { return real === this.root || real.startsWith(this.root + "/"); }
  escapeMessage(rel) {
    return `${rel}: outside the project directory (a symbolic link or '..' leads out of ${this.root})`;
  }
  // dirInside reports whether the directory abs (which may not exist)
  // stays inside the root once symbolic links are followed; answers are
  // cached for the request (the loader asks about the same few directories
  // thousands of times).
  dirInside(abs) {
    if (abs === this.root) return true;
    let v = this.dirCache.get(abs);
    if (v !== undefined) return v;
    try {
      v = this.inside(fs.realpathSync.native(abs));
    } catch (e) {
      if (e.code === "ENOENT" || e.code === "ENOTDIR") {
        v = abs.length > this.root.length && this.linkInside(abs) && this.dirInside(dirname(abs));
      } else {
        v = e.code !== "ELOOP" && e.code !== "ERR_ACCESS_DENIED";
      }
    }
    this.dirCache.set(abs, v);
    return v;
  }
  // linkInside: abs does not resolve; if it is a dangling symbolic link,
  // would it lead out of the root?
  linkInside(abs) {
    let st;
    try { st = fs.lstatSync(abs, { throwIfNoEntry: false }); } catch (_) { return true; }
    if (!st || !st.isSymbolicLink()) return true;
    try {
      const t = fs.readlinkSync(abs);
      return this.inside(t.startsWith("/") ? clean(t) : clean(dirname(abs) + "/" + t));
    } catch (_) {
      return false;
    }
  }
  // look stats rel (clean, relative, no ".."), confined to the root as
  // os.Root confines: IS_FILE, IS_DIR, ENOENT or an escape message.
  look(rel) {
    if (rel === ".." || rel.startsWith("../") || rel.startsWith("/")) return this.escapeMessage(rel);
    const abs = this.abs(rel);
    let st;
    try {
      st = fs.lstatSync(abs, { throwIfNoEntry: false });
    } catch (e) {
      st = undefined; // ENOTDIR and the like: not there
    }
    if (!this.dirInside(dirname(abs))) return this.escapeMessage(rel);
    if (!st) return ENOENT;
    if (!st.isSymbolicLink()) return st.isDirectory() ? IS_DIR : IS_FILE;
    let real;
    try {
      real = fs.realpathSync.native(abs);
    } catch (e) {
      return this.linkInside(abs) ? ENOENT : this.escapeMessage(rel);
    }
    if (!this.inside(real)) return this.escapeMessage(rel);
    try {
      return fs.statSync(abs).isDirectory() ? IS_DIR : IS_FILE;
    } catch (_) {
      return ENOENT;
    }
  }
  // stat: IS_FILE, IS_DIR, ENOENT, or a string (escape message).
  stat(rel) {
    if (this.overlay.has(rel)) return IS_FILE;
    if (rel === "." || this.overlayDirs.has(rel)) return IS_DIR;
    return this.look(rel);
  }
  // read returns the content or throws an Error with Go-like text.
  read(rel) {
    let buf = this.overlay.get(rel);
    if (buf === undefined) {
      const k = this.look(rel);
      if (typeof k === "string") throw new Error(k);
      buf = readRegular(this.abs(rel), rel);
    }
    return buf;
  }
}

// digest names a file's content (the transpile cache's key, and what a
// kept compile read).
function digest(buf) {
  return crypto.createHash("sha256").update(buf).digest("base64");
}

// fileSignature identifies the content of the file at abs as stat(2) sees
// it (inode, size, modification and change times in nanoseconds), or ""
// (no signature: the file is compared by digest). A file changed in the
// last two seconds gets none: the kernel's clock ticks in milliseconds, and
// a rewrite of the same size within one tick would keep every field (git's
// "racily clean" files). Its layout is wirepb.DiskState's, 32 bytes as a
// latin1 string, so that one taken here and one the host took
// (DiskSignatures) compare.
function fileSignature(abs) {
  try {
    const st = fs.statSync(abs, { bigint: true });
    const now = BigInt(Date.now()) * 1000000n;
    if (now - st.mtimeNs < 2000000000n || now - st.ctimeNs < 2000000000n) return "";
    const b = Buffer.allocUnsafe(SIG_SIZE);
    b.writeBigUInt64LE(BigInt.asUintN(64, st.ino), 0);
    b.writeBigUInt64LE(BigInt.asUintN(64, st.size), 8);
    b.writeBigUInt64LE(BigInt.asUintN(64, st.mtimeNs), 16);
    b.writeBigUInt64LE(BigInt.asUintN(64, st.ctimeNs), 24);
    return b.toString("latin1");
  } catch (_) {
    return "";
  }
}
const SIG_SIZE = 32;
const NO_SIG = "\0".repeat(SIG_SIZE);

// DiskSignatures are the host's signatures of the project's files
// (Compile.disk, jit.diskState), taken just before it sent the request:
// at 10,000 actions a rerun's stat of each of the 6,709 files a kept
// context read was 17 ms of about 150.
class DiskSignatures {
  constructor(disk) {
    this.paths = disk.paths;
    this.sigs = disk.sigs;
    this.index = null;
  }
  // signature is rel's signature ("" for none), or undefined when the
  // host sent none for it (not one of the project's files: the caller
  // stats it).
  signature(rel) {
    if (this.index === null) this.index = pathIndex(this.paths);
    const i = this.index.get(rel);
    if (i === undefined || (i + 1) * SIG_SIZE > this.sigs.length) return undefined;
    const sig = this.sigs.toString("latin1", i * SIG_SIZE, (i + 1) * SIG_SIZE);
    return sig === NO_SIG ? "" : sig;
  }
}

// pathIndex maps each path of a DiskState's paths (each followed by a
// NUL) to its position; the last index is kept while the host sends the
// same paths, so that it is parsed once per file list, not per request.
let lastPathIndex = { paths: EMPTY, index: null };
function pathIndex(paths) {
  if (lastPathIndex.index === null || !lastPathIndex.paths.equals(paths)) {
    const index = new Map();
    const names = paths.toString("utf8").split("\0");
    for (let i = 0; i < names.length - 1; i++) index.set(names[i], i);
    // (A copy: the frame the paths came in is not kept for them.)
    lastPathIndex = { paths: Buffer.from(paths), index };
  }
  return lastPathIndex.index;
}

// unchanged says whether file name of files has the content a kept
// compile read ({digest, sig}). A file on disk whose signature is the one
// it had then is not read again: 3,000 files are 30 ms of reading and
// hashing per edit, their stats a few. Anything else is compared by digest;
// a file on disk that had no signature (it had just changed) gets the one
// taken before this read when its content is the same, so that it is read
// once more, not on every edit until the next full compile.
function unchanged(files, name, read) {
  const buf = files.overlay.get(name);
  let sig = "";
  if (buf === undefined) {
    sig = files.signature(name);
    if (read.sig !== "" && sig === read.sig) return true;
  }
  try {
    if (digest(buf !== undefined ? buf : files.read(name)) !== read.digest) return false;
  } catch (_) {
    return false; // unreadable now
  }
  if (sig !== "") read.sig = sig;
  return true;
}

// specialKind names a Stats that is not a regular file or a directory, as
// Go's regfile.Kind does; "" otherwise.
function specialKind(st) {
  if (st.isFIFO()) return "named pipe";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character device";
  if (st.isBlockDevice()) return "device";
  return "";
}

// readRegular reads abs only if it is a regular file (Go's regfile): a
// named pipe would block readFileSync, and this thread with it, until
// something writes to it, where no deadline reaches. stat before opening
// keeps devices unopened; O_NONBLOCK makes opening a pipe return at once;
// fstat on the descriptor refuses a file swapped for one in between.
function readRegular(abs, rel) {
  const refuse = (kind) => new Error(`${rel}: not a regular file (${kind}); dfd reads only regular files`);
  let fd;
  try {
    const kind = specialKind(fs.statSync(abs));
    if (kind) throw refuse(kind);
    fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const k2 = specialKind(fs.fstatSync(fd));
    if (k2) throw refuse(k2);
    return fs.readFileSync(fd);
  } catch (e) {
    if (!e.code) throw e;
    throw new Error(`open ${rel}: ${e.code === "EISDIR" ? "is a directory" : e.code === "ENOENT" ? "no such file or directory" : e.message}`);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

// --- Caches: core's compiler() output and compiled module scripts ----------------

const cacheEnabled = process.env.DFD_NODE_CACHE !== "0";
const moduleCache = new Map(); // key → {code, script}
let moduleCacheBytes = 0;
const MODULE_CACHE_MAX_BYTES = 512 << 20;
const cacheStats = { transpileHits: 0, transpileMisses: 0 };

function cacheKey(coreVersion, file, hash, jit) {
  return coreVersion + "\0" + (jit ? "jit" : "compile") + "\0" + file + "\0" + hash;
}
function cachePut(key, entry) {
  if (!cacheEnabled) return;
  const size = entry.code.length * 2 + 256;
  if (moduleCacheBytes + size > MODULE_CACHE_MAX_BYTES) {
    moduleCache.clear();
    moduleCacheBytes = 0;
  }
  moduleCache.set(key, entry);
  moduleCacheBytes += size;
}

// --- The prelude: runs inside each context -------------------------------------------

// contextPrelude is never called in this realm: its source text is evaluated
// in each new context (so every function and object it makes belongs to the
// context), and it is called there with the host bridge, which it keeps in
// its closure. It must not refer to anything outside itself.
function contextPrelude(bridge, cfg) {
  "use strict";
  const g = globalThis;
  const root = cfg.root;
  const coreVersion = cfg.coreVersion;
  // Bridge functions, kept private.
  const B = {};
  for (const k of cfg.bridgeNames) B[k] = bridge[k];

  const NativeError = Error, NativeTypeError = TypeError, NativeRangeError = RangeError, NativeSyntaxError = SyntaxError;
  const U8 = Uint8Array;
  const jsonParse = JSON.parse, jsonStringify = JSON.stringify;
  const ObjectDefine = Object.defineProperty;
  const WeakMapC = WeakMap, WeakSetC = WeakSet;
  const PromiseResolve = Promise.resolve.bind(Promise);
  const promiseThen = Promise.prototype.then;
  const applyFn = Reflect.apply;
  const StringC = String;
  const toStringTag = Object.prototype.toString;
  const isArray = Array.isArray;
  // Module functions come wrapped in an outer function taking the builtins.
  const shadowValues = [];
  for (const n of cfg.shadowed) shadowValues.push(n === "undefined" ? undefined : g[n]);
  const unwrap = (outer) => applyFn(outer, undefined, shadowValues);

  // h calls a bridge function; anything the host realm throws (a stack
  // overflow reached inside the host, a bug) becomes a context-realm error.
  function h(name, a, b, c, d) {
    let r;
    try {
      r = B[name](a, b, c, d);
    } catch (e) {
      let n = "", m = "";
      try { n = StringC(e.name); m = StringC(e.message); } catch (_) { /* ignore */ }
      if (n === "RangeError") throw new NativeRangeError("Maximum call stack size exceeded");
      throw new NativeError("dfd node worker: the host failed (" + n + ": " + m + ")");
    }
    return r;
  }

  // --- global, Error.prepareStackTrace without call sites (as vm2) ---
  g.global = g;
  let userPrepare;
  const wrappers = new WeakMapC();
  function wrapPrepare(fn) {
    const w = function (err, _trace) { return applyFn(fn, this, [err, []]); };
    wrappers.set(w, fn);
    return w;
  }
  let currentWrapper;
  ObjectDefine(NativeError, "prepareStackTrace", {
    configurable: false,
    enumerable: false,
    get() { return currentWrapper; },
    set(v) {
      if (typeof v === "function") {
        const orig = wrappers.get(v);
        userPrepare = orig !== undefined ? orig : v;
        currentWrapper = orig !== undefined ? v : wrapPrepare(v);
      } else {
        userPrepare = v;
        currentWrapper = v;
      }
    },
  });
  NativeError.stackTraceLimit = 10;
  // Node reads globalThis.Error.prepareStackTrace of the error's realm: it
  // must stay this Error.
  ObjectDefine(g, "Error", { value: NativeError, writable: false, configurable: false, enumerable: false });

  // --- __dataform_current_file ---
  const files = [];
  ObjectDefine(g, "__dataform_current_file", {
    configurable: true,
    enumerable: false,
    get() { return files.length === 0 ? null : files[files.length - 1]; },
  });

  // --- console ---
  function formatLog(args) {
    const parts = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (a === undefined) { parts.push("undefined"); continue; }
      try {
        if (a !== null && (typeof a === "object" || typeof a === "function")) {
          const isError = applyFn(toStringTag, a, []) === "[object Error]";
          if (typeof a !== "function" && !isError) {
            try {
              const s = jsonStringify(a);
              if (s !== undefined) { parts.push(s); continue; }
            } catch (_) { /* falls through */ }
          }
          if (isError && a.stack !== undefined) { parts.push(StringC(a.stack)); continue; }
        }
        parts.push(StringC(a));
      } catch (_) {
        parts.push("[object]");
      }
    }
    return parts.join(" ");
  }
  const console = {};
  for (const level of ["log", "info", "warn", "error", "debug", "trace"]) {
    console[level] = function () { h("log", level, formatLog(arguments)); };
  }
  g.console = console;

  // --- timers, in virtual time (engine.timerQueue) ---
  const timers = { next: 0, now: 0, pending: [] };
  function addTimer(repeat, fn, delay, args) {
    if (typeof fn !== "function") throw new NativeTypeError('The "callback" argument must be of type function');
    delay = +delay;
    if (!(delay >= 1)) delay = 1;
    timers.next++;
    timers.pending.push({ id: timers.next, due: timers.now + delay, seq: timers.next, fn, args, interval: delay, repeat });
    return timers.next;
  }
  function clearTimer(id) {
    id = Math.trunc(+id) || 0;
    for (let i = 0; i < timers.pending.length; i++) {
      if (timers.pending[i].id === id) { timers.pending.splice(i, 1); break; }
    }
  }
  g.setTimeout = function (fn, delay, ...args) { return addTimer(false, fn, delay, args); };
  g.setInterval = function (fn, delay, ...args) { return addTimer(true, fn, delay, args); };
  g.setImmediate = function (fn, ...args) { return addTimer(false, fn, 0, args); };
  g.clearTimeout = clearTimer;
  g.clearInterval = clearTimer;
  g.clearImmediate = clearTimer;
  g.queueMicrotask = function (fn) { applyFn(promiseThen, PromiseResolve(), [fn]); };
  // runTimer fires the earliest timer; false when none is pending.
  function runTimer() {
    if (timers.pending.length === 0) return false;
    timers.pending.sort((a, b) => (a.due !== b.due ? a.due - b.due : a.seq - b.seq));
    const t = timers.pending.shift();
    if (t.due > timers.now) timers.now = t.due;
    if (t.repeat) {
      timers.next++;
      t.seq = timers.next;
      t.due = timers.now + t.interval;
      timers.pending.push(t);
    }
    applyFn(t.fn, undefined, t.args);
    return true;
  }
  // runTimerLogged runs one timer; an exception is logged, as Node prints it.
  function runTimerLogged() {
    try {
      return runTimer();
    } catch (e) {
      h("log", "error", "uncaught exception in a timer callback: " + describe(e, "").stack);
      return true;
    }
  }

  // --- describing thrown values (engine.valueError) ---
  function describe(v, fallbackStack) {
    const out = { message: "", stack: fallbackStack };
    try {
      if (v !== null && (typeof v === "object" || typeof v === "function")) {
        const msg = v.message;
        if (msg !== undefined) {
          const name = v.name;
          out.message = (name !== undefined ? StringC(name) : "Error") + ": " + StringC(msg);
          const st = v.stack;
          if (st !== undefined) out.stack = StringC(st);
          return out;
        }
      }
      out.message = "Uncaught " + StringC(v);
    } catch (e) {
      out.message = "Uncaught exception (not printable)";
    }
    return out;
  }

  // --- the CommonJS loader (engine/loader.go) ---
  const sourceExtensions = [".js", ".sql", ".sqlx", ".yaml", ".yml", ".json"];
  const jitExtensions = [".js", ".json", ".yaml", ".yml"];
  const nodeBuiltins = new Set(cfg.nodeBuiltins);
  const loaderErrors = new WeakSetC();
  const L = { jit: false, modules: new Map(), core: null, pathExports: undefined, loads: 0 };

  function moduleError(msg) {
    const e = new NativeError(msg);
    loaderErrors.add(e);
    return e;
  }
  // notFound is vm2's refusal of require(id) under the CLI, whatever the
  // reason (missing, a builtin not offered, a path out of the project),
  // which it does not say; nothing outside the project is read to find out.
  function notFound(id) {
    const e = moduleError(`Cannot find module '${id}'`);
    e.name = "VMError"; // before the stack is first read, which words it with the name
    e.code = "ENOTFOUND";
    return e;
  }
  function clean(p) {
    if (p === "") return ".";
    const rooted = p[0] === "/";
    const out = [];
    const segs = p.split("/");
    for (let i = 0; i < segs.length; i++) {
      const s = segs[i];
      if (s === "" || s === ".") continue;
      if (s === "..") {
        if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
        else if (!rooted) out.push("..");
        continue;
      }
      out.push(s);
    }
    const j = out.join("/");
    if (rooted) return "/" + j;
    return j === "" ? "." : j;
  }
  const join = (a, b) => clean(a + "/" + b);
  const dirOf = (p) => clean(p.slice(0, p.lastIndexOf("/") + 1));
  const baseOf = (p) => {
    if (p === "") return ".";
    while (p.length > 0 && p[p.length - 1] === "/") p = p.slice(0, -1);
    if (p === "") return "/";
    return p.slice(p.lastIndexOf("/") + 1);
  };
  function rel(p) {
    if (p === root) return ".";
    if (!p.startsWith(root + "/")) return null;
    return p.slice(root.length + 1);
  }
  // stat → [isFile, isDir]; an escape through a link is thrown as a string.
  function stat(p) {
    const r = rel(p);
    if (r === null) return [false, false];
    const s = h("stat", r);
    if (typeof s === "string") throw { escape: s };
    return [s === 1, s === 2];
  }
  const exts = () => (L.jit ? jitExtensions : sourceExtensions);
  function loadAsFile(p) {
    if (stat(p)[0]) return p;
    const e = exts();
    for (let i = 0; i < e.length; i++) if (stat(p + e[i])[0]) return p + e[i];
    return "";
  }
  const loadIndex = (p) => loadAsFile(join(p, "index"));
  function loadAsDirectory(p) {
    if (!stat(p)[1]) return "";
    const r = rel(join(p, "package.json"));
    if (r !== null) {
      const main = h("packageMain", r);
      if (typeof main === "string" && main !== "") {
        const m = join(p, main);
        let f = loadAsFile(m);
        if (f !== "") return f;
        f = loadIndex(m);
        if (f !== "") return f;
      }
    }
    return loadIndex(p);
  }
  // Every candidate of loadAsFileOrDirectory(p) is in p's directory, so
  // when that is not a directory there is nothing to look for: the search
  // for a bare module name tries node_modules of every directory up from
  // the requiring file's, nearly none of which exist (core requires each
  // definitions file that way). Directory answers are kept for the request,
  // which sees the project as it was when it began.
  const dirs = new Map(); // absolute directory → is a directory
  function inDirectory(p) {
    if (p === root) return true; // its directory is outside, the project's loaded as a directory
    const d = dirOf(p);
    let v = dirs.get(d);
    if (v === undefined) {
      v = stat(d)[1]; // an escape throws, as a lookup inside it would
      dirs.set(d, v);
    }
    return v;
  }
  function loadAsFileOrDirectory(p) {
    if (!inDirectory(p)) return "";
    const f = loadAsFile(p);
    if (f !== "") return f;
    return loadAsDirectory(p);
  }
  const isRelative = (id) => id === "." || id === ".." || id.startsWith("./") || id.startsWith("../");
  function withEscapes(id, from, f) {
    try {
      return f();
    } catch (e) {
      if (e !== null && typeof e === "object" && typeof e.escape === "string") {
        throw notFound(id); // a symbolic link out of the project
      }
      throw e;
    }
  }
  function resolve(dir, id, from) {
    if (id === "") throw notFound(id);
    if (isRelative(id) || id.startsWith("/")) {
      const target = id.startsWith("/") ? id : join(dir, id);
      if (rel(target) === null) throw notFound(id); // outside the project: not looked at
      const f = withEscapes(id, from, () => loadAsFileOrDirectory(target));
      if (f === "") throw notFound(id);
      return f;
    }
    if (id.includes("..") && id[0] !== "/") {
      if (rel(join(root, id)) === null) throw notFound(id); // it leads outside the project
    }
    for (let d = dir; ; d = dirOf(d)) {
      if (rel(d) === null) break;
      if (baseOf(d) !== "node_modules") {
        const f = withEscapes(id, from, () => loadAsFileOrDirectory(join(join(d, "node_modules"), id)));
        if (f !== "") return f;
      }
      if (d === root) break;
    }
    if (!L.jit) {
      const f = withEscapes(id, from, () => loadAsFileOrDirectory(join(root, id)));
      if (f !== "") return f;
    }
    throw notFound(id);
  }
  function pathModule() {
    if (L.pathExports === undefined) {
      const v = h("pathModule");
      if (typeof v === "string") throw new NativeError("path module: " + v);
      L.pathExports = v;
    }
    return L.pathExports;
  }
  // builtin → [handled, value]
  function builtin(id, from) {
    const name = id.startsWith("node:") ? id.slice(5) : id;
    if (name === "path" && !L.jit) return [true, pathModule()];
    if (nodeBuiltins.has(name) || id.startsWith("node:")) {
      throw notFound(id); // only "path" is offered (and none to JiT code)
    }
    return [false, undefined];
  }
  function require_(dir, id, from) {
    const b = builtin(id, from);
    if (b[0]) return b[1];
    if (id === "@dataform/core") return L.core;
    if (L.jit && !isRelative(id) && !id.startsWith("/") && !id.startsWith("@dataform/")) {
      throw notFound(id); // JiT code may require only @dataform packages and project files
    }
    return load(resolve(dir, id, from));
  }
  function load(file) {
    const cached = L.modules.get(file);
    if (cached !== undefined) return cached.exports;
    const r = rel(file);
    const text = h("readFile", r);
    if (typeof text !== "string") throw moduleError(`Cannot read '${r}': ${h("lastError")}`);
    L.loads++;
    const exports = {};
    const module = { exports, id: file, filename: file, loaded: false, path: dirOf(file) };
    L.modules.set(file, module);
    if (file.endsWith(".json")) {
      let v;
      try {
        v = jsonParse(text);
      } catch (e) {
        L.modules.delete(file);
        throw e;
      }
      module.exports = v;
      module.loaded = true;
      return v;
    }
    let fn = h("cachedModule", file, r, L.jit);
    if (typeof fn === "function") {
      fn = unwrap(fn);
    } else {
      let code = text;
      if (!L.jit) {
        try {
          code = L.compiler(text, file);
        } catch (e) {
          L.modules.delete(file);
          throw e;
        }
      }
      fn = h("compileModule", file, r, StringC(code), L.jit);
      if (typeof fn !== "function") {
        L.modules.delete(file);
        // "message\0stack" for a syntax error (syntaxError), else a message.
        const s = StringC(fn), nul = s.indexOf("\u0000");
        const e = new NativeSyntaxError(nul < 0 ? s : s.slice(0, nul));
        if (nul >= 0) ObjectDefine(e, "stack", { value: s.slice(nul + 1), writable: true, configurable: true, enumerable: false });
        throw e;
      }
      fn = unwrap(fn);
    }
    const dir = dirOf(file);
    files.push(file);
    try {
      applyFn(fn, exports, [exports, requireFunc(dir, r), module, file, dir]);
    } catch (e) {
      L.modules.delete(file);
      throw e;
    } finally {
      files.pop();
    }
    module.loaded = true;
    return module.exports;
  }
  function requireFunc(dir, from) {
    const req = function require(id) {
      if (typeof id !== "string") {
        throw new NativeTypeError('The "id" argument must be of type string. Received ' + StringC(id));
      }
      return require_(dir, id, from);
    };
    req.resolve = function resolve_(id) {
      id = StringC(id);
      const b = builtin(id, from);
      if (b[0]) return id;
      return resolve(dir, id, from);
    };
    return req;
  }

  // --- entry points, called by the host through the trampoline ---
  let jitState = null;

  function bytesIn() {
    const n = h("inLength");
    const u = new U8(n);
    h("fillIn", u);
    return u;
  }

  function loadCore() {
    const coreDir = root + "/node_modules/@dataform/core";
    const coreFile = coreDir + "/bundle.js";
    let fn = h("coreFunction");
    if (typeof fn !== "function") return "I" + StringC(fn);
    fn = unwrap(fn);
    const exports = {};
    const module = { exports, id: coreFile, filename: coreFile };
    files.push(coreFile);
    try {
      applyFn(fn, exports, [exports, requireFunc(coreDir, "node_modules/@dataform/core/bundle.js"), module, coreFile, coreDir]);
    } catch (e) {
      files.length = 0;
      return "I" + `loading @dataform/core ${coreVersion}: ` + describe(e, "").message;
    }
    files.length = 0;
    const core = module.exports;
    L.core = core;
    if (core === null || (typeof core !== "object" && typeof core !== "function") || typeof core.compiler !== "function") {
      return "I" + `@dataform/core ${coreVersion}: ${cfg.bundlePath} exports no compiler(): the file is truncated or corrupt, or not a 3.x core's`;
    }
    L.compiler = core.compiler;
    return "OK";
  }

  function fail(kind, e) {
    const d = describe(e, "");
    return kind + d.message + "\u0000" + d.stack;
  }

  function compile() {
    dirs.clear(); // the runtime may have been prepared before this request's files
    let v;
    const settings = [["workflow_settings.yaml", "workflowSettingsYaml"], ["dataform.json", "dataformJson"]];
    for (let i = 0; i < settings.length; i++) {
      const [file, global] = settings[i];
      const s = h("stat", file);
      if (typeof s === "string") return "I" + `reading ${file}: ${s}`;
      if (s === 0) continue;
      try {
        v = require_(root, "./" + file, "index.js");
      } catch (e) {
        if (loaderErrors.has(e)) return "Icompile: " + e.message;
        return fail("S", e);
      }
      g[global] = v;
    }
    const main = L.core.main;
    if (typeof main !== "function") return "I" + `@dataform/core ${coreVersion} exports no main()`;
    const req = bytesIn();
    files.push(root + "/index.js");
    let out;
    try {
      out = applyFn(main, L.core, [req]);
    } catch (e) {
      return fail("S", e);
    } finally {
      files.length = 0;
    }
    const o = h("output", out);
    if (o !== "") return "I" + `core's main() returned ${describe(out, "").message.replace(/^Uncaught /, "")}: ${o}`;
    timersAfterMain = 0;
    while (runTimerLogged()) timersAfterMain++;
    return "OK";
  }

  const vm2Name = "VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL";

  function jitStart() {
    dirs.clear();
    L.jit = true;
    ObjectDefine(g, vm2Name, { value: Object.freeze({ handleException: function (e) { return e; } }), enumerable: false });
    g.require = requireFunc(root, "index.js");
    const newCompiler = L.core.jitCompiler;
    if (typeof newCompiler !== "function") {
      return "S" + `@dataform/core ${coreVersion} has no jitCompiler: JiT actions need a newer core` + "\u0000";
    }
    const st = { state: "pending", value: undefined, callbacks: new Map(), pending: 0 };
    jitState = st;
    const callback = function (method, request, cb) {
      method = StringC(method);
      if (typeof cb !== "function") throw new NativeTypeError("DbAdapter callback is not a function");
      const id = h("adapterCall", method, request);
      if (typeof id !== "number") throw new NativeTypeError("DbAdapter request is not a Uint8Array");
      st.callbacks.set(id, cb);
      st.pending++;
    };
    let compiler, p;
    try {
      compiler = applyFn(newCompiler, undefined, [callback]);
      const c = compiler.compile;
      if (typeof c !== "function") return "Icore's jitCompiler() returned no compile()";
      p = applyFn(c, compiler, [bytesIn()]);
    } catch (e) {
      return fail("S", e); // a syntax error in jitCode or an unknown target type throws here
    }
    if (p === null || typeof p !== "object" || applyFn(toStringTag, p, []) !== "[object Promise]") {
      return "I" + `core's jitCompiler().compile() returned ${StringC(p)}, not a promise`;
    }
    // The outcome goes to the host as soon as it is known (while the
    // microtasks of the host's call drain): no further call is needed.
    applyFn(promiseThen, p, [
      function (v) { st.state = "fulfilled"; st.value = v; h("settled", jitStatus()); },
      function (e) { st.state = "rejected"; st.value = e; h("settled", jitStatus()); },
    ]);
    return "P";
  }

  function jitStatus() {
    const st = jitState;
    if (st.state === "fulfilled") {
      const o = h("output", st.value);
      if (o !== "") return "I" + `JiT compilation returned ${describe(st.value, "").message.replace(/^Uncaught /, "")}: ${o}`;
      return "OK";
    }
    if (st.state === "rejected") return fail("S", st.value);
    return "P" + timers.pending.length;
  }

  function jitDeliver() {
    const st = jitState;
    const id = h("resultId");
    const cb = st.callbacks.get(id);
    st.callbacks.delete(id);
    st.pending--;
    if (cb === undefined) return "D";
    const errMsg = h("resultError");
    try {
      if (typeof errMsg === "string") applyFn(cb, undefined, [new NativeError(errMsg)]);
      else applyFn(cb, undefined, [null, bytesIn()]);
    } catch (e) {
      return fail("S", e);
    }
    return "D";
  }

  // jitTimer fires one timer: "T1", or "T0" when none is pending.
  function jitTimer() {
    return runTimerLogged() ? "T1" : "T0";
  }

  // --- incremental compiles (engine/js/incremental.js; Server.compileKept) ---
  let K = null; // incremental.js's control object, once installed
  let timersAfterMain = 0; // timers compile() ran after core's main()

  // incrInstall runs incremental.js before a compile whose context may be
  // kept or that an incremental one is verified against.
  function incrInstall() {
    let fn = h("incrementalModule");
    if (typeof fn !== "function") return "I" + "incremental hooks: " + StringC(fn);
    K = applyFn(unwrap(fn), undefined, [function () { return L.loads; }]);
    return "OK";
  }

  // incrState: "J" and whether the compile reached the graph stage with the
  // hooks, and the definitions files main() ran, as JSON.
  function incrState() {
    if (K === null) return "J" + jsonStringify({ ready: false, files: [], timers: 0 });
    return "J" + jsonStringify({ ready: K.ready(), files: K.files(), timers: timersAfterMain });
  }

  // incrRerun compiles again with the file named by the host's argument
  // re-run ("" re-runs none): "OK" with the response as output, "N" and
  // why when the edit needs a full compile, or an error as compile's.
  function incrRerun() {
    const file = StringC(h("arg"));
    dirs.clear();
    if (file !== "") {
      const why = K.unsafe(file);
      if (why !== "") return "N" + file + " " + why;
      L.modules.delete(root + "/" + file);
    }
    files.push(root + "/index.js");
    let out;
    try {
      out = K.rerun(file);
    } catch (e) {
      if (e !== null && typeof e === "object" && e.dfdNotIncremental === true) {
        return "N" + StringC(e.message).replace(/^not incremental: /, "");
      }
      return fail("S", e);
    } finally {
      files.length = 0;
    }
    const o = h("output", out);
    if (o !== "") return "I" + `the incremental compile returned ${describe(out, "").message.replace(/^Uncaught /, "")}: ${o}`;
    if (timers.pending.length > 0) return "N" + file + " left timers pending";
    return "OK";
  }

  function makeError(msg) { return new NativeError(msg); }

  const entries = { loadCore, compile, jitStart, jitStatus, jitDeliver, jitTimer, incrInstall, incrState, incrRerun };
  ObjectDefine(g, "__dfd_entry", {
    value: function () {
      const cmd = h("command");
      if (typeof cmd !== "string" || cmd === "") return undefined;
      try {
        return entries[cmd]();
      } catch (e) {
        return fail("S", e);
      }
    },
    writable: false,
    configurable: false,
    enumerable: false,
  });
  return makeError;
}

// The path module: engine/js/path.js, put here when dfd writes the script
// (nodeworker.Script), so that both engines offer the same one.
const PATH_JS = String.raw`// BEGIN engine/js/path.js
/*@@ENGINE_PATH_JS@@*/
// END engine/js/path.js`;

// The hooks of incremental compiles: engine/js/incremental.js, put here
// when dfd writes the script (nodeworker.Script), so that both engines keep
// a compile's context the same way.
const INCREMENTAL_JS = String.raw`// BEGIN engine/js/incremental.js
/*@@ENGINE_INCREMENTAL_JS@@*/
// END engine/js/incremental.js`;

const NODE_BUILTINS = `assert async_hooks buffer child_process cluster console constants
		crypto dgram diagnostics_channel dns domain events fs fs/promises http http2 https inspector
		module net os perf_hooks process punycode querystring readline repl stream stream/promises
		string_decoder sys timers tls trace_events tty url util v8 vm wasi worker_threads zlib
		path/posix path/win32 util/types`.split(/\s+/).filter(Boolean);

const BRIDGE_NAMES = ["log", "stat", "readFile", "lastError", "packageMain", "cachedModule", "compileModule", "pathModule",
  "coreFunction", "inLength", "fillIn", "output", "adapterCall", "resultId", "resultError", "settled", "command",
  "incrementalModule", "arg"];

// --- Scripts shared by every context ---------------------------------------------

// The context whose code is running, for the import() refusal.
let running = null;
// sigintSeen: a SIGINT came (the host's, after its Cancel of a compile)
// while no compile could be interrupted by it (Server.rerun).
let sigintSeen = false;

function importRefused(specifier) {
  const msg = `Cannot import '${String(specifier)}': import() is not available to Dataform code`;
  if (running && running.makeError) throw running.makeError(msg);
  // No context of ours is running: never settle rather than hand over a
  // host-realm error.
  return new Promise(() => {});
}

function script(source, filename) {
  return new vm.Script(source, { filename, importModuleDynamically: importRefused });
}

let preludeScript; // made once SHADOWED is known
const trampoline = script("__dfd_entry()", "dfd:entry.js");
const pathScript = script(PATH_JS, "dfd:path.js");
let incrementalScript = null; // made on first use, wrapped like a module

// incrementalModule is incremental.js's function of loadCount, wrapped in a
// function of the shadowed builtins as module code is (see wrapModule).
function incrementalModule() {
  if (incrementalScript === null) {
    // The source is one expression statement, its value the function.
    incrementalScript = script("(function (" + SHADOWED.join(", ") + ") { const f = " + INCREMENTAL_JS + "\nreturn f; })", "dfd:incremental.js");
  }
  return incrementalScript;
}

const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
const taBuffer = Object.getOwnPropertyDescriptor(TypedArrayProto, "buffer").get;
const taOffset = Object.getOwnPropertyDescriptor(TypedArrayProto, "byteOffset").get;
const taLength = Object.getOwnPropertyDescriptor(TypedArrayProto, "byteLength").get;
const taSet = TypedArrayProto.set;

// bytesOf copies the bytes of a context's typed array without calling
// anything the context could have replaced.
function bytesOf(v) {
  if (!util.types.isTypedArray(v)) return null;
  const buf = taBuffer.call(v);
  return Buffer.from(Buffer.from(buf, taOffset.call(v), taLength.call(v)));
}

// Global variables of a vm context are slow: every lookup goes through
// Node's interceptors (a C++ round trip; 10–30× a plain lookup), which made
// core's hot loops several times slower than in plain Node. Module code
// (core's bundle included) is therefore wrapped in an outer function whose
// parameters are the ECMAScript builtins, bound to the context's own
// values: the same objects, found as locals. Only a reassignment of a
// builtin global (`globalThis.Map = …`) is no longer seen by module code.
const SHADOW_CANDIDATES = `Object Function Array Number parseFloat parseInt Infinity NaN undefined Boolean String
  Symbol Date Promise RegExp Error AggregateError EvalError RangeError ReferenceError SyntaxError TypeError URIError
  globalThis JSON Math Intl ArrayBuffer Atomics Uint8Array Int8Array Uint16Array Int16Array Uint32Array Int32Array
  Float32Array Float64Array Uint8ClampedArray BigUint64Array BigInt64Array DataView Map BigInt Set WeakMap WeakSet
  Proxy Reflect FinalizationRegistry WeakRef decodeURI decodeURIComponent encodeURI encodeURIComponent escape
  unescape isFinite isNaN SharedArrayBuffer`.split(/\s+/).filter(Boolean);
const SHADOWED = (() => {
  const probe = vm.createContext(Object.create(null));
  const have = new Set(vm.runInContext("Object.getOwnPropertyNames(globalThis)", probe));
  return SHADOW_CANDIDATES.filter((n) => have.has(n) || n === "undefined");
})();
const shadowValuesScript = new vm.Script("[" + SHADOWED.join(", ") + "]", { filename: "dfd:builtins.js" });

const MODULE_PREFIX = "(function (" + SHADOWED.join(", ") + ") { return function (exports, require, module, __filename, __dirname) {";
const wrapModule = (code) => MODULE_PREFIX + code + "\n}; })";
preludeScript = script("(function (" + SHADOWED.join(", ") + ") { return " + contextPrelude.toString() + "; })", "dfd:prelude.js");

function versionLess(a, b) {
  const parts = (v) => String(v).split("-")[0].split(".").slice(0, 3).map((x) => parseInt(x, 10) || 0);
  const pa = parts(a), pb = parts(b);
  for (let i = 0; i < 3; i++) if ((pa[i] || 0) !== (pb[i] || 0)) return (pa[i] || 0) < (pb[i] || 0);
  return false;
}

// Cores before 3.0.57 find an action's file only from V8 call sites, which
// no sandbox gives them; the CLI patches the same statement (engine/bundle.go).
function patchOldCallerFile(code) {
  const old = `if(!t)throw new Error("Unable to find valid caller file; please report this issue.")`;
  const patched = `if(!t){if(global.__dataform_current_file){t=global.__dataform_current_file}` +
    `else{throw new Error("Unable to find valid caller file; please report this issue.")}}`;
  return code.replace(old, () => patched);
}

// syntaxError words a V8 compile error as engine.syntaxError does:
// "message (file:line:col)\0stack", the position (corrected for the module
// wrapper) at the end of the message, where the daemon finds it, and the
// stack V8 gives the error under the CLI: file:line, the line of code and
// its carets, then the error, without the host's frames.
function syntaxError(e, relFile, filename) {
  const text = String(e && e.message);
  const stack = String(e && e.stack || "");
  const lines = stack.split("\n");
  const m = /:(\d+)$/.exec(lines[0] || "");
  if (!(lines[0] && lines[0].startsWith(filename + ":") && m)) return text;
  const line = parseInt(m[1], 10);
  let col = 1;
  const carets = lines.length > 2 && /^\s*\^/.test(lines[2]);
  if (carets) col = lines[2].indexOf("^") + 1;
  let src = lines.length > 1 ? lines[1] : "", marks = carets ? lines[2] : "";
  if (line === 1) {
    col -= MODULE_PREFIX.length;
    if (src.startsWith(MODULE_PREFIX)) src = src.slice(MODULE_PREFIX.length);
    marks = marks.slice(Math.min(MODULE_PREFIX.length, marks.indexOf("^") < 0 ? 0 : marks.indexOf("^")));
  }
  const head = `${lines[0]}\n${src}\n${marks}\n\nSyntaxError: ${text}`;
  return `${text} (${relFile}:${line}:${Math.max(col, 1)})\u0000${head}`;
}

// --- A prepared context ---------------------------------------------------------

let bundleSource = null; // core's source, patched
let bundleIncremental = false; // the hooks of incremental compiles are in it

// patchIncremental is engine.PatchIncremental (engine/incremental.go): it
// adds to core's main() the two hooks incremental.js uses, or leaves the
// code as it is when a statement is not found exactly once. Without the
// hooks set, the patched code does what the original does.
// TestPatchesSame checks that both give the same bytes for every core dfd
// supports.
const INCR_LOOP = /\.sort\(\)\.forEach\(\(([\w$]+)=>\{try\{([\w$]+)\.nativeRequire\(([\w$]+)\)\}catch\(([\w$]+)\)\{([\w$]+)\.compileError\(([\w$]+),([\w$]+)\)\}\}\)\)/g;
const INCR_VERIFY = /[\w$]+\.verifyObjectMatchesProto\([\w$]+\.dataform\.CompiledGraph,[\w$]+,[\w$]+\.VerifyProtoErrorBehaviour\.SUGGEST_REPORTING_TO_DATAFORM_TEAM\)/y;
const INCR_VERIFY_LIT = ".verifyObjectMatchesProto(";
const INCR_GRAPH = /const ([\w$]+)=([\w$]+)\.dataform\.CoreExecutionResponse\.create\(\{compile:\{compiledGraph:([\w$]+)\.compile\(\)\}\}\);/g;

// patchTargetStringifier is engine.PatchTargetStringifier
// (engine/stringifier.go: why, and why the output is the same): core's
// target stringifier builds one object instead of one per key.
const TARGET_STRINGIFY_OLD = "stringify(e){return JSON.stringify(Object.keys(e).sort().reduce(((t,r)=>Object.assign(Object.assign({},t),{[r]:e[r]})),{}))}";
const TARGET_STRINGIFY_NEW = "stringify(e){const t=Object.keys(e).sort(),r={};for(let n=0;n<t.length;n++)r[t[n]]=e[t[n]];return JSON.stringify(r)}";

function patchTargetStringifier(code) {
  const i = code.indexOf(TARGET_STRINGIFY_OLD);
  if (i < 0 || code.indexOf(TARGET_STRINGIFY_OLD, i + 1) >= 0) return { code, ok: false };
  return { code: code.slice(0, i) + TARGET_STRINGIFY_NEW + code.slice(i + TARGET_STRINGIFY_OLD.length), ok: true };
}

// findVerifies is engine's findVerifies: INCR_VERIFY's matches (at most
// two), tried only from the start of the name before each occurrence of
// its literal. Searched for over the whole bundle, an expression that
// starts with a name took 10 ms of every worker's start.
function findVerifies(code) {
  const out = [];
  for (let from = 0; out.length < 2;) {
    const i = code.indexOf(INCR_VERIFY_LIT, from);
    if (i < 0) break;
    from = i + INCR_VERIFY_LIT.length;
    let start = i;
    while (start > 0 && /[\w$]/.test(code[start - 1])) start--;
    INCR_VERIFY.lastIndex = start;
    const m = INCR_VERIFY.exec(code);
    if (m) {
      out.push(m);
      from = start + m[0].length;
    }
  }
  return out;
}

function patchIncremental(code) {
  const loops = [...code.matchAll(INCR_LOOP)], graphs = [...code.matchAll(INCR_GRAPH)], verifies = findVerifies(code);
  if (loops.length !== 1 || graphs.length !== 1 || verifies.length !== 1) return { code, ok: false };
  const [, e, mod, arg, r, sess, r2, e2] = loops[0];
  if (arg !== e || e2 !== e || r2 !== r) return { code, ok: false };
  const body = `try{${mod}.nativeRequire(${e})}catch(${r}){${sess}.compileError(${r},${e})}`;
  const loop = `.sort().forEach((${e}=>{if(global.__dfdRunFile)return global.__dfdRunFile(${e},()=>{${body}});${body}}))`;
  const [, resp, protos, session] = graphs[0];
  const create = `${protos}.dataform.CoreExecutionResponse.create`;
  const graph = `const ${resp}=${create}({compile:{compiledGraph:global.__dfdGraphStage?global.__dfdGraphStage(${session},function(){return ${session}.compile()},` +
    `function(__dfdGraph){return ${protos}.dataform.CoreExecutionResponse.encode(${create}({compile:{compiledGraph:__dfdGraph}})).finish()}):${session}.compile()}});`;
  const verify = "(global.__dfdSkipGraphVerify||" + verifies[0][0] + ")";
  const edits = [
    [loops[0].index, loops[0][0].length, loop],
    [graphs[0].index, graphs[0][0].length, graph],
    [verifies[0].index, verifies[0][0].length, verify],
  ].sort((a, b) => a[0] - b[0]);
  let out = "", at = 0;
  for (const [i, n, text] of edits) {
    out += code.slice(at, i) + text;
    at = i + n;
  }
  out += code.slice(at);
  return { code: out, ok: out !== code };
}
const coreScripts = new Map(); // root → vm.Script of the wrapped bundle

// core's bundle is compiled from source in each worker, never from V8's
// code cache (vm.Script cachedData): on Node.js 20 a script made from the
// cache loses its importModuleDynamically callback, so import() in code it
// evaluates (JiT code through core) would throw Node's own error, of the
// host's realm, whose constructor leads out of the sandbox
// (TestSandboxJit caught it).
function coreScript(opts, root) {
  let s = coreScripts.get(root);
  if (!s) {
    s = script(wrapModule(bundleSource), root + "/node_modules/@dataform/core/bundle.js");
    coreScripts.set(root, s);
  }
  return s;
}

class Runtime {
  constructor(opts, root, log) {
    const start = performance.now();
    this.opts = opts;
    this.root = root;
    this.log = log; // (level, msg)
    this.files = new ProjectFiles(root, null);
    this.cmd = "";
    this.input = EMPTY;
    this.output = null;
    this.lastError = "";
    this.result = null; // {id, error, response} being delivered
    this.settled = null; // a JiT request's outcome, once its promise settled
    this.onAdapterCall = null;
    this.reads = null; // while a compile's context may be kept: file → digest of what it read
    this.arg = ""; // the argument of an incr* entry
    this.ctx = vm.createContext(Object.create(null), {
      name: "dfd project " + root,
      codeGeneration: { strings: true, wasm: false },
      microtaskMode: "afterEvaluate",
    });
    const shadowValues = shadowValuesScript.runInContext(this.ctx, { displayErrors: false });
    const preludeFn = Reflect.apply(preludeScript.runInContext(this.ctx, { displayErrors: false }), undefined, shadowValues);
    const bridge = this.bridge();
    running = this;
    try {
      this.makeError = preludeFn(bridge, {
        root, coreVersion: opts.coreVersion, bundlePath: opts.bundle,
        bridgeNames: BRIDGE_NAMES, nodeBuiltins: NODE_BUILTINS, shadowed: SHADOWED,
      });
      const r = this.call("loadCore", 0);
      if (r !== "OK") throw new Error(r.replace(/^[IS]/, "").split("\u0000")[0]);
    } finally {
      running = null;
    }
    this.prepareMicros = (performance.now() - start) * 1000;
  }

  // call runs one entry point in the context, under the deadline (ms from
  // now; 0: none). It returns the entry's status string, or throws the
  // host's timeout error.
  call(cmd, timeoutMs) {
    this.cmd = cmd;
    const prev = running;
    running = this;
    try {
      // breakOnSigint: while this thread runs a compile it reads no
      // frames, so a Cancel would wait for the compile to end (seconds on
      // a big project). The host follows the Cancel frame of a compile
      // with a SIGINT (Hello.interrupted_by_sigint), which stops it here
      // the way the deadline does; the Cancel frame read afterwards finds
      // the request answered. Only the compile itself: around each such
      // run vm briefly leaves SIGINT at its default (it moves the
      // process's listeners aside), so a signal landing there ends the
      // worker (the pool replaces it) — a window of microseconds per
      // compile, but one that JiT requests' many short steps would open
      // all the time. They are never signalled. A signal that lands
      // outside the compile's own run (while this request's runtime is
      // prepared) finds the no-op listener: that Cancel then waits for the
      // compile's end, as every Cancel did before.
      const o = { displayErrors: false, breakOnSigint: cmd === "compile" };
      if (timeoutMs > 0) o.timeout = Math.max(1, Math.ceil(timeoutMs));
      const r = trampoline.runInContext(this.ctx, o);
      return typeof r === "string" ? r : "Ientry " + cmd + " returned nothing";
    } finally {
      this.cmd = "";
      running = prev;
    }
  }

  bridge() {
    // Every function here takes primitives or context objects and returns
    // primitives or context objects; none throws on purpose.
    const rt = this;
    const opts = this.opts;
    return {
      log(level, msg) { rt.log(String(level), String(msg)); },
      stat(r) {
        try { return rt.files.stat(String(r)); } catch (e) { return 0; }
      },
      readFile(r) {
        r = String(r);
        try {
          // The signature is taken before the read: a file rewritten in
          // between is then read again next time, not taken as unchanged.
          const sig = rt.reads !== null && !rt.files.overlay.has(r) ? rt.files.signature(r) : "";
          const buf = rt.files.read(r);
          if (cacheEnabled || rt.reads !== null) {
            const hash = digest(buf);
            if (cacheEnabled) rt.files.hashes.set(r, hash);
            if (rt.reads !== null) rt.reads.set(r, { digest: hash, sig });
          }
          return buf.toString("utf8");
        } catch (e) {
          rt.lastError = String(e.message);
          return false;
        }
      },
      lastError() { return rt.lastError; },
      packageMain(r) {
        try {
          const buf = rt.files.read(String(r));
          const pkg = JSON.parse(buf.toString("utf8"));
          return pkg !== null && typeof pkg === "object" && typeof pkg.main === "string" ? pkg.main : "";
        } catch (_) {
          return "";
        }
      },
      cachedModule(file, r, jit) {
        if (!cacheEnabled) return undefined;
        const hash = rt.files.hashes.get(String(r));
        if (!hash) return undefined;
        const entry = moduleCache.get(cacheKey(opts.coreVersion, String(file), hash, !!jit));
        if (!entry) { cacheStats.transpileMisses++; return undefined; }
        cacheStats.transpileHits++;
        try {
          return entry.script.runInContext(rt.ctx, { displayErrors: false });
        } catch (e) {
          return undefined;
        }
      },
      compileModule(file, r, code, jit) {
        file = String(file);
        let s;
        try {
          s = script(wrapModule(String(code)), file);
        } catch (e) {
          return syntaxError(e, String(r), file);
        }
        if (cacheEnabled) {
          const hash = rt.files.hashes.get(String(r));
          if (hash) cachePut(cacheKey(opts.coreVersion, file, hash, !!jit), { code: String(code), script: s });
        }
        try {
          return s.runInContext(rt.ctx, { displayErrors: false });
        } catch (e) {
          return String(e && e.message);
        }
      },
      pathModule() {
        try { return pathScript.runInContext(rt.ctx, { displayErrors: false }); } catch (e) { return String(e && e.message); }
      },
      coreFunction() {
        try {
          return coreScript(opts, rt.root).runInContext(rt.ctx, { displayErrors: false });
        } catch (e) {
          // As engine.BundleError says it: every published core compiles.
          return `@dataform/core ${opts.coreVersion}: ${opts.bundle} looks truncated or corrupt: it does not compile (${e && e.message})`;
        }
      },
      incrementalModule() {
        try {
          return incrementalModule().runInContext(rt.ctx, { displayErrors: false });
        } catch (e) {
          return String(e && e.message);
        }
      },
      arg() { return rt.arg; },
      inLength() { return rt.input.length; },
      fillIn(u) {
        if (util.types.isUint8Array(u)) taSet.call(u, rt.input);
      },
      output(v) {
        const b = bytesOf(v);
        if (b === null) return "not a Uint8Array";
        rt.output = b;
        return "";
      },
      adapterCall(method, request) {
        const b = bytesOf(request);
        if (b === null) return false;
        return rt.onAdapterCall ? rt.onAdapterCall(String(method), b) : false;
      },
      resultId() { return rt.result ? rt.result.id : 0; },
      settled(status) { if (rt.settled === null) rt.settled = String(status); },
      resultError() { return rt.result && rt.result.error !== null ? rt.result.error : undefined; },
      command() {
        const c = rt.cmd;
        rt.cmd = "";
        return c;
      },
    };
  }
}

// --- The server -------------------------------------------------------------------

class Server {
  constructor(opts) {
    this.opts = opts;
    this.queue = [];
    this.early = new Set();
    this.current = null; // the running request's state
    this.served = 0;
    this.spares = [];
    this.preparing = false;
    this.nextCall = 0;
    this.calls = new Map(); // call id → request state
    this.logReq = 0;
    this.peakHeap = 0;
    this.kept = null; // the kept context of incremental compiles (compileKept)
    this.consoleLog = (level, msg) => sendLog(this.logReq, level, msg);
  }

  newRuntime(root) {
    return new Runtime(this.opts, root, this.consoleLog);
  }

  // prepareSpares keeps opts.spares runtimes ready, one per turn of the
  // event loop, while no request runs.
  prepareSpares() {
    if (this.preparing) return;
    this.preparing = true;
    setImmediate(() => {
      this.preparing = false;
      if (this.current || this.queue.length > 0 || this.spares.length >= this.opts.spares) return;
      try {
        this.spares.push(this.newRuntime(this.opts.root));
      } catch (e) {
        diag("preparing a runtime: " + (e && e.message));
        return;
      }
      this.prepareSpares();
    });
  }

  onFrame(f) {
    switch (f.kind) {
      case "request":
        sendAccepted(f.id); // before it can start: pump may run it now
        this.queue.push(f);
        this.pump();
        break;
      case "cancel":
        this.cancel(f.id);
        break;
      case "adapterResult": {
        const key = String(f.callId);
        const st = this.calls.get(key);
        this.calls.delete(key);
        if (st && st === this.current && !st.done) {
          st.results.push({ id: st.callIds.get(key), error: f.error ? f.error.message : null, response: f.response || EMPTY });
          this.step(st);
        }
        break;
      }
      default:
        protocolError(`unexpected frame (field ${f.num}) from the host`);
    }
  }

  cancel(id) {
    const key = String(id);
    if (this.current && String(this.current.id) === key && !this.current.done) {
      this.finishCanceled(this.current);
      return;
    }
    if (this.queue.some((q) => String(q.id) === key)) this.early.add(key);
  }

  pump() {
    if (this.current || this.queue.length === 0) return;
    const req = this.queue.shift();
    this.start(req);
  }

  start(req) {
    this.served++;
    const key = String(req.id);
    const st = {
      id: req.id, done: false, served: this.served, rt: null, results: [], callIds: new Map(),
      deadline: 0, timer: null, idleTurns: 0, timerRuns: 0, prepareMicros: 0, waitMicros: 0, runStart: 0, jit: !!req.jit,
    };
    this.current = st;
    if (this.early.has(key)) {
      this.early.delete(key);
      this.respond(st, { code: CODE.CANCELED, message: "canceled before it started" });
      return;
    }
    const job = req.compile || req.jit;
    if (!job) {
      this.respond(st, { code: CODE.INVALID_ARGUMENT, message: "request has neither compile nor jit" });
      return;
    }
    const what = st.jit ? "JiT compilation" : "compile";
    st.what = what;
    const t0 = performance.now();
    if (job.timeoutMs > 0) {
      st.deadline = t0 + job.timeoutMs;
      st.timer = setTimeout(() => {
        if (!st.done) this.respond(st, { code: CODE.DEADLINE_EXCEEDED, message: what + ": deadline exceeded" });
      }, job.timeoutMs);
    }
    const root = job.root === "" ? this.opts.root : job.root;
    this.logReq = req.id;
    if (!st.jit && root === this.opts.root && job.mode !== COMPILEMODE.COMPILE_FULL) {
      this.compileKept(st, job, job.mode);
      return;
    }
    if (!this.takeRuntime(st, root, job)) return;
    st.runStart = performance.now();
    if (!st.jit) {
      const r = this.run(st, "compile");
      if (r !== null) this.finishStatus(st, r);
      return;
    }
    st.rt.onAdapterCall = (method, bytes) => {
      if (st.done) return false;
      const callId = ++this.nextCall;
      const key = String(callId);
      this.calls.set(key, st);
      st.callIds.set(key, callId);
      sendAdapterCall(callId, st.id, method, bytes);
      return callId;
    };
    st.rt.settled = null;
    const r = this.run(st, "jitStart");
    if (r === null) return;
    if (r !== "P" && st.rt.settled === null) {
      this.finishStatus(st, r);
      return;
    }
    this.step(st);
  }

  // takeRuntime gives st a prepared runtime for root with job's files; false
  // when the request was answered (the runtime could not be made).
  takeRuntime(st, root, job) {
    const t0 = performance.now();
    try {
      if (root === this.opts.root && this.spares.length > 0) {
        st.rt = this.spares.shift();
      } else {
        st.rt = this.newRuntime(root);
        st.waitMicros = (performance.now() - t0) * 1000;
      }
    } catch (e) {
      this.respond(st, { code: CODE.INTERNAL, message: String(e && e.message) });
      return false;
    }
    st.prepareMicros = st.rt.prepareMicros;
    st.rt.files = new ProjectFiles(root, job.overlay, job.disk);
    st.rt.input = job.request;
    return true;
  }

  // compileKept serves a compile in one of engine.Keeper's modes (see
  // engine/incremental.go, which this follows step for step): a rerun of
  // the one edited definitions file in the kept context when it can, else
  // a compile in a fresh runtime with the hooks installed, its context kept
  // (COMPILE_KEEP, and INCREMENTAL when it could not rerun) or not
  // (COMPILE_FULL_HOOKED: the full compile an incremental one is verified
  // against). The answer says how it ran (Response.incremental).
  compileKept(st, job, mode) {
    const inc = { rerun: false, file: "", kept: false, reason: "" };
    st.incremental = inc;
    st.runStart = performance.now();
    if (mode === COMPILEMODE.COMPILE_INCREMENTAL) {
      if (this.kept === null) {
        inc.reason = "no kept context";
      } else {
        const why = this.rerun(st, job);
        if (why === null) return; // answered
        inc.reason = why;
      }
      mode = COMPILEMODE.COMPILE_KEEP;
    }
    if (mode === COMPILEMODE.COMPILE_KEEP) this.kept = null;
    if (!this.takeRuntime(st, this.opts.root, job)) return;
    const rt = st.rt;
    if (!bundleIncremental) {
      if (mode === COMPILEMODE.COMPILE_KEEP && inc.reason === "") {
        inc.reason = `@dataform/core ${this.opts.coreVersion} is not one incremental compiles know`;
      }
      inc.kept = this.kept !== null;
      const r = this.run(st, "compile");
      if (r !== null) this.finishStatus(st, r);
      return;
    }
    let r = this.run(st, "incrInstall");
    if (r === null) return;
    if (r !== "OK") {
      this.finishStatus(st, r);
      return;
    }
    const reads = new Map();
    rt.reads = reads;
    const start = performance.now();
    try {
      r = this.run(st, "compile");
    } finally {
      rt.reads = null;
    }
    if (r === null) return;
    if (r === "OK" && mode === COMPILEMODE.COMPILE_KEEP) {
      const state = this.run(st, "incrState");
      if (state === null) return;
      let v = { ready: false, files: [], timers: 0 };
      if (state[0] === "J") v = JSON.parse(state.slice(1));
      if (v.ready && v.timers > 0) {
        // What they did after the graph stage is in the context, and not
        // in a fresh one (goja keeps no context with timers pending).
        if (inc.reason === "") inc.reason = "timers ran after the compile";
      } else if (v.ready) {
        this.kept = { rt, reads, request: Buffer.from(job.request), defs: new Set(v.files), keepMs: performance.now() - start };
      } else if (inc.reason === "") {
        inc.reason = "core's main() did not reach its graph stage";
      }
    }
    inc.kept = this.kept !== null;
    this.finishStatus(st, r);
  }

  // rerun re-runs the one edited definitions file in the kept context and
  // answers with the result. It returns null when the request was answered,
  // else why the compile must be a full one (the kept context is spent).
  // Nothing stops a rerun but its deadline: a Cancel (a newer edit while
  // typing) is read once it answered, so that it keeps its context
  // (engine.rerunContext gives goja's a grace for the same reason; one here
  // takes a fraction of the host's).
  rerun(st, job) {
    const k = this.kept;
    this.kept = null;
    if (!job.request.equals(k.request)) return "the compile request changed (settings or the list of files)";
    const files = new ProjectFiles(this.opts.root, job.overlay, job.disk);
    const changed = [];
    for (const [name, read] of k.reads) {
      if (unchanged(files, name, read)) continue;
      changed.push(name);
      if (changed.length > 1) return "more than one file changed";
    }
    const file = changed.length === 1 ? changed[0] : "";
    if (file !== "" && !k.defs.has(file)) return file + " is not a definitions file the compile ran";
    const rt = k.rt;
    st.rt = rt;
    rt.files = files;
    rt.arg = file;
    rt.output = null;
    rt.reads = k.reads;
    sigintSeen = false;
    let r;
    try {
      r = this.run(st, "incrRerun");
    } finally {
      rt.reads = null;
      rt.arg = "";
    }
    if (r === null) return null;
    if (r !== "OK" && sigintSeen) {
      // Canceled while it ran: the full compile it would fall back to is
      // for nobody (engine.Keeper answers the cancellation too).
      this.finishCanceled(st);
      return null;
    }
    if (r === "OK") {
      this.kept = k;
      Object.assign(st.incremental, { rerun: true, file, kept: true });
      this.finishStatus(st, r);
      return null;
    }
    st.rt = null;
    if (r[0] === "N") return r.slice(1);
    return r.slice(1).split("\u0000")[0];
  }

  // run calls an entry under the request's remaining time; null when the
  // request was answered (deadline).
  run(st, cmd) {
    let remaining = 0;
    if (st.deadline > 0) {
      remaining = st.deadline - performance.now();
      if (remaining <= 0) {
        this.respond(st, { code: CODE.DEADLINE_EXCEEDED, message: st.what + ": deadline exceeded" });
        return null;
      }
    }
    try {
      return st.rt.call(cmd, remaining);
    } catch (e) {
      if (e && e.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
        this.respond(st, { code: CODE.DEADLINE_EXCEEDED, message: st.what + ": deadline exceeded" });
      } else if (e && e.code === "ERR_SCRIPT_EXECUTION_INTERRUPTED") {
        this.finishCanceled(st); // the host's SIGINT after its Cancel frame (see call)
      } else {
        this.respond(st, { code: CODE.INTERNAL, message: st.what + ": " + String(e && e.message) });
      }
      return null;
    }
  }

  // step drives a JiT request: adapter answers first, then timers, as the
  // goja engine does (virtual time). The outcome arrives through the
  // bridge's settled() while a call's microtasks drain.
  step(st) {
    for (;;) {
      if (st.done) return;
      const rt = st.rt;
      if (rt.settled !== null) {
        this.finishStatus(st, rt.settled);
        return;
      }
      let r;
      if (st.results.length > 0) {
        st.idleTurns = 0;
        rt.result = st.results.shift();
        rt.input = rt.result.error === null ? rt.result.response : EMPTY;
        r = this.run(st, "jitDeliver");
        if (!st.done) rt.result = null;
        if (r === null) return;
        if (r !== "D" && rt.settled === null) {
          this.finishStatus(st, r); // the callback threw
          return;
        }
        continue;
      }
      if (this.pendingCalls(st) > 0) return; // wait for an adapter result, a Cancel or the deadline
      r = this.run(st, "jitTimer");
      if (r === null) return;
      if (r === "T1") {
        st.idleTurns = 0;
        // Let Cancel frames and stdin's EOF in now and then.
        if (++st.timerRuns % 1000 === 0) {
          setImmediate(() => this.step(st));
          return;
        }
        continue;
      }
      if (r !== "T0") {
        if (rt.settled === null) {
          this.finishStatus(st, r);
          return;
        }
        continue;
      }
      if (rt.settled !== null || this.pendingCalls(st) > 0) continue;
      // Work may still be queued in this realm (a refused import() settles
      // through Node's own promises): give it a few turns of the event loop
      // before calling it a hang.
      if (st.idleTurns < 100) {
        st.idleTurns++;
        setImmediate(() => this.step(st));
        return;
      }
      this.respond(st, { code: CODE.SCRIPT_ERROR, message: "JiT code is waiting for something that never happens: no adapter call or timer is pending" });
      return;
    }
  }

  pendingCalls(st) {
    let n = 0;
    for (const s of this.calls.values()) if (s === st) n++;
    return n;
  }

  finishStatus(st, r) {
    if (r === "OK") {
      this.respond(st, { result: st.rt.output || EMPTY });
      return;
    }
    const kind = r[0];
    const [message, stack] = r.slice(1).split("\u0000");
    if (kind === "S") this.respond(st, { code: CODE.SCRIPT_ERROR, message, stack: stack || "" });
    else this.respond(st, { code: CODE.INTERNAL, message });
  }

  finishCanceled(st) {
    this.respond(st, { code: CODE.CANCELED, message: (st.what || "request") + ": canceled" });
  }

  respond(st, outcome) {
    if (st.done) return;
    st.done = true;
    if (st.timer) clearTimeout(st.timer);
    for (const [k, s] of this.calls) if (s === st) this.calls.delete(k);
    // The V8 heap in use as the request ends (garbage included): the pool
    // recycles the worker when it reaches PoolOptions.RecycleHeap. A hard
    // ceiling is V8's own (--max-old-space-size, nodeworker.HeapFlag): a
    // worker that crosses it dies and is replaced. An error answer above
    // --memory-limit is RESOURCE_EXHAUSTED, and the worker exits after it,
    // as the goja worker does; a result is delivered.
    const heap = v8.getHeapStatistics().used_heap_size;
    const runMicros = st.runStart > 0 ? (performance.now() - st.runStart) * 1000 : 0;
    let exhausted = false;
    if (this.opts.memoryLimit > 0 && heap > this.opts.memoryLimit && outcome.result === undefined) {
      exhausted = true;
      outcome = { code: CODE.RESOURCE_EXHAUSTED, message: `the worker's heap went over its ${Math.floor(this.opts.memoryLimit / 1048576)} MiB ceiling` };
    }
    if (st.incremental) outcome.incremental = st.incremental;
    sendResponse(st.id, outcome, {
      prepareMicros: st.prepareMicros, waitMicros: st.waitMicros, runMicros,
      peakHeap: heap, served: st.served,
    });
    if (st.rt) { st.rt.onAdapterCall = null; st.rt = null; }
    this.logReq = 0;
    this.current = null;
    if (exhausted) {
      diag("heap ceiling crossed; exiting after this response");
      process.exit(EXIT_MEMORY);
    }
    if (process.env.DFD_NODE_DEBUG_CACHE === "1") diag(`cache: ${cacheStats.transpileHits} hits, ${cacheStats.transpileMisses} misses, ${moduleCache.size} entries`);
    setImmediate(() => this.pump());
    this.prepareSpares();
  }
}

function protocolError(msg) {
  diag("ending: the host sent a bad frame: protocol error: " + msg);
  process.exit(EXIT_PROTOCOL);
}

// --- Reading stdin ------------------------------------------------------------------

function readFrames(maxFrame, onFrame) {
  let chunks = [];
  let have = 0;
  let need = -1; // bytes of the frame being read (prefix included), once known
  let prefix = 0;
  let stall = null;
  const input = process.stdin;
  input.on("data", (chunk) => {
    chunks.push(chunk);
    have += chunk.length;
    for (;;) {
      if (have === 0) break;
      if (need < 0) {
        if (chunks[0].length < 10 && chunks.length > 1) chunks = [Buffer.concat(chunks)];
        let size;
        try {
          [size, prefix] = readVarint(chunks[0], 0);
        } catch (e) {
          if (chunks[0].length >= 10) protocolError("malformed length prefix");
          break; // the prefix is incomplete
        }
        if (typeof size !== "number" || size > maxFrame) protocolError(`frame of ${size} bytes exceeds the ${maxFrame}-byte limit`);
        need = prefix + size;
      }
      if (have < need) {
        if (!stall) stall = setTimeout(() => protocolError(`stalled inside a frame (${have - prefix} of ${need - prefix} bytes): not a frame?`), STALL_TIMEOUT_MS);
        break;
      }
      if (stall) { clearTimeout(stall); stall = null; }
      const buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const body = buf.subarray(prefix, need);
      const rest = buf.subarray(need);
      chunks = rest.length > 0 ? [rest] : [];
      have = rest.length;
      need = -1;
      let f;
      try {
        f = decodeFrame(body);
      } catch (e) {
        protocolError("malformed frame: " + e.message);
      }
      if (!f) protocolError("a frame with no content (unknown frame type?)");
      onFrame(f);
    }
  });
  input.on("end", () => {
    if (have > 0) protocolError(`stream ended inside a frame`);
    process.exit(EXIT_OK);
  });
  input.on("error", (e) => {
    diag("ending: reading stdin failed: " + e.message);
    process.exit(EXIT_FAILURE);
  });
}

// selfTest (--self-test) tries, from this realm and after the lockdown,
// what project code must never reach, and prints one line per attempt on
// stderr: "<what>: denied (<why>)" or "<what>: ALLOWED". Tests use it.
function selfTest(opts) {
  const out = [];
  const attempt = (what, f) => {
    try {
      f();
      out.push(what + ": ALLOWED");
    } catch (e) {
      out.push(what + ": denied (" + (e && (e.code || e.message)) + ")");
    }
  };
  const net = require("net"), dgram = require("dgram"), dns = require("dns"), http = require("http"), https = require("https");
  attempt("read /etc/passwd", () => fs.readFileSync("/etc/passwd"));
  attempt("read the parent of the root", () => fs.readdirSync(opts.root + "/.."));
  attempt("write into the root", () => fs.writeFileSync(opts.root + "/dfd-self-test.txt", "x"));
  attempt("spawn a process", () => require("child_process").spawnSync("/bin/true"));
  attempt("start a worker thread", () => new (require("worker_threads").Worker)("1", { eval: true }));
  attempt("net.connect", () => net.connect({ host: "127.0.0.1", port: 9 }));
  attempt("net.createConnection", () => net.createConnection(9, "127.0.0.1"));
  attempt("net.Socket.connect", () => new net.Socket().connect(9, "127.0.0.1"));
  attempt("tls.connect", () => require("tls").connect(443, "127.0.0.1"));
  attempt("dgram.createSocket", () => dgram.createSocket("udp4"));
  attempt("dns.lookup", () => dns.lookup("localhost", () => {}));
  attempt("dns.promises.lookup", () => dns.promises.lookup("localhost"));
  attempt("http.get", () => http.get("http://127.0.0.1:9/"));
  attempt("https.request", () => https.request("https://127.0.0.1:9/"));
  attempt("fetch", () => globalThis.fetch("http://127.0.0.1:9/"));
  attempt("process.binding", () => process.binding("tcp_wrap"));
  attempt("process.dlopen", () => process.dlopen({}, "/nonexistent.node"));
  attempt("set Error.prepareStackTrace", () => { Error.prepareStackTrace = () => 1; if (Error.prepareStackTrace !== 1) throw new Error("not writable"); });
  // Sanity: what the worker must read.
  attempt("read core's bundle (must be allowed)", () => fs.readFileSync(opts.bundle));
  attempt("stat the root (must be allowed)", () => fs.statSync(opts.root));
  fs.writeSync(2, out.join("\n") + "\n");
  process.exit(0);
}

// --- main ---------------------------------------------------------------------------

function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    diag(e.message);
    process.exit(EXIT_USAGE);
  }
  process.stdin.pause(); // opened before the lockdown
  lockdown();
  if (opts.selfTest) {
    selfTest(opts);
    return;
  }
  process.on("unhandledRejection", () => { /* decided by the requests' own promises */ });
  // The host's SIGINT stops a running request (see Runtime.call); one that
  // arrives after that request ended has nothing to stop, and must not end
  // the worker as Node's default handler would.
  process.on("SIGINT", () => { sigintSeen = true; });
  process.on("uncaughtException", (e) => {
    diag("internal error: " + (e && e.stack || e));
    process.exit(EXIT_FAILURE);
  });
  try {
    let code = fs.readFileSync(opts.bundle, "utf8");
    if (versionLess(opts.coreVersion, "3.0.57")) code = patchOldCallerFile(code);
    const p = patchIncremental(patchTargetStringifier(code).code);
    bundleSource = p.code;
    bundleIncremental = p.ok;
  } catch (e) {
    diag(`loading @dataform/core: ${e.message}`);
    process.exit(EXIT_FAILURE);
  }
  const server = new Server(opts);
  try {
    server.spares.push(server.newRuntime(opts.root));
  } catch (e) {
    diag("preparing a runtime: " + e.message);
    process.exit(EXIT_FAILURE);
  }
  sendHello(opts, performance.now() * 1000);
  readFrames(opts.maxFrame, (f) => server.onFrame(f));
  process.stdin.resume();
  server.prepareSpares();
}

if (require.main === module) main();

module.exports = { contextPrelude, decodeFrame, varint, fields, clean, ProjectFiles, patchIncremental, patchTargetStringifier, findVerifies };

// Test oracle for package graphjson (test-only; run by oracle_test.go).
//
// Usage: node oracle.js <cli node_modules dir> <request.json>
//
// request.json: {"protos": [paths...], "cases": [{"type": "pkg.Msg", "b64": "..."}]}
// Prints a JSON array with one object per case:
//   {"static": b64 | null, "staticErr": msg, "reflect": b64 | null, "reflectErr": msg}
// where the b64 values are the UTF-8 of
//   JSON.stringify(Type.create(Type.decode(bytes)), null, 4) + "\n"
// i.e. what `dataform compile --json` prints (see prettyJsonStringify and
// compile() in @dataform/cli's bundle.js).
//
// "static" uses the pbjs static code embedded in the CLI bundle (exactly what
// the CLI runs) and is only available for types the CLI knows (dataform.*,
// google.protobuf.*). "reflect" uses protobufjs reflection on the given
// .proto files (protobuf.loadSync), the same runtime the CLI loads.
//
// Bytes are decoded from a Uint8Array that is not a Node Buffer, like the
// CLI's fromBase64(), so protobufjs uses its own utf8.read for strings.
"use strict";
const fs = require("fs");
const path = require("path");

const nm = process.argv[2];
const req = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const protobuf = require(path.join(nm, "protobufjs"));
const minimal = require(path.join(nm, "protobufjs/minimal"));

// Extract the generated static module (dataform.* and google.protobuf.*)
// from the CLI bundle and evaluate it against protobufjs/minimal.
function loadStatic() {
  const src = fs.readFileSync(path.join(nm, "@dataform/cli/bundle.js"), "utf8");
  const start = src.indexOf("const $Reader = $protobuf__namespace.Reader");
  const g = src.indexOf("const google = $root.google = (() => {", start);
  const endMark = "\n    return google;\n})();";
  const end = src.indexOf(endMark, g);
  if (start < 0 || g < 0 || end < 0) throw new Error("static protobuf code not found in bundle.js");
  const code = src.slice(start, end + endMark.length);
  const ns = Object.assign({}, minimal, { roots: {} });
  return new Function("$protobuf__namespace", code + "\nreturn $root;")(ns);
}

function lookupStatic(root, name) {
  let o = root;
  for (const part of name.split(".")) {
    if (o == null || !Object.prototype.hasOwnProperty.call(o, part)) return null;
    o = o[part];
  }
  return typeof o === "function" && typeof o.decode === "function" ? o : null;
}

const staticRoot = loadStatic();
const reflectRoot = new protobuf.Root();
reflectRoot.loadSync(req.protos, { keepCase: false });
reflectRoot.resolveAll();

function render(T, bytes) {
  const msg = T.decode(bytes);
  const obj = T.create ? T.create(msg) : msg;
  const s = JSON.stringify(obj, null, 4) + "\n";
  return Buffer.from(s, "utf8").toString("base64");
}

const out = req.cases.map((c) => {
  const r = { static: null, reflect: null };
  const bytes = () => new Uint8Array(Buffer.from(c.b64, "base64")); // not a Buffer
  const S = lookupStatic(staticRoot, c.type);
  if (S) {
    try { r.static = render(S, bytes()); } catch (e) { r.staticErr = String(e && e.message || e); }
  }
  let R = null;
  try { R = reflectRoot.lookupType(c.type); } catch (e) { r.reflectErr = "lookup: " + e.message; }
  if (R) {
    try { r.reflect = render(R, bytes()); } catch (e) { r.reflectErr = String(e && e.message || e); }
  }
  return r;
});
process.stdout.write(JSON.stringify(out));

// coremain.js — the floor under any engine's compile: @dataform/core's
// main() alone, in a plain Node.js realm (no vm context, no sandbox, no
// loader of dfd's), run again and again in the same process so V8's code is
// hot, with every project file's compiler() output kept from the first run.
// BenchmarkCoreMainAlone runs it; it is not part of dfd.
//
//   node coremain.js ROOT REQUEST_FILE RUNS
//
// prints one JSON line: {"ms": [each run's main()], "sha256": of the output
// (the same for every run, or it exits 1), "bytes": its length}.
"use strict";
const fs = require("fs"), path = require("path"), crypto = require("crypto"), Module = require("module");
const [root, requestFile, runsArg] = process.argv.slice(2);
const runs = Number(runsArg) || 10;
const core = require(path.join(root, "node_modules/@dataform/core/bundle.js"));

// Core requires a project file by its path relative to the root, as the
// CLI's vm2 resolves it.
const resolve = Module._resolveFilename;
Module._resolveFilename = function (id, parent, ...rest) {
  try {
    return resolve.call(this, id, parent, ...rest);
  } catch (e) {
    const p = path.join(root, id);
    if (fs.existsSync(p)) return p;
    throw e;
  }
};
const isProjectFile = (f) => f.startsWith(root + path.sep) && !f.includes(`${path.sep}node_modules${path.sep}`);
const transpiled = new Map();
const plainJS = Module._extensions[".js"];
const load = (m, f) => {
  if (!isProjectFile(f)) return plainJS(m, f);
  let code = transpiled.get(f);
  if (code === undefined) {
    code = core.compiler(fs.readFileSync(f, "utf8"), f);
    transpiled.set(f, code);
  }
  m._compile(code, f);
};
for (const ext of [".js", ".sqlx", ".sql", ".yaml", ".yml"]) Module._extensions[ext] = load;

const request = new Uint8Array(fs.readFileSync(requestFile));
const ms = [];
let sha = "", bytes = 0;
for (let i = 0; i < runs; i++) {
  for (const k of Object.keys(require.cache)) if (isProjectFile(k)) delete require.cache[k];
  if (fs.existsSync(path.join(root, "workflow_settings.yaml"))) {
    global.workflowSettingsYaml = require(path.join(root, "workflow_settings.yaml"));
  }
  const start = process.hrtime.bigint();
  const out = core.main(request);
  ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  const h = crypto.createHash("sha256").update(out).digest("hex");
  if (sha !== "" && h !== sha) {
    process.stderr.write(`run ${i}: main() returned other bytes than run 0\n`);
    process.exit(1);
  }
  sha = h;
  bytes = out.length;
}
process.stdout.write(JSON.stringify({ ms, sha256: sha, bytes }) + "\n");

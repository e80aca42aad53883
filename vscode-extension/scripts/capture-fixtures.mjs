#!/usr/bin/env node
// Captures real dfd/preview, dfd/status and dfd/graph results from `dfd
// serve` into test/fixtures/*.json, for the rendering, status-bar and graph
// unit tests.
//
// Regenerate (from vscode-extension/, after `npm ci`):
//   (cd .. && go build -o /tmp/dfd ./cmd/dfd)
//   node scripts/capture-fixtures.mjs /tmp/dfd [FIXTURE.json…]
// Naming fixtures rewrites only those (the others keep their bytes: the
// timings in every answer differ from run to run).
//
// It copies examples/clickstream and testdata/projects/sqlx_warehouse (the
// latter with `dataformCoreVersion: 3.0.62` added) and an empty project with
// no core into a temporary folder, starts one `dfd serve` on the three, asks
// for previews and the status, and rewrites the temporary path to /workspace
// so the fixtures do not depend on where they were made.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import rpc from "vscode-jsonrpc/node.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const out = path.resolve(here, "..", "test", "fixtures");
const dfd = process.argv[2] || "/tmp/dfd";
const only = new Set(process.argv.slice(3));

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "dfd-fixtures-")));
const ws = path.join(tmp, "ws");
fs.cpSync(path.join(repo, "examples", "clickstream"), path.join(ws, "clickstream"), { recursive: true });
fs.cpSync(path.join(repo, "testdata", "projects", "sqlx_warehouse"), path.join(ws, "warehouse"), {
  recursive: true,
  filter: (p) => !p.includes("node_modules"),
});
const wsSettings = path.join(ws, "warehouse", "workflow_settings.yaml");
fs.writeFileSync(wsSettings, "dataformCoreVersion: 3.0.62\n" + fs.readFileSync(wsSettings, "utf8"));
fs.rmSync(path.join(ws, "warehouse", "package.json"), { force: true });
fs.mkdirSync(path.join(ws, "nocore", "definitions"), { recursive: true });
fs.writeFileSync(path.join(ws, "nocore", "workflow_settings.yaml"), "defaultProject: p\ndefaultDataset: d\n");
fs.writeFileSync(path.join(ws, "nocore", "definitions", "a.sqlx"), 'config { type: "view" }\nSELECT 1 AS one\n');

const settings = { metadata: { snapshot: path.join(ws, "clickstream", "metadata.json") } };
const proc = spawn(dfd, ["serve", "--stdio"], { stdio: ["pipe", "pipe", "pipe"] });
proc.stderr.on("data", (d) => process.stderr.write(d));
const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(proc.stdout),
  new rpc.StreamMessageWriter(proc.stdin),
);
conn.onRequest("workspace/configuration", (p) => p.items.map(() => settings));
conn.onRequest("client/registerCapability", () => null);
conn.onRequest("window/workDoneProgress/create", () => null);
conn.onNotification(() => {});
conn.listen();

const uri = (rel) => pathToFileURL(path.join(ws, rel)).href;
const scrub = (v) => JSON.parse(JSON.stringify(v).split(tmp + "/ws").join("/workspace"));
const save = (name, v) => {
  if (only.size > 0 && !only.has(name)) return;
  fs.writeFileSync(path.join(out, name), JSON.stringify(scrub(v), null, 2) + "\n");
  process.stderr.write(`wrote ${name}\n`);
};

await conn.sendRequest("initialize", {
  processId: process.pid,
  rootUri: pathToFileURL(ws).href,
  capabilities: { workspace: { configuration: true } },
  workspaceFolders: [{ uri: pathToFileURL(ws).href, name: "ws" }],
  initializationOptions: { dfd: settings },
});
conn.sendNotification("initialized", {});

const previews = {
  "preview-aot-view.json": "clickstream/definitions/top_countries.sqlx",
  "preview-jit-table.json": "clickstream/definitions/jit/daily_clicks.js",
  "preview-jit-operations.json": "clickstream/definitions/jit/housekeeping.js",
  "preview-jit-assertion.json": "clickstream/definitions/jit/checks.js",
  "preview-incremental.json": "warehouse/definitions/marts/fct_orders.sqlx",
  "preview-operations.json": "warehouse/definitions/ops/grant_reporting_access.sqlx",
  "preview-assertion.json": "warehouse/definitions/assertions/assert_revenue_not_negative.sqlx",
  "preview-table.json": "warehouse/definitions/marts/dim_customers.sqlx",
  "preview-nocore.json": "nocore/definitions/a.sqlx",
};
for (const [name, rel] of Object.entries(previews)) {
  save(name, await conn.sendRequest("dfd/preview", { textDocument: { uri: uri(rel) }, jit: true }));
}
save("status.json", await conn.sendRequest("dfd/status"));
// The clickstream project's graph: AoT and JiT actions, a declaration, an
// assertion and operations (lsp/fixtures_test.go reads graph-* as GraphResult).
save("graph-clickstream.json", await conn.sendRequest("dfd/graph", { uri: uri("clickstream") }));

// A JiT action whose code throws, sent as an unsaved buffer.
const broken = uri("clickstream/definitions/jit/broken.js");
conn.sendNotification("textDocument/didOpen", {
  textDocument: {
    uri: broken, languageId: "javascript", version: 1,
    text: 'publish("broken_jit", { type: "table" }).jitCode(async (jctx) => {\n' +
      '  await jctx.adapter.getTable({ target: { database: "acme-clickstream", schema: "clicks", name: "no_such_table" } });\n' +
      '  throw new Error("<script>alert(1)</script> went wrong");\n});\n',
  },
});
save("preview-jit-error.json", await conn.sendRequest("dfd/preview", { textDocument: { uri: broken }, jit: true }));
conn.sendNotification("textDocument/didClose", { textDocument: { uri: broken } });

// The same JiT table without a metadata source: warnings, failing calls.
conn.sendNotification("workspace/didChangeConfiguration", { settings: { dfd: { metadata: { source: "none", snapshot: "" } } } });
save("preview-jit-nometadata.json",
  await conn.sendRequest("dfd/preview", { textDocument: { uri: uri("clickstream/definitions/jit/daily_clicks.js") }, jit: true }));
await conn.sendRequest("shutdown");
conn.sendNotification("exit");
setTimeout(() => {
  proc.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}, 500);

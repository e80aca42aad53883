import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { PreviewResult, relativeFile, renderMessage, renderPreviewBody, renderPreviewPage, targetString } from "../src/previewHtml";
import { actionTargets, fixture, previewResult, section, sqlBlocks, textOf } from "./helpers";

// The preview-*.json fixtures are real dfd/preview results captured with
// scripts/capture-fixtures.mjs (see there to regenerate them).

describe("preview rendering", () => {
  it("renders an AoT view: header, target, type, query", () => {
    const r = fixture<PreviewResult>("preview-aot-view.json");
    const html = renderPreviewBody(r);
    assert.deepEqual(actionTargets(html), ["acme-clickstream.clicks.top_countries"]);
    const s = section(html, "acme-clickstream.clicks.top_countries");
    assert.match(s, /<span class="badge type">view<\/span>/);
    assert.ok(!s.includes('class="jit"'));
    const blocks = sqlBlocks(s);
    assert.deepEqual(blocks.map((b) => b.kind), ["query"]);
    assert.equal(blocks[0].text, r.actions![0].sql!.query);
    assert.match(html, /<header class="file"><span class="path">definitions\/top_countries.sqlx<\/span>/);
    assert.match(html, /core 3\.0\.62/);
    assert.match(s, /<button class="copy"/);
  });

  it("renders a table with its description and dependencies", () => {
    const r = fixture<PreviewResult>("preview-table.json");
    const html = renderPreviewBody(r);
    const a = r.actions![0];
    const s = section(html, targetString(a.target));
    assert.match(s, /<span class="badge type">table<\/span>/);
    if (a.description) assert.ok(textOf(s).includes(a.description));
    for (const d of a.dependencies ?? []) assert.ok(s.includes(targetString(d)));
    assert.equal(sqlBlocks(s).find((b) => b.kind === "query")?.text, a.sql!.query);
  });

  it("renders every SQL variant of an incremental table", () => {
    const r = fixture<PreviewResult>("preview-incremental.json");
    const a = r.actions![0];
    const blocks = sqlBlocks(renderPreviewBody(r));
    const kinds = new Set(blocks.map((b) => b.kind));
    for (const k of ["query", "preOps", "incrementalQuery", "incrementalPreOps"]) {
      assert.ok(kinds.has(k), `missing ${k} in ${[...kinds]}`);
    }
    assert.equal(blocks.find((b) => b.kind === "incrementalQuery")?.text, a.sql!.incrementalQuery);
    assert.equal(blocks.find((b) => b.kind === "preOps" && b.index === "0")?.text, a.sql!.preOps![0]);
    assert.match(renderPreviewBody(r), /Query \(full refresh\)/);
  });

  it("renders the queries of an operations action", () => {
    const r = fixture<PreviewResult>("preview-operations.json");
    const a = r.actions![0];
    const blocks = sqlBlocks(renderPreviewBody(r)).filter((b) => b.kind === "queries");
    assert.equal(blocks.length, a.sql!.queries!.length);
    assert.deepEqual(blocks.map((b) => b.text), a.sql!.queries);
    assert.deepEqual(blocks.map((b) => b.index), a.sql!.queries!.map((_, i) => String(i)));
  });

  it("renders an assertion's query", () => {
    const r = fixture<PreviewResult>("preview-assertion.json");
    const html = renderPreviewBody(r);
    assert.match(html, /data-type="assertion"/);
    assert.match(html, /Assertion query/);
    assert.equal(sqlBlocks(html)[0].text, r.actions![0].sql!.query);
  });

  it("renders a JiT table: badge, JiT SQL, elapsed time, adapter and calls", () => {
    const r = fixture<PreviewResult>("preview-jit-table.json");
    const a = r.actions![0];
    const s = section(renderPreviewBody(r), targetString(a.target));
    assert.match(s, /data-jit="true"/);
    assert.match(s, /<span class="badge jit-badge">JiT<\/span>/);
    const jit = s.slice(s.indexOf('<div class="jit">'));
    assert.ok(jit.length > 0);
    const blocks = sqlBlocks(jit);
    assert.equal(blocks.find((b) => b.kind === "jitQuery")?.text, a.jitPreview!.sql!.query);
    assert.ok(blocks.some((b) => b.kind === "jitPreOps"));
    assert.match(jit, new RegExp(`<span class="adapter">offline snapshot /workspace/clickstream/metadata.json</span>`));
    assert.match(jit, /<span class="elapsed">\d+(\.\d+)? ms<\/span>/);
    const rows = [...jit.matchAll(/<tr class="call[^"]*" data-method="([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(rows, a.jitPreview!.adapterCalls!.map((c) => c.method));
    assert.match(jit, /<table class="calls"><thead><tr><th>Call<\/th><th>Summary<\/th><th>Duration<\/th><th>Cached<\/th><th>Dry run<\/th><th>Error<\/th>/);
  });

  it("renders JiT operations with refused calls as failed rows", () => {
    const r = fixture<PreviewResult>("preview-jit-operations.json");
    const html = renderPreviewBody(r);
    assert.equal(actionTargets(html).length, r.actions!.length);
    const a = r.actions![0];
    const s = section(html, targetString(a.target));
    assert.deepEqual(sqlBlocks(s).filter((b) => b.kind === "jitQueries").map((b) => b.text), a.jitPreview!.sql!.queries);
    assert.equal([...s.matchAll(/<tr class="call failed"/g)].length, a.jitPreview!.adapterCalls!.filter((c) => c.error).length);
    assert.match(s, /PERMISSION_DENIED: dfd preview: DeleteTable/);
  });

  it("renders a JiT assertion", () => {
    const r = fixture<PreviewResult>("preview-jit-assertion.json");
    const a = r.actions![0];
    const s = section(renderPreviewBody(r), targetString(a.target));
    assert.match(s, /data-type="assertion"/);
    assert.equal(sqlBlocks(s).find((b) => b.kind === "jitQuery")?.text, a.jitPreview!.sql!.query);
  });

  it("shows the warnings of a JiT preview without metadata", () => {
    const r = fixture<PreviewResult>("preview-jit-nometadata.json");
    const html = renderPreviewBody(r);
    const warnings = [...html.matchAll(/<li class="warning">([\s\S]*?)<\/li>/g)].map((m) => textOf(m[1]));
    assert.deepEqual(warnings, r.actions![0].jitPreview!.warnings);
    assert.match(html, /<span class="adapter">none<\/span>/);
  });

  it("shows a failed JiT code in an error box inside the JiT block", () => {
    const r = fixture<PreviewResult>("preview-jit-error.json");
    const html = renderPreviewBody(r);
    const jit = html.slice(html.indexOf('<div class="jit">'));
    assert.match(jit, /<div class="error" role="alert"><strong>The JiT code failed<\/strong><pre>JiT code of acme-clickstream.clicks.broken_jit failed/);
    assert.match(jit, /data-method="GetTable"/);
  });

  it("shows a project that cannot be compiled in an error box", () => {
    const r = fixture<PreviewResult>("preview-nocore.json");
    const html = renderPreviewBody(r);
    assert.match(html, /<div class="error" role="alert"><strong>The project could not be compiled<\/strong>/);
    assert.ok(textOf(html).includes(r.error!));
    assert.deepEqual(actionTargets(html), []);
    assert.ok(!html.includes("This file defines no actions"));
  });

  it("says when a file defines no actions", () => {
    assert.match(renderPreviewBody(previewResult({ uri: "file:///p/includes/x.js", project: "file:///p", actions: [] })), /This file defines no actions/);
  });

  it("renders cached and dry-run calls, notes and a disabled action", () => {
    const html = renderPreviewBody(previewResult({
      uri: "file:///p/definitions/a.js",
      project: "file:///p",
      actions: [
        {
          target: { database: "d", schema: "s", name: "a" },
          type: "incremental",
          jit: true,
          disabled: true,
          sql: {},
          jitPreview: {
            sql: { query: "SELECT 1", incrementalQuery: "SELECT 2" },
            elapsedMs: 1.234,
            adapter: "BigQuery (project p)",
            adapterCalls: [
              { method: "Execute", summary: "DELETE FROM x", durationMs: 3, dryRun: true, notes: ["not executed: not read-only"] },
              { method: "GetTable", summary: "d.s.t", durationMs: 0.01, cached: true },
            ],
          },
        },
      ],
    }));
    assert.match(html, /<span class="badge disabled">disabled<\/span>/);
    assert.match(html, /<tr class="call" data-method="Execute">.*<td class="cached">no<\/td><td class="dryrun">yes<\/td>/);
    assert.match(html, /<tr class="call" data-method="GetTable">.*<td class="cached">yes<\/td><td class="dryrun">no<\/td>/);
    assert.match(html, /<div class="note">not executed: not read-only<\/div>/);
    assert.deepEqual(sqlBlocks(html).map((b) => b.kind), ["jitQuery", "jitIncrementalQuery"]);
    assert.match(html, /<span class="elapsed">1\.23 ms<\/span>/);
  });

  it("shows a call's whole statement, with the server's visible control characters, when the summary cannot", () => {
    const html = renderPreviewBody(previewResult({
      uri: "file:///p/definitions/probe.js",
      project: "file:///p",
      actions: [
        {
          target: { database: "d", schema: "s", name: "probe" },
          type: "table",
          jit: true,
          sql: {},
          jitPreview: {
            sql: { query: "SELECT 1" },
            adapterCalls: [
              { method: "Execute", summary: "SELECT 1 --␍; DROP TABLE `d.t`", statement: "SELECT 1 --␍; DROP TABLE `d.t`\n", dryRun: true,
                notes: ["preview: script of 2 statements (query; DROP TABLE statement), executed as a dry run"] },
              { method: "Execute", summary: "SELECT a …", statement: "SELECT a\nFROM t", durationMs: 1 },
            ],
          },
        },
      ],
    }));
    assert.match(html, /<code>SELECT 1 --␍; DROP TABLE `d\.t`<\/code>/);
    assert.equal([...html.matchAll(/<details class="statement">/g)].length, 1, "only the multi-line statement gets its own block");
    assert.match(html, /<pre>SELECT a\nFROM t<\/pre>/);
  });

  it("escapes everything the server sends, including <script> in SQL", () => {
    const evil = "<script>alert(1)</script>";
    const html = renderPreviewBody(previewResult({
      uri: `file:///p/definitions/${evil}.sqlx`,
      project: "file:///p",
      coreVersion: evil,
      error: evil,
      actions: [
        {
          target: { database: '"><img src=x onerror=alert(1)>', schema: "s", name: evil },
          type: evil,
          description: evil,
          tags: [evil],
          dependencies: [{ name: evil }],
          sql: { query: `SELECT '${evil}' AS x -- ${evil}`, preOps: [evil], queries: [evil] },
          jit: true,
          jitPreview: {
            sql: { query: evil },
            adapter: evil,
            adapterCalls: [{ method: evil, summary: evil, error: evil, notes: [evil] }],
            warnings: [evil],
            error: evil,
          },
        },
      ],
    }));
    assert.ok(!/<script|<img/i.test(html), html);
    assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert.equal(sqlBlocks(html).find((b) => b.kind === "query")?.text, `SELECT '${evil}' AS x -- ${evil}`);
    assert.match(html, /data-target="&quot;&gt;&lt;img src=x onerror=alert\(1\)&gt;\.s\.&lt;script&gt;/);
  });

  it("wraps the body in a page with a strict CSP and nonce'd script and style", () => {
    const page = renderPreviewPage({
      nonce: "abc123",
      cspSource: "https://webview.example",
      scriptUri: "https://webview.example/media/preview.js",
      body: renderMessage("Loading…"),
      uri: "file:///p/a.sqlx",
      reveal: "d.s.a",
    });
    assert.match(page, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;nonce-abc123&#39;; script-src &#39;nonce-abc123&#39;;/);
    assert.match(page, /<script nonce="abc123" src="https:\/\/webview.example\/media\/preview.js"><\/script>/);
    assert.match(page, /<style nonce="abc123">/);
    assert.match(page, /<main id="root" data-uri="file:\/\/\/p\/a.sqlx" data-reveal="d.s.a">/);
    assert.equal([...page.matchAll(/<script/g)].length, 1);
    const urls = [...page.matchAll(/https?:\/\/[^\s"'&;)]+/g)].map((m) => m[0]);
    assert.ok(urls.every((u) => u.startsWith("https://webview.example")), urls.join(" "));
    assert.match(renderMessage("x <b>", "error"), /<div class="error" role="alert">.*x &lt;b&gt;/);
  });

  it("names files relative to their project", () => {
    assert.equal(relativeFile("file:///p/definitions/a%20b.sqlx", "file:///p"), "definitions/a b.sqlx");
    assert.equal(relativeFile("file:///q/a.sqlx", "file:///p"), "/q/a.sqlx");
    assert.equal(targetString({ name: "n" }), "n");
    assert.equal(targetString({ database: "d", schema: "", name: "n" }), "d.n");
  });
  it("shows an action's cost of one run", () => {
    const r = previewResult({ actions: [
      { target: { name: "a" }, cost: { status: "estimated", label: "≈ 1.2 GiB · $0.01", totalBytesProcessed: 1288490188, costUSD: 0.007, inTotal: true } },
      { target: { name: "b" }, cost: { status: "upstreamNotBuilt", reason: "upstream not built (p.d.a)", label: "upstream not built (p.d.a)", totalBytesProcessed: 0, inTotal: false } },
    ] });
    const html = renderPreviewBody(r);
    assert.match(section(html, "a"), /<div class="cost" data-status="estimated">Cost of one run: ≈ 1\.2 GiB · \$0\.01<\/div>/);
    assert.match(section(html, "b"), /<div class="cost" data-status="upstreamNotBuilt">Cost of one run: upstream not built \(p\.d\.a\)<\/div>/);
  });
});

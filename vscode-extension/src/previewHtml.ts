// The compiled preview: a dfd/preview result → HTML. Pure (no `vscode`
// import) so it is unit tested; every string from the server is escaped.
//
// DOM contract (used by tests and the webview script):
//   <main id="root" data-uri="…">
//     <header class="file">…</header>
//     <div class="error">…</div>                       result.error
//     <section class="action" data-target="db.schema.name" data-type="table" data-jit="true|false">
//       <div class="cost" data-status="estimated|upstreamNotBuilt|…">…</div>   action.cost (BigQuery dry runs)
//       <pre class="sql" data-kind="query|preOps|postOps|incrementalQuery|incrementalPreOps|
//                                   incrementalPostOps|queries" data-index="0">…</pre>
//       <div class="jit">
//         <pre class="sql" data-kind="jitQuery|jitPreOps|jitPostOps|jitIncrementalQuery|…|jitQueries">
//         <table class="calls"><tr class="call" data-method="GetTable">…
//         <ul class="warnings"><li class="warning">…
//         <div class="error">…</div>                   jitPreview.error
//       </div>
//     </section>
//   </main>
// Each <pre class="sql"> follows a <button class="copy"> in its .sql-head.
import { escapeHtml, highlightSql } from "./sqlTokenizer";
import { renderWebviewPage } from "./webviewPage";

// The result types are generated from the server's Go types
// (go run ./lsp/gen → protocol_gen.ts), so they are what dfd sends.
import type { AdapterCall, JitPreview, PreviewAction, PreviewResult, SQL, Target } from "./protocol_gen";

export type { AdapterCall, JitPreview, PreviewAction, PreviewResult, Target };
export type SqlSet = SQL;

export function targetString(t: Target | undefined): string {
  if (!t) {
    return "";
  }
  return [t.database, t.schema, t.name].filter((x) => x !== undefined && x !== "").join(".");
}

/** The file path of a result, relative to its project when possible. */
export function relativeFile(uri: string, project?: string): string {
  let p = uri;
  if (project && (uri + "/").startsWith(project.replace(/\/?$/, "/"))) {
    p = uri.slice(project.replace(/\/?$/, "/").length);
  } else {
    p = uri.replace(/^file:\/\//, "");
  }
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}

const esc = (v: unknown): string => escapeHtml(String(v ?? ""));
const ms = (v: number | undefined): string => (v === undefined ? "" : v < 10 ? `${v.toFixed(2)} ms` : `${Math.round(v)} ms`);

type Kind = keyof SqlSet;
const ORDER: Kind[] = ["preOps", "query", "postOps", "incrementalPreOps", "incrementalQuery", "incrementalPostOps", "queries"];

function labelFor(kind: Kind, type: string, index: number, count: number): string {
  const nth = count > 1 ? ` ${index + 1}/${count}` : "";
  switch (kind) {
    case "query":
      if (type === "assertion") return "Assertion query";
      if (type === "test") return "Test query";
      if (type === "incremental") return "Query (full refresh)";
      return "Query";
    case "preOps":
      return `Pre-operations${nth}`;
    case "postOps":
      return `Post-operations${nth}`;
    case "incrementalQuery":
      return "Incremental query";
    case "incrementalPreOps":
      return `Incremental pre-operations${nth}`;
    case "incrementalPostOps":
      return `Incremental post-operations${nth}`;
    case "queries":
      if (type === "test") return "Expected output";
      return `Operation${nth}`;
  }
}

function sqlBlock(dataKind: string, label: string, sql: string, index?: number): string {
  const idx = index === undefined ? "" : ` data-index="${index}"`;
  return (
    `<div class="sql-block">` +
    `<div class="sql-head"><span class="label">${esc(label)}</span>` +
    `<button class="copy" type="button" title="Copy this SQL">Copy</button></div>` +
    `<pre class="sql" data-kind="${esc(dataKind)}"${idx}>${highlightSql(sql)}</pre>` +
    `</div>`
  );
}

/** The SQL sections of a set; `prefix` "jit" makes data-kind jitQuery etc. */
export function renderSqlSet(set: SqlSet | undefined, type: string, prefix = ""): string {
  if (!set) {
    return "";
  }
  const parts: string[] = [];
  for (const kind of ORDER) {
    const v = set[kind];
    const dataKind = prefix ? prefix + kind[0].toUpperCase() + kind.slice(1) : kind;
    if (typeof v === "string") {
      if (v !== "") parts.push(sqlBlock(dataKind, labelFor(kind, type, 0, 1), v));
    } else if (Array.isArray(v)) {
      v.forEach((s, i) => parts.push(sqlBlock(dataKind, labelFor(kind, type, i, v.length), String(s), i)));
    }
  }
  return parts.join("");
}

function hasSql(set: SqlSet | undefined): boolean {
  return !!set && ORDER.some((k) => (Array.isArray(set[k]) ? (set[k] as string[]).length > 0 : !!set[k]));
}

function errorBox(message: string, title: string): string {
  return `<div class="error" role="alert"><strong>${esc(title)}</strong><pre>${esc(message)}</pre></div>`;
}

function callsTable(calls: AdapterCall[]): string {
  if (calls.length === 0) {
    return `<p class="no-calls">No database calls.</p>`;
  }
  const rows = calls.map((c) => {
    const notes = (c.notes ?? []).map((n) => `<div class="note">${esc(n)}</div>`).join("");
    // The whole statement, when the one-line summary cannot show all of it.
    const stmt = c.statement && c.statement.trim() !== (c.summary ?? "").trim()
      ? `<details class="statement"><summary>statement</summary><pre>${esc(c.statement)}</pre></details>`
      : "";
    return (
      `<tr class="call${c.error ? " failed" : ""}" data-method="${esc(c.method)}">` +
      `<td class="method">${esc(c.method)}</td>` +
      `<td class="summary"><code>${esc(c.summary)}</code>${stmt}${notes}</td>` +
      `<td class="duration">${esc(ms(c.durationMs))}</td>` +
      `<td class="cached">${c.cached ? "yes" : "no"}</td>` +
      `<td class="dryrun">${c.dryRun ? "yes" : "no"}</td>` +
      `<td class="call-error">${c.error ? esc(c.error) : ""}</td>` +
      `</tr>`
    );
  });
  return (
    `<table class="calls"><thead><tr><th>Call</th><th>Summary</th><th>Duration</th><th>Cached</th><th>Dry run</th><th>Error</th></tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table>`
  );
}

function renderJit(a: PreviewAction, jitRequested: boolean): string {
  const j = a.jitPreview;
  if (!j) {
    return (
      `<div class="jit"><div class="jit-head"><span class="badge jit-badge">JiT</span> ` +
      (jitRequested ? "The server returned no JiT preview for this action." : "JiT preview not requested.") +
      `</div></div>`
    );
  }
  const head =
    `<div class="jit-head"><span class="badge jit-badge">JiT</span> JiT-compiled SQL` +
    (j.elapsedMs !== undefined ? ` · <span class="elapsed">${esc(ms(j.elapsedMs))}</span>` : "") +
    (j.adapter ? ` · adapter: <span class="adapter">${esc(j.adapter)}</span>` : "") +
    `</div>`;
  const warnings = (j.warnings ?? []).length
    ? `<ul class="warnings">${(j.warnings ?? []).map((w) => `<li class="warning">${esc(w)}</li>`).join("")}</ul>`
    : "";
  const error = j.error ? errorBox(j.error, "The JiT code failed") : "";
  const sql = hasSql(j.sql) ? renderSqlSet(j.sql, a.type, "jit") : j.error ? "" : `<p class="no-sql">The JiT code returned no SQL.</p>`;
  const calls = `<details class="calls-details" open><summary>Database calls (${(j.adapterCalls ?? []).length})</summary>${callsTable(j.adapterCalls ?? [])}</details>`;
  return `<div class="jit">${head}${error}${warnings}${sql}${calls}</div>`;
}

export function renderAction(a: PreviewAction, index: number, jitRequested = true): string {
  const target = targetString(a.target);
  const badges = [
    `<span class="badge type">${esc(a.type)}</span>`,
    a.jit ? `<span class="badge jit-badge">JiT</span>` : "",
    a.disabled ? `<span class="badge disabled">disabled</span>` : "",
  ].join("");
  const meta: string[] = [];
  if (a.description) meta.push(`<p class="description">${esc(a.description)}</p>`);
  if (a.tags && a.tags.length) meta.push(`<div class="tags">${a.tags.map((t) => `<span class="tag">${esc(t)}</span>`).join("")}</div>`);
  if (a.dependencies && a.dependencies.length) {
    meta.push(`<div class="deps">depends on ${a.dependencies.map((d) => `<code>${esc(targetString(d))}</code>`).join(", ")}</div>`);
  }
  if (a.cost) {
    const view = a.type === "view" && a.cost.status === "estimated" ? " (what its query reads; creating the view bills nothing)" : "";
    meta.push(`<div class="cost" data-status="${esc(a.cost.status)}">Cost of one run: ${esc(a.cost.label)}${view}</div>`);
  }
  let body = "";
  if (hasSql(a.sql)) {
    body += renderSqlSet(a.sql, a.type);
  } else if (a.type === "declaration") {
    body += `<p class="no-sql">A declaration: no SQL to run.</p>`;
  } else if (!a.jit) {
    body += `<p class="no-sql">No compiled SQL.</p>`;
  }
  if (a.jit) {
    body += renderJit(a, jitRequested);
  }
  return (
    `<section class="action" id="action-${index}" data-target="${esc(target)}" data-type="${esc(a.type)}" data-jit="${a.jit ? "true" : "false"}">` +
    `<h2><span class="target">${esc(target)}</span>${badges}</h2>` +
    meta.join("") +
    body +
    `</section>`
  );
}

/** The body of the preview for one result. */
export function renderPreviewBody(r: PreviewResult, opts: { jitRequested?: boolean } = {}): string {
  const file = relativeFile(r.uri, r.project);
  const facts = [
    r.coreVersion ? `core ${esc(r.coreVersion)}` : "",
    r.compileMs !== undefined && !r.error ? `compiled in ${esc(ms(r.compileMs))}` : "",
    r.version !== undefined ? `version ${esc(r.version)}` : "",
  ].filter(Boolean);
  let html = `<header class="file"><span class="path">${esc(file)}</span>${facts.length ? ` <span class="facts">${facts.join(" · ")}</span>` : ""}</header>`;
  if (r.error) {
    html += errorBox(r.error, "The project could not be compiled");
  }
  const actions = r.actions ?? [];
  if (actions.length === 0 && !r.error) {
    html += `<p class="empty">This file defines no actions.</p>`;
  }
  html += actions.map((a, i) => renderAction(a, i, opts.jitRequested ?? true)).join("");
  return html;
}

/** A body that only carries a message (no file, no server, loading). */
export function renderMessage(message: string, kind: "info" | "error" = "info"): string {
  return kind === "error" ? errorBox(message, "Preview unavailable") : `<p class="message">${esc(message)}</p>`;
}

export const PREVIEW_CSS = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 12px 24px; }
header.file { position: sticky; top: 0; background: var(--vscode-editor-background); padding: 6px 0; border-bottom: 1px solid var(--vscode-panel-border, #8884); z-index: 1; }
header.file .path { font-weight: 600; }
header.file .facts, .jit-head, .deps, .tags { color: var(--vscode-descriptionForeground); }
section.action { margin: 14px 0 22px; scroll-margin-top: 3em; }
section.action.revealed h2 { outline: 2px solid var(--vscode-focusBorder); outline-offset: 2px; }
h2 { font-size: 1.1em; margin: 0 0 6px; display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
h2 .target { font-family: var(--vscode-editor-font-family); }
.badge { font-size: 0.8em; padding: 1px 6px; border-radius: 8px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.badge.jit-badge { background: var(--vscode-charts-yellow, #c9a400); color: #000; }
.badge.disabled { background: var(--vscode-disabledForeground, #888); }
.tag { margin-right: 6px; }
.tag::before { content: "#"; }
.description { margin: 2px 0 6px; }
.sql-block { margin: 8px 0; }
.sql-head { display: flex; justify-content: space-between; align-items: center; font-size: 0.9em; color: var(--vscode-descriptionForeground); }
button.copy { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); border: none; padding: 2px 8px; cursor: pointer; border-radius: 2px; }
button.copy:hover { background: var(--vscode-button-secondaryHoverBackground); }
pre.sql { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); background: var(--vscode-textCodeBlock-background, #8881); padding: 8px; margin: 2px 0; overflow-x: auto; white-space: pre; tab-size: 2; }
pre.sql .k { color: var(--vscode-symbolIcon-keywordForeground, #569cd6); font-weight: 600; }
pre.sql .s { color: var(--vscode-debugTokenExpression-string, #ce9178); }
pre.sql .n { color: var(--vscode-debugTokenExpression-number, #b5cea8); }
pre.sql .c { color: var(--vscode-descriptionForeground, #6a9955); font-style: italic; }
pre.sql .q { color: var(--vscode-symbolIcon-fieldForeground, #9cdcfe); }
pre.sql .f { color: var(--vscode-symbolIcon-functionForeground, #dcdcaa); }
pre.sql .o { color: var(--vscode-foreground); }
.jit { border-left: 3px solid var(--vscode-charts-yellow, #c9a400); padding-left: 10px; margin-top: 10px; }
.error { border: 1px solid var(--vscode-inputValidation-errorBorder, #be1100); background: var(--vscode-inputValidation-errorBackground, #5a1d1d); color: var(--vscode-errorForeground, #f48771); padding: 6px 10px; margin: 8px 0; }
.error pre { white-space: pre-wrap; margin: 4px 0 0; font-family: var(--vscode-editor-font-family); color: var(--vscode-foreground); }
ul.warnings { margin: 6px 0; padding-left: 18px; color: var(--vscode-editorWarning-foreground, #cca700); }
table.calls { border-collapse: collapse; width: 100%; font-size: 0.9em; }
table.calls th, table.calls td { text-align: left; padding: 2px 6px; border-bottom: 1px solid var(--vscode-panel-border, #8884); vertical-align: top; }
table.calls td.method, table.calls td.duration, table.calls td.cached, table.calls td.dryrun { white-space: nowrap; }
table.calls td.summary { min-width: 14em; }
table.calls td.summary code, table.calls td.call-error { overflow-wrap: anywhere; }
table.calls tr.failed td.call-error { color: var(--vscode-errorForeground, #f48771); }
.calls-details summary { cursor: pointer; margin: 6px 0; }
.message, .empty, .no-sql { color: var(--vscode-descriptionForeground); }
`;

export interface PageOptions {
  nonce: string;
  cspSource: string;
  scriptUri: string;
  body: string;
  uri?: string;
  reveal?: string;
}

/** The whole webview document: strict CSP, styles and script by nonce. */
export function renderPreviewPage(o: PageOptions): string {
  return renderWebviewPage({
    nonce: o.nonce,
    cspSource: o.cspSource,
    scriptUri: o.scriptUri,
    title: "Dataform Preview",
    css: PREVIEW_CSS,
    data: [
      ["uri", o.uri ?? ""],
      ["reveal", o.reveal ?? ""],
    ],
    body: o.body,
  });
}

// The "Dataform Data" results panel's content: a dfd/rows result → HTML,
// CSV and JSON. Pure (no `vscode` import) so it is unit tested; every
// string from the server is escaped.
//
// DOM contract (used by tests and media/rows.js):
//   <main id="root">
//     <header class="rows-head" data-source="query|table" data-target="db.schema.name">…</header>
//     <div class="toolbar"><button data-action="copy-csv|copy-json|source|open|refresh" …></div>
//     <div class="confirm">…<button data-action="confirm"></div>   needsConfirmation
//     <div class="refused">…</div> / <div class="unavailable">…</div> / <div class="error">…</div>
//     <table class="rows"><thead><tr><th data-type="…">…</th></tr></thead>
//       <tbody><tr><td class="null|nested|number|bool|text">…</td></tr></tbody></table>
//   </main>
import { escapeHtml } from "./sqlTokenizer";
import { renderWebviewPage } from "./webviewPage";
import type { RowsColumn, RowsResult } from "./protocol_gen";

export type { RowsColumn, RowsResult };

const esc = (v: unknown): string => escapeHtml(String(v ?? ""));

/** A column's type as GoogleSQL writes it: INTEGER, ARRAY<STRING>, STRUCT<name STRING>. */
export function columnType(c: RowsColumn): string {
  let t = c.type;
  if (t === "RECORD" || t === "STRUCT") {
    t = `STRUCT<${(c.fields ?? []).map((f) => `${f.name} ${columnType(f)}`).join(", ")}>`;
  }
  return c.mode === "REPEATED" ? `ARRAY<${t}>` : t;
}

/** A value as the table shows it: NULL, text as it is, the rest as JSON. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

function cellClass(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "object") return "nested";
  if (typeof v === "number") return "number";
  if (typeof v === "boolean") return "bool";
  return "text";
}

function rowsOf(r: RowsResult): Record<string, unknown>[] {
  return (r.rows ?? []) as Record<string, unknown>[];
}

/** The rows as CSV (RFC 4180): a header of column names; NULL is an empty field, STRUCT and ARRAY values JSON. */
export function rowsToCsv(r: RowsResult): string {
  const field = (s: string): string => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const cols = r.columns ?? [];
  const lines = [cols.map((c) => field(c.name)).join(",")];
  for (const row of rowsOf(r)) {
    lines.push(cols.map((c) => {
      const v = row[c.name];
      return v === null || v === undefined ? "" : field(typeof v === "string" ? v : JSON.stringify(v));
    }).join(","));
  }
  return lines.join("\r\n") + "\r\n";
}

/** The rows as a JSON array of objects, keys in the columns' order. */
export function rowsToJson(r: RowsResult): string {
  return JSON.stringify(rowsOf(r), null, 2) + "\n";
}

/** Bytes in binary units, as dfd and BigQuery's console show them. */
export function formatBytes(n: number | undefined): string {
  const v = n ?? 0;
  if (v < 1024) return `${v} B`;
  const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
  let x = v / 1024;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x.toFixed(1)} ${units[i]}`;
}

/** BigQuery's console on a table (database may be empty: the billing project's). */
export function consoleTableUrl(database: string | undefined, schema: string, name: string): string {
  const q = new URLSearchParams();
  if (database) q.set("p", database);
  q.set("d", schema);
  q.set("t", name);
  q.set("page", "table");
  return `https://console.cloud.google.com/bigquery?${q.toString()}`;
}

/** BigQuery's console, its query editor, in a project. */
export function consoleUrl(project?: string): string {
  return project ? `https://console.cloud.google.com/bigquery?project=${encodeURIComponent(project)}` : "https://console.cloud.google.com/bigquery";
}

function button(action: string, label: string, attrs: Record<string, string> = {}): string {
  const extra = Object.entries(attrs).map(([k, v]) => ` data-${k}="${esc(v)}"`).join("");
  return `<button class="tool" data-action="${esc(action)}"${extra}>${esc(label)}</button>`;
}

/** What the header says of where the rows come from and what they cost. */
export function rowsFacts(r: RowsResult): string[] {
  const n = (r.rows ?? []).length;
  const facts: string[] = [];
  if (r.source === "table") {
    facts.push(`table rows · ${n} of ${r.totalRows} · tabledata.list: no query, nothing billed`);
    return facts;
  }
  if (n > 0 || r.jobId || r.cached) {
    facts.push(`query · ${n} row${n === 1 ? "" : "s"}${r.truncated ? " (the limit)" : ""}`);
  } else {
    facts.push("query");
  }
  if (r.cached) {
    facts.push("from dfd's query cache of an identical preview: nothing billed now");
  } else if (r.jobId) {
    facts.push(`${formatBytes(r.totalBytesProcessed)} processed`, `${formatBytes(r.totalBytesBilled)} billed`);
  } else if (r.estimatedBytesProcessed !== undefined) {
    facts.push(`dry run: ≈ ${formatBytes(r.estimatedBytesProcessed)}`);
  }
  return facts;
}

/** The body of the panel for one result. */
export function renderRowsBody(r: RowsResult): string {
  const other = r.source === "table" ? "query" : "table";
  let html = `<header class="rows-head" data-source="${esc(r.source)}" data-target="${esc(r.action || r.target)}">` +
    `<span class="target">${esc(r.action || r.target)}</span> <span class="facts">${rowsFacts(r).map(esc).join(" · ")}</span>`;
  if (r.jobId) {
    html += ` <span class="job">job ${r.jobUrl ? `<a href="#" data-url="${esc(r.jobUrl)}">${esc(r.jobId)}</a>` : esc(r.jobId)}</span>`;
  }
  html += `</header><div class="toolbar">`;
  if ((r.rows ?? []).length > 0) {
    html += button("copy-csv", "Copy as CSV") + button("copy-json", "Copy as JSON");
  }
  html += button("source", other === "table" ? "Show table rows" : "Run query", { source: other }) + button("refresh", "Refresh");
  if (r.tableUrl) html += button("open", "Open in BigQuery", { url: r.tableUrl });
  html += `</div>`;
  if (r.needsConfirmation) {
    html += `<div class="confirm"><p>${esc(r.confirmation || "The query needs confirmation.")}</p>${button("confirm", `Run it (≈ ${formatBytes(r.estimatedBytesProcessed)})`)}</div>`;
  }
  if (r.refused) html += `<div class="refused"><strong>Not run.</strong> ${esc(r.refused)}</div>`;
  if (r.unavailable) html += `<div class="unavailable">${esc(r.unavailable)}</div>`;
  if (r.error) html += `<div class="error"><strong>BigQuery:</strong> <pre>${esc(r.error)}</pre></div>`;
  const cols = r.columns ?? [];
  if (cols.length > 0) {
    html += `<div class="table-wrap"><table class="rows"><thead><tr><th class="rownum">#</th>`;
    html += cols.map((c) => `<th data-type="${esc(columnType(c))}"${c.description ? ` title="${esc(c.description)}"` : ""}><span class="name">${esc(c.name)}</span><span class="type">${esc(columnType(c))}</span></th>`).join("");
    html += `</tr></thead><tbody>`;
    rowsOf(r).forEach((row, i) => {
      html += `<tr><td class="rownum">${i + 1}</td>` + cols.map((c) => {
        const v = row[c.name];
        return `<td class="${cellClass(v)}">${esc(cellText(v))}</td>`;
      }).join("") + `</tr>`;
    });
    html += `</tbody></table></div>`;
    if (rowsOf(r).length === 0 && !r.needsConfirmation && !r.refused) html += `<p class="empty">No rows.</p>`;
  }
  if (r.statement && r.statement.trim() !== "") {
    html += `<details class="statement"><summary>Query</summary><pre>${esc(r.statement.trim())}</pre></details>`;
  }
  return html;
}

/** A body that only carries a message (loading, no server). */
export function renderRowsMessage(message: string, kind: "info" | "error" = "info"): string {
  return kind === "error" ? `<div class="error">${esc(message)}</div>` : `<p class="message">${esc(message)}</p>`;
}

export const ROWS_CSS = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 12px 24px; }
header.rows-head { position: sticky; top: 0; background: var(--vscode-editor-background); padding: 6px 0; z-index: 1; }
header.rows-head .target { font-weight: 600; font-family: var(--vscode-editor-font-family); }
header.rows-head .facts, header.rows-head .job { color: var(--vscode-descriptionForeground); }
.toolbar { display: flex; gap: 6px; margin: 4px 0 8px; flex-wrap: wrap; }
button.tool { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); border: none; padding: 2px 8px; cursor: pointer; border-radius: 2px; }
button.tool:hover { background: var(--vscode-button-secondaryHoverBackground); }
.confirm { border: 1px solid var(--vscode-inputValidation-warningBorder, #b89500); padding: 6px 10px; margin: 8px 0; }
.refused, .unavailable { color: var(--vscode-descriptionForeground); margin: 8px 0; }
.error { border: 1px solid var(--vscode-inputValidation-errorBorder, #be1100); background: var(--vscode-inputValidation-errorBackground, #5a1d1d); color: var(--vscode-errorForeground, #f48771); padding: 6px 10px; margin: 8px 0; }
.error pre { white-space: pre-wrap; margin: 4px 0 0; font-family: var(--vscode-editor-font-family); color: var(--vscode-foreground); }
.table-wrap { overflow-x: auto; }
table.rows { border-collapse: collapse; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
table.rows th, table.rows td { text-align: left; padding: 2px 8px; border: 1px solid var(--vscode-panel-border, #8884); vertical-align: top; white-space: pre; max-width: 40em; overflow: hidden; text-overflow: ellipsis; }
table.rows th { position: sticky; top: 0; background: var(--vscode-editor-background); }
table.rows th .name { display: block; }
table.rows th .type { display: block; font-weight: normal; font-size: 0.85em; color: var(--vscode-descriptionForeground); }
table.rows td.null { color: var(--vscode-descriptionForeground); font-style: italic; }
table.rows td.number { text-align: right; }
table.rows td.nested { color: var(--vscode-symbolIcon-structForeground, #d7ba7d); }
table.rows td.rownum, table.rows th.rownum { color: var(--vscode-descriptionForeground); text-align: right; }
details.statement pre { white-space: pre-wrap; font-family: var(--vscode-editor-font-family); }
.message, .empty { color: var(--vscode-descriptionForeground); }
`;

export interface RowsPageOptions {
  nonce: string;
  cspSource: string;
  scriptUri: string;
  body: string;
}

/** The whole webview document: strict CSP, styles and script by nonce. */
export function renderRowsPage(o: RowsPageOptions): string {
  return renderWebviewPage({ ...o, title: "Dataform Data", css: ROWS_CSS, data: [] });
}

// The dependency graph view: a dfd/graph project → a laid-out graph → SVG.
// Pure (no `vscode` import) so that the layout and the markup are unit
// tested on real results; every string from the server is escaped.
//
// The file's actions sit in the middle column; what they read (their
// dependencies, transitively) to the left, what reads them (dependents) to
// the right, one column per step, so that every edge runs left to right in
// the direction the data flows.
//
// DOM contract (used by the tests, media/graph.js and the e2e test):
//   <main id="root" data-uri="…">
//     <header class="graph-head">… <button class="depth" data-depth="1|2|3|all" aria-pressed>…</header>
//     <div class="error">…</div>                                 project error
//     <svg class="graph">
//       <path class="edge[ focus-edge][ back]" data-from="upstream name" data-to="dependent name"/>
//       <g class="node role-focus|role-upstream|role-downstream type-… [disabled]"
//          data-name="db.schema.name" data-uri="file:…" data-column="-1" tabindex="0" role="button">
//         <text class="name">…</text> <text class="meta">…</text>
//         <g class="badge jit|assertion|assertions|disabled">…</g>
//         <g class="lineage" role="button">…</g>               tables, views, incrementals
//       </g>
//     </svg>
//   </main>
import type { GraphAction, GraphEdge, GraphProject } from "./protocol_gen";
import { escapeHtml } from "./sqlTokenizer";
import { renderWebviewPage } from "./webviewPage";

export type { GraphAction, GraphEdge, GraphProject };

/** How many steps up and downstream are shown. */
export type Depth = number | "all";
export const DEPTHS: readonly Depth[] = [1, 2, 3, "all"];
export const DEFAULT_DEPTH: Depth = 2;

/** Beyond this many actions the farthest are left out (a graph of thousands is unreadable and slow). */
export const MAX_NODES = 250;

export const NODE_W = 220;
export const NODE_H = 64;
const GAP_X = 72;
const GAP_Y = 14;
const PAD = 16;
/** Approximate advance of a character of the node font (12px), for truncation. */
const CHAR_W = 7;

export type Role = "focus" | "upstream" | "downstream";

export interface LaidOutNode {
  action: GraphAction;
  role: Role;
  /** 0: the file's actions; -k: k steps upstream (longest path), +k downstream. */
  column: number;
  row: number;
  x: number;
  y: number;
  /** Assertions of the project that depend on this action (they check it). */
  assertions: number;
}

export interface LaidOutEdge {
  /** The action that runs first (GraphEdge.to): the edge's left end. */
  upstream: string;
  /** The action that depends on it (GraphEdge.from). */
  dependent: string;
  /** SVG path data. */
  path: string;
  /** Touches one of the file's actions. */
  focus: boolean;
  /** Does not run left to right (a dependency between two of the file's actions, or a node both up- and downstream). */
  back: boolean;
}

export interface GraphLayout {
  nodes: LaidOutNode[];
  edges: LaidOutEdge[];
  width: number;
  height: number;
  /** Actions within the depth that were left out (MAX_NODES). */
  omitted: number;
  /** Whether a deeper depth would show more. */
  more: boolean;
}

/** A file URI in one spelling: VS Code and Go escape different characters. */
export function normalizeUri(u: string): string {
  try {
    return decodeURIComponent(u).replace(/\/+$/, "");
  } catch {
    return u.replace(/\/+$/, "");
  }
}

/** The actions `fileUri` defines, in the server's order. */
export function fileActions(p: GraphProject, fileUri: string): GraphAction[] {
  const want = normalizeUri(fileUri);
  return p.actions.filter((a) => a.uri !== "" && normalizeUri(a.uri) === want);
}

/** The project of `fileUri`: the innermost root containing it, else the first. */
export function projectOf(projects: GraphProject[], fileUri: string): GraphProject | undefined {
  const file = normalizeUri(fileUri) + "/";
  let best: GraphProject | undefined;
  for (const p of projects) {
    const root = normalizeUri(p.root) + "/";
    if (file.startsWith(root) && (!best || root.length > normalizeUri(best.root).length + 1)) best = p;
  }
  return best ?? projects[0];
}

/**
 * Lays out `focus` (action names) with the actions within `depth` steps up
 * and downstream. Which actions are shown goes by the shortest number of
 * steps; their columns by the longest path to the focus among the shown
 * actions, so that no edge runs backwards or within a column.
 */
export function layoutGraph(p: GraphProject, focus: string[], depth: Depth, maxNodes = MAX_NODES): GraphLayout {
  const byName = new Map(p.actions.map((a) => [a.name, a]));
  // deps: name → what it depends on; users: name → what depends on it.
  const deps = new Map<string, string[]>();
  const users = new Map<string, string[]>();
  const push = (m: Map<string, string[]>, k: string, v: string) => {
    const l = m.get(k);
    if (l) {
      if (!l.includes(v)) l.push(v);
    } else m.set(k, [v]);
  };
  for (const e of p.edges) {
    if (!byName.has(e.from) || !byName.has(e.to) || e.from === e.to) continue;
    push(deps, e.from, e.to);
    push(users, e.to, e.from);
  }
  const focusSet = new Set(focus.filter((n) => byName.has(n)));
  const limit = depth === "all" ? Infinity : Math.max(0, depth);
  const budget = Math.max(maxNodes - focusSet.size, 0);

  // Breadth first on both sides at once, nearest first, so that a cut by
  // MAX_NODES drops the farthest actions of either side.
  const role = new Map<string, Role>();
  for (const n of focusSet) role.set(n, "focus");
  let frontier: { name: string; side: Role }[] = [...focusSet].flatMap((name) => [
    { name, side: "upstream" as Role },
    { name, side: "downstream" as Role },
  ]);
  let shown = 0;
  let omitted = 0;
  let more = false;
  for (let dist = 1; frontier.length > 0; dist++) {
    const next: { name: string; side: Role }[] = [];
    const seen = new Set<string>();
    for (const { name, side } of frontier) {
      for (const m of (side === "upstream" ? deps : users).get(name) ?? []) {
        const key = side + "\0" + m;
        if (role.has(m) || seen.has(key)) continue;
        seen.add(key);
        if (dist > limit) {
          more = true;
          continue;
        }
        if (shown >= budget) {
          omitted++;
          continue;
        }
        role.set(m, side);
        shown++;
        next.push({ name: m, side });
      }
    }
    // A node both up- and downstream (of two actions of the file) keeps
    // the side that reached it first.
    frontier = next;
  }
  if (omitted > 0) {
    // Count each omitted action once (the same one may be reached twice).
    omitted = countUnshown(role, focusSet, deps, users, limit);
  }

  // Columns: longest path to the focus within the shown actions.
  const column = new Map<string, number>();
  for (const n of focusSet) column.set(n, 0);
  // One memo per side: each node's level is walked once.
  const levels = (side: "upstream" | "downstream") => {
    const toward = side === "upstream" ? users : deps; // the neighbours nearer the focus
    const memo = new Map<string, number>();
    const visiting = new Set<string>();
    const walk = (n: string): number => {
      if (focusSet.has(n)) return 0;
      const known = memo.get(n);
      if (known !== undefined) return known;
      if (visiting.has(n)) return 0; // a cycle: the compile reports it
      visiting.add(n);
      let best = 1;
      for (const m of toward.get(n) ?? []) {
        const r = role.get(m);
        if (r === "focus" || r === side) best = Math.max(best, walk(m) + 1);
      }
      visiting.delete(n);
      memo.set(n, best);
      return best;
    };
    return walk;
  };
  const upLevel = levels("upstream");
  const downLevel = levels("downstream");
  for (const [n, r] of role) {
    if (r === "upstream") column.set(n, -upLevel(n));
    else if (r === "downstream") column.set(n, downLevel(n));
  }

  // Rows: the focus in the server's order; then outwards, each column by
  // the mean row of its neighbours in the columns nearer the focus (fewer
  // crossings), ties by name.
  const cols = new Map<number, string[]>();
  for (const a of p.actions) {
    const c = column.get(a.name);
    if (c === undefined) continue;
    const l = cols.get(c);
    if (l) l.push(a.name);
    else cols.set(c, [a.name]);
  }
  const rowOf = new Map<string, number>();
  (cols.get(0) ?? []).forEach((n, i) => rowOf.set(n, i));
  const keys = [...cols.keys()];
  const minCol = Math.min(0, ...keys);
  const maxCol = Math.max(0, ...keys);
  const order = (c: number, inner: Map<string, string[]>) => {
    const names = cols.get(c);
    if (!names) return;
    // Where a node's neighbours nearer the focus are, as a fraction of
    // their column's height (columns differ in length).
    const score = (n: string) => {
      const at: number[] = [];
      for (const m of inner.get(n) ?? []) {
        const r = rowOf.get(m);
        const mc = column.get(m);
        if (r === undefined || mc === undefined || Math.abs(mc) >= Math.abs(c)) continue;
        at.push((r + 0.5) / cols.get(mc)!.length);
      }
      return at.length ? at.reduce((s, v) => s + v, 0) / at.length : Infinity;
    };
    const scored = names.map((n) => ({ n, s: score(n) }));
    scored.sort((a, b) => a.s - b.s || shortName(a.n).localeCompare(shortName(b.n)) || a.n.localeCompare(b.n));
    scored.forEach(({ n }, i) => rowOf.set(n, i));
  };
  for (let c = -1; c >= minCol; c--) order(c, users);
  for (let c = 1; c <= maxCol; c++) order(c, deps);

  // Coordinates: columns left to right, each centred vertically.
  const counts = [...cols.values()].map((l) => l.length);
  const tallest = Math.max(1, ...counts);
  const height = PAD * 2 + tallest * NODE_H + (tallest - 1) * GAP_Y;
  const width = PAD * 2 + (maxCol - minCol + 1) * NODE_W + (maxCol - minCol) * GAP_X;
  const assertionsOf = (n: string) => (users.get(n) ?? []).filter((m) => byName.get(m)?.type === "assertion").length;
  const nodes: LaidOutNode[] = [];
  for (const a of p.actions) {
    const c = column.get(a.name);
    if (c === undefined) continue;
    const count = cols.get(c)!.length;
    const colH = count * NODE_H + (count - 1) * GAP_Y;
    const row = rowOf.get(a.name)!;
    nodes.push({
      action: a,
      role: role.get(a.name)!,
      column: c,
      row,
      x: PAD + (c - minCol) * (NODE_W + GAP_X),
      y: PAD + (height - PAD * 2 - colH) / 2 + row * (NODE_H + GAP_Y),
      assertions: assertionsOf(a.name),
    });
  }
  nodes.sort((a, b) => a.column - b.column || a.row - b.row);

  const at = new Map(nodes.map((n) => [n.action.name, n]));
  const edges: LaidOutEdge[] = [];
  const drawn = new Set<string>();
  for (const e of p.edges) {
    const up = at.get(e.to);
    const down = at.get(e.from);
    const key = e.from + "\0" + e.to;
    if (!up || !down || up === down || drawn.has(key)) continue;
    drawn.add(key);
    const back = up.column >= down.column;
    edges.push({
      upstream: e.to,
      dependent: e.from,
      path: edgePath(up, down, back),
      focus: up.role === "focus" || down.role === "focus",
      back,
    });
  }
  return { nodes, edges, width, height, omitted, more };
}

/** Actions within `limit` steps that have no role (left out by MAX_NODES). */
function countUnshown(role: Map<string, Role>, focus: Set<string>, deps: Map<string, string[]>, users: Map<string, string[]>, limit: number): number {
  const within = new Set<string>();
  for (const side of [deps, users]) {
    let frontier = [...focus];
    const seen = new Set(focus);
    for (let d = 1; d <= limit && frontier.length; d++) {
      const next: string[] = [];
      for (const n of frontier) {
        for (const m of side.get(n) ?? []) {
          if (seen.has(m)) continue;
          seen.add(m);
          next.push(m);
          if (!role.has(m)) within.add(m);
        }
      }
      frontier = next;
    }
  }
  return within.size;
}

function edgePath(up: LaidOutNode, down: LaidOutNode, back: boolean): string {
  const r = (v: number) => Math.round(v * 10) / 10;
  const y1 = up.y + NODE_H / 2;
  const y2 = down.y + NODE_H / 2;
  if (!back) {
    const x1 = up.x + NODE_W;
    const x2 = down.x;
    const mx = (x1 + x2) / 2;
    return `M${r(x1)},${r(y1)} C${r(mx)},${r(y1)} ${r(mx)},${r(y2)} ${r(x2)},${r(y2)}`;
  }
  // Not left to right: a loop out of the right side of one into the left of the other.
  const x1 = up.x + NODE_W;
  const x2 = down.x;
  return `M${r(x1)},${r(y1)} C${r(x1 + 60)},${r(y1)} ${r(x2 - 60)},${r(y2)} ${r(x2)},${r(y2)}`;
}

/** The last part of an action name: its table. */
export function shortName(name: string): string {
  const i = name.lastIndexOf(".");
  return i < 0 ? name : name.slice(i + 1);
}

/** `s` cut to `chars` characters with an ellipsis. */
export function fit(s: string, chars: number): string {
  return s.length <= chars ? s : s.slice(0, Math.max(1, chars - 1)) + "…";
}

/** Types whose columns the column-lineage view can trace. */
export function hasLineage(type: string): boolean {
  return type === "table" || type === "view" || type === "incremental";
}

const esc = (v: unknown): string => escapeHtml(String(v ?? ""));

function badge(cls: string, label: string, x: number, y: number, title: string): { svg: string; w: number } {
  const w = label.length * 6.2 + 10;
  return {
    svg:
      `<g class="badge ${cls}" transform="translate(${x},${y})"><title>${esc(title)}</title>` +
      `<rect width="${w.toFixed(1)}" height="15" rx="7"/><text x="5" y="11">${esc(label)}</text></g>`,
    w,
  };
}

function renderNode(n: LaidOutNode): string {
  const a = n.action;
  const cls = ["node", `role-${n.role}`, `type-${a.type}`, a.disabled ? "disabled" : "", a.jit ? "jit" : ""].filter(Boolean).join(" ");
  const tip = [
    a.name,
    `${a.type}${a.jit ? " · JiT" : ""}${a.disabled ? " · disabled" : ""}`,
    a.tags.length ? `tags: ${a.tags.join(", ")}` : "",
    a.uri ? "Click to open its file" : "",
  ].filter(Boolean).join("\n");
  const chars = Math.floor((NODE_W - 16) / CHAR_W);
  const schema = [a.target.database, a.target.schema].filter(Boolean).join(".");
  const badges: string[] = [];
  let bx = 8;
  const add = (cls: string, label: string, title: string) => {
    const b = badge(cls, label, bx, 42, title);
    badges.push(b.svg);
    bx += b.w + 4;
  };
  if (a.jit) add("jit", "JiT", "Just-in-time: its SQL is made by JavaScript at run time");
  if (a.type === "assertion") add("assertion", "assertion", "An assertion: its rows are the failures it looks for");
  if (n.assertions > 0) add("assertions", `✓ ${n.assertions}`, `${n.assertions} assertion${n.assertions === 1 ? "" : "s"} check${n.assertions === 1 ? "s" : ""} this action`);
  if (a.disabled) add("disabled", "disabled", "Disabled: runs skip it");
  const lineage = hasLineage(a.type)
    ? `<g class="lineage" role="button" tabindex="0" aria-label="Column lineage of ${esc(a.name)}" transform="translate(${NODE_W - 62},42)">` +
      `<title>Show the column lineage of ${esc(a.name)}</title><rect width="54" height="15" rx="3"/><text x="27" y="11">lineage</text></g>`
    : "";
  return (
    `<g class="${cls}" data-name="${esc(a.name)}" data-uri="${esc(a.uri)}" data-type="${esc(a.type)}" data-column="${n.column}" ` +
    `transform="translate(${n.x},${n.y})" tabindex="0" role="button" aria-label="${esc(`${a.name} (${a.type})`)}">` +
    `<title>${esc(tip)}</title>` +
    `<rect class="box" width="${NODE_W}" height="${NODE_H}" rx="6"/>` +
    `<text class="name" x="8" y="18">${esc(fit(a.target.name || a.name, chars - 1))}</text>` +
    `<text class="meta" x="8" y="34">${esc(fit(`${a.type}${schema ? " · " + schema : ""}`, chars + 4))}</text>` +
    badges.join("") +
    lineage +
    `</g>`
  );
}

/** The SVG of a layout. */
export function renderGraphSvg(l: GraphLayout): string {
  const edges = l.edges
    .map(
      (e) =>
        `<path class="edge${e.focus ? " focus-edge" : ""}${e.back ? " back" : ""}" data-from="${esc(e.upstream)}" data-to="${esc(e.dependent)}" d="${e.path}" marker-end="url(#arrow)"/>`,
    )
    .join("");
  return (
    `<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="${l.width}" height="${l.height}" viewBox="0 0 ${l.width} ${l.height}">` +
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto">` +
    `<path d="M0,0 L10,5 L0,10 z"/></marker></defs>` +
    `<g class="edges">${edges}</g><g class="nodes">${l.nodes.map(renderNode).join("")}</g></svg>`
  );
}

export interface GraphBodyOptions {
  /** The file the view is about. */
  fileUri: string;
  /** Its path for the header (relative to the workspace). */
  fileLabel: string;
  depth: Depth;
}

function depthButtons(depth: Depth): string {
  return (
    `<span class="depths" role="group" aria-label="Depth">depth ` +
    DEPTHS.map((d) => `<button class="depth" type="button" data-depth="${d}" aria-pressed="${d === depth}">${d === "all" ? "all" : d}</button>`).join("") +
    `</span>`
  );
}

function errorBox(message: string, title: string): string {
  return `<div class="error" role="alert"><strong>${esc(title)}</strong><pre>${esc(message)}</pre></div>`;
}

/** The body of the view for `fileUri` in its project. */
export function renderGraphBody(p: GraphProject, o: GraphBodyOptions): string {
  const mine = fileActions(p, o.fileUri);
  const facts = [p.coreVersion ? `core ${esc(p.coreVersion)}` : "", `version ${esc(p.version)}`].filter(Boolean).join(" · ");
  let html =
    `<header class="graph-head"><span class="path">${esc(o.fileLabel)}</span> <span class="facts">${facts}</span>` +
    depthButtons(o.depth) +
    `<span class="legend"><span class="up">← upstream: what it reads</span> · <span class="down">downstream: what reads it →</span></span></header>`;
  if (p.error) html += errorBox(p.error, "The project could not be compiled; the graph is its last compile's");
  if (mine.length === 0) {
    html += `<p class="empty">${esc(o.fileLabel)} defines no action${p.error ? "" : " (an includes file, or data for JiT code)"}.</p>`;
    return html;
  }
  const l = layoutGraph(
    p,
    mine.map((a) => a.name),
    o.depth,
  );
  const ups = l.nodes.filter((n) => n.role === "upstream").length;
  const downs = l.nodes.filter((n) => n.role === "downstream").length;
  html +=
    `<p class="summary">${mine.length === 1 ? esc(mine[0].name) : `${mine.length} actions`}: ` +
    `${ups} upstream, ${downs} downstream${l.more ? ` shown; more beyond depth ${esc(o.depth)}` : ""}` +
    `${l.omitted ? `; ${l.omitted} more left out (over ${MAX_NODES}): lower the depth` : ""}.</p>`;
  html += `<div class="canvas">${renderGraphSvg(l)}</div>`;
  return html;
}

/** A body that only carries a message (no file, no server, loading). */
export function renderGraphMessage(message: string, kind: "info" | "error" = "info"): string {
  return kind === "error" ? errorBox(message, "Graph unavailable") : `<p class="message">${esc(message)}</p>`;
}

export const GRAPH_CSS = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 8px 16px; }
header.graph-head { position: sticky; top: 0; left: 0; background: var(--vscode-editor-background); padding: 6px 0; border-bottom: 1px solid var(--vscode-panel-border, #8884); z-index: 1; display: flex; gap: 12px; flex-wrap: wrap; align-items: center; }
header.graph-head .path { font-weight: 600; }
header.graph-head .facts, .legend, .summary, .message, .empty { color: var(--vscode-descriptionForeground); }
.depths button { margin-left: 3px; background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); border: none; padding: 1px 7px; cursor: pointer; border-radius: 2px; }
.depths button[aria-pressed="true"] { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
.canvas { overflow: auto; }
svg.graph { display: block; font-size: 12px; }
svg.graph .edge { fill: none; stroke: var(--vscode-descriptionForeground, #888); stroke-opacity: 0.55; stroke-width: 1.3; }
svg.graph .edge.focus-edge { stroke: var(--vscode-focusBorder, #007fd4); stroke-opacity: 0.9; stroke-width: 1.8; }
svg.graph .edge.back { stroke-dasharray: 4 3; }
svg.graph marker path { fill: var(--vscode-descriptionForeground, #888); }
svg.graph .node { cursor: pointer; outline: none; }
svg.graph .node .box { fill: var(--vscode-editorWidget-background, #252526); stroke: var(--vscode-panel-border, #8886); stroke-width: 1; }
svg.graph .node:hover .box, svg.graph .node:focus .box { stroke: var(--vscode-focusBorder, #007fd4); stroke-width: 2; }
svg.graph .node.role-focus .box { stroke: var(--vscode-focusBorder, #007fd4); stroke-width: 2.5; }
svg.graph .node.type-assertion .box { stroke-dasharray: 2 2; }
svg.graph .node.type-declaration .box { fill: var(--vscode-editor-background); }
svg.graph .node.disabled { opacity: 0.5; }
svg.graph .node.disabled .box { stroke-dasharray: 6 3; }
svg.graph .node text { fill: var(--vscode-foreground); }
svg.graph .node text.name { font-weight: 600; font-family: var(--vscode-editor-font-family); }
svg.graph .node text.meta { fill: var(--vscode-descriptionForeground); font-size: 11px; }
svg.graph .badge rect { fill: var(--vscode-badge-background, #4d4d4d); }
svg.graph .badge text { fill: var(--vscode-badge-foreground, #fff); font-size: 10px; }
svg.graph .badge.jit rect { fill: var(--vscode-charts-yellow, #c9a400); }
svg.graph .badge.jit text { fill: #000; }
svg.graph .badge.assertion rect, svg.graph .badge.assertions rect { fill: var(--vscode-charts-green, #388a34); }
svg.graph .badge.disabled rect { fill: var(--vscode-disabledForeground, #888); }
svg.graph .lineage rect { fill: var(--vscode-button-secondaryBackground, #3a3d41); }
svg.graph .lineage text { fill: var(--vscode-button-secondaryForeground, #fff); font-size: 10px; text-anchor: middle; }
svg.graph .lineage:hover rect, svg.graph .lineage:focus rect { fill: var(--vscode-button-secondaryHoverBackground, #45494e); }
.error { border: 1px solid var(--vscode-inputValidation-errorBorder, #be1100); background: var(--vscode-inputValidation-errorBackground, #5a1d1d); color: var(--vscode-errorForeground, #f48771); padding: 6px 10px; margin: 8px 0; }
.error pre { white-space: pre-wrap; margin: 4px 0 0; font-family: var(--vscode-editor-font-family); color: var(--vscode-foreground); }
`;

export interface GraphPageOptions {
  nonce: string;
  cspSource: string;
  scriptUri: string;
  body: string;
  uri?: string;
}

/** The whole webview document: strict CSP (no network, no inline script or style attribute), styles and script by nonce. */
export function renderGraphPage(o: GraphPageOptions): string {
  return renderWebviewPage({
    nonce: o.nonce,
    cspSource: o.cspSource,
    scriptUri: o.scriptUri,
    title: "Dataform Dependency Graph",
    css: GRAPH_CSS,
    data: [["uri", o.uri ?? ""]],
    body: o.body,
  });
}

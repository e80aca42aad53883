import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  fileActions,
  layoutGraph,
  normalizeUri,
  projectOf,
  renderGraphBody,
  renderGraphPage,
  NODE_H,
  NODE_W,
  GraphAction,
  GraphLayout,
  GraphProject,
} from "../src/graphView";
import type { GraphResult } from "../src/protocol_gen";
import { fixture, textOf } from "./helpers";

// The real dfd/graph answer for examples/clickstream (captured by
// scripts/capture-fixtures.mjs): AoT and JiT tables, a view, an
// incremental, two operations in one file, an assertion, a declaration.
const result = fixture<GraphResult>("graph-clickstream.json");
const project = result.projects[0];
const root = project.root;
const file = (rel: string) => `${root}/${rel}`;
const C = "acme-clickstream.clicks.";

/** name → column of the laid-out nodes. */
function columns(l: GraphLayout): Record<string, number> {
  return Object.fromEntries(l.nodes.map((n) => [n.action.name.replace(C, ""), n.column]));
}

/** The nodes of rendered markup: data-name, data-column and the node's classes. */
function renderedNodes(html: string): { name: string; column: number; cls: string; body: string }[] {
  const out: { name: string; column: number; cls: string; body: string }[] = [];
  const re = /<g class="(node [^"]*)" data-name="([^"]*)" data-uri="[^"]*" data-type="[^"]*" data-column="(-?\d+)"[^>]*>([\s\S]*?)<\/g>(?=<g class="node|<\/g><\/svg>)/g;
  for (const m of html.matchAll(re)) out.push({ cls: m[1], name: m[2], column: Number(m[3]), body: m[4] });
  return out;
}

function action(name: string, deps: string[] = [], extra: Partial<GraphAction> = {}): GraphAction {
  return { target: { name }, name, type: "table", uri: `file:///p/definitions/${name}.sqlx`, tags: [], dependencies: deps, ...extra };
}

function projectOfActions(actions: GraphAction[]): GraphProject {
  return { root: "file:///p", version: 1, actions, edges: actions.flatMap((a) => a.dependencies.map((d) => ({ from: a.name, to: d }))) };
}

describe("dependency graph layout", () => {
  it("puts what top_countries reads to its left, one column per step", () => {
    const l = layoutGraph(project, [C + "top_countries"], 2);
    assert.deepEqual(columns(l), { top_countries: 0, daily_clicks: -1, campaigns: -2, "acme-collector.landing.raw_clicks": -2 });
    assert.deepEqual(
      l.edges.map((e) => [e.upstream.replace(C, ""), e.dependent.replace(C, ""), e.focus]).sort(),
      [
        ["acme-collector.landing.raw_clicks", "daily_clicks", false],
        ["campaigns", "daily_clicks", false],
        ["daily_clicks", "top_countries", true],
      ],
    );
    assert.equal(l.more, false);
    const one = layoutGraph(project, [C + "top_countries"], 1);
    assert.deepEqual(columns(one), { top_countries: 0, daily_clicks: -1 });
    assert.equal(one.more, true, "depth 1 hides the sources: more is shown deeper");
  });

  it("puts the dependents of daily_clicks to its right, and counts the assertion that checks it", () => {
    const l = layoutGraph(project, [C + "daily_clicks"], "all");
    assert.deepEqual(columns(l), {
      campaigns: -1,
      "acme-collector.landing.raw_clicks": -1,
      daily_clicks: 0,
      campaign_clicks: 1,
      click_sessions: 1,
      top_countries: 1,
      "acme-clickstream.clicks_assertions.daily_clicks_volume": 1,
      drop_stale_scratch_tables: 2,
    });
    const focus = l.nodes.find((n) => n.role === "focus")!;
    assert.equal(focus.assertions, 1);
    assert.deepEqual(l.nodes.filter((n) => n.role === "downstream").map((n) => n.action.target.name).sort(), [
      "campaign_clicks",
      "click_sessions",
      "daily_clicks_volume",
      "drop_stale_scratch_tables",
      "top_countries",
    ]);
  });

  it("places a node by its longest path, so that no edge runs within a column", () => {
    // housekeeping.js defines two operations: both are the focus.
    const mine = fileActions(project, file("definitions/jit/housekeeping.js")).map((a) => a.name);
    assert.deepEqual(mine, [C + "drop_stale_scratch_tables", C + "refresh_campaign_cache"]);
    const l = layoutGraph(project, mine, "all");
    // raw_clicks is one step from click_sessions but three from the focus
    // through daily_clicks; campaigns one from refresh_campaign_cache, three through daily_clicks.
    assert.deepEqual(columns(l), {
      drop_stale_scratch_tables: 0,
      refresh_campaign_cache: 0,
      click_sessions: -1,
      daily_clicks: -2,
      campaigns: -3,
      "acme-collector.landing.raw_clicks": -3,
    });
  });

  it("lays out every action of the fixture without backward edges or overlapping boxes", () => {
    for (const a of project.actions) {
      for (const depth of [1, 2, "all"] as const) {
        const l = layoutGraph(project, [a.name], depth);
        assert.ok(l.nodes.some((n) => n.role === "focus" && n.action.name === a.name));
        for (const e of l.edges) assert.equal(e.back, false, `${a.name} depth ${depth}: ${e.upstream} → ${e.dependent} runs backwards`);
        for (const n of l.nodes) {
          assert.ok(n.x >= 0 && n.y >= 0 && n.x + NODE_W <= l.width && n.y + NODE_H <= l.height, `${n.action.name} is outside the canvas`);
          for (const m of l.nodes) {
            if (m === n) continue;
            const overlap = n.x < m.x + NODE_W && m.x < n.x + NODE_W && n.y < m.y + NODE_H && m.y < n.y + NODE_H;
            assert.ok(!overlap, `${a.name}: ${n.action.name} overlaps ${m.action.name}`);
          }
        }
      }
    }
  });

  it("orders a column by where its neighbours are, to avoid crossings", () => {
    // f reads a and b; a reads a2, b reads b2. Names sort b2 before a2 in
    // reverse: z_a2, a_b2, so that a name order would cross the edges.
    const p = projectOfActions([
      action("f", ["a", "b"]),
      action("a", ["z_from_a"]),
      action("b", ["a_from_b"]),
      action("z_from_a"),
      action("a_from_b"),
    ]);
    const l = layoutGraph(p, ["f"], "all");
    const rows = Object.fromEntries(l.nodes.map((n) => [n.action.name, n.row]));
    assert.deepEqual([rows.a, rows.b], [0, 1]);
    assert.deepEqual([rows.z_from_a, rows.a_from_b], [0, 1]);
  });

  it("leaves out the farthest actions beyond the node limit and says how many", () => {
    const leaves = Array.from({ length: 10 }, (_, i) => action(`dep${i}`, [`far${i}`]));
    const far = Array.from({ length: 10 }, (_, i) => action(`far${i}`));
    const p = projectOfActions([action("f", leaves.map((a) => a.name)), ...leaves, ...far]);
    const l = layoutGraph(p, ["f"], "all", 12);
    assert.equal(l.nodes.length, 12);
    assert.equal(l.nodes.filter((n) => n.column === -1).length, 10, "the nearest are kept");
    assert.equal(l.omitted, 9);
    assert.match(textOf(renderGraphBody(p, { fileUri: "file:///p/definitions/f.sqlx", fileLabel: "f.sqlx", depth: "all" })), /20 upstream, 0 downstream/);
  });

  it("survives a cycle (the compile reports it)", () => {
    const p = projectOfActions([action("f", ["a"]), action("a", ["b"]), action("b", ["a"])]);
    const l = layoutGraph(p, ["f"], "all");
    assert.deepEqual(Object.keys(columns(l)).sort(), ["a", "b", "f"]);
  });
});

describe("dependency graph markup", () => {
  it("shows the file's actions with badges, upstream left and downstream right", () => {
    const html = renderGraphBody(project, { fileUri: file("definitions/jit/daily_clicks.js"), fileLabel: "definitions/jit/daily_clicks.js", depth: 2 });
    const nodes = renderedNodes(html);
    const daily = nodes.find((n) => n.name === C + "daily_clicks")!;
    assert.match(daily.cls, /role-focus/);
    assert.match(daily.body, /<g class="badge jit"/);
    assert.match(daily.body, /<g class="badge assertions"[^]*✓ 1/);
    assert.match(daily.body, /<g class="lineage"/);
    const check = nodes.find((n) => n.name.endsWith("daily_clicks_volume"))!;
    assert.equal(check.column, 1);
    assert.match(check.body, /<g class="badge assertion"/);
    assert.doesNotMatch(check.body, /class="lineage"/, "an assertion has no column lineage");
    const raw = nodes.find((n) => n.name === "acme-collector.landing.raw_clicks")!;
    assert.equal(raw.column, -1);
    assert.match(raw.cls, /type-declaration/);
    assert.doesNotMatch(raw.body, /class="badge jit"/);
    assert.match(textOf(html), /definitions\/jit\/daily_clicks\.js/);
    assert.match(textOf(html), /2 upstream, 5 downstream/);
    assert.match(html, /<button class="depth" type="button" data-depth="2" aria-pressed="true">/);
    assert.equal((html.match(/<path class="edge/g) ?? []).length, 8);
  });

  it("greys out a disabled action and escapes what the server sends", () => {
    const p = projectOfActions([action("f", ['x"><script>alert(1)</script>']), action('x"><script>alert(1)</script>', [], { disabled: true })]);
    const html = renderGraphBody(p, { fileUri: "file:///p/definitions/f.sqlx", fileLabel: "f.sqlx", depth: 1 });
    assert.doesNotMatch(html, /<script>/);
    const x = renderedNodes(html).find((n) => n.name.startsWith("x&quot;"))!;
    assert.match(x.cls, /\bdisabled\b/);
    assert.match(x.body, /<g class="badge disabled"/);
  });

  it("says when the file defines no action, and shows the project's error", () => {
    const html = renderGraphBody({ ...project, error: "definitions/x.sqlx:1: boom" }, {
      fileUri: file("definitions/jit/jit_data.js"),
      fileLabel: "definitions/jit/jit_data.js",
      depth: 2,
    });
    assert.match(textOf(html), /definitions\/jit\/jit_data\.js defines no action/);
    assert.match(textOf(html), /boom/);
    assert.doesNotMatch(html, /<svg/);
  });

  it("is a page under a strict CSP: no network, no inline style or script", () => {
    const body = renderGraphBody(project, { fileUri: file("definitions/top_countries.sqlx"), fileLabel: "top_countries.sqlx", depth: "all" });
    const page = renderGraphPage({ nonce: "n0nce", cspSource: "vscode-webview://x", scriptUri: "vscode-webview://x/graph.js", body, uri: file("definitions/top_countries.sqlx") });
    const csp = textOf(page.match(/http-equiv="Content-Security-Policy" content="([^"]*)"/)![1]);
    assert.match(csp, /default-src 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    // The CSP blocks style="" attributes: the layout is SVG attributes only.
    assert.doesNotMatch(page, /\sstyle="/);
    assert.doesNotMatch(page, /\son[a-z]+="/, "no inline event handlers");
    assert.match(page, /<script nonce="n0nce" src="vscode-webview:\/\/x\/graph.js">/);
  });
});

describe("graph URIs", () => {
  it("matches the file whatever the escaping, and picks the innermost project", () => {
    assert.equal(normalizeUri("file:///c%3A/x/a.sqlx"), normalizeUri("file:///c:/x/a.sqlx"));
    const outer: GraphProject = { root: "file:///w", version: 1, actions: [], edges: [] };
    const inner: GraphProject = { root: "file:///w/sub", version: 1, actions: [], edges: [] };
    assert.equal(projectOf([outer, inner], "file:///w/sub/definitions/a.sqlx"), inner);
    assert.equal(projectOf([inner, outer], "file:///w/definitions/a.sqlx"), outer);
    assert.equal(projectOf([inner, outer], "file:///w/subway/a.sqlx"), outer, "a prefix of the name is not a parent folder");
    assert.equal(fileActions(project, file("definitions/top_countries.sqlx"))[0]?.name, C + "top_countries");
  });
});

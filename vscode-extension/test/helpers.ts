import * as fs from "node:fs";
import * as path from "node:path";

// Tests run from out/tsc/test/; fixtures stay in test/fixtures/.
export const FIXTURES = path.resolve(__dirname, "..", "..", "..", "test", "fixtures");

export function fixture<T = any>(name: string): T {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name), "utf8")) as T;
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };

/** The text of an HTML fragment, as textContent would give it. */
export function textOf(html: string): string {
  return html.replace(/<[^>]*>/g, "").replace(/&(amp|lt|gt|quot|#39);/g, (m) => ENTITIES[m]);
}

/** Every <pre class="sql" …>…</pre>: its attributes and text. */
export function sqlBlocks(html: string): { kind: string; index?: string; text: string }[] {
  const out: { kind: string; index?: string; text: string }[] = [];
  const re = /<pre class="sql" data-kind="([^"]*)"(?: data-index="(\d+)")?>([\s\S]*?)<\/pre>/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(html))) {
    out.push({ kind: m[1], index: m[2], text: textOf(m[3]) });
  }
  return out;
}

/** The data-target of every <section class="action">. */
export function actionTargets(html: string): string[] {
  return [...html.matchAll(/<section class="action"[^>]* data-target="([^"]*)"/g)].map((m) => m[1]);
}

/** The HTML of the <section class="action"> with this data-target. */
export function section(html: string, target: string): string {
  const start = html.indexOf(`data-target="${target}"`);
  if (start < 0) throw new Error(`no section for ${target}`);
  const end = html.indexOf("</section>", start);
  return html.slice(html.lastIndexOf("<section", start), end + "</section>".length);
}

// Builders of server results for tests that write one inline: every field
// the server always sends gets a plain value, so that the test states only
// what it is about (the types come from the server's Go types).
import type { AdapterCall, JitPreview, PreviewAction, PreviewResult, RefreshedProject, StatusProject, StatusResult } from "../src/protocol_gen";

type PartialJit = Omit<Partial<JitPreview>, "adapterCalls"> & { adapterCalls?: Partial<AdapterCall>[] };
type PartialAction = Omit<Partial<PreviewAction>, "jitPreview"> & { jitPreview?: PartialJit };

export function previewResult(r: Omit<Partial<PreviewResult>, "actions"> & { actions?: PartialAction[] }): PreviewResult {
  return { uri: "file:///p/x.sqlx", project: "file:///p", version: 1, compileMs: 1, ...r, actions: (r.actions ?? []).map(action) };
}

export function action(a: PartialAction): PreviewAction {
  const target = a.target ?? { name: "a" };
  const { jitPreview, ...rest } = a;
  const out: PreviewAction = { canonicalTarget: target, file: "definitions/a.sqlx", tags: [], dependencies: [], sql: {}, type: "table", ...rest, target };
  if (jitPreview) {
    const { adapterCalls, ...jit } = jitPreview;
    out.jitPreview = { elapsedMs: 0, ...jit, adapterCalls: adapterCalls?.map(call) };
  }
  return out;
}

export function call(c: Partial<AdapterCall>): AdapterCall {
  return { method: "Execute", summary: "", durationMs: 0, ...c };
}

export function statusResult(r: Omit<Partial<StatusResult>, "projects"> & { projects?: Partial<StatusProject>[] }): StatusResult {
  return { serverVersion: "0.0.0", invariantViolations: 0, ...r, projects: (r.projects ?? []).map(statusProject) };
}

export function statusProject(p: Partial<StatusProject>): StatusProject {
  return { root: "file:///p", version: 1, compiledVersion: 1, actions: 0, compileMs: 1, ...p };
}

export function refreshed(p: Partial<RefreshedProject>): RefreshedProject {
  return { root: "file:///p", source: "none", refreshed: 0, ...p };
}

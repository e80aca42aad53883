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

// What "Dataform: Changes vs main" shows of `dfd diff --format json`
// (docs/diff.schema.json), kept apart from the vscode API so that it is
// tested on a real report.

/** A column, config field or reader of a change (docs/diff.schema.json). */
export interface DiffColumn {
  column: string;
  change: string;
  from?: string;
  to?: string;
  line: number;
}
export interface DiffConfig {
  field: string;
  from: string;
  to: string;
  fullRefresh?: boolean;
  line: number;
}
export interface DiffImpact {
  action: string;
  column?: string;
  reads: string;
  depth: number;
  atHead: string;
  error?: string;
  file: string;
}
export interface DiffChange {
  action: string;
  renamedFrom?: string;
  kind: string;
  file: string;
  line: number;
  status: string;
  category: "breaking" | "non-breaking" | "metadata-only";
  reasons: string[];
  sql: string;
  statements: { statement: string; change: string; why?: string }[];
  columns: DiffColumn[];
  config: DiffConfig[];
  impact: DiffImpact[];
}
export interface DiffReport {
  base: string;
  head: string;
  changes: DiffChange[];
  notes: string[];
}

/** One row of the quick pick: a category's heading, or a change. */
export interface ChangeItem {
  kind: "separator" | "entry";
  label: string;
  description?: string;
  detail?: string;
  /** Where to open: the project-relative file and its 1-based line. */
  file?: string;
  line?: number;
}

const CATEGORIES: { category: DiffChange["category"]; title: string; icon: string }[] = [
  { category: "breaking", title: "Breaking", icon: "$(error)" },
  { category: "non-breaking", title: "Non-breaking", icon: "$(info)" },
  { category: "metadata-only", title: "Metadata-only", icon: "$(note)" },
];

/** The quick pick's title: both revisions and the counts. */
export function changesTitle(r: DiffReport): string {
  const counts = CATEGORIES.map((c) => `${r.changes.filter((x) => x.category === c.category).length} ${c.category}`);
  return `Changes: ${r.base} → ${r.head}: ${counts.join(", ")}`;
}

/** What changed, in a few words: columns, config fields, SQL. */
export function changeSummary(c: DiffChange): string {
  const parts: string[] = [];
  for (const col of c.columns) {
    if (col.change === "renamed") parts.push(`${col.from} → ${col.to}`);
    else if (col.change === "type" || col.change === "mode") parts.push(`${col.column} ${col.from} → ${col.to}`);
    else parts.push(`${col.column} ${col.change}`);
  }
  for (const cf of c.config) parts.push(cf.fullRefresh ? `${cf.field} (full refresh)` : cf.field);
  if (c.sql === "layout") parts.push("SQL layout only");
  else if (c.sql === "meaning" && c.status === "modified") parts.push("SQL changed");
  return parts.join(" · ");
}

/** The readers a change affects, and how they fare at HEAD. */
export function impactLine(c: DiffChange): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const im of c.impact) {
    const who = (im.column ? `${im.action}.${im.column}` : im.action) + ` (${im.atHead})`;
    if (!seen.has(who)) {
      seen.add(who);
      out.push(who);
    }
  }
  return out.length ? `read by ${out.join(", ")}` : "";
}

/** The rows: per category, worst first, a heading and its changes. */
export function changeItems(r: DiffReport): ChangeItem[] {
  const items: ChangeItem[] = [];
  for (const cat of CATEGORIES) {
    const list = r.changes.filter((c) => c.category === cat.category);
    if (list.length === 0) continue;
    items.push({ kind: "separator", label: `${cat.title} (${list.length})` });
    for (const c of list) {
      const status = c.status === "renamed" ? `renamed from ${c.renamedFrom}` : c.status;
      const detail = [changeSummary(c), impactLine(c) || c.reasons.join("; ")].filter((s) => s !== "").join(" — ");
      items.push({
        kind: "entry",
        label: `${cat.icon} ${c.action}`,
        description: `${c.kind}, ${status}`,
        detail,
        // A removed action's file is gone from the work tree.
        file: c.status === "removed" ? undefined : c.file,
        line: c.line,
      });
    }
  }
  return items;
}

/**
 * dfd diff's arguments for the project at root, with the metadata the
 * server uses (dfd.metadata.*): the snapshot (relative to the project
 * root), BigQuery, or none. Unset source: snapshot when one is set, else
 * none.
 */
export function diffArgs(root: string, get: (key: string) => unknown): string[] {
  const args = ["diff", "--project", root, "--format", "json"];
  const snapshot = typeof get("metadata.snapshot") === "string" ? (get("metadata.snapshot") as string) : "";
  let source = get("metadata.source");
  if (source === undefined || source === null || source === "") source = snapshot !== "" ? "snapshot" : "none";
  if (source === "snapshot" && snapshot !== "") {
    args.push("--metadata", snapshot.startsWith("/") || /^[A-Za-z]:[\\/]/.test(snapshot) ? snapshot : `${root.replace(/[\\/]+$/, "")}/${snapshot}`);
  } else if (source === "bigquery") {
    const endpoint = get("bigquery.endpoint");
    if (typeof endpoint === "string" && endpoint !== "") args.push("--endpoint", endpoint);
  } else {
    args.push("--offline");
  }
  return args;
}

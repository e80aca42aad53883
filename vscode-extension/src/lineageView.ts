// What "Dataform: Show Column Lineage" shows of a dfd/lineage result, kept
// apart from the vscode API so that it is tested on real results. The
// types are generated from the server's Go types (go run ./lsp/gen →
// protocol_gen.ts), so they are what dfd sends.
import type { LineageColumn, LineageInput, LineageResult } from "./protocol_gen";

/** One row of the lineage quick pick. */
export interface LineageItem {
  /** separator: a column's heading; entry: a table's column; note: a remark. */
  kind: "separator" | "entry" | "note";
  label: string;
  description?: string;
  detail?: string;
  /** The entry's column, to open where its table is defined. */
  input?: LineageInput;
}

/** The title of the quick pick: the action, and the column when one was asked for. */
export function lineageTitle(r: LineageResult): string {
  return r.column ? `Lineage of ${r.action}.${r.column}` : `Lineage of ${r.action}`;
}

/** A column of a table as dfd lineage prints it: table.column. */
export function inputName(i: LineageInput): string {
  return `${i.table}.${i.column}`;
}

/**
 * The quick pick's rows: per output column a heading, then its direct
 * inputs, its warehouse origins and what could not be followed.
 */
export function lineageItems(r: LineageResult): LineageItem[] {
  const items: LineageItem[] = [];
  for (const c of r.columns) {
    items.push({ kind: "separator", label: `${c.name} ${c.type}` });
    items.push(...columnItems(c));
  }
  return items;
}

function columnItems(c: LineageColumn): LineageItem[] {
  const items: LineageItem[] = [];
  const unresolved = c.unresolved ?? [];
  if (c.direct.length === 0 && unresolved.length === 0) {
    items.push({ kind: "note", label: "$(symbol-constant) computed from no column", description: c.name });
  }
  const groups: [string, string, LineageInput[]][] = [
    ["$(arrow-small-left)", "direct", c.direct],
    ["$(database)", "origin", c.origins],
  ];
  for (const [icon, role, inputs] of groups) {
    for (const i of inputs) {
      items.push({
        kind: "entry",
        label: `${icon} ${inputName(i)}`,
        description: i.computed ? `${role} · computed` : role,
        detail: i.file ? `defined in ${i.file}` : "warehouse table",
        input: i,
      });
    }
  }
  for (const why of unresolved) {
    items.push({ kind: "note", label: `$(warning) not followed: ${why}`, description: c.name });
  }
  return items;
}

/** Why there is no lineage, as a message for the user. */
export function noLineageMessage(r: LineageResult, file: string): string {
  return `dfd: no column lineage of ${r.action || file}: ${r.reason ?? "no columns"}`;
}

// The status bar item's text and tooltip from a dfd/status result. Pure.

// The dfd/status and dfd/refreshMetadata types are generated from the
// server's Go types (go run ./lsp/gen → protocol_gen.ts).
import type { MetadataStatus, RefreshMetadataResult, StatusProject, StatusResult, WorkerStatus } from "./protocol_gen";

export type { MetadataStatus, StatusResult };
export type WorkersStatus = WorkerStatus;
export type ProjectStatus = StatusProject;
export type RefreshResult = RefreshMetadataResult;

export type StatusKind = "ok" | "error" | "none" | "stopped" | "starting" | "compiling";

export interface StatusView {
  kind: StatusKind;
  text: string;
  tooltip: string;
  /** Root of the project shown (the one of the active file, else the first). */
  project?: string;
}

/** Last path segment of a file: URI, decoded. */
export function folderName(uri: string): string {
  const p = uri.replace(/^file:\/\//, "").replace(/\/+$/, "");
  const last = p.slice(p.lastIndexOf("/") + 1);
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

function withSlash(u: string): string {
  return u.endsWith("/") ? u : u + "/";
}

/** The project (innermost root) containing `fileUri`, if any. */
export function projectFor<T extends { root: string }>(projects: T[], fileUri: string | undefined): T | undefined {
  if (!fileUri) {
    return undefined;
  }
  let best: T | undefined;
  for (const p of projects) {
    if (withSlash(fileUri).startsWith(withSlash(p.root)) && (!best || p.root.length > best.root.length)) {
      best = p;
    }
  }
  return best;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function firstLine(s: string): string {
  return s.split("\n")[0].trim();
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : s.slice(0, n - 1) + "…";
}

function metadataText(m: MetadataStatus): string | undefined {
  const state = m.state || "none";
  if (state === "none" && (!m.source || m.source === "none")) {
    return "no metadata";
  }
  if (m.source === "snapshot" && state === "offline") {
    // A readable snapshot: "offline" is its normal state.
    return "metadata snapshot";
  }
  return `metadata ${state}`;
}

function projectLines(p: ProjectStatus): string[] {
  const lines = [`${folderName(p.root)} — ${p.root.replace(/^file:\/\//, "")}`];
  if (p.error) {
    lines.push(`  Error: ${p.error.replace(/\n/g, "\n    ")}`);
    return lines;
  }
  if (p.coreVersion) {
    lines.push(`  @dataform/core ${p.coreVersion}`);
  }
  if (p.actions !== undefined) {
    lines.push(`  ${plural(p.actions, "action")}`);
  }
  if (p.compiledVersion !== undefined && p.version !== undefined) {
    if (p.compiledVersion < 0) {
      lines.push("  not compiled yet");
    } else if (p.compiledVersion < p.version) {
      lines.push(`  compile pending (version ${p.version}, compiled ${p.compiledVersion})`);
    } else if (p.compileMs !== undefined) {
      lines.push(`  last compile ${Math.round(p.compileMs)} ms (version ${p.compiledVersion})`);
    }
  }
  if (p.deferredEdits) {
    lines.push("  edits wait for a save (dfd.compileAsYouType is off)");
  }
  if (p.workers) {
    const w = p.workers;
    lines.push(`  workers: ${w.total ?? "?"} (${w.ready ?? 0} ready, ${w.busy ?? 0} busy)`);
  }
  if (p.metadata) {
    const m = p.metadata;
    lines.push(`  metadata: ${m.source ?? "none"}, ${m.state ?? "none"}${m.detail ? ` — ${m.detail}` : ""}`);
  }
  if (p.cost) {
    lines.push(p.cost.available ? `  cost of one run (BigQuery dry runs): ${p.cost.label}` : `  cost: not available — ${p.cost.reason ?? ""}`);
  }
  return lines;
}

/** The status bar view for a dfd/status result; `activeUri` picks the project. */
export function statusView(result: StatusResult | undefined, activeUri?: string): StatusView {
  const projects = result?.projects ?? [];
  if (projects.length === 0) {
    return {
      kind: "none",
      text: "$(database) dfd: no Dataform project",
      tooltip:
        "dfd is running but found no Dataform project (a folder with workflow_settings.yaml or dataform.json) in this workspace.",
    };
  }
  const p = projectFor(projects, activeUri) ?? projects[0];
  const name = folderName(p.root);
  const server = `dfd${result?.serverVersion ? " " + result.serverVersion : ""} — Dataform language server`;
  const tooltipLines = [projects.length > 1 ? `${server} (${projects.length} projects)` : server, ""];
  for (const q of [p, ...projects.filter((x) => x !== p)]) {
    tooltipLines.push(...projectLines(q), "");
  }
  tooltipLines.pop();
  if (result?.invariantViolations) {
    tooltipLines.push("", `${result.invariantViolations} recovered server panics (see the logs)`);
  }
  tooltipLines.push("", "Click for actions");
  const tooltip = tooltipLines.join("\n");
  if (p.error) {
    return { kind: "error", text: `$(error) dfd: ${name} · ${truncate(firstLine(p.error), 60)}`, tooltip, project: p.root };
  }
  const parts = [`dfd: ${name}`];
  if (p.coreVersion) {
    parts.push(`core ${p.coreVersion}`);
  }
  if (p.actions !== undefined) {
    parts.push(plural(p.actions, "action"));
  }
  if (p.workers && p.workers.total !== undefined) {
    parts.push(plural(p.workers.total, "worker"));
  }
  if (p.metadata) {
    const m = metadataText(p.metadata);
    if (m) {
      parts.push(m);
    }
  }
  // The figures of the latest compile only: dfd/status has none until
  // they are known, and the version says which compile they are of.
  if (p.cost && p.cost.available && p.cost.label && p.cost.version === p.compiledVersion) {
    parts.push(truncate(p.cost.label, 48));
  }
  const compiling = p.compiledVersion !== undefined && p.version !== undefined && p.compiledVersion < p.version;
  const icon = compiling ? "$(sync~spin)" : "$(database)";
  return { kind: compiling ? "compiling" : "ok", text: `${icon} ${parts.join(" · ")}`, tooltip, project: p.root };
}

export const STOPPED_VIEW: StatusView = {
  kind: "stopped",
  text: "$(circle-slash) dfd: stopped",
  tooltip: "The dfd language server is not running. Click for actions (Restart server, Show logs).",
};

export const STARTING_VIEW: StatusView = {
  kind: "starting",
  text: "$(sync~spin) dfd: starting…",
  tooltip: "Starting the dfd language server…",
};


/** The message after dfd/refreshMetadata. */
export function refreshSummary(r: RefreshResult | undefined | null): { message: string; failed: boolean } {
  const ps = r?.projects ?? [];
  if (ps.length === 0) {
    return { message: "dfd: no Dataform project to refresh metadata for.", failed: false };
  }
  const parts = ps.map((p) => {
    const name = folderName(p.root);
    if (p.error) return `${name}: ${p.error}`;
    switch (p.source) {
      case "snapshot":
        return `${name}: snapshot re-read (${plural(p.refreshed ?? 0, "table")})`;
      case "bigquery":
        return `${name}: ${plural(p.refreshed ?? 0, "BigQuery listing")} fetched`;
      default:
        return `${name}: no metadata source (set dfd.metadata.snapshot or dfd.metadata.source)`;
    }
  });
  const failed = ps.some((p) => p.error);
  return { message: `dfd: ${failed ? "refreshing metadata failed for some projects" : "metadata refreshed"} — ${parts.join("; ")}`, failed };
}

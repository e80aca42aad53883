// "Run this action / with its dependencies / this tag": dfd does not run
// pipelines; these commands hand the run to the project's own official
// CLI (`dataform run`) in a terminal, where its output streams. This file
// builds the command line (pure, unit tested); extension.ts asks and
// opens the terminal.

export interface RunRequest {
  /** The CLI: the project's node_modules/.bin/dataform, else npx of @dataform/cli. */
  cli: string[];
  actions?: string[];
  includeDeps?: boolean;
  tags?: string[];
}

/** POSIX shell quoting: plain words as they are, the rest in single quotes. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@=+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The argument list of `dataform run` for r. */
export function runArgs(r: RunRequest): string[] {
  const args = [...r.cli, "run"];
  for (const a of r.actions ?? []) args.push("--actions", a);
  for (const t of r.tags ?? []) args.push("--tags", t);
  if (r.includeDeps) args.push("--include-deps");
  return args;
}

/** The command line a terminal runs. */
export function runCommandLine(r: RunRequest): string {
  return runArgs(r).map(shellQuote).join(" ");
}

/**
 * The official CLI of a project: its own node_modules/.bin/dataform when
 * installed, else @dataform/cli of the project's core version through npx.
 */
export function cliFor(hasLocalCli: boolean, coreVersion: string | undefined): string[] {
  if (hasLocalCli) return ["./node_modules/.bin/dataform"];
  return ["npx", "--yes", coreVersion ? `@dataform/cli@${coreVersion}` : "@dataform/cli"];
}

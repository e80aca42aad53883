// dfd's settings: the `dfd` configuration section → what the server gets as
// initializationOptions / didChangeConfiguration, and the server's
// command-line arguments. Pure (no `vscode` import).

// Which settings go to the server is decided by settings/settings.json in
// the repository (go generate ./settings writes settings_gen.ts).
import { SERVER_SETTING_KEYS } from "./settings_gen";

export { SERVER_SETTING_KEYS };

export type Getter = (key: string) => unknown;

/**
 * The nested object the server accepts (`{"metadata": {"snapshot": …}, …}`).
 * Unset and empty-string values are left out so the server keeps its
 * defaults (e.g. metadata.source defaults to "snapshot" when a snapshot is
 * set, else "none").
 */
export function serverSettings(get: Getter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    const v = get(key);
    if (v === undefined || v === null || v === "") {
      continue;
    }
    if (typeof v === "number" && !Number.isFinite(v)) {
      continue;
    }
    const parts = key.split(".");
    let obj = out;
    for (const p of parts.slice(0, -1)) {
      obj = (obj[p] ??= {}) as Record<string, unknown>;
    }
    obj[parts[parts.length - 1]] = v;
  }
  return out;
}

/** initializationOptions: `{"dfd": {...}}`, one of the shapes the server accepts. */
export function initializationOptions(get: Getter): { dfd: Record<string, unknown> } {
  return { dfd: serverSettings(get) };
}

/** Arguments of `dfd serve` (vscode-languageclient appends --stdio itself). */
export function serverArgs(get: Getter): string[] {
  const args = ["serve"];
  if (get("logLevel") === "debug") {
    args.push("-v");
  }
  return args;
}

/**
 * True when a configuration change needs the server process restarted
 * (every other dfd.* setting reaches the running server through
 * workspace/didChangeConfiguration).
 */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return affects("dfd.path");
}

// Finding the dfd binary. Pure Node (no `vscode` import) so it can be unit
// tested: the caller passes in everything that depends on the editor.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const INSTALL_URL = "https://github.com/dfdtools/dfd#install";

export interface DiscoveryInput {
  /** Root of the installed extension (context.extensionPath). */
  extensionPath: string;
  /** The `dfd.path` setting ("" when unset). */
  configuredPath: string;
  /** Workspace folder paths; a relative `dfd.path` is resolved against the first. */
  workspaceFolders: string[];
  /** $PATH of the extension host. */
  envPath: string;
  platform?: NodeJS.Platform;
  arch?: string;
  homeDir?: string;
}

export type DiscoverySource = "setting" | "bundled" | "path";

export type DiscoveryResult =
  | { ok: true; command: string; source: DiscoverySource; detail: string }
  | { ok: false; message: string; reason: "setting-missing" | "setting-not-executable" | "setting-directory" | "not-found" };

/**
 * The platforms a platform .vsix is built for (`vsce package --target T`,
 * scripts/package.sh --target T): VS Code's target names, which are Node's
 * process.platform-process.arch.
 */
export const BUNDLED_TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64", "win32-arm64"];

/**
 * Where a bundled binary lives inside the extension, for this platform:
 * bin/<target>/dfd (dfd.exe on Windows). A platform .vsix carries only its
 * own target's; the generic .vsix none.
 */
export function bundledBinaryPath(extensionPath: string, platform: string = process.platform, arch: string = process.arch): string | undefined {
  const target = `${platform}-${arch}`;
  if (!BUNDLED_TARGETS.includes(target)) {
    return undefined;
  }
  return path.join(extensionPath, "bin", target, platform === "win32" ? "dfd.exe" : "dfd");
}

/** Expands `~/` and resolves a relative path against the first workspace folder. */
export function resolveConfiguredPath(p: string, workspaceFolders: string[], homeDir: string = os.homedir()): string {
  let out = p.trim();
  if (out === "~") {
    out = homeDir;
  } else if (out.startsWith("~/")) {
    out = path.join(homeDir, out.slice(2));
  }
  if (!path.isAbsolute(out)) {
    out = path.resolve(workspaceFolders[0] ?? process.cwd(), out);
  }
  return out;
}

type FileState = "missing" | "directory" | "not-executable" | "ok";

export function fileState(p: string): FileState {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    return "missing";
  }
  if (st.isDirectory()) {
    return "directory";
  }
  try {
    fs.accessSync(p, fs.constants.X_OK);
  } catch {
    return "not-executable";
  }
  return "ok";
}

/** Looks `name` up in a PATH string, as a shell would. */
export function lookPath(name: string, envPath: string): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    const candidate = path.join(dir, name);
    if (fileState(candidate) === "ok") {
      return candidate;
    }
  }
  return undefined;
}

/**
 * Finds the dfd to run. Order: `dfd.path` when set (an explicit choice wins;
 * if it is wrong that is an error, not a silent fallback), then the binary
 * bundled in the extension for this platform, then `dfd` on PATH.
 */
export function discoverServer(input: DiscoveryInput): DiscoveryResult {
  const configured = input.configuredPath?.trim() ?? "";
  if (configured) {
    const resolved = resolveConfiguredPath(configured, input.workspaceFolders, input.homeDir);
    const shown = resolved === configured ? `"${configured}"` : `"${configured}" (${resolved})`;
    switch (fileState(resolved)) {
      case "ok":
        return { ok: true, command: resolved, source: "setting", detail: `dfd.path: ${resolved}` };
      case "missing":
        return {
          ok: false,
          reason: "setting-missing",
          message: `The dfd binary set in dfd.path, ${shown}, does not exist. Fix the setting or clear it to use the bundled dfd or the one on PATH.`,
        };
      case "directory":
        return {
          ok: false,
          reason: "setting-directory",
          message: `dfd.path, ${shown}, is a directory; it must be the dfd executable itself.`,
        };
      case "not-executable":
        return {
          ok: false,
          reason: "setting-not-executable",
          message: `The dfd binary set in dfd.path, ${shown}, is not executable (try chmod +x).`,
        };
    }
  }
  const bundled = bundledBinaryPath(input.extensionPath, input.platform, input.arch);
  if (bundled && fileState(bundled) === "ok") {
    return { ok: true, command: bundled, source: "bundled", detail: `bundled: ${bundled}` };
  }
  const onPath = lookPath("dfd", input.envPath);
  if (onPath) {
    return { ok: true, command: onPath, source: "path", detail: `PATH: ${onPath}` };
  }
  return {
    ok: false,
    reason: "not-found",
    message:
      "The dfd language server was not found: this extension has no bundled dfd for " +
      `${input.platform ?? process.platform}-${input.arch ?? process.arch}, dfd.path is not set and there is no dfd on PATH. ` +
      "Install dfd and set dfd.path to it (or put it on PATH).",
  };
}

// The dfd server process and its language client: discovery, start, stop,
// restart on crash with backoff.
import { ChildProcess, spawn } from "node:child_process";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  State,
} from "vscode-languageclient/node";
import { CrashPolicy, DEFAULT_BACKOFF } from "./backoff";
import { takesServerTokens } from "./highlighting";
import * as fs from "node:fs";
import { bundledBinaryPath, discoverServer, fileState, INSTALL_URL } from "./discovery";
import { initializationOptions, serverArgs } from "./settings";

export type ServerState = "stopped" | "starting" | "running" | "restarting" | "failed";

import type { PreviewChangedParams } from "./protocol_gen";

/** dfd/previewChanged (generated from the server's Go type). */
export type PreviewChanged = PreviewChangedParams;

const STDERR_TAIL_LINES = 30;

/** An installer that dropped the executable bit of the bundled dfd: put it back. */
function ensureBundledExecutable(extensionPath: string, output: vscode.LogOutputChannel): void {
  const bundled = bundledBinaryPath(extensionPath);
  if (bundled && fileState(bundled) === "not-executable") {
    try {
      fs.chmodSync(bundled, 0o755);
      output.info(`made ${bundled} executable`);
    } catch (err) {
      output.warn(`cannot make ${bundled} executable: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/**
 * A LanguageClient that writes its errors to the output but never pops up
 * notifications of its own: ServerManager tells the user about crashes
 * once, with "Show logs" / "Restart server", instead of a toast per failed
 * write while a crashing server restarts.
 */
class DfdLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | "force"): void {
    super.error(message, data, false);
  }
}

export class ServerManager implements vscode.Disposable {
  client: LanguageClient | undefined;
  state: ServerState = "stopped";
  /** How the binary was found, e.g. "bundled: /…/bin/linux-x64/dfd". */
  serverDetail = "";
  private generation = 0;
  private crashHandled = new Set<number>();
  private restartTimer: NodeJS.Timeout | undefined;
  /** The generation whose crash scheduled the pending restart. */
  private restartFor: number | undefined;
  private readonly policy = new CrashPolicy(DEFAULT_BACKOFF);
  private process: ChildProcess | undefined;
  private stderrTail: string[] = [];
  private lastExit = "";
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly previewChangedEmitter = new vscode.EventEmitter<PreviewChanged>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onPreviewChanged = this.previewChangedEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
  ) {}

  private config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration("dfd");
  }

  private setState(s: ServerState): void {
    this.state = s;
    this.stateEmitter.fire(s);
  }

  isRunning(): boolean {
    return this.state === "running" && this.client !== undefined && this.client.state === State.Running;
  }

  showLogs(): void {
    this.output.show(true);
  }

  /** The dfd binary the server runs (or would run), for commands that run dfd itself. */
  dfdBinary(): string | undefined {
    const found = discoverServer({
      extensionPath: this.context.extensionPath,
      configuredPath: this.config().get<string>("path") ?? "",
      workspaceFolders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath),
      envPath: process.env.PATH ?? "",
    });
    return found.ok ? found.command : undefined;
  }

  /** Starts the server (no-op when it runs). Messages the user on failure. */
  async start(): Promise<void> {
    if (this.state === "running" || this.state === "starting") {
      return;
    }
    const cfg = this.config();
    ensureBundledExecutable(this.context.extensionPath, this.output);
    const found = discoverServer({
      extensionPath: this.context.extensionPath,
      configuredPath: cfg.get<string>("path") ?? "",
      workspaceFolders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath),
      envPath: process.env.PATH ?? "",
    });
    if (!found.ok) {
      this.output.error(found.message);
      this.setState("stopped");
      void vscode.window.showErrorMessage(found.message, "How to install", "Open settings").then((choice) => {
        if (choice === "How to install") {
          void vscode.env.openExternal(vscode.Uri.parse(INSTALL_URL));
        } else if (choice === "Open settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", "dfd.path");
        }
      });
      return;
    }
    this.serverDetail = found.detail;
    const gen = ++this.generation;
    this.setState("starting");
    const get = (key: string) => this.config().get(key);
    const args = [...serverArgs(get), "--stdio"];
    this.output.info(`Starting ${found.command} ${args.join(" ")} (${found.detail})`);
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "sqlx" },
        { scheme: "file", language: "javascript" },
        { scheme: "file", language: "yaml", pattern: "**/workflow_settings.yaml" },
        { scheme: "file", language: "json", pattern: "**/dataform.json" },
      ],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => initializationOptions(get),
      synchronize: { configurationSection: "dfd" },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          this.onClosed(gen);
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      initializationFailedHandler: () => false,
      middleware: {
        // dfd's tokens for SQLX only (highlighting.ts says why).
        provideDocumentSemanticTokens: (doc, token, next) => (takesServerTokens(doc.languageId) ? next(doc, token) : undefined),
        provideDocumentRangeSemanticTokens: (doc, range, token, next) =>
          takesServerTokens(doc.languageId) ? next(doc, range, token) : undefined,
        provideDocumentSemanticTokensEdits: (doc, previousResultId, token, next) =>
          takesServerTokens(doc.languageId) ? next(doc, previousResultId, token) : undefined,
      },
    };
    const client = new DfdLanguageClient("dfd", "Dataform (dfd)", () => this.spawnServer(found.command, args), clientOptions);
    this.client = client;
    client.onNotification("dfd/previewChanged", (p: PreviewChanged) => this.previewChangedEmitter.fire(p));
    try {
      await client.start();
      if (gen === this.generation && !this.crashHandled.has(gen) && client.state === State.Running) {
        this.setState("running");
      } else if (gen === this.generation && !this.crashHandled.has(gen)) {
        this.output.error(`dfd did not start (client state ${State[client.state]})`);
        this.onClosed(gen);
      }
    } catch (err) {
      this.output.error(`dfd did not start: ${err instanceof Error ? err.message : String(err)}`);
      this.onClosed(gen);
    }
  }

  private spawnServer(command: string, args: string[]): Promise<ChildProcess> {
    return new Promise((resolve, reject) => {
      const cwd = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file")?.uri.fsPath;
      const cp = spawn(command, args, { cwd, env: process.env, stdio: ["pipe", "pipe", "pipe"] });
      this.process = cp;
      this.stderrTail = [];
      this.lastExit = "";
      cp.stderr?.on("data", (d: Buffer) => {
        const lines = d.toString("utf8").split("\n").filter((l) => l.trim() !== "");
        this.stderrTail.push(...lines);
        if (this.stderrTail.length > STDERR_TAIL_LINES) {
          this.stderrTail.splice(0, this.stderrTail.length - STDERR_TAIL_LINES);
        }
      });
      cp.on("exit", (code, signal) => {
        if (this.process === cp || this.process === undefined) {
          this.lastExit = signal ? `killed by ${signal}` : `exit status ${code}`;
        }
        this.output.info(`dfd (pid ${cp.pid}) ended: ${this.lastExit}`);
      });
      cp.once("error", (err) => {
        this.lastExit = err.message;
        reject(err);
      });
      cp.once("spawn", () => resolve(cp));
    });
  }

  /** The server's connection closed (crash, exit, failed start). */
  private onClosed(gen: number): void {
    if (gen !== this.generation || this.crashHandled.has(gen)) {
      return;
    }
    this.crashHandled.add(gen);
    const old = this.client;
    this.client = undefined;
    if (old) {
      // Disposing a client that is still starting throws inside the
      // library: let its start settle first.
      const dispose = () => {
        try {
          void old.dispose(1000).catch(() => undefined);
        } catch {
          // already disposed
        }
      };
      if (old.state === State.Starting) {
        setTimeout(dispose, 2000);
      } else {
        dispose();
      }
    }
    // A crashed server has usually exited already; one that only closed
    // its pipes gets a second to go before it is killed.
    const dying = this.process;
    this.process = undefined;
    void this.exited(dying, 1000).then(() => this.killProcess(dying));
    const decision = this.policy.onCrash(Date.now());
    const why = this.crashSummary();
    if (decision.action === "restart") {
      this.output.warn(`dfd stopped unexpectedly (${why}); restarting in ${decision.delayMs / 1000} s (crash ${decision.crashesInWindow} of ${DEFAULT_BACKOFF.maxCrashes}).`);
      this.setState("restarting");
      this.restartFor = gen;
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        if (this.restartFor === gen && gen === this.generation) {
          this.restartFor = undefined;
          this.state = "stopped";
          void this.start();
        }
      }, decision.delayMs);
      return;
    }
    this.output.error(`dfd crashed ${decision.crashesInWindow} times within ${DEFAULT_BACKOFF.windowMs / 60000} minutes; not restarting it again.`);
    this.setState("failed");
    void this.exited(dying, 1000).then(() => this.reportGiveUp(decision.crashesInWindow));
  }

  /** Resolves when `cp` has exited, or after `ms`. */
  private exited(cp: ChildProcess | undefined, ms: number): Promise<void> {
    if (!cp || cp.exitCode !== null || cp.signalCode !== null) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      cp.once("exit", () => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  private reportGiveUp(crashes: number): void {
    const why = this.crashSummary();
    const message =
      `The dfd language server crashed ${crashes} times within ${DEFAULT_BACKOFF.windowMs / 60000} minutes and was not restarted (${why}).`;
    void vscode.window.showErrorMessage(message, "Show logs", "Restart server").then((choice) => {
      if (choice === "Show logs") {
        this.showLogs();
      } else if (choice === "Restart server") {
        void this.restart();
      }
    });
  }

  private crashSummary(): string {
    const last = this.stderrTail.filter((l) => !/level=(INFO|DEBUG)/.test(l)).slice(-1)[0] ?? this.stderrTail.slice(-1)[0];
    return [this.lastExit || "connection closed", last ? `last output: ${last.slice(0, 300)}` : ""].filter(Boolean).join("; ");
  }

  private killProcess(cp: ChildProcess | undefined): void {
    if (cp && cp.exitCode === null && cp.signalCode === null) {
      const t = setTimeout(() => {
        if (cp.exitCode === null && cp.signalCode === null) {
          cp.kill("SIGKILL");
        }
      }, 2000);
      cp.once("exit", () => clearTimeout(t));
      cp.kill("SIGTERM");
    }
  }

  /** Stops the server on purpose (no restart). */
  async stop(): Promise<void> {
    this.generation++;
    this.restartFor = undefined;
    if (this.restartTimer) {
      clearTimeout(this.restartTimer);
      this.restartTimer = undefined;
    }
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        if (client.state === State.Running || client.state === State.Starting) {
          await client.stop(3000);
        }
      } catch (err) {
        this.output.warn(`stopping dfd: ${err instanceof Error ? err.message : String(err)}`);
      }
      try {
        await client.dispose(1000);
      } catch {
        // already stopped
      }
    }
    const cp = this.process;
    if (cp && cp.exitCode === null && cp.signalCode === null) {
      // `exit` should end it; make sure.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 1000);
        cp.once("exit", () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    this.process = undefined;
    this.killProcess(cp);
    this.setState("stopped");
  }

  /** "Dataform: Restart Server": forgets past crashes and starts afresh. */
  async restart(): Promise<void> {
    this.output.info("Restarting dfd");
    this.policy.reset();
    await this.stop();
    await this.start();
  }

  async sendRequest<R>(method: string, params?: unknown, token?: vscode.CancellationToken): Promise<R> {
    const client = this.client;
    if (!client || !this.isRunning()) {
      throw new Error("The dfd language server is not running.");
    }
    // Never pass an undefined token: vscode-jsonrpc would send the params
    // as an array [params, null].
    if (params === undefined) {
      return token ? client.sendRequest<R>(method, token) : client.sendRequest<R>(method);
    }
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.previewChangedEmitter.dispose();
  }
}

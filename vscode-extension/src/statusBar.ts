// The `dfd.status` status bar item and its quick pick menu.
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import { ServerManager } from "./server";
import { refreshSummary, RefreshResult, STARTING_VIEW, STOPPED_VIEW, StatusResult, statusView, StatusView } from "./status";

const METHOD_NOT_FOUND = -32601;

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private timer: NodeJS.Timeout | undefined;
  private refreshing = false;
  private pending = false;
  private warnedNoProject = false;
  private runningSince = 0;
  private readonly disposables: vscode.Disposable[] = [];
  last: StatusResult | undefined;

  constructor(private readonly server: ServerManager) {
    this.item = vscode.window.createStatusBarItem("dfd.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "Dataform (dfd)";
    this.item.command = "dfd.statusMenu";
    this.show(STOPPED_VIEW);
    this.item.show();
    this.disposables.push(
      server.onDidChangeState((s) => {
        if (s === "running") {
          this.runningSince = Date.now();
          void this.refresh();
        } else if (s === "starting" || s === "restarting") {
          this.show(s === "starting" ? STARTING_VIEW : { ...STARTING_VIEW, text: "$(sync~spin) dfd: restarting…" });
        } else {
          this.show(STOPPED_VIEW);
        }
      }),
      server.onPreviewChanged(() => void this.refresh()),
      vscode.window.onDidChangeActiveTextEditor(() => {
        if (this.last && this.server.isRunning()) {
          this.render(this.last);
        }
      }),
    );
    this.timer = setInterval(() => void this.refresh(), 10_000);
  }

  private show(v: StatusView): void {
    this.item.text = v.text;
    this.item.tooltip = v.tooltip;
    this.item.backgroundColor = v.kind === "error" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  private render(r: StatusResult): void {
    const active = vscode.window.activeTextEditor?.document.uri;
    this.show(statusView(r, active?.scheme === "file" ? active.toString() : undefined));
  }

  /** Asks dfd/status and updates the item; coalesces overlapping calls. */
  async refresh(): Promise<void> {
    if (!this.server.isRunning()) {
      if (this.server.state === "stopped" || this.server.state === "failed") {
        this.show(STOPPED_VIEW);
      }
      return;
    }
    if (this.refreshing) {
      this.pending = true;
      return;
    }
    this.refreshing = true;
    try {
      const r = await this.server.sendRequest<StatusResult>("dfd/status");
      this.last = r;
      this.render(r);
      this.notifyOnce(r);
    } catch (err) {
      if (this.server.isRunning()) {
        this.server.output.warn(`dfd/status failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    } finally {
      this.refreshing = false;
      if (this.pending) {
        this.pending = false;
        void this.refresh();
      }
    }
  }

  private notifyOnce(r: StatusResult): void {
    const projects = r.projects ?? [];
    if (projects.length === 0 && !this.warnedNoProject) {
      const age = Date.now() - this.runningSince;
      if (age < 3000) {
        // The server may still be scanning the folders: look again before telling.
        setTimeout(() => void this.refresh(), 3000 - age);
        return;
      }
      this.warnedNoProject = true;
      void vscode.window.showInformationMessage(
        "dfd: no Dataform project in this workspace (no workflow_settings.yaml or dataform.json found). Open the folder of a Dataform project to get diagnostics and previews.",
      );
    }
    // A project that cannot be compiled (no core, broken settings) is
    // announced by the server itself (window/showMessage) and shown on the
    // settings file in Problems; the status bar turns red with the message
    // in its tooltip. A second pop-up from here would say the same again.
  }

  async menu(): Promise<void> {
    type Item = vscode.QuickPickItem & { id: string };
    const running = this.server.isRunning();
    const items: Item[] = [
      { id: "refresh", label: "$(refresh) Refresh metadata", description: running ? "" : "server not running" },
      { id: "preview", label: "$(open-preview) Show compiled preview" },
      { id: "logs", label: "$(output) Show logs" },
      { id: "restart", label: "$(debug-restart) Restart server", description: this.server.serverDetail },
    ];
    const pick = await vscode.window.showQuickPick(items, { title: "Dataform (dfd)", placeHolder: this.item.text.replace(/\$\([^)]*\)\s*/g, "") });
    switch (pick?.id) {
      case "refresh":
        await this.refreshMetadata();
        break;
      case "preview":
        await vscode.commands.executeCommand("dfd.openPreview");
        break;
      case "logs":
        this.server.showLogs();
        break;
      case "restart":
        await vscode.commands.executeCommand("dfd.restartServer");
        break;
    }
  }

  async refreshMetadata(): Promise<void> {
    if (!this.server.isRunning()) {
      void vscode.window.showWarningMessage("dfd: the language server is not running; restart it first.", "Restart server").then((c) => {
        if (c) void vscode.commands.executeCommand("dfd.restartServer");
      });
      return;
    }
    try {
      const r = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "dfd: refreshing metadata…" },
        () => this.server.sendRequest<RefreshResult>("dfd/refreshMetadata", {}),
      );
      const { message, failed } = refreshSummary(r);
      if (failed) {
        void vscode.window.showWarningMessage(message, "Show logs").then((c) => {
          if (c) this.server.showLogs();
        });
      } else {
        void vscode.window.showInformationMessage(message);
      }
      void this.refresh();
    } catch (err) {
      if (err instanceof ResponseError && err.code === METHOD_NOT_FOUND) {
        void vscode.window.showInformationMessage(
          "dfd: this version of the dfd server cannot refresh metadata (dfd/refreshMetadata is not supported). Update dfd, or restart the server to reload the metadata.",
        );
        return;
      }
      void vscode.window.showErrorMessage(`dfd: refreshing metadata failed: ${err instanceof Error ? err.message : String(err)}`, "Show logs").then((c) => {
        if (c) this.server.showLogs();
      });
    }
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.disposables.forEach((d) => d.dispose());
    this.item.dispose();
  }
}

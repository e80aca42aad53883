// The "Dataform Preview" webview panel: follows the active .sqlx/.js file
// and shows its compiled (and JiT-compiled) SQL.
import * as vscode from "vscode";
import { createDfdWebview, pageContext } from "./webviewPanel";
import { renderMessage, renderPreviewBody, renderPreviewPage, PreviewResult } from "./previewHtml";
import { ServerManager } from "./server";

const VIEW_TYPE = "dfd.preview";

export function isPreviewable(doc: vscode.TextDocument | undefined): doc is vscode.TextDocument {
  return !!doc && doc.uri.scheme === "file" && (doc.languageId === "sqlx" || doc.languageId === "javascript" || /\.(sqlx|js)$/.test(doc.uri.path));
}

export class PreviewPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private uri: vscode.Uri | undefined;
  private project: string | undefined;
  private reveal: string | undefined;
  private ready = false;
  private seq = 0;
  private cancel: vscode.CancellationTokenSource | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: ServerManager,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (this.panel && e && isPreviewable(e.document) && e.document.uri.toString() !== this.uri?.toString()) {
          this.uri = e.document.uri;
          this.reveal = undefined;
          void this.update();
        }
      }),
      vscode.workspace.onDidSaveTextDocument((d) => {
        if (this.panel && d.uri.toString() === this.uri?.toString() && !this.updateWhileTyping()) {
          void this.update();
        }
      }),
      server.onPreviewChanged((n) => {
        if (!this.panel || !this.uri) return;
        const mine = this.project ? n.project === this.project : this.uri.toString().startsWith(n.project.replace(/\/?$/, "/"));
        if (!mine) return;
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === this.uri?.toString());
        if (this.updateWhileTyping() || !doc || !doc.isDirty) {
          void this.update();
        }
      }),
      server.onDidChangeState((s) => {
        if (!this.panel) return;
        if (s === "running") {
          void this.update();
        } else if (s !== "starting") {
          this.setBody(renderMessage("The dfd language server is not running. Use “Dataform: Restart Server”.", "error"));
        }
      }),
    );
  }

  private updateWhileTyping(): boolean {
    return vscode.workspace.getConfiguration("dfd").get<boolean>("preview.updateWhileTyping", true);
  }

  /** Opens (or focuses) the panel on `uri` (default: the active file), scrolled to `target`. */
  async open(uri?: vscode.Uri, target?: string): Promise<void> {
    if (!uri) {
      const doc = vscode.window.activeTextEditor?.document;
      uri = isPreviewable(doc) ? doc.uri : this.uri;
    }
    if (!uri) {
      void vscode.window.showInformationMessage("Dataform Preview: open a .sqlx or .js file of a Dataform project first.");
      return;
    }
    this.uri = uri;
    this.reveal = target;
    if (!this.panel) {
      this.create();
    } else {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    await this.update();
  }

  private create(): void {
    const panel = createDfdWebview(this.context, VIEW_TYPE, "Dataform Preview");
    this.panel = panel;
    this.ready = false;
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
      this.cancel?.cancel();
    }, null, this.disposables);
    panel.webview.onDidReceiveMessage((m: { type: string; text?: string }) => {
      if (m.type === "ready") {
        this.ready = true;
      } else if (m.type === "copy" && typeof m.text === "string") {
        void vscode.env.clipboard.writeText(m.text).then(() => vscode.window.setStatusBarMessage("Copied SQL to the clipboard", 2000));
      }
    }, null, this.disposables);
    this.setBody(renderMessage("Loading…"));
  }

  private page(body: string): string {
    return renderPreviewPage({ ...pageContext(this.context, this.panel!, "preview.js"), body, uri: this.uri?.toString(), reveal: this.reveal });
  }

  /** Shows `body`; `final` (a preview result) consumes the pending reveal. */
  private setBody(body: string, final = false): void {
    if (!this.panel) return;
    if (this.ready) {
      void this.panel.webview.postMessage({ type: "update", html: body, uri: this.uri?.toString() ?? "", reveal: this.reveal ?? "" });
    } else {
      this.panel.webview.html = this.page(body);
    }
    if (final) {
      // Reveal once, not on every later update.
      this.reveal = undefined;
    }
  }

  /** Asks dfd/preview for the current file and shows the result. */
  async update(): Promise<void> {
    if (!this.panel || !this.uri) return;
    const uri = this.uri;
    if (!this.server.isRunning()) {
      this.setBody(
        renderMessage(
          this.server.state === "starting" || this.server.state === "restarting"
            ? "Waiting for the dfd language server to start…"
            : "The dfd language server is not running. Use “Dataform: Restart Server”.",
          this.server.state === "starting" || this.server.state === "restarting" ? "info" : "error",
        ),
      );
      return;
    }
    const seq = ++this.seq;
    this.cancel?.cancel();
    const cts = new vscode.CancellationTokenSource();
    this.cancel = cts;
    try {
      const r = await this.server.sendRequest<PreviewResult>("dfd/preview", { textDocument: { uri: uri.toString() }, jit: true }, cts.token);
      if (seq !== this.seq || !this.panel) return;
      this.project = r.project;
      this.setBody(renderPreviewBody(r, { jitRequested: true }), true);
    } catch (err) {
      if (seq !== this.seq || !this.panel || cts.token.isCancellationRequested) return;
      const msg = err instanceof Error ? err.message : String(err);
      this.setBody(renderMessage(`dfd/preview failed for ${uri.fsPath}: ${msg}`, "error"));
    } finally {
      cts.dispose();
    }
  }

  dispose(): void {
    this.cancel?.cancel();
    this.panel?.dispose();
    this.disposables.forEach((d) => d.dispose());
  }
}

// The "Dataform Dependency Graph" webview panel: dfd/graph for the active
// file's project, laid out around the actions the file defines
// (graphView.ts). It follows the active editor and every compile (the
// server's dfd/previewChanged), so it is current as you type; a click on a
// node opens its file, its "lineage" button the column-lineage quick pick.
import * as vscode from "vscode";
import { createDfdWebview, pageContext } from "./webviewPanel";
import { DEFAULT_DEPTH, DEPTHS, Depth, fileActions, projectOf, renderGraphBody, renderGraphMessage, renderGraphPage, GraphProject } from "./graphView";
import { showLineage } from "./lineage";
import { isPreviewable } from "./previewPanel";
import type { GraphParams, GraphResult } from "./protocol_gen";
import type { ServerManager } from "./server";

const VIEW_TYPE = "dfd.graph";
const DEPTH_KEY = "dfd.graph.depth";
/**
 * A compile per burst of typing is published: a short wait coalesces a
 * burst's notifications into one dfd/graph request.
 */
const REFRESH_MS = 200;

/** Messages of media/graph.js. */
type Incoming =
  | { type: "ready" }
  | { type: "open"; uri: string; name: string }
  | { type: "lineage"; uri: string; name: string }
  | { type: "depth"; depth: string };

export class GraphPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private uri: vscode.Uri | undefined;
  /** The last answer, so that a new depth is drawn without asking again. */
  private project: GraphProject | undefined;
  private depth: Depth;
  private ready = false;
  /** The body on screen: an identical one is not sent again (no flicker, no scroll jump). */
  private shown = "";
  private seq = 0;
  private cancel: vscode.CancellationTokenSource | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Where files opened from the graph go: the editor group last used for text. */
  private editorColumn = vscode.ViewColumn.One;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: ServerManager,
  ) {
    const saved = context.workspaceState.get<Depth>(DEPTH_KEY);
    this.depth = DEPTHS.includes(saved as Depth) ? (saved as Depth) : DEFAULT_DEPTH;
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e?.viewColumn) this.editorColumn = e.viewColumn;
        // Other editors (settings, output) keep the graph where it is.
        if (this.panel && e && isPreviewable(e.document) && e.document.uri.toString() !== this.uri?.toString()) {
          this.uri = e.document.uri;
          this.schedule(0);
        }
      }),
      server.onPreviewChanged((n) => {
        if (!this.panel || !this.uri) return;
        const mine = this.project
          ? normalize(n.project) === normalize(this.project.root)
          : this.uri.toString().startsWith(normalize(n.project) + "/");
        if (mine) this.schedule(REFRESH_MS);
      }),
      server.onDidChangeState((s) => {
        if (!this.panel) return;
        if (s === "running") this.schedule(0);
        else if (s !== "starting") this.setBody(renderGraphMessage("The dfd language server is not running. Use “Dataform: Restart Server”.", "error"));
      }),
    );
  }

  /** Opens (or focuses) the panel on `uri`, by default the active file. */
  async open(uri?: vscode.Uri): Promise<void> {
    if (!uri) {
      const doc = vscode.window.activeTextEditor?.document;
      uri = isPreviewable(doc) ? doc.uri : this.uri;
    }
    if (!uri) {
      void vscode.window.showInformationMessage("Dataform Dependency Graph: open a .sqlx or .js file of a Dataform project first.");
      return;
    }
    const column = vscode.window.activeTextEditor?.viewColumn;
    if (column) this.editorColumn = column;
    this.uri = uri;
    if (!this.panel) this.create();
    else this.panel.reveal(vscode.ViewColumn.Beside, true);
    await this.update();
  }

  private create(): void {
    const panel = createDfdWebview(this.context, VIEW_TYPE, "Dataform Graph");
    this.panel = panel;
    this.ready = false;
    this.shown = "";
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
      this.project = undefined;
      this.cancel?.cancel();
      clearTimeout(this.timer);
    }, null, this.disposables);
    panel.webview.onDidReceiveMessage((m: Incoming) => void this.receive(m), null, this.disposables);
    this.setBody(renderGraphMessage("Loading…"));
  }

  private async receive(m: Incoming): Promise<void> {
    switch (m.type) {
      case "ready":
        this.ready = true;
        return;
      case "depth": {
        const d: Depth = m.depth === "all" ? "all" : Number(m.depth);
        if (!DEPTHS.includes(d)) return;
        this.depth = d;
        void this.context.workspaceState.update(DEPTH_KEY, d);
        this.render();
        return;
      }
      case "open":
        if (typeof m.uri === "string" && m.uri !== "") await this.openAction(vscode.Uri.parse(m.uri), m.name);
        return;
      case "lineage":
        if (typeof m.uri === "string" && m.uri !== "") await showLineage(this.server, { uri: vscode.Uri.parse(m.uri), action: m.name });
        return;
    }
  }

  /** Opens the file of an action; in a file that defines several, at its definition. */
  private async openAction(uri: vscode.Uri, name: string): Promise<void> {
    const editor = await vscode.window.showTextDocument(uri, { viewColumn: this.editorColumn, preserveFocus: false });
    if (!this.project || fileActions(this.project, uri.toString()).length < 2) return;
    const short = this.project.actions.find((a) => a.name === name)?.target.name;
    try {
      const symbols = await vscode.commands.executeCommand<vscode.DocumentSymbol[] | undefined>("vscode.executeDocumentSymbolProvider", uri);
      const sym = symbols?.find((s) => s.name === short);
      if (sym) {
        editor.selection = new vscode.Selection(sym.selectionRange.start, sym.selectionRange.start);
        editor.revealRange(sym.range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      }
    } catch {
      // No symbols (the server is restarting): the file is open, that is enough.
    }
  }

  private page(body: string): string {
    return renderGraphPage({ ...pageContext(this.context, this.panel!, "graph.js"), body, uri: this.uri?.toString() });
  }

  private setBody(body: string): void {
    if (!this.panel || body === this.shown) return;
    this.shown = body;
    if (this.ready) {
      void this.panel.webview.postMessage({ type: "update", html: body, uri: this.uri?.toString() ?? "" });
    } else {
      this.panel.webview.html = this.page(body);
    }
  }

  /** Draws the last answer for the current file and depth. */
  private render(): void {
    if (!this.panel || !this.uri || !this.project) return;
    this.panel.title = `Graph: ${this.uri.path.replace(/^.*\//, "")}`;
    this.setBody(renderGraphBody(this.project, { fileUri: this.uri.toString(), fileLabel: vscode.workspace.asRelativePath(this.uri), depth: this.depth }));
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.update(), ms);
  }

  /** Asks dfd/graph for the current file's project and draws it. */
  async update(): Promise<void> {
    clearTimeout(this.timer);
    if (!this.panel || !this.uri) return;
    const uri = this.uri;
    if (!this.server.isRunning()) {
      const starting = this.server.state === "starting" || this.server.state === "restarting";
      this.setBody(
        renderGraphMessage(
          starting ? "Waiting for the dfd language server to start…" : "The dfd language server is not running. Use “Dataform: Restart Server”.",
          starting ? "info" : "error",
        ),
      );
      return;
    }
    const seq = ++this.seq;
    this.cancel?.cancel();
    const cts = new vscode.CancellationTokenSource();
    this.cancel = cts;
    try {
      const params: GraphParams = { uri: uri.toString() };
      const r = await this.server.sendRequest<GraphResult>("dfd/graph", params, cts.token);
      if (seq !== this.seq || !this.panel) return;
      const p = projectOf(r.projects, uri.toString());
      if (!p) {
        this.project = undefined;
        this.setBody(renderGraphMessage(`${vscode.workspace.asRelativePath(uri)} is in no Dataform project.`));
        return;
      }
      this.project = p;
      this.render();
    } catch (err) {
      if (seq !== this.seq || !this.panel || cts.token.isCancellationRequested) return;
      const msg = err instanceof Error ? err.message : String(err);
      this.project = undefined;
      this.setBody(renderGraphMessage(`dfd/graph failed for ${vscode.workspace.asRelativePath(uri)}: ${msg}`, "error"));
    } finally {
      cts.dispose();
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.cancel?.cancel();
    this.panel?.dispose();
    this.disposables.forEach((d) => d.dispose());
  }
}

function normalize(u: string): string {
  return u.replace(/\/+$/, "");
}

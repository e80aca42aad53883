// The "Dataform Data" results panel: an action's rows from dfd/rows — the
// query's, run now under the preview policy, or the built table's — with
// copy as CSV/JSON and links to BigQuery's console. Above the threshold
// (dfd.preview.rowsConfirmBytes) the server runs only a dry run and this
// panel asks before running the query.
import * as vscode from "vscode";
import { createDfdWebview, pageContext } from "./webviewPanel";
import { renderRowsBody, renderRowsMessage, renderRowsPage, rowsToCsv, rowsToJson, RowsResult } from "./rowsView";
import { ServerManager } from "./server";

const VIEW_TYPE = "dfd.rows";
/** How many rows a preview fetches. */
export const ROWS_LIMIT = 100;

/** What the panel shows: an action of a file (by name, else at a position). */
export interface RowsRequestTarget {
  uri: vscode.Uri;
  action?: string;
  position?: vscode.Position;
  source: "query" | "table";
}

export class RowsPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private ready = false;
  private current: RowsRequestTarget | undefined;
  private last: RowsResult | undefined;
  private seq = 0;
  private cancel: vscode.CancellationTokenSource | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: ServerManager,
  ) {}

  /** Opens (or focuses) the panel and previews the data of `t`. */
  async show(t: RowsRequestTarget): Promise<void> {
    this.current = t;
    if (!this.panel) {
      this.create();
    } else {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    await this.load(false);
  }

  private create(): void {
    const panel = createDfdWebview(this.context, VIEW_TYPE, "Dataform Data");
    this.panel = panel;
    this.ready = false;
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
      this.cancel?.cancel();
    }, null, this.disposables);
    panel.webview.onDidReceiveMessage((m: { type: string; url?: string; source?: string }) => void this.onMessage(m), null, this.disposables);
    panel.webview.html = renderRowsPage({ ...pageContext(this.context, panel, "rows.js"), body: renderRowsMessage("Loading…") });
  }

  private async onMessage(m: { type: string; url?: string; source?: string }): Promise<void> {
    switch (m.type) {
      case "ready":
        this.ready = true;
        if (this.body) this.post(this.body);
        return;
      case "copy-csv":
        if (this.last) await this.copy(rowsToCsv(this.last), "CSV");
        return;
      case "copy-json":
        if (this.last) await this.copy(rowsToJson(this.last), "JSON");
        return;
      case "open":
        if (m.url && /^https:\/\//.test(m.url)) await vscode.env.openExternal(vscode.Uri.parse(m.url, true));
        return;
      case "source":
        if (this.current && (m.source === "query" || m.source === "table")) {
          this.current = { ...this.current, source: m.source };
          await this.load(false);
        }
        return;
      case "refresh":
        await this.load(false);
        return;
      case "confirm":
        await this.load(true);
        return;
    }
  }

  private async copy(text: string, what: string): Promise<void> {
    await vscode.env.clipboard.writeText(text);
    vscode.window.setStatusBarMessage(`Copied the rows as ${what}`, 2000);
  }

  private body: string | undefined;

  private post(body: string): void {
    this.body = body;
    if (!this.panel) return;
    if (this.ready) {
      void this.panel.webview.postMessage({ type: "update", html: body });
    } else {
      this.panel.webview.html = renderRowsPage({ ...pageContext(this.context, this.panel, "rows.js"), body });
    }
  }

  /** Asks dfd/rows for the current target; asks the user first when the server says the query needs it. */
  private async load(confirmed: boolean): Promise<void> {
    const t = this.current;
    if (!this.panel || !t) return;
    if (!this.server.isRunning()) {
      this.post(renderRowsMessage("The dfd language server is not running. Use “Dataform: Restart Server”.", "error"));
      return;
    }
    const seq = ++this.seq;
    this.cancel?.cancel();
    const cts = new vscode.CancellationTokenSource();
    this.cancel = cts;
    const what = t.source === "table" ? "Reading the table's rows…" : confirmed ? "Running the query…" : "Dry-running, then running the query…";
    this.post(renderRowsMessage(what));
    try {
      const params: Record<string, unknown> = { textDocument: { uri: t.uri.toString() }, source: t.source, limit: ROWS_LIMIT, confirmed };
      if (t.action) params.action = t.action;
      if (t.position) params.position = { line: t.position.line, character: t.position.character };
      const r = await this.server.sendRequest<RowsResult>("dfd/rows", params, cts.token);
      if (seq !== this.seq || !this.panel) return;
      this.last = r;
      if (r.action) this.current = { ...t, action: r.action, position: undefined };
      this.panel.title = `Data: ${r.action || r.target || "?"}`;
      this.post(renderRowsBody(r));
      if (r.needsConfirmation && !confirmed) {
        const choice = await vscode.window.showWarningMessage(r.confirmation || "Run this query?", { modal: true }, "Run query");
        if (choice === "Run query" && seq === this.seq) await this.load(true);
      }
    } catch (err) {
      if (seq !== this.seq || !this.panel || cts.token.isCancellationRequested) return;
      this.post(renderRowsMessage(`dfd/rows failed: ${err instanceof Error ? err.message : String(err)}`, "error"));
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

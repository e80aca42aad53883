// "Dataform: Show Column Lineage": dfd/lineage (lsp/PROTOCOL.md) for the
// action and the column under the cursor, in a quick pick whose entries
// open the file that defines their table.
import * as vscode from "vscode";
import type { LineageParams, LineageResult } from "./protocol_gen";
import { lineageItems, lineageTitle, noLineageMessage, LineageItem } from "./lineageView";
import type { ServerManager } from "./server";

interface PickItem extends vscode.QuickPickItem {
  item?: LineageItem;
}

export async function showLineage(srv: ServerManager): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage("dfd: open a .sqlx or .js file of a Dataform project to see its column lineage.");
    return;
  }
  if (!srv.isRunning()) {
    void vscode.window.showWarningMessage("dfd: cannot show column lineage: the language server is not running.");
    return;
  }
  const doc = editor.document;
  const pos = editor.selection.active;
  const params: LineageParams = {
    textDocument: { uri: doc.uri.toString() },
    position: { line: pos.line, character: pos.character },
  };
  let result: LineageResult | undefined;
  try {
    // The first request of a project may analyse its SQL (about a
    // second for hundreds of actions): cancellable, like the request.
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "dfd: tracing column lineage…", cancellable: true },
      (_progress, token) => srv.sendRequest<LineageResult>("dfd/lineage", params, token),
    );
  } catch (err) {
    if (err instanceof vscode.CancellationError || (err as { code?: number })?.code === -32800) return;
    void vscode.window.showErrorMessage(`dfd: column lineage failed: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  if (!result) return;
  if (result.reason || result.columns.length === 0) {
    void vscode.window.showInformationMessage(noLineageMessage(result, vscode.workspace.asRelativePath(doc.uri)));
    return;
  }
  const pick = vscode.window.createQuickPick<PickItem>();
  pick.title = lineageTitle(result);
  pick.placeholder = "Direct inputs and warehouse origins; pick one to open where its table is defined";
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  pick.items = lineageItems(result).map((item): PickItem => {
    if (item.kind === "separator") return { label: item.label, kind: vscode.QuickPickItemKind.Separator };
    return { label: item.label, description: item.description, detail: item.detail, item };
  });
  pick.onDidAccept(async () => {
    const loc = pick.selectedItems[0]?.item?.input?.location;
    pick.hide();
    if (!loc) return; // a warehouse table, or a note: nothing to open
    const range = new vscode.Range(loc.range.start.line, loc.range.start.character, loc.range.end.line, loc.range.end.character);
    await vscode.window.showTextDocument(vscode.Uri.parse(loc.uri), { selection: range });
  });
  pick.onDidHide(() => pick.dispose());
  pick.show();
}

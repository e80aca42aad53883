// "Dataform: Show Column Lineage": dfd/lineage (lsp/PROTOCOL.md) for the
// action and the column under the cursor (or an action named by the
// dependency graph), in a quick pick whose entries open the file that
// defines their table.
import * as vscode from "vscode";
import type { LineageParams, LineageResult } from "./protocol_gen";
import { lineageItems, lineageTitle, noLineageMessage, LineageItem } from "./lineageView";
import type { ServerManager } from "./server";

interface PickItem extends vscode.QuickPickItem {
  item?: LineageItem;
}

/** An action by name, in the file that defines it (the graph view's nodes). */
export interface LineageTarget {
  uri: vscode.Uri;
  action: string;
}

/** Shows the lineage of `target`, else of the action and column under the cursor. */
export async function showLineage(srv: ServerManager, target?: LineageTarget): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!target && !editor) {
    void vscode.window.showWarningMessage("dfd: open a .sqlx or .js file of a Dataform project to see its column lineage.");
    return;
  }
  if (!srv.isRunning()) {
    void vscode.window.showWarningMessage("dfd: cannot show column lineage: the language server is not running.");
    return;
  }
  let params: LineageParams;
  let docUri: vscode.Uri;
  if (target) {
    docUri = target.uri;
    params = { textDocument: { uri: target.uri.toString() }, action: target.action };
  } else {
    const pos = editor!.selection.active;
    docUri = editor!.document.uri;
    params = { textDocument: { uri: docUri.toString() }, position: { line: pos.line, character: pos.character } };
  }
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
    void vscode.window.showInformationMessage(noLineageMessage(result, vscode.workspace.asRelativePath(docUri)));
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

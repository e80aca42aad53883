// What the preview and the graph panels share on the VS Code side: how a
// dfd webview is opened (beside the editor, keeping focus, scripts from
// media/ only) and what each render of its page needs (a fresh nonce, the
// script's webview URI, the CSP source). The page itself is
// webviewPage.ts, which knows no vscode API and is unit tested.
import * as crypto from "node:crypto";
import * as vscode from "vscode";

export function createDfdWebview(context: vscode.ExtensionContext, viewType: string, title: string): vscode.WebviewPanel {
  const media = vscode.Uri.joinPath(context.extensionUri, "media");
  return vscode.window.createWebviewPanel(
    viewType,
    title,
    { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
    { enableScripts: true, enableFindWidget: true, retainContextWhenHidden: true, localResourceRoots: [media] },
  );
}

export interface PageContext {
  nonce: string;
  cspSource: string;
  scriptUri: string;
}

/** A render's nonce, CSP source and the URI of media/<script>. */
export function pageContext(context: vscode.ExtensionContext, panel: vscode.WebviewPanel, script: string): PageContext {
  const webview = panel.webview;
  return {
    nonce: crypto.randomBytes(16).toString("base64"),
    cspSource: webview.cspSource,
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(context.extensionUri, "media", script)).toString(),
  };
}

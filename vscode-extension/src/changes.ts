// "Dataform: Changes vs main": runs `dfd diff --format json` on the
// project of the active file (or the first workspace folder's) — the
// branch against its merge base with the default branch, the working tree
// as saved — and lists the changes by category in a quick pick whose
// entries open the changed line.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { changeItems, changesTitle, diffArgs, ChangeItem, DiffReport } from "./changesView";

interface PickItem extends vscode.QuickPickItem {
  item?: ChangeItem;
}

/** The Dataform project holding file: the nearest directory with its settings file. */
function projectRoot(file: string): string | undefined {
  let dir = path.dirname(file);
  for (;;) {
    if (fs.existsSync(path.join(dir, "workflow_settings.yaml")) || fs.existsSync(path.join(dir, "dataform.json"))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** Shows what the branch changes; dfd is the binary the server runs. */
export async function showChanges(dfd: string | undefined): Promise<void> {
  if (!dfd) {
    void vscode.window.showWarningMessage("dfd: cannot list changes: the dfd binary was not found (see dfd.path).");
    return;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  let root = active?.scheme === "file" ? projectRoot(active.fsPath) : undefined;
  if (!root) {
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file");
    root = folder && projectRoot(path.join(folder.uri.fsPath, "x"));
  }
  if (!root) {
    void vscode.window.showWarningMessage("dfd: open a file of a Dataform project to list its changes.");
    return;
  }
  const projectDir = root;
  const cfg = vscode.workspace.getConfiguration("dfd");
  const args = diffArgs(projectDir, (key) => cfg.get(key));
  let report: DiffReport;
  try {
    report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "dfd: comparing with the default branch…", cancellable: true },
      (_progress, token) =>
        new Promise<DiffReport>((resolve, reject) => {
          const child = execFile(dfd, args, { cwd: projectDir, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
            if (token.isCancellationRequested) return reject(new vscode.CancellationError());
            if (err && !stdout) return reject(new Error(stderr.trim().split("\n").slice(-3).join(" ") || err.message));
            try {
              resolve(JSON.parse(stdout) as DiffReport);
            } catch (e) {
              reject(new Error(`dfd diff printed no report: ${stderr.trim() || String(e)}`));
            }
          });
          token.onCancellationRequested(() => child.kill());
        }),
    );
  } catch (err) {
    if (err instanceof vscode.CancellationError) return;
    void vscode.window.showErrorMessage(`dfd: changes vs main: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  if (report.changes.length === 0) {
    void vscode.window.showInformationMessage(`dfd: no change from ${report.base}.`);
    return;
  }
  const pick = vscode.window.createQuickPick<PickItem>();
  pick.title = changesTitle(report);
  pick.placeholder = "Pick a change to open its line";
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  pick.items = changeItems(report).map((item): PickItem => {
    if (item.kind === "separator") return { label: item.label, kind: vscode.QuickPickItemKind.Separator };
    return { label: item.label, description: item.description, detail: item.detail, item };
  });
  pick.onDidAccept(async () => {
    const it = pick.selectedItems[0]?.item;
    pick.hide();
    if (!it?.file) return; // a removed action: nothing to open
    const line = Math.max((it.line ?? 1) - 1, 0);
    await vscode.window.showTextDocument(vscode.Uri.file(path.join(projectDir, it.file)), {
      selection: new vscode.Range(line, 0, line, 0),
    });
  });
  pick.onDidHide(() => pick.dispose());
  pick.show();
}

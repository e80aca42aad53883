// Entry point of the Dataform (dfd) extension: starts the dfd language
// server and wires the commands, the status bar, the compiled preview and
// the dependency graph.
import * as vscode from "vscode";
import { showChanges } from "./changes";
import { GraphPanel } from "./graphPanel";
import { showLineage } from "./lineage";
import { PreviewPanel } from "./previewPanel";
import { ServerManager } from "./server";
import { needsRestart } from "./settings";
import { StatusBar } from "./statusBar";
import { targetString, Target } from "./previewHtml";

let server: ServerManager | undefined;

interface LspPosition {
  line: number;
  character: number;
}

function toUri(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg;
  if (typeof arg === "string" && arg !== "") return vscode.Uri.parse(arg);
  return undefined;
}

function toTarget(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  if (arg && typeof arg === "object" && typeof (arg as Target).name === "string") return targetString(arg as Target);
  return undefined;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Dataform (dfd)", { log: true });
  server = new ServerManager(context, output);
  const srv = server;
  const status = new StatusBar(srv);
  const preview = new PreviewPanel(context, srv);
  const graph = new GraphPanel(context, srv);
  context.subscriptions.push(output, srv, status, preview, graph);

  context.subscriptions.push(
    vscode.commands.registerCommand("dfd.restartServer", () => srv.restart()),
    vscode.commands.registerCommand("dfd.showLogs", () => srv.showLogs()),
    vscode.commands.registerCommand("dfd.refreshMetadata", () => status.refreshMetadata()),
    vscode.commands.registerCommand("dfd.statusMenu", () => status.menu()),
    vscode.commands.registerCommand("dfd.openPreview", (uri?: unknown) => preview.open(toUri(uri))),
    vscode.commands.registerCommand("dfd.showLineage", () => showLineage(srv)),
    vscode.commands.registerCommand("dfd.showChanges", () => showChanges(srv.dfdBinary())),
    vscode.commands.registerCommand("dfd.showGraph", (uri?: unknown) => graph.open(toUri(uri))),
    // Code lens commands the server emits (see lsp/PROTOCOL.md).
    vscode.commands.registerCommand("dfd.showPreview", (uri?: unknown, target?: unknown) => preview.open(toUri(uri), toTarget(target))),
    vscode.commands.registerCommand("dfd.showDependents", async (uriArg?: unknown, pos?: LspPosition, target?: unknown) => {
      const uri = toUri(uriArg);
      const client = srv.client;
      if (!uri || !pos || !client || !srv.isRunning()) {
        void vscode.window.showWarningMessage("dfd: cannot list dependents: the language server is not running.");
        return;
      }
      const name = toTarget(target) ?? "this action";
      try {
        const result = await client.sendRequest("textDocument/references", {
          textDocument: { uri: uri.toString() },
          position: pos,
          context: { includeDeclaration: false },
        });
        const locations = (await client.protocol2CodeConverter.asReferences(result as never)) ?? [];
        if (locations.length === 0) {
          void vscode.window.showInformationMessage(`dfd: no dependents of ${name}.`);
          return;
        }
        await vscode.commands.executeCommand(
          "editor.action.showReferences",
          uri,
          new vscode.Position(pos.line, pos.character),
          locations,
        );
      } catch (err) {
        void vscode.window.showErrorMessage(`dfd: listing the dependents of ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!needsRestart((s) => e.affectsConfiguration(s))) return;
      const choice = await vscode.window.showInformationMessage(
        "dfd.path changed. Restart the dfd server to use it?",
        "Restart server",
      );
      if (choice === "Restart server") {
        await srv.restart();
      }
    }),
  );

  // Not awaited: activation (and the commands) must not wait for the server.
  void srv.start();
}

export async function deactivate(): Promise<void> {
  if (server) {
    await server.stop();
    server = undefined;
  }
}

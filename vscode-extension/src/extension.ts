// Entry point of the Dataform (dfd) extension: starts the dfd language
// server and wires the commands, the status bar, the compiled preview and
// the dependency graph.
import * as vscode from "vscode";
import { showChanges } from "./changes";
import { GraphPanel } from "./graphPanel";
import { showLineage } from "./lineage";
import { isPreviewable, PreviewPanel } from "./previewPanel";
import { RowsPanel } from "./rowsPanel";
import { consoleTableUrl, consoleUrl } from "./rowsView";
import { cliFor, runCommandLine, RunRequest } from "./runCli";
import type { PreviewResult } from "./protocol_gen";
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
  const rows = new RowsPanel(context, srv);
  context.subscriptions.push(output, srv, status, preview, graph, rows);

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
    // Data previews and BigQuery's console (code lenses with the BigQuery
    // metadata source, and the command palette on the action at the cursor).
    vscode.commands.registerCommand("dfd.previewData", (uriArg?: unknown, target?: unknown, source?: unknown) =>
      previewData(rows, uriArg, target, source === "table" ? "table" : "query"),
    ),
    vscode.commands.registerCommand("dfd.previewTableData", () => previewData(rows, undefined, undefined, "table")),
    vscode.commands.registerCommand("dfd.openInBigQuery", (uriArg?: unknown, target?: unknown) => openInBigQuery(srv, uriArg, target)),
    vscode.commands.registerCommand("dfd.openQueryInBigQuery", (uriArg?: unknown, target?: unknown) => openQueryInBigQuery(srv, uriArg, target)),
    // Runs delegated to the project's official CLI, in a terminal.
    vscode.commands.registerCommand("dfd.runAction", (uriArg?: unknown, target?: unknown) => runWithCli(srv, uriArg, target, "action")),
    vscode.commands.registerCommand("dfd.runActionWithDeps", (uriArg?: unknown, target?: unknown) => runWithCli(srv, uriArg, target, "deps")),
    vscode.commands.registerCommand("dfd.runTag", (uriArg?: unknown, target?: unknown) => runWithCli(srv, uriArg, target, "tag")),
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

async function previewData(rows: RowsPanel, uriArg: unknown, target: unknown, source: "query" | "table"): Promise<void> {
  let uri = toUri(uriArg);
  let position: vscode.Position | undefined;
  const editor = vscode.window.activeTextEditor;
  if (!uri) {
    if (!editor || !isPreviewable(editor.document)) {
      void vscode.window.showInformationMessage("Dataform: open a .sqlx or .js file of a Dataform project to preview its data.");
      return;
    }
    uri = editor.document.uri;
    position = editor.selection.active;
  }
  await rows.show({ uri, action: toTarget(target), position, source });
}

/** The action of a code lens, else the one at the cursor of the active file (the file's first when it defines one). */
async function pickAction(srv: ServerManager, uriArg: unknown, target: unknown, jit: boolean): Promise<PreviewResult["actions"][number] | undefined> {
  const uri = toUri(uriArg) ?? vscode.window.activeTextEditor?.document.uri;
  if (!uri || !srv.isRunning()) {
    void vscode.window.showInformationMessage("Dataform: open a .sqlx or .js file of a Dataform project (with the dfd server running) first.");
    return undefined;
  }
  const r = await srv.sendRequest<PreviewResult>("dfd/preview", { textDocument: { uri: uri.toString() }, jit });
  const name = toTarget(target);
  const actions = r.actions ?? [];
  const found = name ? actions.find((a) => targetString(a.target) === name) : undefined;
  if (found || actions.length === 1) return found ?? actions[0];
  if (actions.length === 0) {
    void vscode.window.showInformationMessage("Dataform: this file defines no action.");
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(actions.map((a) => ({ label: targetString(a.target), action: a })), { placeHolder: "Which action?" });
  return pick?.action;
}

async function openInBigQuery(srv: ServerManager, uriArg: unknown, target: unknown): Promise<void> {
  const t = target && typeof target === "object" ? (target as Target) : (await pickAction(srv, uriArg, target, false))?.target;
  if (!t || !t.schema) return;
  await vscode.env.openExternal(vscode.Uri.parse(consoleTableUrl(t.database, t.schema, t.name), true));
}

async function openQueryInBigQuery(srv: ServerManager, uriArg: unknown, target: unknown): Promise<void> {
  const a = await pickAction(srv, uriArg, target, true);
  if (!a) return;
  const sql = a.jitPreview?.sql ?? a.sql;
  const text = (sql?.query || (sql?.queries ?? []).join(";\n") || "").trim();
  if (!text) {
    void vscode.window.showInformationMessage(`Dataform: ${targetString(a.target)} has no compiled query.`);
    return;
  }
  // BigQuery's console takes no query in its URL: the SQL goes to the
  // clipboard, to paste into a new query tab.
  await vscode.env.clipboard.writeText(text);
  await vscode.env.openExternal(vscode.Uri.parse(consoleUrl(a.target.database), true));
  void vscode.window.showInformationMessage(`Dataform: the compiled SQL of ${targetString(a.target)} is on the clipboard: paste it into a new query in BigQuery's console.`);
}

/**
 * Runs the action at hand (or one of its tags) with the project's own
 * `dataform run` in a terminal, after the user confirmed: dfd itself never
 * executes pipelines.
 */
async function runWithCli(srv: ServerManager, uriArg: unknown, target: unknown, what: "action" | "deps" | "tag"): Promise<void> {
  const uri = toUri(uriArg) ?? vscode.window.activeTextEditor?.document.uri;
  if (!uri || !srv.isRunning()) {
    void vscode.window.showInformationMessage("Dataform: open a file of a Dataform project (with the dfd server running) first.");
    return;
  }
  const r = await srv.sendRequest<PreviewResult>("dfd/preview", { textDocument: { uri: uri.toString() }, jit: false });
  const a = await pickAction(srv, uri, target, false);
  if (!a) return;
  const req: RunRequest = { cli: [] };
  if (what === "tag") {
    const tags = [...new Set((r.actions ?? []).flatMap((x) => x.tags ?? []))];
    const tag = tags.length
      ? await vscode.window.showQuickPick(tags, { placeHolder: "Run the actions with which tag?" })
      : await vscode.window.showInputBox({ prompt: "Run the actions with tag" });
    if (!tag) return;
    req.tags = [tag];
  } else {
    req.actions = [targetString(a.target)];
    req.includeDeps = what === "deps";
  }
  const root = vscode.Uri.parse(r.project);
  let local = false;
  try {
    await vscode.workspace.fs.stat(vscode.Uri.joinPath(root, "node_modules", ".bin", "dataform"));
    local = true;
  } catch {
    local = false;
  }
  req.cli = cliFor(local, r.coreVersion);
  const line = runCommandLine(req);
  const ok = await vscode.window.showWarningMessage(
    `Run \`${line}\`? The official Dataform CLI executes it in BigQuery (dfd does not run pipelines itself).`,
    { modal: true },
    "Run",
  );
  if (ok !== "Run") return;
  const term = vscode.window.createTerminal({ name: "Dataform run", cwd: root });
  term.show();
  term.sendText(line);
}

export async function deactivate(): Promise<void> {
  if (server) {
    await server.stop();
    server = undefined;
  }
}

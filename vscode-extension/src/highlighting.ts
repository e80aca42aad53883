// Which documents take dfd's semantic tokens in VS Code.
//
// dfd answers textDocument/semanticTokens for .sqlx and for a project's .js
// files, so that editors without a grammar (Neovim, Helix, Zed) highlight
// them. In VS Code a .js file already has TypeScript's semantic tokens,
// which know types and scopes; VS Code shows the first provider's answer,
// so dfd's plainer tokens would replace them. The extension therefore asks
// dfd only for SQLX, where its tokens add to the extension's grammar
// (BigQuery's functions as library functions, Dataform's built-ins).
export function takesServerTokens(languageId: string): boolean {
  return languageId === "sqlx";
}

-- dfd.config: the plugin's options, from require("dfd").setup(opts).
-- :help dfd-configuration documents each one.
local M = {}

M.defaults = {
  -- How to start the server: dfd on PATH, or its full path.
  cmd = { "dfd", "serve" },
  -- Start dfd when a buffer of a Dataform project opens with one of these
  -- filetypes. false: start it yourself (vim.lsp.enable("dfd") on 0.11+,
  -- nvim-lspconfig, or require("dfd").start()).
  autostart = true,
  filetypes = { "sqlx", "javascript", "yaml", "json" },
  -- What makes a directory a Dataform project.
  root_markers = { "workflow_settings.yaml", "dataform.json" },
  -- dfd's settings (lsp/PROTOCOL.md, nested by their dots), or a function
  -- of the project root returning them: per-project settings.
  settings = {},
  -- An offline snapshot, relative to the project root, used as the
  -- metadata source when the file exists and the settings name no source.
  -- Without it, the server's default applies (no metadata source).
  snapshot = "metadata.json",
  -- Buffer-local mappings on attach (:help dfd-keymaps): false, true, or a
  -- table { lhs = false | "other lhs" } to change some.
  keymaps = false,
  -- Show dfd's code lenses (refreshed on entering a buffer, leaving Insert
  -- mode and writing); :help dfd-codelens.
  codelens = true,
  preview = {
    -- Refresh open previews on every compile, also of unsaved edits
    -- (false: when the file is saved, or changes on disk).
    update_while_typing = false,
  },
  -- Called as on_attach(client, bufnr) after dfd attaches to a buffer.
  on_attach = nil,
  -- Client capabilities, passed to the client as they are.
  capabilities = nil,
}

M.options = vim.deepcopy(M.defaults)

-- Lists replace the defaults whole (vim.tbl_deep_extend would merge a
-- shorter cmd into the longer default one, index by index).
local lists = { cmd = true, filetypes = true, root_markers = true }

function M.set(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("dfd.setup: options must be a table, got " .. type(opts), 2)
  end
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  for key in pairs(lists) do
    if opts[key] ~= nil then
      merged[key] = vim.deepcopy(opts[key])
    end
  end
  if type(merged.cmd) == "string" then
    merged.cmd = { merged.cmd, "serve" }
  end
  M.options = merged
  return merged
end

return M

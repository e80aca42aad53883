-- dfd's Neovim plugin, every option at its default: copy what you change
-- into your init.lua. Calling setup() is optional. See :help dfd-configuration.
require("dfd").setup({
  cmd = { "dfd", "serve" }, -- or { "/path/to/dfd", "serve" }
  autostart = true, -- start dfd for buffers of Dataform projects
  filetypes = { "sqlx", "javascript", "yaml", "json" },
  root_markers = { "workflow_settings.yaml", "dataform.json" },
  -- dfd's settings (lsp/PROTOCOL.md), nested by their dots, or a function
  -- function(root) returning them for each project.
  settings = {},
  -- Metadata source when settings name none: this snapshot (relative to
  -- the project root) if the file exists, else the server's default (none).
  snapshot = "metadata.json",
  keymaps = false, -- true: K, gd, gr, <leader>rn, <leader>dp, … (:help dfd-keymaps)
  codelens = true, -- show code lenses (run one with vim.lsp.codelens.run())
  preview = { update_while_typing = false }, -- :DfdPreview follows saves
  on_attach = nil, -- function(client, bufnr), after dfd attaches
  capabilities = nil,
})

-- dfd as an nvim-lspconfig server (nvim-lspconfig does not ship dfd, so it
-- is registered as a custom server first). Needs the nvim-lspconfig plugin.
vim.filetype.add({ extension = { sqlx = "sqlx" } })

local configs = require("lspconfig.configs")
local util = require("lspconfig.util")
if not configs.dfd then
  configs.dfd = {
    default_config = {
      cmd = { "dfd", "serve" },
      filetypes = { "sqlx", "javascript", "yaml", "json" },
      -- Only buffers inside a Dataform project start (or join) dfd.
      root_dir = util.root_pattern("workflow_settings.yaml", "dataform.json"),
      single_file_support = false,
    },
  }
end
require("lspconfig").dfd.setup({
  -- Settings: see lsp/PROTOCOL.md.
  init_options = { dfd = { metadata = { source = "snapshot", snapshot = "metadata.json" } } },
})

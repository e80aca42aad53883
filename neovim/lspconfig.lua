-- dfd as an nvim-lspconfig server (nvim-lspconfig does not ship dfd, so it
-- is registered as a custom server first). Needs the nvim-lspconfig plugin.
if vim.fn.has("nvim-0.8") == 1 then
  vim.filetype.add({ extension = { sqlx = "sqlx" } })
else
  -- 0.7 reads vim.filetype.add() mappings only when g:do_filetype_lua is
  -- set before startup: the same mapping, the Vim way.
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, { pattern = "*.sqlx", command = "setfiletype sqlx" })
end

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

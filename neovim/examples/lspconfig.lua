-- dfd as an nvim-lspconfig server, with the dfd plugin installed for its
-- commands, code lenses, settings and metadata source (nvim-lspconfig does
-- not ship dfd, so it is registered as a custom server first).
require("dfd").setup({ autostart = false }) -- lspconfig starts it instead

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
  before_init = require("dfd").before_init, -- settings and metadata source
  on_attach = require("dfd").on_attach, -- omnifunc and keymaps (Neovim 0.7)
})

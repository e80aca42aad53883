-- dfd for Neovim 0.11+'s vim.lsp.config / vim.lsp.enable("dfd"), with this
-- plugin on the runtimepath. Starts only inside a Dataform project; the
-- settings and metadata source come from require("dfd").setup().
-- Set setup({ autostart = false }) when you use this, so that only
-- vim.lsp.enable starts dfd.
local dfd = require("dfd")
local config = require("dfd.config")

return {
  cmd = config.options.cmd,
  filetypes = config.options.filetypes,
  root_dir = function(bufnr, on_dir)
    local root = dfd.root_of(bufnr)
    if root then
      on_dir(root)
    end
  end,
  handlers = dfd.handlers(),
  before_init = dfd.before_init,
  on_attach = dfd.on_attach,
}

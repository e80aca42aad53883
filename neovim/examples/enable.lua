-- Neovim 0.11+: dfd started by vim.lsp.enable from the plugin's lsp/dfd.lua
-- (vim.lsp.config("dfd", { … }) changes it), not by the plugin itself.
require("dfd").setup({ autostart = false })
vim.lsp.enable("dfd")

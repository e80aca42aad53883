-- dfd for Neovim 0.8+ with the built-in client only (no plugins).
-- Put this in your init.lua, or save it as ~/.config/nvim/plugin/dfd.lua.
vim.filetype.add({ extension = { sqlx = "sqlx" } })

-- The Dataform project of a buffer: the nearest directory upwards that has
-- workflow_settings.yaml (or dataform.json, for older projects).
local function dataform_root(bufnr)
  local dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":p:h")
  for _, marker in ipairs({ "workflow_settings.yaml", "dataform.json" }) do
    local found = vim.fn.findfile(marker, dir .. ";")
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h")
    end
  end
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = { "sqlx", "javascript", "yaml", "json" },
  callback = function(args)
    local root = dataform_root(args.buf)
    if not root then
      return -- not in a Dataform project
    end
    vim.lsp.start({
      name = "dfd",
      cmd = { "dfd", "serve" },
      root_dir = root,
      -- Settings: see lsp/PROTOCOL.md. A relative snapshot path is relative
      -- to the project root.
      init_options = { dfd = { metadata = { source = "snapshot", snapshot = "metadata.json" } } },
    })
  end,
})

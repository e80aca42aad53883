-- dfd for Neovim's built-in client only (no plugins): Neovim 0.8+, and 0.7
-- (what Debian 12 installs), which lacks vim.lsp.start.
-- Put this in your init.lua, or save it as ~/.config/nvim/plugin/dfd.lua.
if vim.fn.has("nvim-0.8") == 1 then
  vim.filetype.add({ extension = { sqlx = "sqlx" } })
else
  -- 0.7 reads vim.filetype.add() mappings only when g:do_filetype_lua is
  -- set before startup: the same mapping, the Vim way.
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, { pattern = "*.sqlx", command = "setfiletype sqlx" })
end

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

-- Starts dfd for the buffer, or attaches it to the client already running
-- for its project: vim.lsp.start where it exists (0.8+), else what it does.
local function start(config, bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config)
  end
  for _, client in pairs(vim.lsp.get_active_clients()) do
    if client.name == config.name and client.config.root_dir == config.root_dir and not client.is_stopped() then
      vim.lsp.buf_attach_client(bufnr, client.id)
      return client.id
    end
  end
  local id = vim.lsp.start_client(config)
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = { "sqlx", "javascript", "yaml", "json" },
  callback = function(args)
    local root = dataform_root(args.buf)
    if not root then
      return -- not in a Dataform project
    end
    start({
      name = "dfd",
      cmd = { "dfd", "serve" },
      root_dir = root,
      -- Settings: see lsp/PROTOCOL.md. A relative snapshot path is relative
      -- to the project root.
      init_options = { dfd = { metadata = { source = "snapshot", snapshot = "metadata.json" } } },
    }, args.buf)
  end,
})

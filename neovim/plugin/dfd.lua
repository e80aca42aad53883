-- dfd's Neovim plugin (Neovim 0.7+, no dependencies): the sqlx filetype,
-- the :Dfd… commands, handlers for dfd's code lenses and notifications,
-- and `dfd serve` started for the buffers of Dataform projects.
-- Options: require("dfd").setup({ … }), before or after this file runs.
-- :help dfd
if vim.g.loaded_dfd then
  return
end
vim.g.loaded_dfd = true

if vim.fn.has("nvim-0.8") == 1 then
  vim.filetype.add({ extension = { sqlx = "sqlx" } })
else
  -- 0.7 reads vim.filetype.add() mappings only when g:do_filetype_lua is
  -- set before startup: the same mapping, the Vim way.
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, { pattern = "*.sqlx", command = "setfiletype sqlx" })
end

local function command(name, module, fn, opts)
  opts = opts or {}
  vim.api.nvim_create_user_command(name, function(args)
    require(module)[fn](args)
  end, opts)
end
command("DfdPreview", "dfd.preview", "command", { desc = "dfd: compiled or JiT SQL of the action under the cursor" })
command("DfdGraph", "dfd.graph", "command", { nargs = "?", desc = "dfd: upstream and downstream of this file's actions [depth]" })
command("DfdLineage", "dfd.lineage", "command", { nargs = "?", desc = "dfd: lineage of the column under the cursor [column]" })
command("DfdStatus", "dfd.status", "command", { desc = "dfd: status of each project" })
command("DfdRefreshMetadata", "dfd.status", "refresh", { desc = "dfd: read the metadata source again" })
command("DfdRows", "dfd.rows", "command", {
  nargs = "?", complete = function() return { "query", "table" } end,
  desc = "dfd: rows of the action under the cursor: its query's, or [table] its built table's",
})
command("DfdCost", "dfd.cost", "command", { desc = "dfd: cost of one run of the action under the cursor and of the project" })

-- Code lens commands (vim.lsp.codelens.run) and dfd/previewChanged, for
-- every dfd client, however it was started.
require("dfd.codelens").register()
if vim.lsp.handlers["dfd/previewChanged"] == nil then
  vim.lsp.handlers["dfd/previewChanged"] = function(_, result, ctx)
    require("dfd.preview").on_changed(result, ctx)
    require("dfd").on_compiled(ctx)
  end
end

local group = vim.api.nvim_create_augroup("dfd", { clear = true })
vim.api.nvim_create_autocmd("FileType", {
  group = group,
  callback = function(args)
    local dfd = require("dfd")
    local o = require("dfd.config").options
    if not o.autostart or not vim.tbl_contains(o.filetypes, args.match) then
      return
    end
    dfd.start(args.buf)
  end,
})
vim.api.nvim_create_autocmd("BufWritePost", {
  group = group,
  callback = function(args)
    if next(require("dfd.preview").views) then
      require("dfd.preview").on_write(args.buf)
    end
  end,
})
if vim.fn.has("nvim-0.8") == 1 then
  -- omnifunc and keymaps for clients this plugin did not start
  -- (vim.lsp.enable, nvim-lspconfig). 0.7 has no LspAttach: pass
  -- on_attach = require("dfd").on_attach there.
  vim.api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == "dfd" then
        require("dfd").on_attach(client, args.buf)
      end
    end,
  })
end

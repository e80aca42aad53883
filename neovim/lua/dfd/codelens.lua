-- dfd.codelens: the client-side commands that dfd's code lenses name
-- (lsp/code_lens.go), registered in vim.lsp.commands so that
-- vim.lsp.codelens.run() runs them: "Preview SQL" and "⚡ JiT"
-- (dfd.showPreview) open :DfdPreview's view of that action, "N dependents"
-- (dfd.showDependents) lists them in the quickfix list; with the BigQuery
-- metadata source, "Preview data" (dfd.previewData) opens :DfdRows's view
-- of the action and "Open in BigQuery" (dfd.openInBigQuery) opens its
-- table in BigQuery's console (vim.ui.open, 0.10+) or, before 0.10, puts
-- the address in the unnamed register and says it.
local dfd = require("dfd")

local M = {}

local function client_of(ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    dfd.notify("the client of this code lens has stopped", vim.log.levels.WARN)
  end
  return client
end

M.commands = {
  -- arguments: the file's URI, the action's target.
  ["dfd.showPreview"] = function(command, ctx)
    local client = client_of(ctx)
    if client then
      require("dfd.preview").show(client, command.arguments[1], command.arguments[2])
    end
  end,
  -- arguments: the file's URI, the action's target, "query" or "table".
  ["dfd.previewData"] = function(command)
    local t = command.arguments[2] or {}
    local name = table.concat(vim.tbl_filter(function(x) return x and x ~= "" end, { t.database, t.schema, t.name }), ".")
    require("dfd.rows").show(command.arguments[3] == "table" and "table" or "query", false, name)
  end,
  -- arguments: the file's URI, the action's target.
  ["dfd.openInBigQuery"] = function(command)
    local url = require("dfd.rows").table_url(command.arguments[2] or {})
    if vim.ui.open then
      vim.ui.open(url)
    else
      vim.fn.setreg('"', url)
      dfd.notify(url .. " (in the unnamed register)")
    end
  end,
  -- arguments: the file's URI, the position of the action, its target.
  ["dfd.showDependents"] = function(command, ctx)
    local client = client_of(ctx)
    if not client then
      return
    end
    local uri, position = command.arguments[1], command.arguments[2]
    local params = { textDocument = { uri = uri }, position = position, context = { includeDeclaration = false } }
    dfd.request(client, "textDocument/references", params, function(err, result)
      if err then
        dfd.notify("references: " .. tostring(err.message or err), vim.log.levels.ERROR)
        return
      end
      if not result or #result == 0 then
        dfd.notify("no dependents")
        return
      end
      local target = command.arguments[3] or {}
      vim.fn.setqflist({}, " ", {
        title = "dfd: dependents of " .. tostring(target.name or uri),
        items = vim.lsp.util.locations_to_items(result, client.offset_encoding),
      })
      vim.cmd("copen")
    end, ctx.bufnr)
  end,
}

-- register installs the commands (once; a user's own handler is kept).
function M.register()
  for name, fn in pairs(M.commands) do
    if vim.lsp.commands[name] == nil then
      vim.lsp.commands[name] = fn
    end
  end
end

return M

-- dfd.codelens: the client-side commands that dfd's code lenses name
-- (lsp/code_lens.go), registered in vim.lsp.commands so that
-- vim.lsp.codelens.run() runs them: "Preview SQL" and "⚡ JiT"
-- (dfd.showPreview) open :DfdPreview's view of that action, "N dependents"
-- (dfd.showDependents) lists them in the quickfix list.
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

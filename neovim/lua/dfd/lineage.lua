-- dfd.lineage: :DfdLineage [column], where the output column under the
-- cursor (or the one named, else every column) comes from (dfd/lineage);
-- <CR> on a table opens the file that defines it.
local dfd = require("dfd")
local view = require("dfd.view")
local get = view.get

local M = {}

function M.render(result)
  local lines, targets = {}, {}
  local function add(text, location)
    table.insert(lines, text)
    if location and get(location, "uri") then
      local start = location.range and location.range.start or {}
      targets[#lines] = { uri = location.uri, line = start.line or 0, character = start.character or 0 }
    end
  end
  local head = "lineage of " .. (get(result, "action") or "?")
  if get(result, "column") then
    head = head .. ", column " .. result.column
  end
  add(head)
  if get(result, "reason") then
    for _, l in ipairs(view.lines("no lineage: " .. result.reason)) do add(l) end
    return lines, targets
  end
  local function refs(title, list)
    if type(list) ~= "table" or #list == 0 then
      return
    end
    add("  " .. title)
    for _, r in ipairs(list) do
      add(string.format("    %s.%s%s%s", get(r, "table") or "?", get(r, "column") or "?",
        get(r, "computed") and "  (computed)" or "", get(r, "file") and ("  " .. r.file) or ""), get(r, "location"))
    end
  end
  for _, c in ipairs(get(result, "columns") or {}) do
    add("")
    add(string.format("%s %s", get(c, "name") or "?", get(c, "type") or ""))
    refs("reads:", get(c, "direct"))
    refs("comes from:", get(c, "origins"))
    local unresolved = get(c, "unresolved")
    if type(unresolved) == "table" and #unresolved > 0 then
      add("  unresolved:")
      for _, u in ipairs(unresolved) do add("    " .. u) end
    end
  end
  return lines, targets
end

-- :DfdLineage [column]
function M.command(args)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = dfd.command_client(bufnr)
  if not client then
    return
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  if args and args.args and args.args ~= "" then
    params.column = args.args
  end
  local uri = params.textDocument.uri
  dfd.request(client, "dfd/lineage", params, function(err, result)
    if err then
      dfd.notify("dfd/lineage: " .. tostring(err.message or err), vim.log.levels.ERROR)
      return
    end
    local lines, targets = M.render(result or {})
    local buf = view.buffer("dfd://lineage/" .. vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:."), "dfdlineage")
    view.set_lines(buf, lines)
    view.set_targets(buf, targets)
    view.show(buf, true)
  end, bufnr)
end

return M

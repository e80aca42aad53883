-- dfd.cost: :DfdCost, what one run of the action under the cursor and of
-- its whole project would process and cost, from BigQuery's dry runs:
-- `cost` of dfd/preview (the action) and of dfd/status (the project).
-- Echoed, as the figures fit on two lines; never a figure dfd did not get
-- from BigQuery: "not available" with the server's reason instead.
local dfd = require("dfd")
local view = require("dfd.view")
local get = view.get

local M = {}

local function fqn(t)
  local parts = {}
  for _, k in ipairs({ "database", "schema", "name" }) do
    if get(t, k) and get(t, k) ~= "" then
      table.insert(parts, get(t, k))
    end
  end
  return table.concat(parts, ".")
end

local function same_target(a, b)
  return get(a, "name") == get(b, "name") and get(a, "schema") == get(b, "schema")
    and get(a, "database") == get(b, "database")
end

-- The words for an action's cost `status` when it has no figure (the
-- server's `reason` says more).
local why = {
  upstreamNotBuilt = "upstream not built",
  sqlError = "BigQuery refused the SQL",
  unavailable = "BigQuery's dry run failed",
  unknown = "its JiT code did not run",
}

-- project_line is the project's total from dfd/status's `cost` (nil: the
-- figures of its latest compile are not known yet).
local function project_line(pc)
  if pc == nil then
    return "project: no figures yet (BigQuery's dry runs of the latest compile have not answered, or dfd.cost.enabled is false)"
  end
  if not get(pc, "available") then
    return "project: not available: " .. (get(pc, "reason") or "no reason given")
  end
  -- The label says how many actions have no figure, if any.
  return "project: " .. (get(pc, "label") or "?")
end

-- render turns the figures into the lines :DfdCost echoes: action is the
-- dfd/preview action (nil when the file defines none), pc the project's
-- dfd/status `cost`, project_known whether dfd/status had the project.
function M.render(action, pc, project_known)
  local lines = {}
  if action == nil then
    table.insert(lines, "this file defines no action")
  else
    local name = fqn(get(action, "target"))
    local ac = get(action, "cost")
    if ac == nil then
      if pc ~= nil and not get(pc, "available") then
        table.insert(lines, name .. ": not available: " .. (get(pc, "reason") or "no reason given"))
      else
        table.insert(lines, name .. ": no figure yet (BigQuery's dry runs of this compile have not answered, or dfd.cost.enabled is false)")
      end
    elseif get(ac, "status") ~= "estimated" then
      local s = name .. ": not available: " .. (why[get(ac, "status")] or tostring(get(ac, "status")))
      if get(ac, "reason") and ac.reason ~= "" then
        s = s .. " (" .. ac.reason .. ")"
      end
      table.insert(lines, s)
    else
      local s = name .. ": " .. (get(ac, "label") or "?")
      if not get(ac, "inTotal") then
        s = s .. " (not in the project's total: " .. (get(action, "type") == "view" and "a view bills nothing" or "no figure") .. ")"
      end
      table.insert(lines, s)
    end
  end
  if project_known then
    table.insert(lines, project_line(pc))
  else
    table.insert(lines, "project: dfd/status does not know it yet")
  end
  return lines
end

-- pick is the action of a dfd/preview result that target names, else the
-- first.
local function pick(result, target)
  local actions = get(result, "actions") or {}
  for _, a in ipairs(actions) do
    if target and same_target(get(a, "target"), target) then
      return a
    end
  end
  return actions[1]
end

-- project_cost finds the project of root in a dfd/status result: its
-- `cost` and whether it is there.
local function project_cost(status, root)
  for _, p in ipairs(get(status, "projects") or {}) do
    if root and vim.uri_to_fname(p.root) == root then
      return get(p, "cost"), true
    end
  end
  return nil, false
end

-- :DfdCost
function M.command()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = dfd.command_client(bufnr)
  if not client then
    return
  end
  local root = dfd.root_of(bufnr)
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local uri = vim.uri_from_bufnr(bufnr)
  require("dfd.preview").action_at(client, bufnr, line, function(target)
    -- dfd/preview waits for the compile of every edit sent before it; its
    -- `cost` is of that compile or absent, never an older text's.
    dfd.request(client, "dfd/preview", { textDocument = { uri = uri } }, function(err, result)
      if err then
        dfd.notify("dfd/preview: " .. tostring(err.message or err), vim.log.levels.ERROR)
        return
      end
      if get(result, "error") and #(get(result, "actions") or {}) == 0 then
        dfd.notify("cost: the project could not be compiled: " .. result.error, vim.log.levels.WARN)
        return
      end
      local action = pick(result, target)
      dfd.request(client, "dfd/status", vim.NIL, function(serr, status)
        if serr then
          dfd.notify("dfd/status: " .. tostring(serr.message or serr), vim.log.levels.ERROR)
          return
        end
        local pc, known = project_cost(status, root)
        M.last = M.render(action, pc, known)
        dfd.notify("cost of one run (BigQuery's dry run)\n" .. table.concat(M.last, "\n"))
      end, bufnr)
    end, bufnr)
  end)
end

return M

-- dfd.status: :DfdStatus (dfd/status of every dfd client: each project's
-- core, compile, workers and metadata source, and why that source) and
-- :DfdRefreshMetadata (dfd/refreshMetadata).
local dfd = require("dfd")
local view = require("dfd.view")
local get = view.get

local M = {}

-- render turns one client's dfd/status result into lines.
function M.render(result)
  local lines = {}
  table.insert(lines, string.format("dfd %s", get(result, "serverVersion") or "?"))
  local projects = get(result, "projects") or {}
  if #projects == 0 then
    table.insert(lines, "no Dataform project open yet")
  end
  for _, p in ipairs(projects) do
    local root = vim.uri_to_fname(p.root)
    table.insert(lines, "")
    table.insert(lines, "project " .. root)
    table.insert(lines, string.format("  core %s, %d actions, compiled version %s of %s%s",
      get(p, "coreVersion") or "?", get(p, "actions") or 0, tostring(get(p, "compiledVersion") or "?"),
      tostring(get(p, "version") or "?"), get(p, "compileMs") and string.format(" in %.0f ms", p.compileMs) or ""))
    if get(p, "deferredEdits") then
      table.insert(lines, "  edits wait for a save (dfd.compileAsYouType is off)")
    end
    local w = get(p, "workers")
    if w then
      table.insert(lines, string.format("  workers: %d ready, %d busy, %d total", w.ready or 0, w.busy or 0, w.total or 0))
    else
      table.insert(lines, "  workers: none (in-process)")
    end
    local m = get(p, "metadata")
    if m then
      local s = string.format("  metadata: %s, %s", get(m, "source") or "?", get(m, "state") or "?")
      if get(m, "detail") and m.detail ~= "" then
        s = s .. ": " .. m.detail
      end
      vim.list_extend(lines, view.lines(s))
    end
    local chosen = dfd.projects[root]
    if chosen then
      table.insert(lines, "  metadata source chosen by the plugin: " .. chosen.choice)
    end
    if get(p, "error") then
      vim.list_extend(lines, view.lines("  error: " .. p.error))
    end
  end
  if (get(result, "invariantViolations") or 0) > 0 then
    table.insert(lines, "")
    table.insert(lines, string.format("internal errors recovered: %d (please report them)", result.invariantViolations))
  end
  return lines
end

-- :DfdStatus
function M.command()
  local clients = dfd.clients()
  if #clients == 0 then
    dfd.notify("dfd is not running (open a file of a Dataform project)", vim.log.levels.WARN)
    return
  end
  local buf = view.buffer("dfd://status", "dfdstatus")
  local parts, pending = {}, #clients
  for i, client in ipairs(clients) do
    dfd.request(client, "dfd/status", vim.NIL, function(err, result)
      if err then
        parts[i] = view.lines("dfd/status failed: " .. tostring(err.message or err))
      else
        parts[i] = M.render(result or {})
      end
      pending = pending - 1
      if pending == 0 then
        local lines = {}
        for j = 1, #clients do
          if j > 1 then table.insert(lines, "") end
          vim.list_extend(lines, parts[j] or {})
        end
        view.set_lines(buf, lines)
        view.show(buf, true)
      end
    end)
  end
end

-- :DfdRefreshMetadata: reads the metadata source of the current buffer's
-- project again (every project without one), then previews refresh.
function M.refresh()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = dfd.command_client(bufnr)
  if not client then
    return
  end
  local root = dfd.root_of(bufnr)
  local params = root and { uri = vim.uri_from_fname(root) } or vim.NIL
  dfd.request(client, "dfd/refreshMetadata", params, function(err, result)
    if err then
      dfd.notify("dfd/refreshMetadata: " .. tostring(err.message or err), vim.log.levels.ERROR)
      return
    end
    for _, p in ipairs(get(result, "projects") or {}) do
      if get(p, "error") then
        dfd.notify(string.format("metadata of %s (%s): %s", vim.uri_to_fname(p.root), p.source or "?", p.error), vim.log.levels.ERROR)
      else
        dfd.notify(string.format("metadata of %s (%s): %d refreshed", vim.uri_to_fname(p.root), p.source or "?", p.refreshed or 0))
      end
    end
  end, bufnr)
end

return M

-- dfd.graph: :DfdGraph, what the actions of the current file read
-- (upstream) and what reads them (downstream), transitively, as a tree
-- from dfd/graph; <CR> on an action opens its file.
local dfd = require("dfd")
local view = require("dfd.view")
local get = view.get

local M = {}

local function relpath(uri, root)
  local path = vim.uri_to_fname(uri)
  if root and vim.startswith(path, root .. "/") then
    return path:sub(#root + 2)
  end
  return path
end

-- render turns a dfd/graph project into lines and their jump targets, for
-- the actions defined in uri. depth limits the tree (nil: all of it).
function M.render(project, uri, depth)
  local root = get(project, "root") and vim.uri_to_fname(project.root) or nil
  local by_name, up, down = {}, {}, {}
  for _, a in ipairs(get(project, "actions") or {}) do
    by_name[a.name] = a
  end
  for _, e in ipairs(get(project, "edges") or {}) do
    up[e.from] = up[e.from] or {}
    table.insert(up[e.from], e.to)
    down[e.to] = down[e.to] or {}
    table.insert(down[e.to], e.from)
  end
  for _, list in pairs(up) do table.sort(list) end
  for _, list in pairs(down) do table.sort(list) end

  local lines, targets = {}, {}
  local function label(name)
    local a = by_name[name]
    if not a then
      return name .. "  (not in the project)"
    end
    local flags = { get(a, "type") or "?" }
    if get(a, "jit") then table.insert(flags, "JiT") end
    if get(a, "disabled") then table.insert(flags, "disabled") end
    local s = string.format("%s  (%s)", get(get(a, "target"), "name") or name, table.concat(flags, ", "))
    if get(a, "uri") then
      s = s .. "  " .. relpath(a.uri, root)
    end
    return s
  end
  local function add(text, name)
    table.insert(lines, text)
    local a = name and by_name[name]
    if a and get(a, "uri") then
      targets[#lines] = { uri = a.uri, line = 0, character = 0 }
    end
  end
  local function tree(name, edges, indent, level, path)
    for _, next_name in ipairs(edges[name] or {}) do
      if path[next_name] then
        add(indent .. label(next_name) .. "  (cycle)", next_name)
      else
        add(indent .. label(next_name), next_name)
        if not depth or level < depth then
          path[next_name] = true
          tree(next_name, edges, indent .. "  ", level + 1, path)
          path[next_name] = nil
        end
      end
    end
  end

  local mine = {}
  for _, a in ipairs(get(project, "actions") or {}) do
    if get(a, "uri") == uri then
      table.insert(mine, a.name)
    end
  end
  table.sort(mine)
  if get(project, "error") then
    for _, l in ipairs(view.lines("error: " .. project.error)) do add(l) end
  end
  if #mine == 0 then
    add("this file defines no action")
  end
  for i, name in ipairs(mine) do
    if i > 1 then add("") end
    add(label(name), name)
    add("  upstream (what it reads):")
    if not up[name] then add("    (nothing)") end
    tree(name, up, "    ", 1, { [name] = true })
    add("  downstream (what reads it):")
    if not down[name] then add("    (nothing)") end
    tree(name, down, "    ", 1, { [name] = true })
  end
  return lines, targets
end

-- :DfdGraph [depth]
function M.command(args)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = dfd.command_client(bufnr)
  if not client then
    return
  end
  local depth = tonumber(args and args.args or "")
  local uri = vim.uri_from_bufnr(bufnr)
  dfd.request(client, "dfd/graph", { uri = uri }, function(err, result)
    if err then
      dfd.notify("dfd/graph: " .. tostring(err.message or err), vim.log.levels.ERROR)
      return
    end
    local project = (get(result, "projects") or {})[1]
    local lines, targets = M.render(project or {}, uri, depth)
    local buf = view.buffer("dfd://graph/" .. vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:."), "dfdgraph")
    view.set_lines(buf, lines)
    view.set_targets(buf, targets)
    view.show(buf, true)
  end, bufnr)
end

return M

-- dfd.preview: :DfdPreview, the compiled (or JiT) SQL of the action under
-- the cursor (dfd/preview) in a scratch split with filetype sql, refreshed
-- when the server announces a new compile (dfd/previewChanged).
local dfd = require("dfd")
local config = require("dfd.config")
local view = require("dfd.view")
local get = view.get

local M = {}

-- views[preview buffer] = { uri, target (nil: every action of the file),
-- client_id, seq (the latest request; older answers are dropped), stale }
M.views = {}

local function same_target(a, b)
  return get(a, "name") == get(b, "name") and get(a, "schema") == get(b, "schema")
    and get(a, "database") == get(b, "database")
end

local function fqn(t)
  local parts = {}
  for _, k in ipairs({ "database", "schema", "name" }) do
    if get(t, k) and get(t, k) ~= "" then
      table.insert(parts, get(t, k))
    end
  end
  return table.concat(parts, ".")
end

-- Adds the statements of a compiled or JiT `sql` object, each ending in ";".
local function add_sql(lines, sql)
  local function stmts(title, list)
    if type(list) ~= "table" or #list == 0 then
      return
    end
    if title then
      table.insert(lines, "-- " .. title)
    end
    for _, stmt in ipairs(list) do
      local text = vim.trim(tostring(stmt))
      if text ~= "" then
        vim.list_extend(lines, view.lines(text .. ";"))
      end
    end
  end
  local function one(s)
    return s and { s } or nil
  end
  local pre, post = get(sql, "preOps"), get(sql, "postOps")
  stmts(pre and "pre-operations" or nil, pre)
  stmts(pre and "query" or nil, one(get(sql, "query")))
  stmts("post-operations", post)
  if get(sql, "incrementalQuery") then
    stmts("incremental pre-operations", get(sql, "incrementalPreOps"))
    stmts("incremental query", one(get(sql, "incrementalQuery")))
    stmts("incremental post-operations", get(sql, "incrementalPostOps"))
  end
  stmts(nil, get(sql, "queries"))
end

local function comment(lines, text)
  for _, l in ipairs(view.lines(text)) do
    table.insert(lines, "-- " .. l)
  end
end

-- render turns a dfd/preview result into the lines of the preview buffer:
-- for each action (or the one of target), a header, what the JiT code did,
-- then its SQL.
function M.render(result, target)
  local lines = {}
  if get(result, "error") then
    comment(lines, "the project could not be compiled: " .. get(result, "error"))
  end
  local shown = 0
  for _, action in ipairs(get(result, "actions") or {}) do
    if not target or same_target(get(action, "target"), target) then
      shown = shown + 1
      if #lines > 0 then
        table.insert(lines, "")
      end
      local jp = get(action, "jitPreview")
      table.insert(lines, string.format("-- %s (%s%s%s)", fqn(get(action, "target")), get(action, "type") or "?",
        get(action, "jit") and ", JiT" or "", get(action, "disabled") and ", disabled" or ""))
      local sql = get(action, "sql")
      if jp then
        table.insert(lines, string.format("-- JiT code ran in %.1f ms", get(jp, "elapsedMs") or 0))
        table.insert(lines, "-- database calls, answered by " .. (get(jp, "adapter") or "none") .. ":")
        for _, call in ipairs(get(jp, "adapterCalls") or {}) do
          local notes = {}
          if get(call, "cached") then table.insert(notes, "cached") end
          if get(call, "dryRun") then table.insert(notes, "dry run") end
          if get(call, "error") then table.insert(notes, "error: " .. get(call, "error")) end
          comment(lines, string.format("  %s %s%s", get(call, "method") or "?", get(call, "summary") or "",
            #notes > 0 and (" (" .. table.concat(notes, "; ") .. ")") or ""))
        end
        for _, w in ipairs(get(jp, "warnings") or {}) do
          comment(lines, "warning: " .. w)
        end
        if get(jp, "error") then
          comment(lines, "JiT code failed: " .. get(jp, "error"))
        end
        sql = get(jp, "sql")
      end
      add_sql(lines, sql)
    end
  end
  if shown == 0 and not get(result, "error") then
    table.insert(lines, target and ("-- " .. fqn(target) .. " is no longer defined in this file")
      or "-- this file defines no action")
  end
  return lines
end

-- One preview per file: a lens of another action of the file reuses it.
local function preview_name(uri)
  return "dfd://preview/" .. vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:.")
end

-- refresh asks for the preview of a view again and renders the answer.
function M.refresh(buf)
  local v = M.views[buf]
  if not v or not vim.api.nvim_buf_is_valid(buf) then
    M.views[buf] = nil
    return
  end
  local client = vim.lsp.get_client_by_id(v.client_id)
  if not client then
    view.set_lines(buf, { "-- dfd stopped: run :DfdPreview again" })
    return
  end
  v.seq = v.seq + 1
  v.stale = false
  local seq = v.seq
  dfd.request(client, "dfd/preview", { textDocument = { uri = v.uri } }, function(err, result)
    if M.views[buf] ~= v or v.seq ~= seq or not vim.api.nvim_buf_is_valid(buf) then
      return -- an older request, or the view was closed
    end
    if err then
      view.set_lines(buf, view.lines("-- dfd/preview failed: " .. tostring(err.message or err)))
      return
    end
    view.set_lines(buf, M.render(result, v.target))
    v.renders = (v.renders or 0) + 1
  end)
end

-- show opens (or reuses) the preview of one action of uri (every action
-- when target is nil) and fills it.
function M.show(client, uri, target)
  local buf = view.buffer(preview_name(uri), "sql")
  local v = M.views[buf]
  if not v or v.client_id ~= client.id then
    v = { uri = uri, client_id = client.id, seq = 0 }
    M.views[buf] = v
  end
  v.target = target
  view.show(buf, false)
  M.refresh(buf)
  return buf
end

-- action_at picks the action under the cursor from dfd's code lenses (one
-- "Preview" lens per action, at the line where it is defined): the last
-- that starts at or before the cursor, else the first. cb(target or nil).
function M.action_at(client, bufnr, line, cb)
  local uri = vim.uri_from_bufnr(bufnr)
  dfd.request(client, "textDocument/codeLens", { textDocument = { uri = uri } }, function(err, lenses)
    local best, first
    for _, lens in ipairs((not err and lenses) or {}) do
      local cmd = get(lens, "command")
      if cmd and cmd.command == "dfd.showPreview" and cmd.arguments then
        local l = lens.range.start.line
        if not first or l < first.l then
          first = { l = l, target = cmd.arguments[2] }
        end
        if l <= line and (not best or l >= best.l) then
          best = { l = l, target = cmd.arguments[2] }
        end
      end
    end
    local pick = best or first
    cb(pick and pick.target or nil)
  end, bufnr)
end

-- :DfdPreview
function M.command()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = dfd.command_client(bufnr)
  if not client then
    return
  end
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local uri = vim.uri_from_bufnr(bufnr)
  M.action_at(client, bufnr, line, function(target)
    M.show(client, uri, target)
  end)
end

local function buffer_of(uri)
  local b = vim.fn.bufnr(vim.uri_to_fname(uri))
  if b ~= -1 and vim.api.nvim_buf_is_loaded(b) then
    return b
  end
end

-- on_changed handles dfd/previewChanged: previews of the files it names
-- are asked for again, unless their file has unsaved edits (then when it
-- is written), with preview.update_while_typing false.
function M.on_changed(result, ctx)
  local uris = {}
  for _, u in ipairs(get(result, "uris") or {}) do
    uris[u] = true
  end
  for buf, v in pairs(M.views) do
    if not vim.api.nvim_buf_is_valid(buf) then
      M.views[buf] = nil
    elseif v.client_id == ctx.client_id and uris[v.uri] then
      local src = buffer_of(v.uri)
      if src and vim.bo[src].modified and not config.options.preview.update_while_typing then
        v.stale = true
      else
        M.refresh(buf)
      end
    end
  end
end

-- on_write refreshes the previews of a written file, and stale ones of
-- its project: dfd/preview waits for the compile of what was saved.
function M.on_write(bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  local root = dfd.root_of(bufnr)
  for buf, v in pairs(M.views) do
    if v.uri == uri or (v.stale and root and vim.startswith(vim.uri_to_fname(v.uri), root .. "/")) then
      M.refresh(buf)
    end
  end
end

return M

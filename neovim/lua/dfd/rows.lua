-- dfd.rows: :DfdRows [table], the data of the action under the cursor
-- (dfd/rows; needs the metadata source "bigquery"): the rows its query
-- returns now, run under dfd's preview policy, or with `table` its built
-- table's rows (tabledata.list: no query, nothing billed). When BigQuery's
-- dry run says the query reads more than dfd.preview.rowsConfirmBytes, it
-- asks first.
local dfd = require("dfd")
local view = require("dfd.view")

local M = {}

local function cell(v)
  if v == nil or v == vim.NIL then
    return "NULL"
  elseif type(v) == "table" then
    return vim.fn.json_encode(v)
  end
  return tostring(v)
end

local function column_type(c)
  local t = c.type
  if t == "RECORD" or t == "STRUCT" then
    local parts = {}
    for _, f in ipairs(c.fields or {}) do
      table.insert(parts, f.name .. " " .. column_type(f))
    end
    t = "STRUCT<" .. table.concat(parts, ", ") .. ">"
  end
  if c.mode == "REPEATED" then
    t = "ARRAY<" .. t .. ">"
  end
  return t
end

function M.render(r)
  local facts = (r.action ~= "" and r.action or r.target) .. " · " .. r.source
  if r.jobId then
    facts = facts .. string.format(" · job %s: %d bytes processed, %d billed", r.jobId, r.totalBytesProcessed or 0, r.totalBytesBilled or 0)
  end
  local lines = { "-- " .. facts }
  for _, why in ipairs({ r.refused, r.unavailable, r.error }) do
    if why and why ~= vim.NIL then
      vim.list_extend(lines, vim.split("-- " .. why, "\n"))
    end
  end
  local cols = r.columns or {}
  if #cols == 0 then
    return lines
  end
  local grid = { {}, {} }
  for i, c in ipairs(cols) do
    grid[1][i], grid[2][i] = c.name, column_type(c)
  end
  for _, row in ipairs(r.rows or {}) do
    local line = {}
    for i, c in ipairs(cols) do
      line[i] = cell(row[c.name]):gsub("\n", "\\n")
    end
    table.insert(grid, line)
  end
  local width = {}
  for _, line in ipairs(grid) do
    for i, s in ipairs(line) do
      width[i] = math.max(width[i] or 0, vim.fn.strdisplaywidth(s))
    end
  end
  for n, line in ipairs(grid) do
    local out = {}
    for i, s in ipairs(line) do
      out[i] = s .. string.rep(" ", width[i] - vim.fn.strdisplaywidth(s))
    end
    table.insert(lines, (table.concat(out, "  "):gsub("%s+$", "")))
    if n == 2 then
      local rule = {}
      for i = 1, #line do
        rule[i] = string.rep("-", width[i])
      end
      table.insert(lines, table.concat(rule, "  "))
    end
  end
  if r.jobUrl then
    table.insert(lines, "-- " .. r.jobUrl)
  end
  return lines
end

-- :DfdRows [query|table]
function M.command(args)
  M.show((args and args.args == "table") and "table" or "query", false)
end

-- show asks for the rows of the action under the cursor, or of action
-- (database.schema.name) when given, and shows them.
function M.show(source, confirmed, action)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = dfd.command_client(bufnr)
  if not client then
    return
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.source, params.limit, params.confirmed, params.action = source, 100, confirmed, action
  local uri = params.textDocument.uri
  dfd.request(client, "dfd/rows", params, function(err, r)
    if err or not r then
      dfd.notify("dfd/rows: " .. tostring(err and (err.message or err) or "no answer"), vim.log.levels.ERROR)
      return
    end
    if r.needsConfirmation and not confirmed then
      if vim.fn.confirm(r.confirmation, "&Run the query\n&Cancel", 2) == 1 then
        vim.api.nvim_buf_call(bufnr, function() M.show(source, true, action) end)
      end
      return
    end
    local buf = view.buffer("dfd://rows/" .. vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:."), "dfdrows")
    view.set_lines(buf, M.render(r))
    view.show(buf, true)
  end, bufnr)
end


-- table_url is BigQuery's console on a target's table.
function M.table_url(target)
  local function enc(v)
    return (tostring(v):gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
  end
  local q = {}
  if target.database and target.database ~= "" then
    table.insert(q, "p=" .. enc(target.database))
  end
  table.insert(q, "d=" .. enc(target.schema or ""))
  table.insert(q, "t=" .. enc(target.name or ""))
  table.insert(q, "page=table")
  return "https://console.cloud.google.com/bigquery?" .. table.concat(q, "&")
end

return M

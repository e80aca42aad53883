-- Headless Neovim test of rename and formatting through Neovim's own LSP
-- client and the plugin in neovim/ (on the runtimepath, so Neovim's
-- startup loads it), run by daemon/nvim_test.go (TestNeovimEdits):
--   nvim --headless --clean --cmd 'set rtp^=neovim' -c 'luafile testdata/lsp/nvim/edits.lua'
-- Environment: DFD_PROJECT (a copy of the jit_actions fixture with
-- metadata.json, definitions/messy.sqlx and definitions/uses_campaigns.sqlx),
-- DFD_EXPECTED (what `dfd format` makes of messy.sqlx), DFD_RESULT (report
-- file). `dfd` is on PATH: the plugin starts it by that name.
-- Edits are made the way a user makes them: vim.lsp.buf.rename(name) with
-- the cursor on a ref, formatting with vim.lsp.buf.format where it exists
-- (0.8+) else vim.lsp.buf.formatting_sync (0.7); edited buffers are then
-- written with :wall so that the Go side checks the files on disk too.
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/report.lua')
local log, check, finish = report.log, report.check, report.finish

-- What Neovim shows the user (a refused rename arrives as an error
-- notification): recorded, so that a check can say what the user saw.
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end
local function errors_since(n)
  local out = {}
  for i = n + 1, #notes do
    if notes[i].level >= vim.log.levels.ERROR then table.insert(out, notes[i].msg) end
  end
  return out
end

local function buf_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
end

local ok, err = pcall(function()
  local root = os.getenv('DFD_PROJECT')
  local function dfd_client(buf)
    for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
      if c.name == 'dfd' and c.initialized then return c end
    end
  end
  -- Opens rel in the current window and waits for dfd (started or joined
  -- by the plugin's FileType autocommand) to be attached and initialized.
  local function open(rel)
    vim.cmd('edit ' .. root .. '/' .. rel)
    local buf = vim.api.nvim_get_current_buf()
    local attached = vim.wait(20000, function() return dfd_client(buf) ~= nil end, 20)
    check('dfd attached to ' .. rel, attached)
    return buf, dfd_client(buf)
  end
  -- Puts the cursor on the name inside the first ref("name") of buf.
  local function cursor_on_ref(buf, name)
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      local c = l:find('ref("' .. name .. '")', 1, true)
      if c then
        vim.api.nvim_win_set_cursor(0, { i, c + 4 + 1 }) -- inside the name: after `ref("` and one more
        return true
      end
    end
    return false
  end

  -- 1. Rename of an action named in its code (publish("daily_clicks", …)
  -- in definitions/jit/daily_clicks.js): text edits only, in the current
  -- .sqlx and in files Neovim loads into buffers to apply them.
  local top, client = open('definitions/top_countries.sqlx')
  if not client then error('no dfd client for top_countries.sqlx') end
  check('cursor on ref("daily_clicks")', cursor_on_ref(top, 'daily_clicks'))
  local before = #notes
  vim.lsp.buf.rename('clicks_per_day')
  local renamed = vim.wait(60000, function()
    return buf_text(top):find('ref("clicks_per_day")', 1, true) ~= nil or #errors_since(before) > 0
  end, 20)
  check('rename edits the ref in the current buffer', renamed and buf_text(top):find('ref("clicks_per_day")', 1, true) ~= nil,
    table.concat(errors_since(before), '; '))
  check('no ref("daily_clicks") left in the current buffer', buf_text(top):find('ref("daily_clicks")', 1, true) == nil)
  check('no error shown for the rename', #errors_since(before) == 0, table.concat(errors_since(before), '; '))
  local def = vim.fn.bufnr(root .. '/definitions/jit/daily_clicks.js')
  check('the defining file is in a buffer', def ~= -1)
  check('rename edits the definition in the other file', def ~= -1 and buf_text(def):find('publish("clicks_per_day"', 1, true) ~= nil,
    def ~= -1 and vim.api.nvim_buf_get_lines(def, 0, 3, false)[2])
  vim.cmd('silent wall')

  -- 2. Rename of an action named by its file (definitions/sources/
  -- campaigns.sqlx has no name in its config): the file must be renamed,
  -- which dfd does for a client that announced the "rename" resource
  -- operation (Neovim does, without documentChanges: dfd takes the one
  -- for the other); otherwise it refuses, and Neovim shows why, with
  -- nothing changed.
  local caps = vim.lsp.protocol.make_client_capabilities().workspace.workspaceEdit or {}
  local file_renames = vim.tbl_contains(caps.resourceOperations or {}, 'rename')
  log('client announces file renames: ' .. tostring(file_renames) .. ' (' .. vim.inspect(caps, { newline = ' ', indent = '' }) .. ')')
  local uses = open('definitions/uses_campaigns.sqlx')
  local uses_before = buf_text(uses)
  check('cursor on ref("campaigns")', cursor_on_ref(uses, 'campaigns'))
  before = #notes
  vim.lsp.buf.rename('ad_campaigns')
  if file_renames then
    check('file-named action renamed', vim.wait(60000, function()
      return buf_text(uses):find('ref("ad_campaigns")', 1, true) ~= nil
    end, 20), table.concat(errors_since(before), '; '))
    check('its file renamed', vim.loop.fs_stat(root .. '/definitions/sources/ad_campaigns.sqlx') ~= nil)
  else
    local refused = vim.wait(60000, function() return #errors_since(before) > 0 end, 20)
    local msg = table.concat(errors_since(before), '; ')
    check('file-named action: rename refused', refused, 'no error shown')
    log('refusal shown: ' .. msg)
    check('the refusal says why', msg:find('cannot rename files', 1, true) ~= nil and msg:find('campaigns.sqlx', 1, true) ~= nil, msg)
    vim.wait(500) -- an edit arriving despite the refusal would land now
    check('refused rename changes nothing', buf_text(uses) == uses_before, buf_text(uses))
    check('refused rename keeps the file', vim.loop.fs_stat(root .. '/definitions/sources/campaigns.sqlx') ~= nil)
  end

  -- 3. Formatting a messy .sqlx: the buffer becomes what `dfd format`
  -- makes of the same file.
  local messy, mclient = open('definitions/messy.sqlx')
  check('dfd formats documents', mclient and mclient.supports_method('textDocument/formatting'))
  local f = assert(io.open(os.getenv('DFD_EXPECTED')))
  local expected = f:read('*a')
  f:close()
  check('messy.sqlx needs formatting', buf_text(messy) ~= expected)
  before = #notes
  if vim.lsp.buf.format then
    log('formatting with vim.lsp.buf.format')
    vim.lsp.buf.format({ timeout_ms = 30000 })
  else
    log('formatting with vim.lsp.buf.formatting_sync')
    vim.lsp.buf.formatting_sync(nil, 30000)
  end
  check('formatted buffer is what dfd format writes', buf_text(messy) == expected, '\n' .. buf_text(messy))
  local warnings = {}
  for i = before + 1, #notes do
    if notes[i].level >= vim.log.levels.WARN then table.insert(warnings, notes[i].msg) end
  end
  check('no warning while formatting', #warnings == 0, table.concat(warnings, '; '))
  vim.cmd('silent wall')
  check('all buffers written', #vim.tbl_filter(function(b)
    return vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified
  end, vim.api.nvim_list_bufs()) == 0)

  client.stop()
  check('stopped', vim.wait(10000, function() return client.is_stopped() end, 20))
end)
if not ok then check('script', false, tostring(err)) end
finish()

-- Headless Neovim test of the plugin in neovim/, run by
-- daemon/nvim_plugin_test.go with the plugin on the runtimepath as a
-- plugin manager puts it (Neovim's startup sourced its plugin/dfd.lua)
-- and `dfd` on PATH:
--   nvim --headless --clean --cmd 'set rtp^=neovim' -c 'luafile plugin.lua'
-- Environment: DFD_PROJECT (a copy of examples/clickstream with its
-- metadata.json and a core), DFD_BARE (the same without metadata.json),
-- DFD_PLUGIN (the plugin directory), DFD_TMP (a scratch directory),
-- DFD_RESULT (file receiving the report), DFD_COST_PROJECT (another copy,
-- given metadata source bigquery against the recording stand-in at
-- DFD_BQ_ENDPOINT) and DFD_COST_LABEL (the code lens text of the stand-in's
-- figure for one statement). It waits on conditions with
-- vim.wait (no fixed sleeps) and ends with "N passed, N failed".

local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/report.lua')
local log, finish = report.log, report.finish
-- Progress on stderr too, so that a hang shows where it was.
local function check(name, ok, detail)
  io.stderr:write((ok and 'PASS ' or 'FAIL ') .. name .. '\n')
  report.check(name, ok, detail)
end

-- Every message the plugin or Neovim shows, to check that none is an error.
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end
local function problems()
  local out = {}
  for _, n in ipairs(notes) do
    if n.level >= vim.log.levels.WARN then table.insert(out, n.msg) end
  end
  return out
end

local function buf_named(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name then return b end
  end
end
local function text(b)
  if not b or not vim.api.nvim_buf_is_valid(b) then return '' end
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
end
-- Waits until the buffer called name exists and its text contains want.
local function wait_text(name, want, ms)
  local got = vim.wait(ms or 60000, function()
    return text(buf_named(name)):find(want, 1, true) ~= nil
  end, 50)
  return got, text(buf_named(name))
end
local function edit(path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  return vim.api.nvim_get_current_buf()
end
local function dfd_client(buf)
  local c
  vim.wait(30000, function()
    c = require('dfd').client(buf)
    return c ~= nil and c.initialized and vim.lsp.buf_is_attached(buf, c.id)
  end, 50)
  return c
end
-- The code lenses Neovim has for a buffer (0.12 changed get's form and
-- shows lenses by itself: the plugin enables them there).
local function shown_lenses(buf)
  if vim.fn.has('nvim-0.12') == 1 then
    return vim.tbl_map(function(r) return r.lens end, vim.lsp.codelens.get({ bufnr = buf }))
  end
  return vim.lsp.codelens.get(buf)
end
-- Code lenses of a buffer, once the server has compiled it.
local function lenses(buf)
  local got = {}
  vim.wait(60000, function()
    if vim.fn.has('nvim-0.12') == 0 then require('dfd').refresh_codelens() end
    vim.wait(200, function() return #shown_lenses(buf) > 0 end, 20)
    got = shown_lenses(buf)
    return #got > 0
  end, 100)
  return got
end

local ok, err = pcall(function()
  local root, bare, plugin = os.getenv('DFD_PROJECT'), os.getenv('DFD_BARE'), os.getenv('DFD_PLUGIN')
  check('plugin loaded at startup', vim.g.loaded_dfd == true and vim.fn.exists(':DfdPreview') == 2)
  require('dfd').setup({ keymaps = true })

  -- :help dfd: the tags are valid (helptags fails on duplicates) and lead
  -- to the commands.
  local docdir = os.getenv('DFD_TMP') .. '/doc'
  vim.fn.mkdir(docdir, 'p')
  vim.fn.writefile(vim.fn.readfile(plugin .. '/doc/dfd.txt'), docdir .. '/dfd.txt')
  local hok, herr = pcall(vim.cmd, 'helptags ' .. vim.fn.fnameescape(docdir))
  local tags = table.concat(vim.fn.readfile(docdir .. '/tags'), '\n')
  check('helptags', hok, herr)
  for _, tag in ipairs({ 'dfd', ':DfdPreview', ':DfdGraph', ':DfdLineage', ':DfdStatus', ':DfdRefreshMetadata', ':DfdCost', 'dfd-keymaps', 'dfd.setup()' }) do
    check('help tag ' .. tag, tags:find('^' .. vim.pesc(tag) .. '\t') or tags:find('\n' .. vim.pesc(tag) .. '\t'), tags)
  end

  -- The JiT action starts dfd for the project, with omnifunc and keymaps.
  local jit_path = root .. '/definitions/jit/daily_clicks.js'
  local jit = edit(jit_path)
  local client = dfd_client(jit)
  check('dfd started for the project', client ~= nil and client.config.root_dir == root, client and client.config.root_dir)
  if client and vim.lsp.codelens.enable == nil then
    -- Before 0.12, Neovim's own handler errors on the lenses of a buffer
    -- wiped while they were asked for; the plugin's drops them.
    local h = (client.handlers or {})['textDocument/codeLens'] or (client.config.handlers or {})['textDocument/codeLens']
    local ok, err = false, 'no handler of its own'
    if h then
      ok, err = pcall(h, nil, {}, { method = 'textDocument/codeLens', client_id = client.id, bufnr = 99999 })
    end
    check('code lenses of a wiped buffer are dropped', ok and vim.v.errmsg == '', tostring(err) .. vim.v.errmsg)
    -- The same for the plugin's own refresh (its autocommands and
    -- dfd/previewChanged), which passes its own handler.
    ok, err = pcall(require('dfd').codelens_handler(99999), nil, {}, { method = 'textDocument/codeLens', client_id = client.id, bufnr = 99999 })
    check("the plugin's refresh drops the lenses of a wiped buffer", ok and vim.v.errmsg == '', tostring(err) .. vim.v.errmsg)
  end
  check('omnifunc in .js', vim.bo[jit].omnifunc == 'v:lua.vim.lsp.omnifunc', vim.bo[jit].omnifunc)
  check('keymap <leader>dp', vim.fn.maparg('<leader>dp', 'n'):find('DfdPreview', 1, true) ~= nil, vim.fn.maparg('<leader>dp', 'n'))

  -- :DfdPreview: the JiT SQL, built from the snapshot (campaign_name
  -- exists only when the JiT code saw campaign_id in raw_clicks).
  local preview = 'dfd://preview/' .. vim.fn.fnamemodify(jit_path, ':~:.')
  vim.cmd('DfdPreview')
  local got, body = wait_text(preview, 'c.name AS campaign_name')
  check(':DfdPreview shows the JiT SQL', got, body)
  check('preview header', body:find('-- acme-clickstream.clicks.daily_clicks (table, JiT)', 1, true) ~= nil, body)
  check('preview names its calls', body:find('GetTable acme-collector.landing.raw_clicks', 1, true) ~= nil, body)
  check('preview is sql', vim.bo[buf_named(preview)].filetype == 'sql')
  check('cursor stays in the source', vim.api.nvim_get_current_buf() == jit)
  if os.getenv('DFD_ONLY_START') == '1' then
    return
  end

  -- An edit is not shown until it is written; after :write it is.
  local lines = vim.api.nvim_buf_get_lines(jit, 0, -1, false)
  for i, l in ipairs(lines) do
    if l:find('COUNT(*) AS clicks', 1, true) then
      lines[i] = l:gsub('COUNT%(%*%) AS clicks', 'COUNT(*) AS clicks /* edited in nvim */')
    end
  end
  vim.api.nvim_buf_set_lines(jit, 0, -1, false, lines)
  vim.wait(1500, function() return text(buf_named(preview)):find('edited in nvim', 1, true) ~= nil end, 50)
  check('unsaved edit not previewed', text(buf_named(preview)):find('edited in nvim', 1, true) == nil, text(buf_named(preview)))
  vim.cmd('write')
  got, body = wait_text(preview, 'COUNT(*) AS clicks /* edited in nvim */')
  check(':DfdPreview follows :write', got, body)

  -- A saved edit of another file the JiT code reads (an includes file):
  -- only dfd/previewChanged tells the preview of daily_clicks.js.
  local settings = edit(root .. '/includes/jit_settings.js')
  local slines = vim.api.nvim_buf_get_lines(settings, 0, -1, false)
  for i, l in ipairs(slines) do
    slines[i] = l:gsub('"MX"%]', '"BR"]')
  end
  vim.api.nvim_buf_set_lines(settings, 0, -1, false, slines)
  vim.cmd('write')
  got, body = wait_text(preview, "IN ('US', 'CA', 'BR')")
  check(':DfdPreview follows dfd/previewChanged after :write of an includes file', got, body)
  vim.cmd('buffer ' .. jit)

  -- Every code lens of the JiT action and of the view runs.
  local top_path = root .. '/definitions/top_countries.sqlx'
  local top = edit(top_path)
  dfd_client(top)
  check('sqlx filetype', vim.bo[top].filetype == 'sqlx', vim.bo[top].filetype)
  check('omnifunc in .sqlx', vim.bo[top].omnifunc == 'v:lua.vim.lsp.omnifunc', vim.bo[top].omnifunc)
  check('code lenses shown by the plugin', vim.wait(30000, function() return #shown_lenses(top) > 0 end, 50),
    vim.inspect(shown_lenses(top)))
  local ran = 0
  for _, path in ipairs({ jit_path, top_path }) do
    local b = edit(path)
    local ls = lenses(b)
    check('code lenses of ' .. vim.fn.fnamemodify(path, ':t'), #ls >= 2, vim.inspect(ls))
    for _, lens in ipairs(ls) do
      local cmd = lens.command or {}
      local name = vim.fn.fnamemodify(path, ':t') .. ' lens "' .. tostring(cmd.title) .. '"'
      check(name .. ' has a handler', vim.lsp.commands[cmd.command] ~= nil, cmd.command)
      -- codelens.run() on the lens's line; several lenses there: choose
      -- this one (0.12 asks after run() returns, so the choice stays set
      -- until the lens has had its effect).
      local saved_select = vim.ui.select
      vim.ui.select = function(items, _, on_choice)
        for _, item in ipairs(items) do
          if item.lens.command.title == cmd.title then return on_choice(item) end
        end
        on_choice(nil)
      end
      vim.fn.setqflist({}, 'r')
      local before = #problems()
      vim.api.nvim_set_current_buf(b)
      vim.api.nvim_win_set_cursor(0, { lens.range.start.line + 1, 0 })
      vim.lsp.codelens.run()
      if cmd.command == 'dfd.showPreview' then
        local pv = 'dfd://preview/' .. vim.fn.fnamemodify(path, ':~:.')
        local want = path == jit_path and 'campaign_name' or 'FROM\n  `acme-clickstream.clicks.daily_clicks`'
        got, body = wait_text(pv, want)
        check(name .. ' opens the preview', got, body)
      elseif cmd.command == 'dfd.showDependents' then
        local items = {}
        vim.wait(30000, function() items = vim.fn.getqflist(); return #items > 0 end, 50)
        local names = {}
        for _, it in ipairs(items) do table.insert(names, vim.fn.bufname(it.bufnr)) end
        local want = path == jit_path and 'top_countries.sqlx' or nil
        if want then
          check(name .. ' lists the dependents', table.concat(names, ' '):find(want, 1, true) ~= nil, vim.inspect(names))
        else
          -- top_countries has no dependents: the handler says so.
          vim.wait(5000, function() return notes[#notes] and notes[#notes].msg:find('no dependents', 1, true) end, 50)
          check(name .. ' says there are none', #items == 0 and notes[#notes] and notes[#notes].msg:find('no dependents', 1, true) ~= nil,
            vim.inspect(names) .. vim.inspect(notes[#notes]))
        end
      else
        check(name .. ': unknown command', false, cmd.command)
      end
      vim.ui.select = saved_select
      check(name .. ' ran without a warning', #problems() == before, vim.inspect(problems()))
      ran = ran + 1
    end
  end
  check('every lens ran', ran >= 5, ran)
  vim.cmd('cclose')

  -- :DfdGraph on the view: upstream daily_clicks (JiT) and what that reads.
  edit(top_path)
  vim.cmd('DfdGraph')
  local graph = 'dfd://graph/' .. vim.fn.fnamemodify(top_path, ':~:.')
  got, body = wait_text(graph, 'downstream')
  check(':DfdGraph', got and body:find('top_countries  (view)  definitions/top_countries.sqlx\n  upstream (what it reads):\n    daily_clicks  (table, JiT)  definitions/jit/daily_clicks.js\n      campaigns  (table)  definitions/sources/campaigns.sqlx\n      raw_clicks  (declaration)  definitions/sources/raw_clicks.sqlx\n  downstream (what reads it):\n    (nothing)', 1, true) ~= nil, body)
  -- <CR> on daily_clicks opens its file.
  local gbuf = buf_named(graph)
  check('graph has the focus', vim.api.nvim_get_current_buf() == gbuf)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(gbuf, 0, -1, false)) do
    if l:find('daily_clicks  (table', 1, true) then vim.api.nvim_win_set_cursor(0, { i, 0 }) end
  end
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  check('<CR> in the graph opens the file', vim.api.nvim_buf_get_name(0) == jit_path, vim.api.nvim_buf_get_name(0))
  vim.cmd('only')

  -- :DfdLineage of the column under the cursor.
  top = edit(top_path)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(top, 0, -1, false)) do
    local c = l:find('AS clicks', 1, true)
    if c then vim.api.nvim_win_set_cursor(0, { i, c + 3 }) end
  end
  vim.cmd('DfdLineage')
  local lineage = 'dfd://lineage/' .. vim.fn.fnamemodify(top_path, ':~:.')
  got, body = wait_text(lineage, 'reads:')
  check(':DfdLineage', got and body:find('lineage of acme-clickstream.clicks.top_countries, column clicks', 1, true) ~= nil
    and body:find('clicks INT64\n  reads:\n    acme-clickstream.clicks.daily_clicks.clicks  (computed)  definitions/jit/daily_clicks.js', 1, true) ~= nil, body)
  vim.cmd('only')

  -- :DfdStatus
  vim.cmd('DfdStatus')
  got, body = wait_text('dfd://status', 'metadata source chosen by the plugin')
  check(':DfdStatus', got and body:find('project ' .. root .. '\n  core 3.0.62, 9 actions', 1, true) ~= nil
    and body:find('  metadata: snapshot, offline: snapshot ' .. root .. '/metadata.json', 1, true) ~= nil
    and body:find('  metadata source chosen by the plugin: snapshot metadata.json (found in the project)', 1, true) ~= nil, body)
  vim.cmd('only')

  -- <C-x><C-o> completes a column of the table the view reads.
  top = edit(top_path)
  local n = vim.api.nvim_buf_line_count(top)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(top, 0, -1, false)) do
    if l == '  country,' then
      vim.api.nvim_buf_set_lines(top, i, i, false, { '  coun' })
      vim.api.nvim_win_set_cursor(0, { i + 1, 6 })
    end
  end
  check('line added', vim.api.nvim_buf_line_count(top) == n + 1)
  -- Typed as a user does: vim.lsp.omnifunc answers asynchronously, in
  -- Insert mode, so feedkeys keeps Insert mode ('x!') and a timer reads
  -- the completion menu, then leaves Insert mode with <Esc>.
  local words, tries = {}, 0
  local timer = (vim.uv or vim.loop).new_timer()
  timer:start(100, 100, vim.schedule_wrap(function()
    tries = tries + 1
    local items = vim.fn.complete_info({ 'items' }).items or {}
    if #items > 0 or tries > 300 then
      timer:stop()
      timer:close()
      for _, item in ipairs(items) do table.insert(words, item.word) end
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-e><Esc>', true, false, true), 'n', false)
    end
  end))
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('A<C-x><C-o>', true, false, true), 'x!', false)
  check('<C-x><C-o> completes a column', vim.tbl_contains(words, 'country'), vim.inspect(words))
  vim.cmd('edit!')

  -- :DfdRefreshMetadata reads the snapshot again.
  local before = #notes
  vim.cmd('DfdRefreshMetadata')
  vim.wait(20000, function() return #notes > before end, 50)
  check(':DfdRefreshMetadata', notes[#notes] and notes[#notes].msg:find('(snapshot): 10 refreshed', 1, true) ~= nil, vim.inspect(notes[#notes]))

  -- :DfdCost with the snapshot: no figure, and the server's reason.
  -- The reason comes with the compile's cost phase, after its diagnostics
  -- (the refresh above recompiled): ask until it is there.
  local campaigns = edit(root .. '/definitions/sources/campaigns.sqlx')
  local msg = ''
  vim.wait(60000, function()
    before = #notes
    vim.cmd('DfdCost')
    vim.wait(10000, function() return #notes > before end, 50)
    msg = notes[#notes] and notes[#notes].msg or ''
    return msg:find('not available', 1, true) ~= nil
  end, 200)
  check(':DfdCost with a snapshot: not available', msg:find('acme-clickstream.clicks.campaigns: not available: ', 1, true) ~= nil
    and msg:find('\nproject: not available: ', 1, true) ~= nil and msg:find('$', 1, true) == nil, msg)
  vim.api.nvim_buf_delete(campaigns, {})

  -- A project without metadata.json opens with no error; the status says
  -- the server's default applies.
  local bare_top = bare .. '/definitions/top_countries.sqlx'
  local errs = #problems()
  vim.v.errmsg = ''
  local bb = edit(bare_top)
  local bc = dfd_client(bb)
  check('bare project: own client', bc ~= nil and bc.config.root_dir == bare, bc and bc.config.root_dir)
  vim.wait(30000, function() return #vim.diagnostic.get(bb) > 0 or #lenses(bb) > 0 end, 100)
  check('bare project: no error', #problems() == errs and vim.v.errmsg == '', vim.inspect(problems()) .. vim.v.errmsg)
  check('bare project: no diagnostics', #vim.diagnostic.get(bb) == 0, vim.inspect(vim.diagnostic.get(bb)))
  vim.cmd('DfdStatus')
  got, body = wait_text('dfd://status', 'project ' .. bare)
  check(':DfdStatus of the bare project', got and body:find('project ' .. bare .. '\n  core 3.0.62, 9 actions', 1, true) ~= nil
    and body:find('  metadata: none, none', 1, true) ~= nil
    and body:find('metadata source chosen by the plugin: none: no metadata.json in the project', 1, true) ~= nil, body)
  vim.cmd('only')

  -- :checkhealth dfd
  edit(jit_path)
  vim.cmd('checkhealth dfd')
  -- 0.12 fills the report after :checkhealth returns: wait for the last
  -- line, the credentials of the second project.
  local hbuf, health = vim.api.nvim_get_current_buf(), ''
  vim.wait(30000, function()
    health = text(hbuf)
    return select(2, health:gsub('credentials:', '')) >= 2
  end, 50)
  check(':checkhealth dfd has no error', health ~= '' and health:find('ERROR') == nil, health)
  for _, want in ipairs({ 'OK binary: ', 'OK version: ', 'OK project root: ' .. root, 'OK metadata source: snapshot, offline',
                          'OK workers: ', 'OK project root: ' .. bare, 'metadata source: none, none' }) do
    -- "OK: x" on 0.7 and 0.8, "OK x" on 0.9+.
    local pattern = vim.pesc(want):gsub('^OK ', 'OK:? ')
    check(':checkhealth dfd says ' .. want, health:find(pattern) ~= nil, health)
  end
  -- :DfdCost with BigQuery (the stand-in): the action's figure is the
  -- stand-in's, the project's total is there.
  local dfd = require('dfd')
  local cost_root, endpoint = os.getenv('DFD_COST_PROJECT'), os.getenv('DFD_BQ_ENDPOINT')
  dfd.setup({ settings = function(r)
    if r == cost_root then return { metadata = { source = 'bigquery' }, bigquery = { endpoint = endpoint } } end
    return {}
  end })
  local cb = edit(cost_root .. '/definitions/sources/campaigns.sqlx')
  local cc = dfd_client(cb)
  check('cost project: own client', cc ~= nil and cc.config.root_dir == cost_root, cc and cc.config.root_dir)
  local want = 'acme-clickstream.clicks.campaigns: ' .. os.getenv('DFD_COST_LABEL') .. '\n'
  msg = ''
  -- The figures come after the compile's diagnostics: ask until they are there.
  vim.wait(60000, function()
    before = #notes
    vim.cmd('DfdCost')
    vim.wait(10000, function() return #notes > before end, 50)
    msg = notes[#notes] and notes[#notes].msg or ''
    return msg:find(want, 1, true) ~= nil and msg:find('\nproject: ≈ ', 1, true) ~= nil
  end, 200)
  check(':DfdCost with BigQuery: the stand-in\'s figure and the total', msg:find(want, 1, true) ~= nil
    and msg:find('\nproject: ≈ ', 1, true) ~= nil, msg .. '\nwant ' .. want)
  vim.cmd('edit ' .. vim.fn.fnameescape(jit_path))

  -- Per-project settings: a function of the root; what the settings name
  -- wins over the snapshot found in the project.
  dfd.setup({ settings = function(r)
    if r == bare then return { metadata = { source = 'bigquery' }, logLevel = 'debug' } end
    return { dfd = { logLevel = 'warn' } }
  end })
  local sb, chb = dfd.settings_for(bare)
  local sr, cr = dfd.settings_for(root)
  check('settings per project: bare', sb.dfd.metadata.source == 'bigquery' and sb.dfd.logLevel == 'debug'
    and chb == 'from your settings: source bigquery', vim.inspect({ sb, chb }))
  check('settings per project: snapshot found', sr.dfd.logLevel == 'warn' and sr.dfd.metadata.source == 'snapshot'
    and sr.dfd.metadata.snapshot == 'metadata.json', vim.inspect({ sr, cr }))
  dfd.setup({ snapshot = false })
  sr, cr = dfd.settings_for(root)
  check('snapshot = false leaves the source to the server', sr.dfd.metadata == nil and cr:find('server', 1, true) ~= nil, vim.inspect({ sr, cr }))

  log('--- checkhealth\n' .. health)
  log('--- lineage\n' .. text(buf_named(lineage)))
  log('--- messages\n' .. vim.inspect(notes))
end)
if not ok then check('script', false, tostring(err)) end
finish()

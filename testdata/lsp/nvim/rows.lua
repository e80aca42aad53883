-- Headless Neovim (0.7+) test of :DfdRows of the plugin in neovim/, run by
-- daemon/nvimrows_test.go against the BigQuery emulator, with the plugin
-- on the runtimepath and `dfd` on PATH:
--   nvim --headless --clean --cmd 'set rtp^=neovim' -c 'luafile rows.lua'
-- Environment: DFD_PROJECT (a project on the emulator's data),
-- DFD_ENDPOINT (the emulator), DFD_RESULT. The plugin starts dfd with the
-- BigQuery settings given to setup(); :DfdRows opens the rows in its
-- scratch buffer.

local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/report.lua')
local log, check, finish = report.log, report.check, report.finish

local ok, err = pcall(function()
  local root = os.getenv('DFD_PROJECT')
  require('dfd').setup({ settings = { metadata = { source = 'bigquery' }, bigquery = { endpoint = os.getenv('DFD_ENDPOINT') } } })

  local function rows_of(rel, args)
    vim.cmd('edit ' .. root .. '/' .. rel)
    local buf = vim.api.nvim_get_current_buf()
    check(rel .. ': dfd attached', vim.wait(30000, function() return require('dfd').client(buf) ~= nil end, 50))
    vim.cmd('DfdRows' .. (args and (' ' .. args) or ''))
    local got = vim.wait(60000, function() return vim.api.nvim_get_current_buf() ~= buf end, 50)
    check(rel .. ': a scratch buffer opened', got)
    local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    log('  ' .. table.concat(lines, '\n  '))
    check(rel .. ': a scratch buffer', vim.bo.buftype == 'nofile' and vim.api.nvim_buf_get_name(0):find('dfd://rows/', 1, true) ~= nil, vim.api.nvim_buf_get_name(0))
    vim.cmd('close')
    return lines
  end

  local q = rows_of('definitions/order_view.sqlx')
  check('query: the header names the action and its job', q[1] and q[1]:find('test.shop.order_view · query · job dfd%-rows%-') ~= nil, q[1])
  check('query: column names', q[2] == 'id       name    buyer             ids             nothing', q[2])
  check('query: column types', q[3] == 'INTEGER  STRING  STRUCT<n STRING>  ARRAY<INTEGER>  STRING', q[3])
  check('query: first row, nested values as JSON, NULL', q[5]:gsub('%s+', ' ') == '1 Ann {"n": "Ann"} [1, 2] NULL', q[5])
  check('query: second row', q[6]:gsub('%s+', ' ') == '2 Bo {"n": "Bo"} [2, 3] NULL', q[6])
  check('query: the job link', q[7] and q[7]:find('https://console.cloud.google.com/bigquery?j=bq', 1, true) ~= nil, q[7])

  local t = rows_of('definitions/orders.sqlx', 'table')
  check('table: the header says the table', t[1] == '-- test.shop.orders · table', t[1])
  check('table: rows', t[5] == '1        Ann' and t[6] == '2        Bo', vim.inspect(t))

  -- The code lenses' commands: Preview data of a declaration reads its
  -- table; Open in BigQuery gives the table's console address.
  local target = { database = 'test', schema = 'shop', name = 'orders' }
  local lens_buf = vim.api.nvim_get_current_buf()
  vim.lsp.commands['dfd.previewData']({ arguments = { vim.uri_from_bufnr(0), target, 'table' } }, {})
  check('lens Preview data: a scratch buffer opened', vim.wait(60000, function() return vim.api.nvim_get_current_buf() ~= lens_buf end, 50))
  local l = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  check('lens Preview data: the table rows', l[1] == '-- test.shop.orders · table' and l[5] == '1        Ann', vim.inspect(l))
  vim.cmd('close')
  vim.lsp.commands['dfd.openInBigQuery']({ arguments = { vim.uri_from_bufnr(0), target } }, {})
  if not vim.ui.open then
    check('lens Open in BigQuery: the address', vim.fn.getreg('"') == 'https://console.cloud.google.com/bigquery?p=test&d=shop&t=orders&page=table', vim.fn.getreg('"'))
  end
end)
if not ok then check('script ran', false, err) end
finish()

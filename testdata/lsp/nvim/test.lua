-- Headless Neovim (0.7+) test of `dfd serve`, run by daemon/nvim_test.go:
--   nvim --headless --clean -c 'luafile testdata/lsp/nvim/test.lua'
-- Environment: DFD_BIN (the dfd binary), DFD_PROJECT (a copy of the
-- jit_actions fixture with a core and a broken file), DFD_SNAPSHOT (the
-- metadata snapshot), DFD_RESULT (file receiving the report).
-- It waits on conditions with vim.wait (no fixed sleeps) and ends with the
-- line "N passed, N failed".

local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/report.lua')
local log, check, finish = report.log, report.check, report.finish

local ok, err = pcall(function()
  local bin, root, snapshot = os.getenv('DFD_BIN'), os.getenv('DFD_PROJECT'), os.getenv('DFD_SNAPSHOT')
  local progress_ends = 0
  local preview_changed = 0
  local client_id = vim.lsp.start_client({
    name = 'dfd',
    cmd = { bin, 'serve', '--stdio' },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = 'jit_actions' } },
    init_options = { dfd = { metadata = { snapshot = snapshot } } },
    handlers = {
      ['$/progress'] = function(_, result)
        if result and result.value and result.value.kind == 'end' then progress_ends = progress_ends + 1 end
      end,
      ['dfd/previewChanged'] = function() preview_changed = preview_changed + 1 end,
    },
  })
  check('start_client', client_id ~= nil)
  local client = vim.lsp.get_client_by_id(client_id)
  check('initialized', vim.wait(20000, function() return client.initialized end, 20))

  local function open(rel)
    vim.cmd('edit ' .. root .. '/' .. rel)
    local buf = vim.api.nvim_get_current_buf()
    vim.lsp.buf_attach_client(buf, client_id)
    return buf
  end

  -- Diagnostics on a broken file, at the ref that is wrong.
  local broken = open('definitions/broken.sqlx')
  local got = vim.wait(30000, function() return #vim.diagnostic.get(broken) > 0 end, 20)
  local diags = vim.diagnostic.get(broken)
  check('diagnostics published', got)
  check('diagnostic names the missing ref', diags[1] and diags[1].message:find('no_such_table', 1, true) ~= nil,
    diags[1] and diags[1].message)
  check('diagnostic on line 2', diags[1] and diags[1].lnum == 1, diags[1] and tostring(diags[1].lnum))
  check('progress reported', vim.wait(10000, function() return progress_ends > 0 end, 20))

  -- Definition and hover on ${ref("daily_clicks")}.
  local top = open('definitions/top_countries.sqlx')
  local lines = vim.api.nvim_buf_get_lines(top, 0, -1, false)
  local line, col
  for i, l in ipairs(lines) do
    local c = l:find('ref%("daily_clicks"%)')
    if c then line, col = i - 1, c + 5 end
  end
  local pos = { textDocument = { uri = vim.uri_from_bufnr(top) }, position = { line = line, character = col } }
  local res = client.request_sync('textDocument/definition', pos, 20000, top)
  local loc = res and res.result and (res.result[1] or res.result)
  check('definition', loc and loc.uri and loc.uri:find('daily_clicks.js', 1, true) ~= nil, vim.inspect(res))

  res = client.request_sync('textDocument/hover', pos, 20000, top)
  local hover = res and res.result and res.result.contents and res.result.contents.value or ''
  check('hover target', hover:find('acme%-clickstream%.clicks%.daily_clicks') ~= nil, hover)
  check('hover JiT', hover:find('JiT', 1, true) ~= nil, hover)

  -- Completion inside ref(".
  vim.api.nvim_buf_set_lines(top, -1, -1, false, { 'JOIN ${ref("ra' })
  local last = #vim.api.nvim_buf_get_lines(top, 0, -1, false) - 1
  res = client.request_sync('textDocument/completion',
    { textDocument = { uri = vim.uri_from_bufnr(top) }, position = { line = last, character = 14 } }, 20000, top)
  local items = res and res.result and (res.result.items or res.result) or {}
  local labels = {}
  for _, it in ipairs(items) do labels[it.label] = true end
  check('completion of action names', labels['raw_clicks'] == true, vim.inspect(vim.tbl_keys(labels)))

  -- dfd/preview of a JiT action, against the snapshot.
  local jit = open('definitions/jit/daily_clicks.js')
  res = client.request_sync('dfd/preview', { textDocument = { uri = vim.uri_from_bufnr(jit) } }, 30000, jit)
  local action = res and res.result and res.result.actions and res.result.actions[1]
  local jp = action and action.jitPreview
  check('preview action', action and action.jit == true, vim.inspect(res))
  check('JiT preview SQL', jp and jp.sql and jp.sql.query and jp.sql.query:find('campaign_name', 1, true) ~= nil, vim.inspect(jp))
  check('JiT adapter calls', jp and jp.adapterCalls and jp.adapterCalls[1] and jp.adapterCalls[1].method == 'GetTable', vim.inspect(jp))
  check('previewChanged received', preview_changed > 0)

  -- Edit then preview: the edit is compiled.
  vim.api.nvim_buf_set_lines(top, -1, -1, false, { '' })
  vim.api.nvim_buf_set_lines(top, last, last + 1, false, { '-- edited in nvim' })
  res = client.request_sync('dfd/preview', { textDocument = { uri = vim.uri_from_bufnr(top) } }, 30000, top)
  local q = res and res.result and res.result.actions and res.result.actions[1] and res.result.actions[1].sql.query or ''
  check('preview follows edits', q:find('edited in nvim', 1, true) ~= nil, q)

  client.stop()
  check('stopped', vim.wait(10000, function() return client.is_stopped() end, 20))
end)
if not ok then check('script', false, tostring(err)) end
finish()

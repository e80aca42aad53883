-- report.lua: the checks of the headless Neovim test scripts (test.lua,
-- configs.lua, edits.lua), each loaded with dofile from its own directory.
-- Every check is a PASS or FAIL line; finish writes them to $DFD_RESULT
-- with the closing "N passed, N failed" the Go side reads, and quits.
local M = { passed = 0, failed = 0, lines = {} }

function M.log(s) table.insert(M.lines, s) end

function M.check(name, ok, detail)
  if ok then
    M.passed = M.passed + 1
    M.log('PASS ' .. name)
  else
    M.failed = M.failed + 1
    M.log('FAIL ' .. name .. (detail and (': ' .. tostring(detail)) or ''))
  end
end

function M.finish()
  M.log(string.format('%d passed, %d failed', M.passed, M.failed))
  local f = io.open(os.getenv('DFD_RESULT'), 'w')
  f:write(table.concat(M.lines, '\n') .. '\n')
  f:close()
  vim.cmd('qa!')
end

return M

-- dfd.view: the scratch buffers of :DfdPreview, :DfdGraph, :DfdLineage and
-- :DfdStatus, each shown in a split and reused by name.
local M = {}

local function find_buf(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(b) and vim.api.nvim_buf_get_name(b) == name then
      return b
    end
  end
end

-- buffer returns the scratch buffer called name, creating it.
function M.buffer(name, filetype)
  local buf = find_buf(name)
  if not buf then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    vim.bo[buf].modifiable = false
  end
  if filetype and vim.bo[buf].filetype ~= filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

function M.set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

-- show puts buf in a split below the current window (or the window that
-- already shows it) and returns that window; with focus, the cursor goes
-- there, else it stays where it was.
function M.show(buf, focus)
  local win
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      win = w
    end
  end
  local from = vim.api.nvim_get_current_win()
  if not win then
    vim.cmd("belowright split")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
    vim.wo[win].wrap = false
    vim.wo[win].number = false
  end
  if focus then
    vim.api.nvim_set_current_win(win)
  elseif vim.api.nvim_win_is_valid(from) then
    vim.api.nvim_set_current_win(from)
  end
  return win
end

-- jump opens uri at a 0-based position in the window the cursor came
-- from (else a new split): <CR> in the graph and lineage buffers.
function M.jump(uri, line, character)
  local here = vim.api.nvim_get_current_win()
  vim.cmd("wincmd p")
  if vim.api.nvim_get_current_win() == here then
    vim.cmd("aboveleft split")
  end
  vim.cmd("edit " .. vim.fn.fnameescape(vim.uri_to_fname(uri)))
  if line then
    local last = vim.api.nvim_buf_line_count(0)
    pcall(vim.api.nvim_win_set_cursor, 0, { math.min(line + 1, last), character or 0 })
  end
end

-- targets maps a view's lines to places: targets[buf][line] = { uri, line, character }.
M.targets = {}

function M.set_targets(buf, targets)
  M.targets[buf] = targets
  vim.keymap.set("n", "<CR>", function()
    local t = (M.targets[buf] or {})[vim.api.nvim_win_get_cursor(0)[1]]
    if t then
      M.jump(t.uri, t.line, t.character)
    end
  end, { buffer = buf, silent = true, desc = "dfd: open this action's file" })
end

-- Splits a (possibly multi-line) text into lines.
function M.lines(text)
  return vim.split(tostring(text), "\n", { plain = true })
end

-- A field of a decoded JSON object, nil for JSON null.
function M.get(t, key)
  if type(t) ~= "table" then
    return nil
  end
  local v = t[key]
  if v == vim.NIL then
    return nil
  end
  return v
end

return M

-- dfd: Neovim's client side of `dfd serve`, the Dataform language server.
-- Starts one server per Dataform project, chooses its metadata source,
-- and runs dfd's own requests (:DfdPreview, :DfdGraph, …). :help dfd.
local config = require("dfd.config")

local M = {}

local has_08 = vim.fn.has("nvim-0.8") == 1
local has_011 = vim.fn.has("nvim-0.11") == 1
local uv = vim.uv or vim.loop

-- projects[root] = { choice = why this metadata source, settings = {dfd=…} }
-- for every project a dfd client was started for (:DfdStatus, :checkhealth).
M.projects = {}

function M.setup(opts)
  config.set(opts)
end

local function exists(path)
  return path and uv.fs_stat(path) ~= nil
end

-- The Dataform project of a path: the nearest directory upwards that has a
-- root marker (workflow_settings.yaml, or dataform.json for older projects).
function M.root_of_path(path)
  if not path or path == "" then
    return nil
  end
  local dir = vim.fn.fnamemodify(path, ":p")
  if vim.fn.isdirectory(dir) == 0 then
    dir = vim.fn.fnamemodify(dir, ":h")
  end
  dir = dir:gsub("/+$", "")
  if dir == "" then
    dir = "/"
  end
  while true do
    for _, marker in ipairs(config.options.root_markers) do
      if exists(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return nil
    end
    dir = parent
  end
end

-- The project of a buffer, or nil (a scratch buffer, a file elsewhere).
function M.root_of(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  return M.root_of_path(vim.api.nvim_buf_get_name(bufnr))
end

-- settings_for(root) returns the settings sent to the server for a project
-- ({ dfd = … }) and a sentence saying where its metadata source came from.
-- The metadata source: the one the settings name; else the snapshot of
-- config.snapshot when that file exists in the project; else nothing, so
-- the server's default applies (no metadata source).
function M.settings_for(root)
  local o = config.options
  local s = o.settings
  if type(s) == "function" then
    s = s(root)
  end
  s = vim.deepcopy(s or {})
  if type(s.dfd) == "table" then
    s = s.dfd
  end
  local meta = type(s.metadata) == "table" and s.metadata or {}
  local choice
  if meta.source or meta.snapshot then
    choice = "from your settings: source " .. tostring(meta.source or "snapshot")
      .. (meta.snapshot and (", snapshot " .. meta.snapshot) or "")
  elseif o.snapshot and o.snapshot ~= "" then
    local file = vim.fn.expand(o.snapshot)
    if file:sub(1, 1) ~= "/" then
      file = root .. "/" .. file
    end
    if exists(file) then
      s.metadata = vim.tbl_extend("force", meta, { source = "snapshot", snapshot = o.snapshot })
      choice = "snapshot " .. o.snapshot .. " (found in the project)"
    else
      choice = "none: no " .. o.snapshot .. " in the project and no source in your settings, so the server's default"
    end
  else
    choice = "none: no source in your settings, so the server's default"
  end
  return { dfd = s }, choice
end

-- before_init fills the initialize request of a dfd client from its
-- root_dir: the settings and the metadata source of settings_for. Every
-- way of starting dfd uses it (start, lsp/dfd.lua, nvim-lspconfig).
function M.before_init(params, client_config)
  local root = client_config.root_dir
  if not root and params.rootUri and params.rootUri ~= vim.NIL then
    root = vim.uri_to_fname(params.rootUri)
  end
  if not root then
    return
  end
  local settings, choice = M.settings_for(root)
  params.initializationOptions = settings
  client_config.init_options = settings
  -- Answers the server's workspace/configuration pull with the same.
  client_config.settings = settings
  M.projects[root] = { choice = choice, settings = settings }
end

-- Every dfd client (whoever started it: this plugin, vim.lsp.enable,
-- nvim-lspconfig).
function M.clients()
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  local out = {}
  for _, c in pairs(all) do
    if c.name == "dfd" then
      table.insert(out, c)
    end
  end
  return out
end

local function is_stopped(c)
  if has_011 then
    return c:is_stopped()
  end
  return c.is_stopped()
end

-- The dfd client of a buffer: attached to it, else the one of its
-- project, else the only one running.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local clients = M.clients()
  for _, c in ipairs(clients) do
    if vim.lsp.buf_is_attached(bufnr, c.id) then
      return c
    end
  end
  local root = M.root_of_path(vim.api.nvim_buf_get_name(bufnr))
  for _, c in ipairs(clients) do
    if root and c.config.root_dir == root and not is_stopped(c) then
      return c
    end
  end
  if #clients == 1 then
    return clients[1]
  end
  return nil
end

-- request sends a request on one client (client:request on 0.11+, where
-- the dot form is deprecated). The handler gets (err, result, ctx).
function M.request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.request_sync(client, method, params, timeout_ms, bufnr)
  if has_011 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

-- command_client is the dfd client for a command run in bufnr, or nil
-- after saying why there is none.
function M.command_client(bufnr)
  if not M.root_of(bufnr) then
    M.notify("this buffer is not a file of a Dataform project (no "
      .. table.concat(config.options.root_markers, " or ") .. " above it)", vim.log.levels.WARN)
    return nil
  end
  local client = M.client(bufnr)
  if not client then
    M.notify("dfd is not running for this project (see :checkhealth dfd)", vim.log.levels.WARN)
  end
  return client
end

function M.notify(msg, level)
  vim.notify("dfd: " .. msg, level or vim.log.levels.INFO)
end

-- handlers are the client's own handlers. Neovim before 0.12 shows the
-- code lenses of a buffer wiped while their request was in flight, and
-- errors ("Invalid buffer id", seen on 0.7.2): such an answer is dropped.
function M.handlers()
  local on = vim.lsp.codelens.on_codelens
  if vim.lsp.codelens.enable or on == nil then
    return nil
  end
  return {
    ["textDocument/codeLens"] = function(err, result, ctx, cfg)
      if ctx and ctx.bufnr and not vim.api.nvim_buf_is_valid(ctx.bufnr) then
        return
      end
      return on(err, result, ctx, cfg)
    end,
  }
end

-- refresh_codelens asks the current buffer's servers for its code lenses
-- and shows them, as vim.lsp.codelens.refresh() does before 0.12, but
-- drops an answer for a buffer wiped meanwhile: refresh() passes its own
-- handler, so the client's (M.handlers) never sees those answers.
function M.refresh_codelens()
  local bufnr = vim.api.nvim_get_current_buf()
  local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr) }
  pcall(vim.lsp.buf_request, bufnr, "textDocument/codeLens", params, M.codelens_handler(bufnr))
end

-- codelens_handler is refresh_codelens's handler of the answers for bufnr.
function M.codelens_handler(bufnr)
  return function(err, result, ctx, cfg)
    local b = (ctx and ctx.bufnr) or bufnr
    if not vim.api.nvim_buf_is_valid(b) then
      return
    end
    return vim.lsp.codelens.on_codelens(err, result, ctx, cfg)
  end
end

-- client_config is the configuration of the client for a project.
function M.client_config(root)
  local o = config.options
  local settings = M.settings_for(root)
  return {
    name = "dfd",
    cmd = o.cmd,
    root_dir = root,
    init_options = settings,
    settings = settings,
    capabilities = o.capabilities,
    handlers = M.handlers(),
    before_init = M.before_init,
    on_attach = function(client, bufnr)
      M.on_attach(client, bufnr)
    end,
  }
end

-- start starts dfd for a buffer of a Dataform project, or attaches the
-- buffer to the client already running for the project. Returns the
-- client id, or nil outside a project.
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = M.root_of(bufnr)
  if not root then
    return nil
  end
  local cfg = M.client_config(root)
  if vim.lsp.start then
    return vim.lsp.start(cfg, { bufnr = bufnr })
  end
  -- 0.7 has no vim.lsp.start: what it does.
  for _, c in ipairs(M.clients()) do
    if c.config.root_dir == root and not is_stopped(c) then
      vim.lsp.buf_attach_client(bufnr, c.id)
      return c.id
    end
  end
  local id = vim.lsp.start_client(cfg)
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

-- The suggested mappings of setup({ keymaps = true }); :help dfd-keymaps.
M.keymaps = {
  { "K", function() vim.lsp.buf.hover() end, "hover" },
  { "gd", function() vim.lsp.buf.definition() end, "go to definition" },
  { "gr", function() vim.lsp.buf.references() end, "references" },
  { "<leader>rn", function() vim.lsp.buf.rename() end, "rename" },
  { "<leader>ca", function() vim.lsp.buf.code_action() end, "code action" },
  { "<leader>cl", function() vim.lsp.codelens.run() end, "run the code lens of the line" },
  { "<leader>dp", "<Cmd>DfdPreview<CR>", "compiled preview" },
  { "<leader>dg", "<Cmd>DfdGraph<CR>", "dependency graph" },
  { "<leader>dl", "<Cmd>DfdLineage<CR>", "column lineage" },
  { "<leader>ds", "<Cmd>DfdStatus<CR>", "status" },
}

local function set_keymaps(bufnr)
  local want = config.options.keymaps
  if not want then
    return
  end
  local changed = type(want) == "table" and want or {}
  for _, km in ipairs(M.keymaps) do
    local lhs = km[1]
    if changed[lhs] ~= nil then
      lhs = changed[lhs]
    end
    if lhs then
      vim.keymap.set("n", lhs, km[2], { buffer = bufnr, silent = true, desc = "dfd: " .. km[3] })
    end
  end
end

-- on_attach runs once per client and buffer: omnifunc for completion
-- with <C-x><C-o> in .sqlx and .js files, the opt-in keymaps, code lenses
-- and the user's on_attach.
function M.on_attach(client, bufnr)
  local key = "dfd_attached_" .. client.id
  local ok, done = pcall(vim.api.nvim_buf_get_var, bufnr, key)
  if ok and done then
    return
  end
  vim.api.nvim_buf_set_var(bufnr, key, true)
  local ft = vim.bo[bufnr].filetype
  if ft == "sqlx" or ft == "javascript" then
    vim.bo[bufnr].omnifunc = "v:lua.vim.lsp.omnifunc"
  end
  set_keymaps(bufnr)
  if config.options.codelens and vim.lsp.codelens.enable then
    -- 0.12+ shows and refreshes the lenses itself (refresh is deprecated).
    vim.lsp.codelens.enable(true, { bufnr = bufnr })
  elseif config.options.codelens then
    local group = vim.api.nvim_create_augroup("dfd_codelens_" .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost" }, {
      group = group,
      buffer = bufnr,
      callback = function()
        -- refresh() asks the current buffer's servers (0.7 cannot name one).
        if vim.api.nvim_get_current_buf() == bufnr and M.client(bufnr) then
          M.refresh_codelens()
        end
      end,
    })
    if vim.api.nvim_get_current_buf() == bufnr then
      M.refresh_codelens()
    end
  end
  if config.options.on_attach then
    config.options.on_attach(client, bufnr)
  end
end

-- on_compiled runs on dfd/previewChanged (after every compile): the code
-- lenses of the current buffer follow the compile, so that those of a file
-- opened before its project's first compile appear.
function M.on_compiled(ctx)
  if not config.options.codelens then
    return
  end
  if vim.lsp.codelens.enable then
    -- 0.12+: as if the server had sent workspace/codeLens/refresh.
    local refresh = vim.lsp.handlers["workspace/codeLens/refresh"]
    if refresh then
      pcall(refresh, nil, vim.NIL, { method = "workspace/codeLens/refresh", client_id = ctx.client_id })
    end
    return
  end
  if vim.lsp.buf_is_attached(vim.api.nvim_get_current_buf(), ctx.client_id) then
    M.refresh_codelens()
  end
end

-- Used by plugin/dfd.lua.
M.has_08 = has_08

return M

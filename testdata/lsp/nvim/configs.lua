-- Headless Neovim test of the Neovim configurations docs/editors.md gives,
-- run by daemon/nvim_test.go (TestNeovimConfigs) with the plugin in
-- neovim/ on the runtimepath (Neovim's startup sourced plugin/dfd.lua):
--   nvim --headless --clean --cmd 'set rtp^=neovim' -c 'luafile testdata/lsp/nvim/configs.lua'
-- Environment: DFD_CONFIG (a configuration file to load after startup, as
-- a user's init.lua would: neovim/examples/setup.lua or lspconfig.lua;
-- empty for the plugin alone), DFD_PROJECT (a project with a broken file
-- and metadata.json at its root), DFD_OUTSIDE (a .js file outside any
-- project), DFD_RESULT (report file). `dfd` must be on PATH: the
-- configurations start it by that name.
--
-- The configurations themselves must work on Debian's Neovim 0.7.2 as on
-- 0.8+: nothing of Neovim is supplied here. nvim-lspconfig cannot be
-- installed from the registries CI reaches, so when it is missing this
-- script supplies the part of its API the lspconfig configuration uses:
-- configs[name] = { default_config = … }, util.root_pattern, and setup(),
-- which — as lspconfig does — starts or joins a client on FileType for
-- buffers whose root_dir(fname) is found (with vim.lsp.start where it
-- exists, else vim.lsp.start_client, as lspconfig did on 0.7).
-- What is tested is the configurations themselves: their command, file
-- types, root detection and settings, against the real dfd.
-- Client calls in the form each Neovim wants (client:f() from 0.11 on,
-- where client.f() is deprecated), and the client list.
local new_api = vim.fn.has('nvim-0.11') == 1
local function call(client, f, ...)
  if new_api then return client[f](client, ...) end
  return client[f](...)
end
local function all_clients()
  return (vim.lsp.get_clients or vim.lsp.get_active_clients)()
end
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/report.lua')
local log, check, finish = report.log, report.check, report.finish

if not pcall(require, 'lspconfig') then
  local configs = {}
  package.preload['lspconfig.configs'] = function() return configs end
  package.preload['lspconfig.util'] = function()
    return {
      root_pattern = function(...)
        local markers = { ... }
        return function(fname)
          local dir = vim.fn.fnamemodify(fname, ':p:h')
          for _, m in ipairs(markers) do
            local f = vim.fn.findfile(m, dir .. ';')
            if f ~= '' then return vim.fn.fnamemodify(f, ':p:h') end
          end
        end
      end,
    }
  end
  package.preload['lspconfig'] = function()
    return setmetatable({}, { __index = function(_, name)
      return { setup = function(opts)
        local cfg = vim.tbl_deep_extend('force', configs[name].default_config, opts or {})
        vim.api.nvim_create_autocmd('FileType', { pattern = cfg.filetypes, callback = function(args)
          local root = cfg.root_dir(vim.api.nvim_buf_get_name(args.buf))
          if not root then return end
          local config = vim.tbl_extend('force', cfg, { name = name, root_dir = root })
          if vim.lsp.start then
            vim.lsp.start(config)
            return
          end
          for _, c in pairs(all_clients()) do
            if c.name == name and c.config.root_dir == root then
              vim.lsp.buf_attach_client(args.buf, c.id)
              return
            end
          end
          local id = vim.lsp.start_client(config)
          if id then vim.lsp.buf_attach_client(args.buf, id) end
        end })
      end }
    end })
  end
end

local ok, err = pcall(function()
  local root, outside = os.getenv('DFD_PROJECT'), os.getenv('DFD_OUTSIDE')
  if (os.getenv('DFD_CONFIG') or '') ~= '' then
    dofile(os.getenv('DFD_CONFIG'))
  end

  local function dfd_clients()
    local out = {}
    for _, c in pairs(all_clients()) do
      if c.name == 'dfd' then table.insert(out, c) end
    end
    return out
  end

  vim.cmd('edit ' .. root .. '/definitions/broken.sqlx')
  local broken = vim.api.nvim_get_current_buf()
  check('.sqlx has filetype sqlx', vim.bo[broken].filetype == 'sqlx', vim.bo[broken].filetype)
  check('dfd started for a .sqlx file', vim.wait(20000, function() return #dfd_clients() == 1 end, 20))
  local client = dfd_clients()[1]
  check('root_dir is the project', client and client.config.root_dir == root, client and client.config.root_dir)
  check('diagnostics from dfd', vim.wait(30000, function() return #vim.diagnostic.get(broken) > 0 end, 20))
  local d = vim.diagnostic.get(broken)[1]
  check('diagnostic names the missing ref', d and d.message:find('no_such_table', 1, true) ~= nil, d and d.message)

  -- A JavaScript file of the same project joins the same client.
  vim.cmd('edit ' .. root .. '/definitions/jit/daily_clicks.js')
  local js = vim.api.nvim_get_current_buf()
  check('one client for the project', vim.wait(5000, function()
    return #dfd_clients() == 1 and vim.lsp.buf_is_attached(js, client.id)
  end, 20))
  -- The settings reached dfd: the JiT preview uses metadata.json.
  local res = call(client, 'request_sync', 'dfd/preview', { textDocument = { uri = vim.uri_from_bufnr(js) } }, 30000, js)
  local a = res and res.result and res.result.actions and res.result.actions[1]
  local jp = a and a.jitPreview
  check('settings reached dfd (snapshot adapter)', jp and jp.adapter and jp.adapter:find('metadata.json', 1, true) ~= nil,
    vim.inspect(jp and jp.adapter))
  check('JiT preview SQL from the snapshot', jp and jp.sql and jp.sql.query and jp.sql.query:find('campaign_name', 1, true) ~= nil)

  -- A file outside any Dataform project does not start dfd.
  vim.cmd('edit ' .. outside)
  local other = vim.api.nvim_get_current_buf()
  vim.wait(500)
  check('no client outside a project', not vim.lsp.buf_is_attached(other, client.id) and #dfd_clients() == 1)

  call(client, 'stop')
  check('stopped', vim.wait(10000, function() return call(client, 'is_stopped') end, 20))
end)
if not ok then check('script', false, tostring(err)) end
finish()

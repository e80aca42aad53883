-- :checkhealth dfd — the binary, its version, the project, the metadata
-- source, credentials and workers. Neovim 0.7 finds this file as 0.8+
-- does (lua/dfd/health.lua); 0.7 and 0.8 report through report_*, 0.9+
-- through start/ok/warn/error/info.
local dfd = require("dfd")
local config = require("dfd.config")

local M = {}

local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error
local info = health.info or health.report_info

local uv = vim.uv or vim.loop

local function exists(path)
  return path and path ~= "" and uv.fs_stat(path) ~= nil
end

-- The project roots to report: those dfd runs for, else the one of the
-- working directory.
local function roots()
  local seen, out = {}, {}
  for _, c in ipairs(dfd.clients()) do
    local r = c.config.root_dir
    if r and not seen[r] then
      seen[r] = true
      table.insert(out, { root = r, client = c })
    end
  end
  if #out == 0 then
    local r = dfd.root_of_path(vim.fn.getcwd())
    if r then
      table.insert(out, { root = r })
    end
  end
  return out
end

-- Where BigQuery credentials would come from, in the order dfd tries them
-- (docs/bigquery.md#credentials): the setting, the project's
-- .df-credentials.json, $GOOGLE_APPLICATION_CREDENTIALS, gcloud's
-- application default credentials.
local function credentials(root, settings)
  local found = {}
  local bq = type(settings.bigquery) == "table" and settings.bigquery or {}
  if bq.credentials then
    local f = vim.fn.expand(bq.credentials)
    if f:sub(1, 1) ~= "/" then f = root .. "/" .. f end
    table.insert(found, { file = f, what = "dfd.bigquery.credentials", ok = exists(f) })
  end
  table.insert(found, { file = root .. "/.df-credentials.json", what = "the project's .df-credentials.json", ok = exists(root .. "/.df-credentials.json") })
  local gac = os.getenv("GOOGLE_APPLICATION_CREDENTIALS")
  if gac and gac ~= "" then
    table.insert(found, { file = gac, what = "$GOOGLE_APPLICATION_CREDENTIALS", ok = exists(gac) })
  end
  local cfg = os.getenv("CLOUDSDK_CONFIG") or ((os.getenv("XDG_CONFIG_HOME") or (os.getenv("HOME") .. "/.config")) .. "/gcloud")
  local adc = cfg .. "/application_default_credentials.json"
  table.insert(found, { file = adc, what = "gcloud's application default credentials", ok = exists(adc) })
  return found
end

function M.check()
  start("dfd: the server")
  local cmd = config.options.cmd
  local exe = vim.fn.exepath(cmd[1])
  if exe == "" then
    error("dfd binary not found: " .. cmd[1], {
      "build it from a clone: CGO_ENABLED=0 go build -o ~/.local/bin/dfd ./cmd/dfd, with ~/.local/bin on PATH",
      "or give its path: require('dfd').setup({ cmd = { '/path/to/dfd', 'serve' } })",
    })
  else
    ok("binary: " .. exe)
    local out = vim.fn.system({ exe, "version" })
    if vim.v.shell_error == 0 then
      ok("version: " .. vim.trim(out))
    else
      error("`" .. exe .. " version` failed: " .. vim.trim(out))
    end
  end
  local v = vim.version()
  info(string.format("Neovim %d.%d.%d", v.major, v.minor, v.patch))

  local list = roots()
  if #list == 0 then
    warn("no Dataform project here (no " .. table.concat(config.options.root_markers, " or ") .. " above "
      .. vim.fn.getcwd() .. "): open a file of one, or :cd into it, and run :checkhealth dfd again")
    return
  end
  for _, p in ipairs(list) do
    start("dfd: project " .. p.root)
    ok("project root: " .. p.root)
    local chosen = dfd.projects[p.root]
    local settings, choice
    if chosen then
      settings, choice = chosen.settings, chosen.choice
    else
      settings, choice = dfd.settings_for(p.root)
    end
    settings = settings.dfd or {}
    info("metadata source chosen by the plugin: " .. choice)
    if not p.client then
      warn("dfd is not running for this project: open one of its files (autostart is "
        .. tostring(config.options.autostart) .. ")")
    else
      local res = dfd.request_sync(p.client, "dfd/status", vim.NIL, 10000)
      local status = res and res.result
      local project
      for _, sp in ipairs((status and status.projects) or {}) do
        if vim.uri_to_fname(sp.root) == p.root then
          project = sp
        end
      end
      if not status then
        error("dfd/status did not answer: " .. vim.inspect(res and res.err))
      elseif not project then
        warn("the server has not opened this project yet (it is still starting, or the root is not a Dataform project)")
      else
        local m = project.metadata or {}
        local text = string.format("metadata source: %s, %s%s", m.source or "?", m.state or "?",
          (m.detail and m.detail ~= "") and (": " .. m.detail) or "")
        if m.state == "error" then
          error(text, { "see :help dfd-metadata" })
        elseif m.source == "none" then
          info(text .. " (hovers show no warehouse columns, JiT database calls fail)")
        else
          ok(text)
        end
        if project.workers and project.workers ~= vim.NIL then
          local w = project.workers
          ok(string.format("workers: %d ready, %d busy, %d total", w.ready or 0, w.busy or 0, w.total or 0))
        else
          info("workers: none, the server compiles in-process")
        end
        if project.error and project.error ~= vim.NIL then
          error("project: " .. project.error)
        else
          ok(string.format("compiled with @dataform/core %s: %d actions", project.coreVersion or "?", project.actions or 0))
        end
      end
    end
    local meta = type(settings.metadata) == "table" and settings.metadata or {}
    local any = false
    for _, c in ipairs(credentials(p.root, settings)) do
      if c.ok then
        any = true
        ok("credentials: " .. c.what .. ": " .. c.file)
      end
    end
    if not any then
      if meta.source == "bigquery" then
        error("credentials: none found, so the BigQuery source cannot connect", { "see docs/bigquery.md#credentials, or run `gcloud auth application-default login`" })
      else
        info("credentials: none found (only the bigquery source needs them)")
      end
    end
  end
end

return M

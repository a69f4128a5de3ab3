-- Drives the Calvin language server from Neovim (0.7+) as a real, third-party
-- LSP client, headless. Run by test/nvim/nvim.test.ts as
--   nvim --headless -u NONE -i NONE -n -c 'luafile test/nvim/diagnostics.lua'
-- Environment:
--   CALVIN_NODE        node executable                CALVIN_CLI   packages/cli/out/calvin.cjs
--   CALVIN_ROOT        the workspace folder (root_dir) CALVIN_FILE  the file to open
--   CALVIN_OPEN_COUNT  how many diagnostics to wait for after opening the file
--   CALVIN_STEPS       JSON list of edits, each {"line": L (1-based), "text": "...", "count": N}:
--                      replace line L (in the buffer, so Neovim sends didChange)
--                      and wait until the buffer has exactly N diagnostics
--   CALVIN_HOVER       JSON {"line": L, "col": C} (1-based): a hover request at the end
--   CALVIN_TIMEOUT_MS  time limit of every wait (default 20000)
-- Output: one JSON object per line on stdout, prefixed with "CALVIN-NVIM ".
-- (print() goes to the message area when headless, so this writes to io.stdout.)
-- Exit status: 0 when every wait succeeded, else non-zero (cquit).

local function emit(obj)
  io.stdout:write('CALVIN-NVIM ' .. vim.fn.json_encode(obj) .. '\n')
  io.stdout:flush()
end

local function env(name, default)
  local v = os.getenv(name)
  if v == nil or v == '' then
    if default ~= nil then return default end
    error('missing environment variable ' .. name)
  end
  return v
end

-- The buffer's diagnostics, sorted, with the LSP code (d.code in newer Neovims,
-- d.user_data.lsp.code in 0.7).
local function diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then code = d.user_data.lsp.code end
    table.insert(out, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, message = d.message, source = d.source, code = code,
    })
  end
  table.sort(out, function(a, b)
    if a.lnum ~= b.lnum then return a.lnum < b.lnum end
    return a.col < b.col
  end)
  return out
end

local function main()
  local node = env('CALVIN_NODE', 'node')
  local cli = env('CALVIN_CLI')
  local root = env('CALVIN_ROOT')
  local file = env('CALVIN_FILE')
  local timeout = tonumber(env('CALVIN_TIMEOUT_MS', '20000'))
  local open_count = tonumber(env('CALVIN_OPEN_COUNT', '1'))
  local steps = vim.fn.json_decode(env('CALVIN_STEPS', '[]'))
  local exited = nil

  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()

  local start = vim.loop.hrtime()
  local client_id = vim.lsp.start_client({
    name = 'calvin',
    cmd = { node, cli, 'lsp' },
    root_dir = root,
    flags = { debounce_text_changes = 0 },
    -- The test asserts the front end's diagnostics of a file with errors.
    init_options = { verifyOn = 'never' },
    on_exit = function(code, signal) exited = { code = code, signal = signal } end,
  })
  if not client_id then
    emit({ event = 'error', message = 'vim.lsp.start_client returned nil' })
    return 2
  end
  vim.lsp.buf_attach_client(bufnr, client_id)

  local function wait_for(what, predicate)
    local ok = vim.wait(timeout, function() return exited ~= nil or predicate() end, 20)
    if exited ~= nil then
      emit({ event = 'error', message = 'the language server exited while waiting for ' .. what, exit = exited })
      return false
    end
    if not ok then
      emit({ event = 'timeout', waiting_for = what, diagnostics = diagnostics(bufnr) })
      return false
    end
    return true
  end

  local function count_is(n) return function() return #vim.diagnostic.get(bufnr) == n end end

  -- 1. Opening the file (didOpen): its diagnostics arrive.
  if not wait_for(open_count .. ' diagnostics after opening', count_is(open_count)) then return 1 end
  emit({ event = 'opened', ms = math.floor((vim.loop.hrtime() - start) / 1e6), diagnostics = diagnostics(bufnr) })

  -- 2. Edits in the buffer (Neovim sends didChange, incrementally when the server asks for it).
  for i, step in ipairs(steps) do
    local t0 = vim.loop.hrtime()
    vim.api.nvim_buf_set_lines(bufnr, step.line - 1, step.line, true, { step.text })
    if not wait_for('step ' .. i .. ': ' .. step.count .. ' diagnostics', count_is(step.count)) then return 1 end
    emit({ event = 'step', step = i, ms = math.floor((vim.loop.hrtime() - t0) / 1e6), diagnostics = diagnostics(bufnr) })
  end

  -- 3. A request through Neovim's client.
  local hover = os.getenv('CALVIN_HOVER')
  if hover and hover ~= '' then
    local at = vim.fn.json_decode(hover)
    local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = at.line - 1, character = at.col - 1 } }
    local responses, err = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', params, timeout)
    if not responses then
      emit({ event = 'error', message = 'hover: ' .. tostring(err) })
      return 1
    end
    local value = vim.NIL
    for _, r in pairs(responses) do
      if r.err or r.error then
        emit({ event = 'error', message = 'hover failed', error = r.err or r.error })
        return 1
      end
      if r.result and r.result.contents then value = r.result.contents.value or vim.NIL end
    end
    emit({ event = 'hover', value = value })
  end

  -- 4. Orderly shutdown (shutdown + exit).
  vim.lsp.stop_client(client_id)
  vim.wait(timeout, function() return exited ~= nil end, 20)
  emit({ event = 'stopped', exit = exited or vim.NIL })
  return 0
end

local ok, result = pcall(main)
if not ok then
  emit({ event = 'error', message = tostring(result) })
  result = 3
end
if result == 0 then
  vim.cmd('qa!')
else
  vim.cmd('cquit ' .. tostring(result))
end

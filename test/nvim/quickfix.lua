-- Neovim (0.7+) applies Calvin's "Add writable_if" quick fix, headless. Run by
-- test/nvim/nvim.test.ts as
--   nvim --headless -u NONE -i NONE -n -c 'luafile test/nvim/quickfix.lua'
-- Environment: CALVIN_NODE, CALVIN_CLI, CALVIN_ROOT, CALVIN_FILE (an
-- unannotated lock-protected counter), CALVIN_TIMEOUT_MS (default 60000).
-- It waits for the race diagnostics, asks for the code actions at the first
-- one, applies the action whose title starts with "Add 'writable_if", and waits
-- until every check of the file (calvin/checkStatus) is verified with nothing
-- pending and no diagnostic. Output: JSON lines prefixed with "CALVIN-NVIM ".

local function emit(obj)
  io.stdout:write('CALVIN-NVIM ' .. vim.fn.json_encode(obj) .. '\n')
  io.stdout:flush()
end

local function main()
  local timeout = tonumber(os.getenv('CALVIN_TIMEOUT_MS') or '60000')
  local status = nil
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('CALVIN_FILE')))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = 'calvin',
    cmd = { os.getenv('CALVIN_NODE'), os.getenv('CALVIN_CLI'), 'lsp' },
    root_dir = os.getenv('CALVIN_ROOT'),
    flags = { debounce_text_changes = 0 },
    init_options = { verifyOn = 'change', maxWorkers = 1, diskCache = false, infer = false },
    handlers = { ['calvin/checkStatus'] = function(_, result) status = result end },
  })
  vim.lsp.buf_attach_client(bufnr, client_id)
  local function done()
    if status == nil or status.pending or #status.checks == 0 then return false end
    for _, c in ipairs(status.checks) do
      if c.state ~= 'verified' and c.state ~= 'failed' then return false end
    end
    return true
  end
  if not vim.wait(timeout, function() return done() and #vim.diagnostic.get(bufnr) > 0 end, 50) then
    emit({ event = 'timeout', waiting_for = 'the race diagnostics' })
    return 1
  end
  local diags = vim.diagnostic.get(bufnr)
  emit({ event = 'diagnostics', count = #diags })
  local d = diags[1]
  -- Neovim 0.7 keeps only some LSP fields (code, data, ...) in user_data.lsp: the range and message come from the item
  local lsp_diag = { range = { start = { line = d.lnum, character = d.col }, ['end'] = { line = d.end_lnum, character = d.end_col } }, message = d.message, source = d.source }
  for k, v in pairs((d.user_data and d.user_data.lsp) or {}) do lsp_diag[k] = v end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = lsp_diag.range,
    context = { diagnostics = { lsp_diag } },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, timeout)
  local chosen = nil
  local titles = {}
  for _, r in pairs(responses or {}) do
    for _, a in ipairs(r.result or {}) do
      table.insert(titles, a.title)
      if chosen == nil and a.title:find("^Add 'writable_if") then chosen = a end
    end
  end
  emit({ event = 'actions', titles = titles })
  if chosen == nil then return 1 end
  vim.lsp.util.apply_workspace_edit(chosen.edit, 'utf-16')
  status = nil
  if not vim.wait(timeout, function()
    if not done() then return false end
    for _, c in ipairs(status.checks) do if c.state ~= 'verified' then return false end end
    return #vim.diagnostic.get(bufnr) == 0
  end, 50) then
    emit({ event = 'timeout', waiting_for = 'a verified program', status = status, diagnostics = #vim.diagnostic.get(bufnr) })
    return 1
  end
  emit({ event = 'verified', checks = status.checks, text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') })
  vim.lsp.stop_client(client_id)
  return 0
end

local ok, result = pcall(main)
if not ok then emit({ event = 'error', message = tostring(result) }) end
if ok and result == 0 then vim.cmd('qall!') else vim.cmd('cquit 1') end

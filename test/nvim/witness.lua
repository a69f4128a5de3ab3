-- Neovim (0.7+) sees a witness (issue 14) as a diagnostic's related
-- information. Run by test/nvim/nvim.test.ts as
--   nvim --headless -u NONE -i NONE -n -c 'luafile test/nvim/witness.lua'
-- Environment: CALVIN_NODE, CALVIN_CLI, CALVIN_ROOT, CALVIN_FILE (a buggy
-- program), CALVIN_TIMEOUT_MS (default 60000). It waits until an error
-- diagnostic has related information whose messages start with "witness ",
-- and prints them. Output: JSON lines prefixed with "CALVIN-NVIM ".

local function emit(obj)
  io.stdout:write('CALVIN-NVIM ' .. vim.fn.json_encode(obj) .. '\n')
  io.stdout:flush()
end

local function main()
  local timeout = tonumber(os.getenv('CALVIN_TIMEOUT_MS') or '60000')
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('CALVIN_FILE')))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = 'calvin',
    cmd = { os.getenv('CALVIN_NODE'), os.getenv('CALVIN_CLI'), 'lsp' },
    root_dir = os.getenv('CALVIN_ROOT'),
    flags = { debounce_text_changes = 0 },
    init_options = { verifyOn = 'change', maxWorkers = 1, diskCache = false },
  })
  vim.lsp.buf_attach_client(bufnr, client_id)
  local found = nil
  local function witness_steps()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      local lsp = d.user_data and d.user_data.lsp or {}
      local steps = {}
      for _, r in ipairs(lsp.relatedInformation or {}) do
        if r.message:find('^witness ') then table.insert(steps, { message = r.message, line = r.location.range.start.line }) end
      end
      if #steps > 0 then return { code = d.code, lnum = d.lnum, steps = steps } end
    end
    return nil
  end
  if not vim.wait(timeout, function() found = witness_steps(); return found ~= nil end, 50) then
    emit({ event = 'timeout', diagnostics = #vim.diagnostic.get(bufnr) })
    return 1
  end
  emit({ event = 'witness', code = found.code, lnum = found.lnum, steps = found.steps })
  vim.lsp.stop_client(client_id)
  return 0
end

local ok, result = pcall(main)
if not ok then emit({ event = 'error', message = tostring(result) }) end
if ok and result == 0 then vim.cmd('qall!') else vim.cmd('cquit 1') end

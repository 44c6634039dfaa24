-- Neovim 0.11+: enable the server defined in lsp/cellguard.lua.
vim.lsp.enable('cellguard')

-- Fix all safe cellguard findings on save.
vim.api.nvim_create_autocmd('BufWritePre', {
  pattern = { '*.py', '*.md' },
  callback = function(args)
    local clients = vim.lsp.get_clients({ bufnr = args.buf, name = 'cellguard' })
    if #clients == 0 then
      return
    end
    vim.lsp.buf.code_action({
      context = { only = { 'source.fixAll.cellguard' }, diagnostics = {} },
      apply = true,
    })
  end,
})

-- Inlay hints (`actions 2/3`) are off by default in Neovim:
vim.api.nvim_create_autocmd('LspAttach', {
  callback = function(args)
    local client = vim.lsp.get_client_by_id(args.data.client_id)
    if client and client.name == 'cellguard' then
      vim.lsp.inlay_hint.enable(true, { bufnr = args.buf })
    end
  end,
})

-- Neovim 0.10 with nvim-lspconfig instead:
-- local configs = require('lspconfig.configs')
-- configs.cellguard = { default_config = {
--   cmd = { 'cellguard', 'server' }, filetypes = { 'python', 'markdown' },
--   root_dir = require('lspconfig.util').root_pattern('cellguard.toml', 'pyproject.toml', '.git'),
--   init_options = { settings = {} } } }
-- require('lspconfig').cellguard.setup({})

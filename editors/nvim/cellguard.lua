-- cellguard language server for Neovim 0.11+ (vim.lsp.config / vim.lsp.enable).
-- Put this file at ~/.config/nvim/lsp/cellguard.lua and call vim.lsp.enable('cellguard'),
-- or paste the table into vim.lsp.config('cellguard', { ... }).
return {
  cmd = { 'cellguard', 'server' },
  filetypes = { 'python', 'markdown' },
  root_markers = { 'cellguard.toml', '.cellguard.toml', 'pyproject.toml', '.git' },
  -- Sent as initializationOptions; the server also accepts the same table through
  -- workspace/didChangeConfiguration (`settings = { cellguard = { ... } }`).
  init_options = {
    settings = {
      -- configuration = 'configs/cellguard.toml',
      -- knowledgeBase = { 'kb/actions.json' },
      -- ignore = { 'SHP004' },
      fixAll = true,
      inlayHints = { enable = true },
    },
  },
}

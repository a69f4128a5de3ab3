export * from './start.js';
export * from './calvin-lsp-module.js';

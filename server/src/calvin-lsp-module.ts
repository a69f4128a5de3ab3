import type { LangiumSharedServices, PartialLangiumServices, PartialLangiumSharedServices } from 'langium/lsp';
import type { Module } from 'langium';
import type { CalvinAddedServices } from '@calvin/language';
import type { LangiumServices } from 'langium/lsp';
import { CalvinDocumentSymbolProvider } from './calvin-document-symbols.js';
import { CalvinHoverProvider } from './calvin-hover.js';
import { CalvinSemanticTokenProvider } from './calvin-semantic-tokens.js';
import { CalvinDocumentBuilder, CalvinDocumentUpdateHandler } from './calvin-document-updates.js';
import { CalvinCodeLensProvider, CalvinCommandHandler } from './verification/lsp-features.js';
import { CalvinCodeActionProvider } from './quickfix/code-actions.js';
import { CalvinCompletionProvider, CalvinDefinitionProvider, CalvinNodeKindProvider, CalvinReferencesProvider, CalvinRenameProvider } from './calvin-lsp-features.js';

export type CalvinLspServices = LangiumServices & CalvinAddedServices;

/** The editor features Calvin adds to Langium's defaults. */
export const CalvinLspModule: Module<CalvinLspServices, PartialLangiumServices> = {
    lsp: {
        HoverProvider: (services) => new CalvinHoverProvider(services),
        SemanticTokenProvider: (services) => new CalvinSemanticTokenProvider(services),
        DocumentSymbolProvider: (services) => new CalvinDocumentSymbolProvider(services),
        CompletionProvider: (services) => new CalvinCompletionProvider(services),
        RenameProvider: (services) => new CalvinRenameProvider(services),
        DefinitionProvider: (services) => new CalvinDefinitionProvider(services),
        ReferencesProvider: (services) => new CalvinReferencesProvider(services),
        CodeLensProvider: (services) => new CalvinCodeLensProvider(services),
        CodeActionProvider: (services) => new CalvinCodeActionProvider(services),
    },
};

export const CalvinLspSharedModule: Module<LangiumSharedServices, PartialLangiumSharedServices> = {
    lsp: {
        DocumentUpdateHandler: (services) => new CalvinDocumentUpdateHandler(services),
        NodeKindProvider: () => new CalvinNodeKindProvider(),
        ExecuteCommandHandler: (services) => new CalvinCommandHandler(services),
    },
    workspace: {
        DocumentBuilder: (services) => new CalvinDocumentBuilder(services),
    },
};

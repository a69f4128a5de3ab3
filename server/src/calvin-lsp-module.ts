import type { LangiumSharedServices, PartialLangiumServices, PartialLangiumSharedServices } from 'langium/lsp';
import type { LangiumCoreServices, Module, URI } from 'langium';
import { DefaultServiceRegistry } from 'langium';
import type { CalvinAddedServices } from '@calvin/language';
import type { LangiumServices } from 'langium/lsp';
import { CalvinDocumentSymbolProvider } from './calvin-document-symbols.js';
import { CalvinHoverProvider } from './calvin-hover.js';
import { CalvinSemanticTokenProvider } from './calvin-semantic-tokens.js';
import { CalvinDocumentUpdateHandler, EditorDocumentBuilder, EditorLangiumDocuments } from './calvin-document-updates.js';
import { CalvinCodeLensProvider, CalvinCommandHandler } from './verification/lsp-features.js';
import { CalvinCodeActionProvider } from './quickfix/code-actions.js';
import { VerificationService } from './verification/service.js';
import { CalvinCompletionProvider, CalvinDefinitionProvider, CalvinFoldingRangeProvider, CalvinNodeKindProvider, CalvinReferencesProvider, CalvinRenameProvider } from './calvin-lsp-features.js';

export type CalvinLspServices = LangiumServices & CalvinAddedServices;

/** The services shared by the documents of a server: Langium's, and the verification service. */
export type CalvinSharedServices = LangiumSharedServices & { verification: { Service: VerificationService } };

/** The verification service of a server (created with the shared services). */
export function verificationOf(shared: LangiumSharedServices): VerificationService {
    return (shared as CalvinSharedServices).verification.Service;
}

/** The editor features Calvin adds to Langium's defaults. */
export const CalvinLspModule: Module<CalvinLspServices, PartialLangiumServices> = {
    lsp: {
        HoverProvider: (services) => new CalvinHoverProvider(services),
        SemanticTokenProvider: (services) => new CalvinSemanticTokenProvider(services),
        DocumentSymbolProvider: (services) => new CalvinDocumentSymbolProvider(services),
        CompletionProvider: (services) => new CalvinCompletionProvider(services),
        RenameProvider: (services) => new CalvinRenameProvider(services),
        FoldingRangeProvider: (services) => new CalvinFoldingRangeProvider(services),
        DefinitionProvider: (services) => new CalvinDefinitionProvider(services),
        ReferencesProvider: (services) => new CalvinReferencesProvider(services),
        CodeLensProvider: (services) => new CalvinCodeLensProvider(services),
        CodeActionProvider: (services) => new CalvinCodeActionProvider(services),
    },
};

/**
 * The languages of the server's documents: Calvin's also for a document that
 * is not a file (`untitled:`) once the editor has closed it. Langium finds a
 * document's language by the editor's languageId while it is open, else by
 * the file extension, which such a URI lacks: a rebuild that looked at it
 * (whether an edit elsewhere affects it) failed with an internal error.
 */
export class CalvinServiceRegistry extends DefaultServiceRegistry {
    override getServices(uri: URI): LangiumCoreServices {
        try {
            return super.getServices(uri);
        } catch (e) {
            const all = this.all;
            if (uri.scheme !== 'file' && all.length === 1) return all[0];
            throw e;
        }
    }
}

export const CalvinLspSharedModule: Module<CalvinSharedServices, PartialLangiumSharedServices & { verification: { Service: VerificationService } }> = {
    verification: {
        Service: (services) => new VerificationService(services),
    },
    ServiceRegistry: (services) => new CalvinServiceRegistry(services),
    lsp: {
        DocumentUpdateHandler: (services) => new CalvinDocumentUpdateHandler(services),
        NodeKindProvider: () => new CalvinNodeKindProvider(),
        ExecuteCommandHandler: (services) => new CalvinCommandHandler(services),
    },
    workspace: {
        DocumentBuilder: (services) => new EditorDocumentBuilder(services),
        LangiumDocuments: (services) => new EditorLangiumDocuments(services),
    },
};

import type { LangiumCoreServices, LangiumSharedCoreServices, Module, PartialLangiumCoreServices, PartialLangiumSharedCoreServices, FileSystemProvider } from 'langium';
import { EmptyFileSystem, createDefaultCoreModule, createDefaultSharedCoreModule, inject } from 'langium';
import { CalvinGeneratedModule, CalvinGeneratedSharedModule } from './generated/module.js';
import { CalvinTokenBuilder } from './parser/calvin-token-builder.js';
import { CalvinLexer, createCalvinParser } from './parser/calvin-parser.js';
import { CalvinValueConverter } from './parser/calvin-value-converter.js';
import { CalvinScopeComputation, CalvinScopeProvider } from './scoping/calvin-scope.js';
import { CalvinTypeSystem } from './types/calvin-types.js';
import { CalvinDocumentValidator } from './validation/calvin-document-validator.js';
import { registerValidationChecks } from './validation/calvin-validator.js';
import { CalvinWorkspaceManager } from './workspace/calvin-workspace-manager.js';
import { CalvinDocumentBuilder } from './workspace/calvin-document-builder.js';
import { CalvinIndexManager } from './workspace/calvin-index-manager.js';
import { CalvinLinker } from './scoping/calvin-linker.js';

/** Services Calvin adds to Langium's. */
export interface CalvinAddedServices {
    types: {
        TypeSystem: CalvinTypeSystem;
    };
}

export type CalvinServices = LangiumCoreServices & CalvinAddedServices;

export const CalvinModule: Module<CalvinServices, PartialLangiumCoreServices & CalvinAddedServices> = {
    parser: {
        TokenBuilder: () => new CalvinTokenBuilder(),
        Lexer: (services) => new CalvinLexer(services),
        LangiumParser: (services) => createCalvinParser(services),
        ValueConverter: () => new CalvinValueConverter(),
    },
    references: {
        ScopeComputation: (services) => new CalvinScopeComputation(services),
        ScopeProvider: (services) => new CalvinScopeProvider(services),
        Linker: (services) => new CalvinLinker(services),
    },
    validation: {
        DocumentValidator: (services) => new CalvinDocumentValidator(services),
    },
    types: {
        TypeSystem: (services) => new CalvinTypeSystem(services.shared),
    },
};

export const CalvinSharedModule: Module<LangiumSharedCoreServices, PartialLangiumSharedCoreServices> = {
    workspace: {
        WorkspaceManager: (services) => new CalvinWorkspaceManager(services),
        DocumentBuilder: (services) => new CalvinDocumentBuilder(services),
        IndexManager: (services) => new CalvinIndexManager(services),
    },
};

export interface CalvinCoreContext {
    fileSystemProvider?: () => FileSystemProvider;
}

/** Core (LSP-free) services, as used by the CLI and tests. */
export function createCalvinCoreServices(context: CalvinCoreContext = {}): { shared: LangiumSharedCoreServices; Calvin: CalvinServices } {
    const shared = inject(
        createDefaultSharedCoreModule({ fileSystemProvider: context.fileSystemProvider ?? (() => EmptyFileSystem.fileSystemProvider()) }),
        CalvinGeneratedSharedModule,
        CalvinSharedModule,
    );
    const Calvin = inject(createDefaultCoreModule({ shared }), CalvinGeneratedModule, CalvinModule);
    shared.ServiceRegistry.register(Calvin);
    registerValidationChecks(Calvin);
    return { shared, Calvin };
}

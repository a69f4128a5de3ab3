import type { LangiumDocument, LangiumDocumentFactory, LangiumSharedCoreServices, WorkspaceFolder } from 'langium';
import { DefaultWorkspaceManager } from 'langium';
import { BUILTIN_SOURCE, BUILTIN_URI } from '../builtins.js';

/** Loads the built-in document (implicit `holder` and `length`) with every workspace. */
export class CalvinWorkspaceManager extends DefaultWorkspaceManager {
    private readonly documentFactory: LangiumDocumentFactory;

    constructor(services: LangiumSharedCoreServices) {
        super(services);
        this.documentFactory = services.workspace.LangiumDocumentFactory;
    }

    protected override async loadAdditionalDocuments(folders: WorkspaceFolder[], collector: (document: LangiumDocument) => void): Promise<void> {
        await super.loadAdditionalDocuments(folders, collector);
        collector(this.documentFactory.fromString(BUILTIN_SOURCE, BUILTIN_URI));
    }
}

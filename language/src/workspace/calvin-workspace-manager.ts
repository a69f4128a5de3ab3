import type { LangiumDocument, LangiumDocumentFactory, LangiumSharedCoreServices, WorkspaceFolder } from 'langium';
import { DefaultWorkspaceManager } from 'langium';
import { BUILTIN_SOURCE, BUILTIN_URI } from '../builtins.js';

/**
 * Loads the built-in document (implicit `holder` and `length`) with every
 * workspace, and validates the workspace's files at start-up (Langium only
 * validates them once opened): their errors reach the Problems view, and the
 * verifier checks the whole workspace, open files first (issue 4).
 */
export class CalvinWorkspaceManager extends DefaultWorkspaceManager {
    private readonly documentFactory: LangiumDocumentFactory;

    constructor(services: LangiumSharedCoreServices) {
        super(services);
        this.documentFactory = services.workspace.LangiumDocumentFactory;
        this.initialBuildOptions = { validation: true };
    }

    protected override async loadAdditionalDocuments(folders: WorkspaceFolder[], collector: (document: LangiumDocument) => void): Promise<void> {
        await super.loadAdditionalDocuments(folders, collector);
        collector(this.documentFactory.fromString(BUILTIN_SOURCE, BUILTIN_URI));
    }
}

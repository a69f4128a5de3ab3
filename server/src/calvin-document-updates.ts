import type { LangiumDocument } from 'langium';
import { URI } from 'langium';
import { CalvinDocumentBuilder as CalvinCoreDocumentBuilder } from '@calvin/language';
import type { LangiumSharedServices } from 'langium/lsp';
import { DefaultDocumentUpdateHandler } from 'langium/lsp';
import type { TextDocumentChangeEvent } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';

/** How long typing must pause before the front end runs again. */
export const CHANGE_DEBOUNCE_MS = 25;

/**
 * Debounces edits: a burst of keystrokes becomes one rebuild. (A newer rebuild
 * also cancels an older one through Langium's workspace lock.)
 */
export class CalvinDocumentUpdateHandler extends DefaultDocumentUpdateHandler {
    private pending = new Map<string, URI>();
    private timer: ReturnType<typeof setTimeout> | undefined;
    private readonly builder: CalvinDocumentBuilder;

    constructor(services: LangiumSharedServices) {
        super(services);
        this.builder = services.workspace.DocumentBuilder as CalvinDocumentBuilder;
    }

    override didChangeContent(change: TextDocumentChangeEvent<TextDocument>): void {
        const uri = change.document.uri;
        this.builder.markEdited(uri);
        this.pending.set(uri, URI.parse(uri));
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => {
            this.timer = undefined;
            const changed = [...this.pending.values()];
            this.pending.clear();
            this.fireDocumentUpdate(changed, []);
        }, CHANGE_DEBOUNCE_MS);
    }
}

/** Builds the most recently edited file first, then the other open files, then the rest. */
export class CalvinDocumentBuilder extends CalvinCoreDocumentBuilder {
    private lastEdited: string | undefined;

    markEdited(uri: string): void {
        this.lastEdited = uri;
    }

    protected override sortDocuments(documents: LangiumDocument[]): LangiumDocument[] {
        const sorted = super.sortDocuments(documents);
        const i = sorted.findIndex(d => d.uri.toString() === this.lastEdited);
        if (i > 0) sorted.unshift(...sorted.splice(i, 1));
        return sorted;
    }
}

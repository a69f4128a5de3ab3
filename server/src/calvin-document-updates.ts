import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Cancellation, LangiumDocument, LangiumSharedCoreServices } from 'langium';
import { DefaultLangiumDocuments, DocumentState, URI } from 'langium';
import { LSPErrorCodes, ResponseError } from 'vscode-languageserver';
import { CalvinDocumentBuilder, programSignatures } from '@calvin/language';
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
    private readonly builder: EditorDocumentBuilder;

    /** Per file: the program signature (programs.ts) it was last validated under. */
    private readonly validatedWith = new Map<string, string>();
    private readonly validatedNow = new Set<string>();

    constructor(private readonly shared: LangiumSharedServices) {
        super(shared);
        this.builder = shared.workspace.DocumentBuilder as EditorDocumentBuilder;
        // Cross-file checks (duplicate names in one program, names declared in several files)
        // depend on other files: a file whose program an edit elsewhere changed is validated again.
        this.builder.onDocumentPhase(DocumentState.Validated, doc => { this.validatedNow.add(doc.uri.toString()); });
        this.builder.onBuildPhase(DocumentState.Validated, () => this.revalidateChangedPrograms());
    }

    private revalidateChangedPrograms(): void {
        const current = programSignatures(this.shared.workspace.LangiumDocuments.all);
        const stale: URI[] = [];
        for (const [uri, signature] of current) {
            if (this.validatedNow.has(uri)) this.validatedWith.set(uri, signature);
            else if (this.validatedWith.has(uri) && this.validatedWith.get(uri) !== signature) {
                this.validatedWith.set(uri, signature);
                stale.push(URI.parse(uri));
            }
        }
        this.validatedNow.clear();
        for (const uri of this.validatedWith.keys()) if (!current.has(uri)) this.validatedWith.delete(uri);
        if (stale.length > 0) setTimeout(() => this.fireDocumentUpdate(stale, []), 0);
    }

    /**
     * A closed document's unsaved text is gone: a file of the workspace is
     * read again from disk (its program is checked as saved). A document that
     * does not exist on disk (untitled, or a file deleted meanwhile) leaves
     * the workspace: its diagnostics are cleared and its state dropped (a
     * request for it once it is opened again waits for its rebuild:
     * `EditorDocumentBuilder.awaitDocumentState`). A file on disk outside the
     * workspace stays as it was.
     */
    didCloseDocument(change: TextDocumentChangeEvent<TextDocument>): void {
        const uri = URI.parse(change.document.uri);
        if (!onDisk(uri)) {
            this.pending.delete(uri.toString()); // (an edit still waiting would bring it back)
            this.workspaceManager.ready.then(() => this.workspaceLock.write(token => {
                // opened again meanwhile, or already gone: nothing to remove
                if (this.shared.workspace.TextDocuments?.get(uri.toString()) || !this.shared.workspace.LangiumDocuments.hasDocument(uri)) return undefined;
                return this.documentBuilder.update([], [uri], token);
            })).catch(err => console.error('Calvin: could not remove a closed document', err));
            return;
        }
        const folders = this.shared.workspace.WorkspaceManager.workspaceFolders ?? [];
        const inWorkspace = folders.some(f => {
            const root = URI.parse(f.uri);
            if (root.scheme !== 'file') return false;
            const rel = path.relative(root.fsPath, uri.fsPath);
            return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
        });
        if (inWorkspace) this.fireDocumentUpdate([uri], []);
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

/** The document builder of the editor: the most recently edited file first, then the other open files, then the rest. */
export class EditorDocumentBuilder extends CalvinDocumentBuilder {
    private lastEdited: string | undefined;

    markEdited(uri: string): void {
        this.lastEdited = uri;
    }

    /**
     * A request for a document that an edit has just reset (its rebuild is
     * queued behind the workspace lock), or that was opened again after it was
     * closed and removed, waits for that rebuild, instead of
     * Langium's "document state ... but workspace state is already ..."
     * failure; after a while it gives up with ContentModified, which editors
     * handle by asking again.
     */
    protected override awaitDocumentState(state: DocumentState, uri: URI, cancelToken: Cancellation.CancellationToken): Promise<URI> {
        const document = this.langiumDocuments.getDocument(uri);
        // (a document opened again after it was closed and removed has none until its rebuild)
        const reopened = !document && this.textDocuments?.get(uri.toString()) !== undefined;
        if (!reopened && (!document || document.state >= state || cancelToken.isCancellationRequested || this.currentState < state)) {
            return super.awaitDocumentState(state, uri, cancelToken);
        }
        return new Promise<URI>((resolve, reject) => {
            const done = (f: () => void) => { clearTimeout(timer); phase.dispose(); cancel.dispose(); f(); };
            const phase = this.onDocumentPhase(state, doc => { if (doc.uri.toString() === uri.toString()) done(() => resolve(doc.uri)); });
            const cancel = cancelToken.onCancellationRequested(() => done(() => reject(new ResponseError(LSPErrorCodes.RequestCancelled, 'cancelled'))));
            const timer = setTimeout(() => done(() => reject(new ResponseError(LSPErrorCodes.ContentModified, `${uri.toString()} is being rebuilt`))), 10_000);
        });
    }

    protected override sortDocuments(documents: LangiumDocument[]): LangiumDocument[] {
        const sorted = super.sortDocuments(documents);
        const i = sorted.findIndex(d => d.uri.toString() === this.lastEdited);
        if (i > 0) sorted.unshift(...sorted.splice(i, 1));
        return sorted;
    }
}

/**
 * The documents of the editor. A document that does not exist on disk is
 * removed when it is closed (CalvinDocumentUpdateHandler): opened again, it
 * has no document until its rebuild, and a request in between (one that waits
 * for the workspace, not for its document: references, highlights, rename)
 * would read it from disk and fail. Such a request waits for the rebuild.
 */
export class EditorLangiumDocuments extends DefaultLangiumDocuments {
    constructor(private readonly shared: LangiumSharedCoreServices) {
        super(shared);
    }

    override async getOrCreateDocument(uri: URI, cancellationToken?: Cancellation.CancellationToken): Promise<LangiumDocument> {
        if (!this.hasDocument(uri) && this.shared.workspace.TextDocuments?.get(uri.toString()) !== undefined && !onDisk(uri)) {
            await this.shared.workspace.DocumentBuilder.waitUntil(DocumentState.Validated, uri, cancellationToken);
            const document = this.getDocument(uri);
            if (document) return document;
        }
        return super.getOrCreateDocument(uri, cancellationToken);
    }
}

/** Whether a URI is a file that exists. */
function onDisk(uri: URI): boolean {
    return uri.scheme === 'file' && fs.existsSync(uri.fsPath) && fs.statSync(uri.fsPath).isFile();
}

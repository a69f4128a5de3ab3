import type { AstNode, LangiumDocument, MaybePromise, URI } from 'langium';
import { AstUtils, Cancellation, DefaultDocumentBuilder, DocumentState, isOperationCancelled } from 'langium';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic } from 'vscode-languageserver-types';
import { isBuiltinUri } from '../builtins.js';
import type { CalvinParser } from '../parser/calvin-parser.js';
import { clearBodyEdit, incrementalEnabled, pendingBodyEdit, tryBodyEdit } from './incremental.js';

const PHASES: Partial<Record<DocumentState, string>> = {
    [DocumentState.Parsed]: 'parsing',
    [DocumentState.IndexedContent]: 'indexing',
    [DocumentState.ComputedScopes]: 'computing the scopes of',
    [DocumentState.Linked]: 'resolving the names of',
    [DocumentState.IndexedReferences]: 'indexing the references of',
    [DocumentState.Validated]: 'checking',
};

/**
 * Langium's document builder, made robust: an exception while building one
 * document (lexing, parsing, indexing, linking, validating) becomes an
 * internal-error diagnostic on that document, and the other documents are
 * built as usual (by default one throwing document aborts the whole build, so
 * no file gets diagnostics). The built-in document gets no diagnostics at all
 * (none are published for it).
 */
export class CalvinDocumentBuilder extends DefaultDocumentBuilder {
    /** Internal errors per document URI and build phase, added to the document's diagnostics. */
    private readonly internalErrors = new Map<string, Map<DocumentState, Diagnostic>>();

    /**
     * An edit inside one method or thread body is applied to the existing
     * tree (incremental.ts); the phases after parsing then redo that body only.
     */
    override async update(changed: URI[], deleted: URI[], cancelToken: Cancellation.CancellationToken = Cancellation.CancellationToken.None): Promise<void> {
        if (incrementalEnabled() && deleted.length === 0) {
            for (const uri of changed) await this.tryIncremental(uri);
        }
        // A body edit's build (tens of ms) is not interrupted by the next edit until its
        // diagnostics are out: a cancelled one would leave the next edit a full rebuild.
        const held = changed.map(uri => this.langiumDocuments.getDocument(uri)).filter((d): d is LangiumDocument => d !== undefined && pendingBodyEdit(d) !== undefined);
        held.forEach(d => this.uninterrupted.add(d));
        const uninterrupted = this.uninterrupted;
        const token: Cancellation.CancellationToken = held.length === 0 ? cancelToken : {
            get isCancellationRequested() { return held.some(d => uninterrupted.has(d)) ? false : cancelToken.isCancellationRequested; },
            onCancellationRequested: cancelToken.onCancellationRequested,
        };
        try {
            return await super.update(changed, deleted, token);
        } finally {
            held.forEach(d => this.uninterrupted.delete(d));
        }
    }

    /** Documents whose incremental build is not to be interrupted (until their diagnostics are published). */
    private readonly uninterrupted = new Set<LangiumDocument>();

    protected override async notifyDocumentPhase(document: LangiumDocument, state: DocumentState, cancelToken: Cancellation.CancellationToken): Promise<void> {
        await super.notifyDocumentPhase(document, state, cancelToken);
        if (state === DocumentState.Validated) this.uninterrupted.delete(document);
    }

    private async tryIncremental(uri: URI): Promise<void> {
        const document = this.langiumDocuments.getDocument(uri);
        if (!document) return;
        clearBodyEdit(document);
        const key = uri.toString();
        if (isBuiltinUri(uri) || document.state !== DocumentState.Validated || !this.buildState.get(key)?.completed
            || this.internalErrors.get(key)?.size) return;
        const textDocument = this.textDocuments?.get(key);
        let text: string;
        try {
            text = textDocument ? textDocument.getText() : await this.fileSystemProvider.readFile(uri);
        } catch {
            return; // the full rebuild reports it
        }
        const services = this.serviceRegistry.getServices(uri);
        try {
            if (!tryBodyEdit(document, text, services.parser.LangiumParser as CalvinParser)) return;
        } catch (e) {
            // never worse than a full rebuild (which re-parses the text)
            clearBodyEdit(document);
            console.error(`Calvin: incremental update of ${key} failed, rebuilding it: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
            return;
        }
        // What the document factory's update does besides parsing.
        if (textDocument) {
            Object.defineProperty(document, 'textDocument', { value: textDocument, configurable: true });
        } else {
            let created: TextDocument | undefined;
            const languageId = services.LanguageMetaData.languageId;
            Object.defineProperty(document, 'textDocument', { get: () => created ??= TextDocument.create(key, languageId, 0, text), configurable: true });
        }
    }

    /**
     * For a document with a body edit, a reset to `Changed` keeps what the
     * body cannot change (scopes and resolved references of the rest) and
     * marks it parsed; any other reset drops the edit (a full rebuild of the
     * phases concerned, on the spliced tree).
     */
    override resetToState<T extends AstNode>(document: LangiumDocument<T>, state: DocumentState): void {
        const edit = pendingBodyEdit(document);
        if (edit && state === DocumentState.Changed) {
            const dropped = new Set<unknown>();
            for (const node of AstUtils.streamAst(edit.oldBody)) {
                for (const ref of AstUtils.streamReferences(node)) dropped.add(ref.reference);
            }
            document.references = document.references.filter(r => !dropped.has(r));
            this.indexManager.removeContent(document.uri);
            this.indexManager.removeReferences(document.uri);
            document.diagnostics = undefined;
            this.buildState.delete(document.uri.toString());
            document.state = DocumentState.Parsed;
            return;
        }
        if (edit) clearBodyEdit(document);
        super.resetToState(document, state);
    }

    protected override async runCancelable(documents: LangiumDocument[], targetState: DocumentState, cancelToken: Cancellation.CancellationToken,
        callback: (document: LangiumDocument) => MaybePromise<unknown>): Promise<void> {
        await super.runCancelable(documents, targetState, cancelToken, async document => {
            const key = document.uri.toString();
            this.internalErrors.get(key)?.delete(targetState);
            try {
                await callback(document);
            } catch (e) {
                if (isOperationCancelled(e)) throw e;
                this.recordInternalError(document, targetState, e);
            }
        });
    }

    protected override async validate(document: LangiumDocument, cancelToken: Cancellation.CancellationToken): Promise<void> {
        if (isBuiltinUri(document.uri)) {
            document.diagnostics = undefined; // nothing to publish
            return;
        }
        this.internalErrors.get(document.uri.toString())?.delete(DocumentState.Validated);
        try {
            await super.validate(document, cancelToken);
        } catch (e) {
            if (isOperationCancelled(e)) throw e;
            this.recordInternalError(document, DocumentState.Validated, e);
        }
        clearBodyEdit(document);
        const errors = this.internalErrors.get(document.uri.toString());
        if (errors && errors.size > 0) {
            const diagnostics = document.diagnostics ?? [];
            document.diagnostics = [...diagnostics, ...[...errors.values()].filter(d => !diagnostics.includes(d))];
        }
    }

    protected override cleanUpDeleted<T extends AstNode>(document: LangiumDocument<T>): void {
        super.cleanUpDeleted(document);
        this.internalErrors.delete(document.uri.toString());
    }

    private recordInternalError(document: LangiumDocument, phase: DocumentState, e: unknown): void {
        const key = document.uri.toString();
        let errors = this.internalErrors.get(key);
        if (!errors) this.internalErrors.set(key, errors = new Map());
        const message = e instanceof Error ? e.message : String(e);
        errors.set(phase, {
            severity: 1,
            range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
            message: `Internal error while ${PHASES[phase] ?? 'building'} this file: ${message.split('\n')[0]}. The file may not be fully checked; please report this.`,
            code: 'internal',
            source: 'calvin',
        });
        console.error(`Calvin: internal error while ${PHASES[phase] ?? 'building'} ${key}: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
        if (phase === DocumentState.Parsed) {
            // Later phases and editor features need a program that matches the text: an empty one.
            const parser = this.serviceRegistry.getServices(document.uri).parser.LangiumParser;
            (document as { parseResult: LangiumDocument['parseResult'] }).parseResult = parser.parse('');
        }
    }
}

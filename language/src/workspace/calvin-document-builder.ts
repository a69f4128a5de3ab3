import type { AstNode, LangiumDocument, MaybePromise } from 'langium';
import { Cancellation, DefaultDocumentBuilder, DocumentState, isOperationCancelled } from 'langium';
import type { Diagnostic } from 'vscode-languageserver-types';
import { isBuiltinUri } from '../builtins.js';

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

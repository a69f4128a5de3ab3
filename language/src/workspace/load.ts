import type { LangiumDocument, LangiumSharedCoreServices } from 'langium';
import { URI } from 'langium';
import type { Diagnostic } from 'vscode-languageserver-types';
import { BUILTIN_SOURCE, BUILTIN_URI } from '../builtins.js';

/** One source file given to the front end. */
export interface SourceFile {
    uri: string;
    text: string;
}

export interface FrontEndResult {
    documents: LangiumDocument[];
    diagnostics: Map<string, Diagnostic[]>;
}

/** Make sure the built-in document (implicit `holder`/`length`) is part of the workspace. */
export function ensureBuiltins(shared: LangiumSharedCoreServices): void {
    const docs = shared.workspace.LangiumDocuments;
    if (!docs.hasDocument(BUILTIN_URI)) {
        docs.addDocument(shared.workspace.LangiumDocumentFactory.fromString(BUILTIN_SOURCE, BUILTIN_URI));
    }
}

/**
 * Parse, link and validate a set of files as one program (declarations are
 * global across files), as the CLI and the tests do.
 */
export async function buildProgram(shared: LangiumSharedCoreServices, files: SourceFile[]): Promise<FrontEndResult> {
    ensureBuiltins(shared);
    const factory = shared.workspace.LangiumDocumentFactory;
    const docs = shared.workspace.LangiumDocuments;
    const documents: LangiumDocument[] = [];
    for (const f of files) {
        const uri = URI.parse(f.uri);
        if (docs.hasDocument(uri)) docs.deleteDocument(uri);
        const doc = factory.fromString(f.text, uri);
        docs.addDocument(doc);
        documents.push(doc);
    }
    await shared.workspace.DocumentBuilder.build([...docs.all], { validation: true });
    const diagnostics = new Map<string, Diagnostic[]>();
    for (const d of documents) diagnostics.set(d.uri.toString(), d.diagnostics ?? []);
    return { documents, diagnostics };
}

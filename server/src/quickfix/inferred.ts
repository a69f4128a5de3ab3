// Code actions of inferred annotations (issue 13): "Insert inferred
// annotation" at a field Calvin inferred protection for (its declaration, or a
// race on it), and "Insert all inferred annotations" for a file. The inserted
// text is what `calvin infer` writes: once inserted, the program verifies with
// inference off (the inference only proposes what the checks then proved).
import type { LangiumDocument } from 'langium';
import { AstUtils, type AstNode } from 'langium';
import { CodeActionKind, type CodeAction, type Diagnostic, type TextEdit } from 'vscode-languageserver';
import * as ast from '@calvin/language';
import { fieldId } from '@calvin/language';
import { annotationInsert, type InferredAnnotation } from '@calvin/verifier';

/** The edits that insert these annotations into a document (several before one declaration stay in order). */
export function insertEdits(document: LangiumDocument, annotations: InferredAnnotation[]): TextEdit[] {
    const lines = document.textDocument.getText().split(/\r?\n/);
    return annotations.map(a => {
        const ins = annotationInsert(lines, a);
        const at = { line: ins.line, character: ins.character };
        return { range: { start: at, end: at }, newText: ins.text };
    });
}

function describe(a: InferredAnnotation): string {
    return `${a.kind} ${a.text}`;
}

/**
 * The actions at a position of a document: the field's inferred annotations
 * (at its declaration, or at a race diagnostic on it), and all of the file's.
 */
export function inferredActions(document: LangiumDocument, node: AstNode | undefined, diagnostics: Diagnostic[], annotations: InferredAnnotation[], fieldOfRace: (d: Diagnostic) => AstNode | undefined): CodeAction[] {
    const uri = document.uri.toString();
    const mine = annotations.filter(a => a.before.file === uri);
    if (mine.length === 0) return [];
    const out: CodeAction[] = [];
    const forField = (f: AstNode | undefined, d?: Diagnostic) => {
        if (!f || !(ast.isFieldDecl(f) || ast.isGhostField(f))) return;
        const id = fieldId(f);
        const list = mine.filter(a => a.field === id);
        if (list.length === 0) return;
        const name = f.name;
        out.push({
            title: list.length === 1 ? `Insert inferred annotation for ${name}: ${describe(list[0])}` : `Insert the ${list.length} inferred annotations for ${name}`,
            kind: CodeActionKind.QuickFix, isPreferred: d !== undefined, diagnostics: d ? [d] : undefined,
            edit: { changes: { [uri]: insertEdits(document, list) } },
        });
    };
    const declared = node ? AstUtils.getContainerOfType(node, (n): n is ast.FieldDecl | ast.GhostField => ast.isFieldDecl(n) || ast.isGhostField(n)) : undefined;
    forField(declared);
    for (const d of diagnostics) if (String(d.code) === 'race') forField(fieldOfRace(d), d);
    out.push({
        title: `Insert all inferred annotations (${mine.length})`, kind: CodeActionKind.Source,
        edit: { changes: { [uri]: insertEdits(document, mine) } },
    });
    return out;
}

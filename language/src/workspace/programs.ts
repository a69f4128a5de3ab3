import type { AstNode, LangiumDocument } from 'langium';
import { AstUtils } from 'langium';
import * as ast from '../generated/ast.js';
import { isBuiltinUri } from '../builtins.js';

/**
 * Which files form one program. A file's own top-level declarations take
 * precedence in it; names it does not declare resolve to other files of the
 * workspace. Files linked by such references (directly or through others) form
 * one program; a file that refers to no other file and that no file refers to
 * is a program by itself. So a folder of independent examples is a set of
 * programs, and a program split over files is one (language.md §2).
 */
export function programOf(document: LangiumDocument, all: Iterable<LangiumDocument>): LangiumDocument[] {
    const docs = [...all].filter(d => !isBuiltinUri(d.uri));
    const find = programRoots(docs);
    const root = find(document.uri.toString());
    return docs.filter(d => find(d.uri.toString()) === root)
        .sort((a, b) => a.uri.toString().localeCompare(b.uri.toString()));
}

/**
 * The programs of a set of documents, as a union-find over their references:
 * the function maps a document's URI to its program's representative.
 */
function programRoots(docs: LangiumDocument[]): (uri: string) => string {
    if (docs.length <= 1) return (u: string) => u; // nothing to link: no need to look at the references
    const parent = new Map<string, string>(docs.map(d => [d.uri.toString(), d.uri.toString()]));
    const find = (u: string): string => {
        let r = u;
        while (parent.get(r) !== r) r = parent.get(r)!;
        parent.set(u, r);
        return r;
    };
    for (const d of docs) {
        for (const target of referencedDocuments(d)) if (parent.has(target)) parent.set(find(d.uri.toString()), find(target));
    }
    return find;
}

/** URIs of the other documents whose declarations a document refers to. */
export function referencedDocuments(document: LangiumDocument): Set<string> {
    const own = document.uri.toString();
    const result = new Set<string>();
    for (const ref of document.references) {
        // the description the linker found names the target's document (cheaper than the target's root)
        const described = (ref as { $nodeDescription?: { documentUri?: { toString(): string } } }).$nodeDescription?.documentUri;
        const target = ("ref" in ref ? ref.ref : undefined) as AstNode | undefined;
        if (!target) continue;
        const uri = described ? described.toString() : AstUtils.getDocument(target).uri.toString();
        if (uri !== own && !isBuiltinUri(uri)) result.add(uri);
    }
    return result;
}

/** The top-level names a file declares (classes, globals, ghost globals, procedures, threads). */
export function topLevelDeclarations(program: ast.Program): Array<ast.NamedElement> {
    const result: ast.NamedElement[] = [];
    for (const d of program.decls) {
        if (ast.isClassDecl(d) || ast.isThreadDecl(d) || ast.isMethodDecl(d) || ast.isFieldDecl(d)) {
            if (d.name) result.push(d);
        } else if (ast.isAnnotation(d)) {
            for (const c of d.clauses) if (ast.isGhostFieldClause(c) && c.field?.name) result.push(c.field);
        }
    }
    return result;
}

/**
 * What a file's cross-file checks depend on, per file: the files of its
 * program, and the top-level names declared in more than one file (language.md
 * §2). A file validated under another signature must be validated again (the
 * language server does so when another file's edit changes it).
 */
export function programSignatures(all: Iterable<LangiumDocument>): Map<string, string> {
    const docs = [...all].filter(d => !isBuiltinUri(d.uri));
    const find = programRoots(docs);
    const declaredIn = new Map<string, Set<string>>();
    for (const d of docs) {
        for (const n of topLevelDeclarations(d.parseResult.value as ast.Program)) {
            const files = declaredIn.get(n.name) ?? new Set<string>();
            files.add(d.uri.toString());
            declaredIn.set(n.name, files);
        }
    }
    const shared = [...declaredIn].filter(([, files]) => files.size > 1).map(([name, files]) => `${name}:${[...files].sort().join(',')}`).sort().join(';');
    const groups = new Map<string, string[]>();
    for (const d of docs) {
        const root = find(d.uri.toString());
        groups.set(root, [...(groups.get(root) ?? []), d.uri.toString()]);
    }
    const out = new Map<string, string>();
    for (const d of docs) out.set(d.uri.toString(), `${groups.get(find(d.uri.toString()))!.sort().join(',')}|${shared}`);
    return out;
}

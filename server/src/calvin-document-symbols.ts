import type { AstNode, LangiumDocument, MaybePromise } from 'langium';
import type { DocumentSymbolProvider, LangiumServices } from 'langium/lsp';
import { SymbolKind, type DocumentSymbol, type DocumentSymbolParams } from 'vscode-languageserver';
import * as ast from '@calvin/language';

/** Outline: classes (fields, methods, invariants, environment assumptions), globals, procedures, threads. */
export class CalvinDocumentSymbolProvider implements DocumentSymbolProvider {
    constructor(_services: LangiumServices) { }

    getSymbols(document: LangiumDocument, _params: DocumentSymbolParams): MaybePromise<DocumentSymbol[]> {
        const program = document.parseResult.value as ast.Program;
        return (program.decls ?? []).flatMap(d => this.topLevel(d));
    }

    private topLevel(d: ast.TopDecl): DocumentSymbol[] {
        if (ast.isClassDecl(d)) {
            const children = d.members.flatMap(m => this.member(m));
            return symbol(d, d.name, SymbolKind.Class, children);
        }
        if (ast.isThreadDecl(d)) {
            const detail = d.star ? '[*]' : d.count !== undefined ? `[${d.count}]` : undefined;
            return symbol(d, d.name, SymbolKind.Event, undefined, detail);
        }
        return this.member(d);
    }

    private member(m: ast.ClassMember): DocumentSymbol[] {
        // Parts may be missing after a syntax error (`void m(int a, final)`: a parameter without a type).
        if (ast.isFieldDecl(m)) return symbol(m, m.name, SymbolKind.Field, undefined, m.type?.$cstNode?.text);
        if (ast.isMethodDecl(m)) return symbol(m, m.name, SymbolKind.Method, undefined, `(${m.params.map(p => p.type?.$cstNode?.text ?? '').join(', ')})`);
        if (ast.isAnnotation(m)) {
            return m.clauses.flatMap(c => {
                if (ast.isInvariantClause(c)) return symbol(c, `invariant ${c.condition?.$cstNode?.text ?? ''}`, SymbolKind.Property);
                if (ast.isEnvironmentClause(c)) return symbol(c, `environment ${c.action?.$cstNode?.text ?? ''}`, SymbolKind.Property);
                if (ast.isGhostFieldClause(c) && c.field) return symbol(c.field, c.field.name, SymbolKind.Field, undefined, `ghost ${c.field.type?.$cstNode?.text ?? ''}`);
                return [];
            });
        }
        return [];
    }
}

function symbol(node: AstNode, name: string | undefined, kind: SymbolKind, children?: DocumentSymbol[], detail?: string): DocumentSymbol[] {
    const cst = node.$cstNode;
    if (!cst || !name) return [];
    const nameNode = (node as { name?: string }).name !== undefined
        ? findNameLeaf(node) ?? cst : cst;
    return [{ name: name.replace(/\s+/g, ' '), kind, range: cst.range, selectionRange: nameNode.range, children, detail }];
}

import { GrammarUtils } from 'langium';
function findNameLeaf(node: AstNode) {
    return GrammarUtils.findNodeForProperty(node.$cstNode, 'name');
}

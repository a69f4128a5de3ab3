// Code actions (issue 4): "Insert abstraction stub" (on a call to a method
// without abstraction, on such a method's declaration, on an `abstraction` or
// `unchecked` diagnostic), "Add writable_if" and "Declare volatile" (on a race
// at a field without writable_if), "Show the environment step" (on an
// invariant/env failure) and "Re-run with a longer time limit" (on unknown).
import type { AstNode, LangiumDocument, LangiumDocuments } from 'langium';
import { AstUtils, CstUtils } from 'langium';
import type { CodeActionProvider, LangiumServices } from 'langium/lsp';
import { CodeActionKind, type CodeAction, type CodeActionParams, type Command, type Diagnostic, type TextEdit } from 'vscode-languageserver';
import * as ast from '@calvin/language';
import { BUILTIN_URI, enclosingMethod, hasAbstraction, isInAnnotation, methodSpec, programOf, writableIfClauses } from '@calvin/language';
import { COMMANDS } from '../verification/lsp-features.js';
import { verificationOf } from '../calvin-lsp-module.js';
import { calleeOf, factsBefore, Facts, ProgramIndex } from './facts.js';
import { locText, locToCallee, pathOf, scopeOf, type Field, type Loc } from './locations.js';
import { abstractionStub, stubText } from './stub.js';

export class CalvinCodeActionProvider implements CodeActionProvider {
    private readonly documents: LangiumDocuments;

    constructor(private readonly services: LangiumServices) {
        this.documents = services.shared.workspace.LangiumDocuments;
    }

    getCodeActions(document: LangiumDocument, params: CodeActionParams): Array<Command | CodeAction> | undefined {
        try {
            return this.actionsAt(document, params);
        } catch (e) {
            // never the whole request: the editor's other actions still come
            this.services.shared.lsp.Connection?.console.error(`Calvin: could not compute code actions: ${(e as Error)?.stack ?? e}`);
            return [];
        }
    }

    private actionsAt(document: LangiumDocument, params: CodeActionParams): CodeAction[] | undefined {
        const root = document.parseResult.value.$cstNode;
        if (!root) return undefined;
        const actions: CodeAction[] = [];
        const index = this.indexFor(document);
        const offset = document.textDocument.offsetAt(params.range.start);
        const node = CstUtils.findLeafNodeAtOffset(root, offset)?.astNode;
        const stubbed = new Set<ast.MethodDecl>();
        // Each action on its own: one that cannot be computed (a half-typed program) costs only itself.
        const attempt = <T>(what: string, f: () => T): T | undefined => {
            try {
                return f();
            } catch (e) {
                this.services.shared.lsp.Connection?.console.error(`Calvin: could not compute the code action '${what}': ${(e as Error)?.stack ?? e}`);
                return undefined;
            }
        };
        const stub = (m: ast.MethodDecl | undefined, diagnostic?: Diagnostic) => {
            if (!m || !m.body || stubbed.has(m)) return;
            const a = attempt('Insert abstraction stub', () => this.stubAction(m, index, diagnostic));
            if (a) { stubbed.add(m); actions.push(a); }
        };
        for (const d of params.context.diagnostics) {
            if (d.source !== 'calvin' && d.source !== undefined) continue;
            const at = CstUtils.findLeafNodeAtOffset(root, document.textDocument.offsetAt(d.range.start))?.astNode;
            switch (String(d.code)) {
                case 'abstraction': stub(callAt(at, d) ?? (at ? enclosingMethod(at) : undefined), d); break;
                case 'unchecked': stub(at ? AstUtils.getContainerOfType(at, ast.isMethodDecl) : undefined, d); break;
                case 'race': actions.push(...(attempt('Add writable_if', () => this.raceActions(at, index, d)) ?? [])); break;
                case 'invariant': case 'env':
                    actions.push({
                        title: 'Show the environment step', kind: CodeActionKind.QuickFix, diagnostics: [d],
                        command: { title: 'Show the environment step', command: COMMANDS.showCounterexample, arguments: [document.uri.toString(), d] },
                    });
                    break;
                case 'unknown': {
                    const a = this.rerunAction(document.uri.toString(), d);
                    if (a) actions.push(a);
                    break;
                }
            }
        }
        // Not tied to a diagnostic: a call to a method without abstraction, or such a method's header.
        if (node) {
            const call = AstUtils.getContainerOfType(node, (n): n is ast.NameExpr | ast.MemberAccess => (ast.isNameExpr(n) || ast.isMemberAccess(n)) && n.isCall);
            const callee = call && !isInAnnotation(call) ? calleeOf(call) : undefined;
            if (callee && !hasAbstraction(callee)) stub(callee);
            const m = AstUtils.getContainerOfType(node, ast.isMethodDecl);
            if (m && !hasAbstraction(m) && !inBody(m, offset)) stub(m);
        }
        return actions;
    }

    private indexFor(document: LangiumDocument): ProgramIndex {
        const group = programOf(document, this.documents.all);
        const builtin = this.documents.hasDocument(BUILTIN_URI) ? this.documents.getDocument(BUILTIN_URI) : undefined;
        const holder = builtin ? AstUtils.streamAst(builtin.parseResult.value).find((n): n is ast.GhostField => ast.isGhostField(n) && n.name === 'holder') : undefined;
        return new ProgramIndex(group.map(d => d.parseResult.value as ast.Program), holder);
    }

    /** "Insert abstraction stub" above a method (or in place of its failing abstraction). */
    private stubAction(m: ast.MethodDecl, index: ProgramIndex, diagnostic?: Diagnostic): CodeAction | undefined {
        const doc = AstUtils.getDocument(m);
        const cst = m.$cstNode;
        if (!cst) return undefined;
        const text = doc.textDocument.getText();
        const start = doc.textDocument.positionAt(cst.offset);
        const indent = /^[ \t]*/.exec(text.split(/\r?\n/)[start.line] ?? '')?.[0] ?? '';
        const body = stubText(abstractionStub(m, index), indent);
        const existing = methodSpec(m).abstraction;
        let edit: TextEdit;
        let title = `Insert abstraction stub for '${m.name}'`;
        if (existing?.$cstNode) {
            // replace the failing abstraction: the whole annotation when it holds nothing else
            const annotation = existing.$container;
            const whole = annotation.clauses.length === 1 && annotation.$cstNode ? annotation.$cstNode : existing.$cstNode;
            const from = doc.textDocument.positionAt(whole.offset);
            const inner = whole === existing.$cstNode ? body.replace(/^\s*\/\*@\s*/, '').replace(/\s*\*\/$/, '') : body.trimStart();
            edit = { range: { start: from, end: doc.textDocument.positionAt(whole.end) }, newText: inner };
            title = `Replace the abstraction of '${m.name}' with a stub from its body`;
        } else {
            edit = { range: { start: { line: start.line, character: 0 }, end: { line: start.line, character: 0 } }, newText: body + '\n' };
        }
        return {
            title, kind: diagnostic ? CodeActionKind.QuickFix : CodeActionKind.RefactorRewrite,
            diagnostics: diagnostic ? [diagnostic] : undefined,
            edit: { changes: { [doc.uri.toString()]: [edit] } },
        };
    }

    /** On a race at a field without writable_if: add the guard its accesses share, or declare it volatile. */
    private raceActions(at: AstNode | undefined, index: ProgramIndex, d: Diagnostic): CodeAction[] {
        const field = fieldAt(at);
        if (!field || !ast.isFieldDecl(field) || writableIfClauses(field).length > 0 || !field.$cstNode) return [];
        const doc = AstUtils.getDocument(field);
        const uri = doc.uri.toString();
        const line = doc.textDocument.positionAt(field.$cstNode.offset).line;
        const indent = /^[ \t]*/.exec(doc.textDocument.getText().split(/\r?\n/)[line] ?? '')?.[0] ?? '';
        const out: CodeAction[] = [];
        const guard = commonGuard(field, index);
        if (guard) {
            out.push({
                title: `Add 'writable_if ${guard}' to ${field.name}`, kind: CodeActionKind.QuickFix, diagnostics: [d],
                edit: { changes: { [uri]: [{ range: { start: { line, character: 0 }, end: { line, character: 0 } }, newText: `${indent}//@ writable_if ${guard};\n` }] } },
            });
        }
        if (!field.modifiers.includes('volatile') && !field.modifiers.includes('final') && field.type.$cstNode) {
            const pos = doc.textDocument.positionAt(field.type.$cstNode.offset);
            out.push({
                title: `Declare ${field.name} volatile`, kind: CodeActionKind.QuickFix, diagnostics: [d],
                edit: { changes: { [uri]: [{ range: { start: pos, end: pos }, newText: 'volatile ' }] } },
            });
        }
        return out;
    }

    private rerunAction(uri: string, d: Diagnostic): CodeAction | undefined {
        const service = verificationOf(this.services.shared);
        const key = (d.data as { check?: string } | undefined)?.check;
        if (!key) return undefined;
        const limit = service.settings.timeLimitMs * 4;
        return {
            title: `Re-run with a longer time limit (${limit / 1000} s)`, kind: CodeActionKind.QuickFix, diagnostics: [d],
            command: { title: 'Re-run with a longer time limit', command: COMMANDS.runCheck, arguments: [uri, key, limit] },
        };
    }
}

/** The callee of a call a diagnostic points at, when it is about the callee's precondition. */
function callAt(at: AstNode | undefined, d: Diagnostic): ast.MethodDecl | undefined {
    if (!at || !/precondition/.test(String(d.message))) return undefined;
    for (const n of [at, ...AstUtils.streamAst(AstUtils.getContainerOfType(at, ast.isExprStmt) ?? at)]) {
        if ((ast.isNameExpr(n) || ast.isMemberAccess(n)) && n.isCall) { const c = calleeOf(n); if (c) return c; }
    }
    return undefined;
}

/** Whether an offset is inside a method's body (not its header). */
function inBody(m: ast.MethodDecl, offset: number): boolean {
    const b = m.body?.$cstNode;
    return b !== undefined && offset > b.offset;
}

/** The field a diagnostic's node refers to (the access it points at). */
function fieldAt(at: AstNode | undefined): Field | undefined {
    for (let n = at; n; n = n.$container) {
        if (ast.isNameExpr(n) && (ast.isFieldDecl(n.ref.ref) || ast.isGhostField(n.ref.ref))) return n.ref.ref;
        if (ast.isMemberAccess(n) && (ast.isFieldDecl(n.member.ref) || ast.isGhostField(n.member.ref))) return n.member.ref;
        if (ast.isStatement(n)) break;
    }
    return undefined;
}

/**
 * The guard every access of a field has in common (the held facts there,
 * written in the field's scope: the accessed object as `this`), or undefined.
 */
export function commonGuard(field: Field, index: ProgramIndex): string | undefined {
    let common: Facts | undefined;
    const scope = scopeOf(field);
    for (const access of index.accessesOf(field)) {
        const here = factsBefore(access, index);
        // for an instance field: the accessed object becomes `this`
        const receiver = ast.isMemberAccess(access) ? pathOf(access.receiver) : { k: 'this' as const };
        const instance = !(ast.isFieldDecl(field) && (field.modifiers.includes('static') || !scope));
        if (instance && !receiver) return undefined;
        const map = { receiver: instance ? receiver : undefined, args: new Map() };
        const translated = Facts.of(here.locs.map(l => locToCallee(l, map)).filter((l): l is Loc => l !== undefined));
        common = common ? common.intersect(translated) : translated;
        if (common.map.size === 0) return undefined;
    }
    if (!common || common.map.size === 0) return undefined;
    return common.locs.map(l => `${locText(l, scope)} == tid`).join(' && ');
}

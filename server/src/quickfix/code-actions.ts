// Code actions (issues 4 and 12): "Insert abstraction stub" (on a call to a
// method without abstraction, on such a method's declaration, on an
// `abstraction` or `unchecked` diagnostic), "Add writable_if" and "Declare
// volatile" (on a race at a field without writable_if: race-fixes.ts), "Show
// the environment step" (on a failure with a counterexample) and "Re-run with
// a longer time limit" (on unknown). Identical actions (the same fix reached
// from several diagnostics) are offered once, and no two actions share a title.
import type { AstNode, LangiumDocument, LangiumDocuments } from 'langium';
import { AstUtils, CstUtils } from 'langium';
import type { CodeActionProvider, LangiumServices } from 'langium/lsp';
import { CodeActionKind, type CodeAction, type CodeActionParams, type Command, type Diagnostic, type TextEdit } from 'vscode-languageserver';
import * as ast from '@calvin/language';
import { BUILTIN_URI, enclosingMethod, hasAbstraction, isInAnnotation, methodSpec, precedingAnnotations, programOf } from '@calvin/language';
import { COMMANDS } from '../verification/lsp-features.js';
import { verificationOf } from '../calvin-lsp-module.js';
import { calleeOf, ProgramIndex } from './facts.js';
import { type Field } from './locations.js';
import { raceFixes, type RaceFix } from './race-fixes.js';
import { abstractionStub, stubText } from './stub.js';
import { inferredActions } from './inferred.js';

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
                case 'race': actions.push(...(attempt('Add writable_if', () => this.raceActions(at, index, d, document.uri.toString())) ?? [])); break;
                default: break;
            }
            // a confirmed witness (issue 14): the interleaving as a document
            const w = (d.data as { witness?: { status?: string; steps?: unknown[] } } | undefined)?.witness;
            if (w?.status === 'confirmed') {
                actions.push({
                    title: `Show interleaving (${w.steps?.length ?? 0} steps)`, kind: CodeActionKind.QuickFix, diagnostics: [d],
                    command: { title: 'Show interleaving', command: COMMANDS.showWitness, arguments: [document.uri.toString(), d] },
                });
            }
            switch (String(d.code)) {
                case 'invariant': case 'env': case 'race': case 'assert': case 'null': case 'bounds': case 'div-zero': case 'loop-invariant':
                    // (elsewhere than invariant and env failures: when another thread's step changed what the check read)
                    if (d.code !== 'invariant' && d.code !== 'env' && !((d.data as { counterexample?: { notes?: string[] } } | undefined)?.counterexample?.notes?.length)) break;
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
        // Inferred annotations: the field's (at its declaration or a race on it), and all of the file's.
        const inferred = attempt('Insert inferred annotations', () => inferredActions(document, node, params.context.diagnostics,
            verificationOf(this.services.shared).inferredAnnotations(document.uri.toString()),
            d => fieldAt(CstUtils.findLeafNodeAtOffset(root, document.textDocument.offsetAt(d.range.start))?.astNode)));
        if (inferred) actions.push(...inferred);
        // Not tied to a diagnostic: a call to a method without abstraction, or such a method's header.
        if (node) {
            const call = AstUtils.getContainerOfType(node, (n): n is ast.NameExpr | ast.MemberAccess => (ast.isNameExpr(n) || ast.isMemberAccess(n)) && n.isCall);
            const callee = call && !isInAnnotation(call) ? calleeOf(call) : undefined;
            if (callee && !hasAbstraction(callee)) stub(callee);
            const m = AstUtils.getContainerOfType(node, ast.isMethodDecl);
            if (m && !hasAbstraction(m) && !inBody(m, offset)) stub(m);
        }
        const only = params.context.only;
        // (a client without disabledSupport never receives a disabled action, nor one that does nothing)
        const usable = verificationOf(this.services.shared).clientSupportsDisabledActions
            ? actions : actions.filter(a => a.disabled === undefined && (a.edit !== undefined || a.command !== undefined));
        return distinct(only && only.length > 0 ? usable.filter(a => only.some(k => a.kind === k || a.kind?.startsWith(`${k}.`))) : usable);
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
            // directly above the method; a class-level annotation right above it (an invariant) keeps a blank line between
            const above = precedingAnnotations(m);
            const glued = above.length > 0 && above[above.length - 1].$cstNode !== undefined
                && doc.textDocument.positionAt(above[above.length - 1].$cstNode!.end).line === start.line - 1;
            edit = { range: { start: { line: start.line, character: 0 }, end: { line: start.line, character: 0 } }, newText: (glued ? '\n' : '') + body + '\n' };
        }
        return {
            title, kind: diagnostic ? CodeActionKind.QuickFix : CodeActionKind.RefactorRewrite,
            diagnostics: diagnostic ? [diagnostic] : undefined,
            edit: { changes: { [doc.uri.toString()]: [edit] } },
        };
    }

    /** On a race at a field without writable_if: the guard its accesses share, or why there is none; volatile where it loses no update. */
    private raceActions(at: AstNode | undefined, index: ProgramIndex, d: Diagnostic, uri: string): CodeAction[] {
        const field = fieldAt(at);
        if (!field || !ast.isFieldDecl(field)) return [];
        const fixes = raceFixes(field, index.roots, index.holder, uri);
        const out: CodeAction[] = [];
        const edit = (f: RaceFix): CodeAction => ({
            title: f.title, kind: CodeActionKind.QuickFix, diagnostics: [d], isPreferred: f === fixes.guard,
            edit: { changes: Object.fromEntries(f.edits) },
        });
        if (fixes.guard) out.push(edit(fixes.guard));
        // Why no guard fits: a disabled action, only to clients that show them (`codeAction.disabledSupport`);
        // the others get nothing (a code action must have an edit or a command, LSP 3.17 CodeAction).
        if (fixes.noGuard && verificationOf(this.services.shared).clientSupportsDisabledActions) {
            out.push({ title: fixes.noGuard.title, kind: CodeActionKind.QuickFix, diagnostics: [d], disabled: { reason: fixes.noGuard.reason } });
        }
        if (fixes.volatile) out.push(edit(fixes.volatile));
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
 * The same action reached from several diagnostics (two threads' checks, the
 * read and the write of `x++`) once, with all of them; different actions with
 * the same title told apart by where their diagnostic is.
 */
function distinct(actions: CodeAction[]): CodeAction[] {
    const out: CodeAction[] = [];
    const byKey = new Map<string, CodeAction>();
    for (const a of actions) {
        const key = JSON.stringify([a.title, a.edit ?? null, a.command?.command ?? null, a.command?.arguments ?? null, a.disabled ?? null]);
        const seen = byKey.get(key);
        if (seen) {
            for (const d of a.diagnostics ?? []) if (!seen.diagnostics?.some(x => sameDiagnostic(x, d))) seen.diagnostics = [...(seen.diagnostics ?? []), d];
            continue;
        }
        byKey.set(key, a);
        out.push(a);
    }
    const titles = new Map<string, CodeAction[]>();
    for (const a of out) titles.set(a.title, [...(titles.get(a.title) ?? []), a]);
    for (const [title, same] of titles) {
        if (same.length < 2) continue;
        same.forEach((a, i) => {
            const d = a.diagnostics?.[0];
            const where = d ? `${String(d.code)} at line ${d.range.start.line + 1}${d.range.start.line === same[0].diagnostics?.[0]?.range.start.line && i > 0 ? `:${d.range.start.character + 1}` : ''}` : `${i + 1}`;
            a.title = `${title} (${where})`;
            if (a.command) a.command = { ...a.command, title: a.title };
        });
    }
    return out;
}

function sameDiagnostic(a: Diagnostic, b: Diagnostic): boolean {
    return a.message === b.message && String(a.code) === String(b.code) && JSON.stringify(a.range) === JSON.stringify(b.range);
}

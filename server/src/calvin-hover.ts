import type { AstNode, CstNode, LangiumDocument, LangiumDocuments, MaybePromise } from 'langium';
import { AstUtils, CstUtils, GrammarAST } from 'langium';
import type { LangiumServices } from 'langium/lsp';
import { AstNodeHoverProvider } from 'langium/lsp';
import type { Hover, HoverParams } from 'vscode-languageserver';
import * as ast from '@calvin/language';
import {
    fieldId, isBuiltinMember, isMethodSpecClause, isStatic, methodId, precedingAnnotations, rangeOf, threadIds, typeOfDeclaration, typeOfTypeRef, typeToString, writableIfClauses,
} from '@calvin/language';
import { describeField, describeMethod, describeThread, placeLines, type ProgramContext } from '@calvin/verifier';
import { verificationOf } from './calvin-lsp-module.js';
import type { VerificationService } from './verification/service.js';
import { accessMarkdown, checkLines, counterexampleMarkdown, fence, loopMarkdown, specMarkdown } from './verification/hover-markdown.js';

/**
 * Hover on a declaration or a reference: the declaration, its type and, for
 * fields and methods, the annotations that govern them; from the verifier,
 * what a thread or procedure assumes and guarantees, the abstraction inlined
 * at a call, whether an access was found stable, a loop's inferred
 * invariants, and the counterexample of a failure under the mouse (Markdown,
 * Calvin code in fenced blocks).
 */
export class CalvinHoverProvider extends AstNodeHoverProvider {
    private readonly documents: LangiumDocuments;

    constructor(private readonly services: LangiumServices) {
        super(services);
        this.documents = services.shared.workspace.LangiumDocuments;
    }

    protected override getAstNodeHoverContent(node: AstNode): MaybePromise<string | undefined> {
        const parts = describe(node, threadIds(this.programs()));
        return parts.length > 0 ? parts.join('\n\n') : undefined;
    }

    private programs(): ast.Program[] {
        return this.documents.all.map(d => d.parseResult.value as ast.Program).toArray();
    }

    override async getHoverContent(document: LangiumDocument, params: HoverParams): Promise<Hover | undefined> {
        const sections: string[] = [];
        const uri = document.uri.toString();
        const service = verificationOf(this.services.shared);
        const root = document.parseResult?.value?.$cstNode;
        if (root) {
            const offset = document.textDocument.offsetAt(params.position);
            const cst = CstUtils.findDeclarationNodeAtOffset(root, offset, this.grammarConfig.nameRegexp);
            if (cst && cst.offset + cst.length > offset) {
                const ids = threadIds(this.programs());
                for (const target of this.references.findDeclarations(cst)) {
                    sections.push(...describe(target, ids));
                    if (service) sections.push(...verifierSections(service, uri, target, cst, params.position));
                }
                if (sections.length === 0 && GrammarAST.isKeyword(cst.grammarSource) && service) {
                    const loop = cst.astNode;
                    if ((ast.isWhileStmt(loop) || ast.isForStmt(loop)) && cst.text === (ast.isWhileStmt(loop) ? 'while' : 'for')) {
                        const found = loopMarkdown(rangeOf(loop), service.programChecksOf(uri));
                        sections.push(...(found.length > 0 ? found : ['**Loop invariants**: no check covers this loop.']));
                    }
                }
            }
        }
        if (service) {
            // a failure under the mouse: its environment step (as "Show the environment step" shows it)
            for (const d of service.diagnosticsAt(uri, params.position)) {
                if (counterexampleMarkdown(d)) sections.unshift(service.environmentStep(uri, d).markdown);
            }
        }
        return sections.length > 0 ? { contents: { kind: 'markdown', value: sections.join('\n\n') } } : undefined;
    }
}

/** What the verifier knows about a declaration, seen from `cst` (its name, or a reference to it). */
function verifierSections(service: VerificationService, uri: string, target: AstNode, cst: CstNode, position: { line: number; character: number }): string[] {
    const isDeclaration = cst.astNode === target;
    const { ctx, reason } = service.contextOf(uri);
    const unavailable = reason ? [`*${reason}.*`] : [];
    if (ast.isThreadDecl(target) && isDeclaration) {
        const t = ctx?.program.threads.find(x => x.name === target.name);
        if (!ctx || !t) return unavailable;
        const d = describeThread(ctx, t);
        return [...specMarkdown(d, uri), ...checkLines(service.programChecksOf(uri).filter(c => c.plan.key === `thread:${t.name}`), service.settings.verifyOn, d.threads)];
    }
    if (ast.isMethodDecl(target)) {
        if (!isDeclaration) return callSections(target, cst);
        const m = ctx ? findMethod(ctx, methodId(target)) : undefined;
        if (!ctx || !m) return unavailable;
        const d = describeMethod(ctx, m);
        const out = specMarkdown(d, uri);
        const checks = service.programChecksOf(uri);
        if (d.callers.length > 0) out.push(`*Called by ${d.callers.join(', ')}.*`);
        if (m.abstraction) out.push(...checkLines(checks.filter(c => c.plan.key === `abstraction:${m.id}`), service.settings.verifyOn, d.threads));
        else {
            const by = checks.filter(c => c.plan.inlines.includes(m.id)).map(c => c.plan.name);
            out.push(by.length > 0 ? `Checked where it is inlined: ${by.join(', ')}.` : 'Not checked: no thread reaches it.');
        }
        return out;
    }
    if ((ast.isFieldDecl(target) || ast.isGhostField(target)) && !isBuiltinMember(target)) {
        const out: string[] = [];
        if (ctx) {
            const f = describeField(ctx, fieldId(target));
            // (a final field needs no writable_if: `writable_if false` would only repeat `final`)
            const final = ast.isFieldDecl(target) && target.modifiers.includes('final');
            if (f.inferred && f.guard && !final) out.push(`**Inferred protection** (no \`writable_if\` is written; Calvin inferred and proved it): \`writable_if ${f.guard.text};\``, `*${placeLines(f.guard.origin, uri)}.* Keep it with the quick fix "Insert inferred annotation".`);
            if (f.clauses.length > 0) out.push('Environment clauses that constrain it:', fence(f.clauses.map(c => `// ${placeLines(c.origin, uri)}\n${c.text.replace(/\s*\n\s*/g, ' ')};`)));
            if (f.writers.length > 0) out.push(`Written by: ${f.writers.join(', ')}.`);
        } else out.push(...unavailable);
        if (!isDeclaration) {
            const found = accessMarkdown(uri, position, service.programChecksOf(uri), synchronizedBy(target, cst.astNode));
            out.push(...(found.length > 0 ? found : ['*This access: no check result yet.*']));
        }
        return out;
    }
    return [];
}

/** Why an access to `field` at `at` is a synchronization access (one the race check exempts). */
function synchronizedBy(field: ast.FieldDecl | ast.GhostField, at: AstNode): string {
    if (ast.isGhostField(field)) return 'ghost state (specification only, updated by `set` in one atomic step)';
    if (field.modifiers.includes('volatile')) return 'a synchronization access (volatile)';
    if (AstUtils.getContainerOfType(at, ast.isAtomicStmt)) return 'inside an `atomic` block (synchronized with the other atomic accesses)';
    if (AstUtils.getContainerOfType(at, ast.isCasExpr)) return 'part of a `cas` (one atomic step)';
    return 'a synchronization access';
}

function findMethod(ctx: ProgramContext, id: string) {
    return ctx.vocab.allMethods().find(m => m.id === id);
}

/** At a call: the callee's abstraction with `this` and the parameters replaced by the call's receiver and arguments (InlineAbs). */
function callSections(m: ast.MethodDecl, cst: CstNode): string[] {
    const call = cst.astNode;
    if (!((ast.isNameExpr(call) || ast.isMemberAccess(call)) && call.isCall)) return [];
    const clauses = precedingAnnotations(m).flatMap(a => a.clauses);
    const items: AstNode[] = clauses.flatMap((c): AstNode[] => ast.isAbstractionClause(c) ? c.items : ast.isRequiresClause(c) || ast.isEnsuresClause(c) ? [c] : []);
    if (items.length === 0) return [`No abstraction: the body of \`${m.name}\` is inlined here and checked in this context.`];
    const args = new Map<AstNode, string>();
    m.params.forEach((p, i) => { const a = call.args[i]; if (a) args.set(p, parenthesized(a)); });
    const receiver = ast.isMemberAccess(call) && !isStatic(m) ? parenthesized(call.receiver) : undefined;
    const lines = items.map(i => `${substitute(i, args, receiver)};`);
    return ['**Inlined here** (the abstraction of `' + m.name + '`' + (args.size > 0 || receiver ? ', with this call\'s arguments' : '') + '):', fence(lines)];
}

function parenthesized(e: ast.Expression): string {
    const t = e.$cstNode?.text ?? '';
    return /^[\w$.]+$/.test(t) ? t : `(${t})`;
}

/** The text of `node` with references to the parameters (and `this`) replaced. */
function substitute(node: AstNode, args: Map<AstNode, string>, receiver: string | undefined): string {
    const cst = node.$cstNode;
    if (!cst) return '';
    const edits: Array<{ start: number; end: number; text: string }> = [];
    for (const n of AstUtils.streamAst(node)) {
        if (ast.isNameExpr(n) && !n.isCall && n.ref.ref && args.has(n.ref.ref as AstNode) && n.$cstNode) {
            const refNode = n.ref.$refNode;
            if (refNode) edits.push({ start: refNode.offset, end: refNode.end, text: args.get(n.ref.ref as AstNode)! });
        } else if (ast.isThisExpr(n) && receiver && n.$cstNode) edits.push({ start: n.$cstNode.offset, end: n.$cstNode.end, text: receiver });
    }
    let text = cst.text;
    for (const e of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, e.start - cst.offset) + e.text + text.slice(e.end - cst.offset);
    return text.replace(/\s*\n\s*/g, ' ');
}

function code(text: string): string {
    return '```calvin\n' + text.trim() + '\n```';
}

function text(node: AstNode | undefined): string {
    return node?.$cstNode?.text ?? '';
}

/**
 * The annotations of a method: the ones written before it, without the
 * class-level clauses that happen to stand there (a class invariant, an
 * environment clause, a ghost field).
 */
function annotationTexts(node: AstNode): string[] {
    const out: string[] = [];
    for (const a of precedingAnnotations(node)) {
        const own = a.clauses.filter(c => isMethodSpecClause(c));
        if (own.length === 0) continue;
        out.push(own.length === a.clauses.length ? text(a) : own.map(c => `//@ ${text(c).replace(/\s*\n\s*/g, ' ')}`).join('\n'));
    }
    return out;
}

export function describe(node: AstNode, ids: Map<ast.ThreadDecl, number>): string[] {
    switch (node.$type) {
        case ast.FieldDecl.$type:
        case ast.GhostField.$type: {
            const f = node as ast.FieldDecl | ast.GhostField;
            const owner = AstUtils.getContainerOfType(f, ast.isClassDecl);
            const kind = isBuiltinMember(f) ? 'built-in field' : ast.isGhostField(f) ? 'ghost field'
                : owner ? (isStatic(f) ? 'static field' : 'instance field') : 'global';
            const out = [code(`${f.modifiers.join(' ')} ${ast.isGhostField(f) ? 'ghost ' : ''}${text(f.type)} ${f.name}`.trim()),
                `*${kind}*${owner && !isBuiltinMember(f) ? ` of class \`${owner.name}\`` : ''}, type \`${typeToString(typeOfTypeRef(f.type))}\``];
            if (isBuiltinMember(f)) {
                out.push(f.name === 'holder'
                    ? '0 when the object\'s monitor is free, else the id of the thread holding it. Changed only by `synchronized`.'
                    : 'The number of elements of the array; fixed when the array is created.');
                return out;
            }
            const protections: string[] = [];
            if (f.modifiers.includes('final')) protections.push('`final`: immutable after its initializer, never racy');
            if (f.modifiers.includes('volatile')) protections.push('`volatile`: a synchronization variable, exempt from stability checks (its writes still obey `writable_if`)');
            for (const w of writableIfClauses(f)) protections.push(`\`writable_if ${text(w.condition)}\`: only a thread for which this holds may write it`);
            if (protections.length === 0 && !ast.isGhostField(f)) protections.push('no `writable_if`: any thread may write it unless the checker infers a guard');
            if (protections.length > 0) out.push(protections.map(p => `- ${p}`).join('\n'));
            return out;
        }
        case ast.MethodDecl.$type: {
            const m = node as ast.MethodDecl;
            const owner = AstUtils.getContainerOfType(m, ast.isClassDecl);
            const sig = `${m.modifiers.join(' ')} ${text(m.type)} ${m.name}(${m.params.map(p => text(p)).join(', ')})`.trim();
            const out = [code(sig), owner ? `*method* of class \`${owner.name}\`` : '*procedure*'];
            const annotations = annotationTexts(m);
            if (annotations.length > 0) out.push(code(annotations.join('\n')));
            else out.push('No abstraction: body inlined at call sites (and checked there).');
            return out;
        }
        case ast.ThreadDecl.$type: {
            const t = node as ast.ThreadDecl;
            const id = ids.get(t);
            const instances = t.star ? 'any number of instances' : t.count !== undefined ? `${t.count} instances` : 'one instance';
            return [`**thread ${t.name}${t.star ? '[*]' : t.count !== undefined ? `[${t.count}]` : ''}**, ${instances}${id !== undefined ? `; in annotations \`${t.name}\` is its id, \`${id}\`` : ''}`];
        }
        case ast.ClassDecl.$type: {
            const c = node as ast.ClassDecl;
            return [code(`class ${c.name}`), `*class* with ${c.members.filter(ast.isFieldDecl).length} fields and ${c.members.filter(ast.isMethodDecl).length} methods`];
        }
        case ast.Param.$type:
        case ast.LocalVarDecl.$type:
        case ast.QuantVar.$type: {
            const d = node as ast.Param | ast.LocalVarDecl | ast.QuantVar;
            const kind = ast.isParam(d) ? 'parameter' : ast.isQuantVar(d) ? 'quantified variable' : 'local variable';
            return [code(`${text(d.type)} ${d.name}`), `*${kind}*, type \`${typeToString(typeOfDeclaration(d))}\`, private to its thread`];
        }
        default:
            return [];
    }
}

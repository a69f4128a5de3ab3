import type { AstNode, LangiumDocument } from 'langium';
import { AstUtils } from 'langium';
import type * as M from '@calvin/verifier/model';
import * as ast from '../generated/ast.js';
import {
    attachedClauses, classFields, writableIfClauses, classMethods, globalFields, isStatic, methodSpec, precedingAnnotations, threadIds,
} from '../ast-utils.js';
import { isBuiltinMember, typeOfDeclaration, typeOfTypeRef, type CalvinType, type CalvinTypeSystem } from '../types/calvin-types.js';

/**
 * Builds the verifier's program model (packages/verifier/src/model/program.ts)
 * from the linked and validated ASTs of one program's files. Only call it for
 * files without front-end errors.
 */
export function toProgramModel(documents: LangiumDocument[], types: CalvinTypeSystem): M.ProgramModel {
    const programs = documents.map(d => d.parseResult.value as ast.Program);
    const ids = threadIds(programs);
    const b = new ModelBuilder(types, ids);
    const model: M.ProgramModel = { files: documents.map(d => d.uri.toString()), classes: [], globals: [], procedures: [], threads: [], invariants: [], environments: [] };
    for (const p of programs) {
        for (const f of globalFields(p)) model.globals.push(b.field(f));
        for (const d of p.decls) {
            if (ast.isClassDecl(d)) model.classes.push(b.classModel(d));
            else if (ast.isMethodDecl(d)) model.procedures.push(b.method(d));
            else if (ast.isThreadDecl(d)) model.threads.push(b.thread(d));
            else if (ast.isAnnotation(d)) {
                for (const c of d.clauses) {
                    if (ast.isInvariantClause(c) && c.condition) model.invariants.push(b.clause(c.condition));
                    if (ast.isEnvironmentClause(c) && c.action) model.environments.push(b.clause(c.action));
                }
            }
        }
    }
    return model;
}

export function rangeOf(node: AstNode | undefined): M.Range {
    const cst = node?.$cstNode;
    const file = node ? AstUtils.getDocument(node).uri.toString() : '';
    if (!cst) return { file, startLine: 0, startChar: 0, endLine: 0, endChar: 0 };
    const r = cst.range;
    return { file, startLine: r.start.line, startChar: r.start.character, endLine: r.end.line, endChar: r.end.character };
}

export function modelType(t: CalvinType): M.Type {
    switch (t.kind) {
        case 'int': return { kind: 'int' };
        case 'boolean': return { kind: 'boolean' };
        case 'void': return { kind: 'void' };
        case 'null': return { kind: 'null' };
        case 'class': return { kind: 'class', name: t.decl.name };
        case 'array': return { kind: 'array', element: modelType(t.element) };
        default: return { kind: 'int' };
    }
}

/** An integer literal's exact value, from its text (leading zeros dropped). */
function intText(e: ast.IntLiteral): string {
    const text = e.$cstNode?.text.trim() ?? '';
    return /^[0-9]+$/.test(text) ? BigInt(text).toString() : String(e.value);
}

export function fieldId(f: ast.FieldDecl | ast.GhostField): string {
    const cls = AstUtils.getContainerOfType(f, ast.isClassDecl);
    return cls ? `${cls.name}.${f.name}` : f.name;
}

export function methodId(m: ast.MethodDecl): string {
    return ast.isClassDecl(m.$container) ? `${m.$container.name}.${m.name}` : m.name;
}

/** A unique, stable id for a local, parameter or quantified variable. */
export function varId(d: ast.LocalVarDecl | ast.Param | ast.QuantVar): string {
    const r = d.$cstNode?.range.start;
    return r ? `${d.name}@${r.line + 1}:${r.character + 1}` : d.name;
}

class ModelBuilder {
    constructor(private readonly types: CalvinTypeSystem, private readonly ids: Map<ast.ThreadDecl, number>) { }

    clause(e: ast.Expression): M.Clause {
        return { expr: this.expr(e), range: rangeOf(e), text: annotationText(e) };
    }

    classModel(c: ast.ClassDecl): M.ClassModel {
        const m: M.ClassModel = { name: c.name, fields: classFields(c).map(f => this.field(f)), methods: classMethods(c).map(x => this.method(x)), invariants: [], environments: [], range: rangeOf(c) };
        for (const member of c.members) {
            if (!ast.isAnnotation(member)) continue;
            for (const cl of member.clauses) {
                if (ast.isInvariantClause(cl) && cl.condition) m.invariants.push(this.clause(cl.condition));
                if (ast.isEnvironmentClause(cl) && cl.action) m.environments.push(this.clause(cl.action));
            }
        }
        return m;
    }

    field(f: ast.FieldDecl | ast.GhostField): M.FieldModel {
        const cls = AstUtils.getContainerOfType(f, ast.isClassDecl);
        const writable = writableIfClauses(f);
        return {
            id: fieldId(f), name: f.name, owner: cls?.name, isStatic: isStatic(f),
            isVolatile: f.modifiers.includes('volatile'), isFinal: f.modifiers.includes('final'), isGhost: ast.isGhostField(f),
            type: modelType(typeOfTypeRef(f.type)), init: f.init ? this.expr(f.init) : undefined,
            writableIf: writable.filter(w => w.condition).map(w => this.clause(w.condition)),
            range: rangeOf(f), nameRange: nameRangeOf(f),
        };
    }

    method(m: ast.MethodDecl): M.MethodModel {
        const spec = methodSpec(m);
        let abstraction: M.AbstractionModel | undefined;
        if (spec.abstraction || spec.requires.length > 0 || spec.ensures.length > 0) {
            const items = spec.abstraction?.items ?? [];
            const stutter = items.find(ast.isAbsStutter);
            abstraction = {
                requires: spec.requires.filter(r => r.condition).map(r => this.clause(r.condition)),
                ensures: spec.ensures.filter(r => r.condition).map(r => this.clause(r.condition)),
                stutter: stutter ? this.action(stutter) : undefined,
                steps: items.filter(ast.isAbsStep).map(s => this.action(s)),
                range: rangeOf(spec.abstraction ?? precedingAnnotations(m)[0]),
                explicit: spec.abstraction !== undefined,
            };
        }
        const body = m.body;
        const close = body?.$cstNode ? lastLeafRange(body) : rangeOf(m);
        return {
            id: methodId(m), name: m.name, owner: ast.isClassDecl(m.$container) ? m.$container.name : undefined,
            isStatic: isStatic(m), isSynchronized: m.modifiers.includes('synchronized'),
            params: m.params.map(p => this.varDecl(p)), returnType: modelType(typeOfTypeRef(m.type)),
            body: body ? this.block(body.stmts) : [], abstraction,
            range: rangeOf(m), nameRange: nameRangeOf(m), endRange: close,
        };
    }

    thread(t: ast.ThreadDecl): M.ThreadModel {
        return {
            name: t.name, id: this.ids.get(t), count: t.star ? '*' : t.count,
            body: t.body ? this.block(t.body.stmts) : [], range: rangeOf(t), nameRange: nameRangeOf(t),
        };
    }

    private action(a: ast.AbsStep | ast.AbsStutter): M.Action {
        const frame: M.FrameEntry[] = [];
        for (const e of a.frame?.entries ?? []) {
            if (ast.isAnyObjectField(e)) {
                const f = e.field?.ref;
                if (f) frame.push({ kind: 'any', field: fieldId(f) });
                continue;
            }
            const loc = e.location;
            if (ast.isIndexAccess(loc) && loc.array && (loc.index || loc.allElements)) {
                frame.push({ kind: 'elems', array: this.expr(loc.array), index: loc.index ? this.expr(loc.index) : undefined });
                continue;
            }
            if (ast.isNameExpr(loc)) {
                const d = loc.ref?.ref;
                if (ast.isFieldDecl(d) || ast.isGhostField(d)) {
                    frame.push(isStatic(d) ? { kind: 'global', field: fieldId(d) } : { kind: 'this', field: fieldId(d) });
                }
            } else if (ast.isMemberAccess(loc)) {
                const d = loc.member?.ref;
                if (!(ast.isFieldDecl(d) || ast.isGhostField(d))) continue;
                if (isStatic(d)) frame.push({ kind: 'global', field: fieldId(d) });
                else if (ast.isThisExpr(loc.receiver)) frame.push({ kind: 'this', field: fieldId(d) });
                else if (ast.isNameExpr(loc.receiver) && ast.isParam(loc.receiver.ref?.ref)) {
                    frame.push({ kind: 'param', param: varId(loc.receiver.ref.ref), field: fieldId(d) });
                }
            }
        }
        return { hasFrame: a.frame !== undefined, frame, expr: this.expr(a.action), range: rangeOf(a), text: annotationText(a.action) };
    }

    private varDecl(d: ast.LocalVarDecl | ast.Param | ast.QuantVar): M.VarDecl {
        return { id: varId(d), name: d.name, type: modelType(typeOfDeclaration(d)), range: rangeOf(d) };
    }

    // -------------------------------------------------------------- statements

    block(stmts: ast.Statement[]): M.Stmt[] {
        const out: M.Stmt[] = [];
        for (const s of stmts) out.push(...this.stmt(s));
        return out;
    }

    private stmt(s: ast.Statement): M.Stmt[] {
        const range = rangeOf(s);
        switch (s.$type) {
            case 'Block': return [{ kind: 'block', body: this.block(s.stmts), range }];
            case 'LocalVarDecl': return [{ kind: 'local', decl: this.varDecl(s), init: s.init ? this.expr(s.init) : undefined, range }];
            case 'AssignStmt': return [this.assign(s)];
            case 'ExprStmt': return [{ kind: 'expr', expr: this.expr(s.expr), range }];
            case 'IfStmt': return [{ kind: 'if', cond: this.expr(s.condition), then: this.stmt(s.then), else: s.else ? this.stmt(s.else) : [], range }];
            case 'WhileStmt': return [{ kind: 'while', cond: this.expr(s.condition), body: this.stmt(s.body), invariants: this.loopInvariants(s), update: [], range }];
            case 'ForStmt': {
                const init = s.init ? (ast.isLocalVarDecl(s.init)
                    ? [{ kind: 'local', decl: this.varDecl(s.init), init: s.init.init ? this.expr(s.init.init) : undefined, range: rangeOf(s.init) } as M.Stmt]
                    : [this.assign(s.init)]) : [];
                const cond: M.Expr = s.condition ? this.expr(s.condition) : { kind: 'bool', value: true, type: { kind: 'boolean' }, range };
                const loop: M.Stmt = { kind: 'while', cond, body: this.stmt(s.body), invariants: this.loopInvariants(s), update: s.update ? [this.assign(s.update)] : [], range };
                return init.length > 0 ? [{ kind: 'block', body: [...init, loop], range }] : [loop];
            }
            case 'ReturnStmt': return [{ kind: 'return', value: s.value ? this.expr(s.value) : undefined, range }];
            case 'BreakStmt': return [{ kind: 'break', range }];
            case 'ContinueStmt': return [{ kind: 'continue', range }];
            case 'SyncStmt': return [{ kind: 'sync', lock: this.expr(s.lock), body: s.body ? this.block(s.body.stmts) : [], range, closeRange: s.body ? lastLeafRange(s.body) : range }];
            case 'AtomicStmt': return [{ kind: 'atomic', body: s.body ? this.block(s.body.stmts) : [], range }];
            case 'AssertStmt': return [{ kind: 'assert', cond: this.expr(s.condition), annotation: false, text: annotationText(s.condition), range }];
            case 'EmptyStmt': return [];
            case 'BlockAnnotation':
            case 'LineAnnotation': {
                const out: M.Stmt[] = [];
                for (const c of s.clauses) {
                    const r = rangeOf(c);
                    if (ast.isAssertClause(c) && c.condition) out.push({ kind: 'assert', cond: this.expr(c.condition), annotation: true, text: annotationText(c.condition), range: r });
                    else if (ast.isAssumeClause(c) && c.condition) out.push({ kind: 'assume', cond: this.expr(c.condition), text: annotationText(c.condition), range: r });
                    else if (ast.isSetClause(c) && c.target && c.value) out.push({ kind: 'set', target: this.expr(c.target), value: this.expr(c.value), range: r });
                    else if (ast.isWitnessClause(c)) out.push({ kind: 'witness', step: c.step, range: r });
                }
                return out;
            }
        }
    }

    private assign(s: ast.AssignStmt): M.Stmt {
        return { kind: 'assign', target: this.expr(s.target), op: s.op, value: s.value ? this.expr(s.value) : undefined, range: rangeOf(s) };
    }

    private loopInvariants(loop: ast.WhileStmt | ast.ForStmt): M.Clause[] {
        return attachedClauses(loop).filter(ast.isLoopInvariantClause).filter(c => c.condition).map(c => this.clause(c.condition));
    }

    // -------------------------------------------------------------- expressions

    expr(e: ast.Expression): M.Expr {
        const type = modelType(this.types.typeOf(e));
        const range = rangeOf(e);
        switch (e.$type) {
            // the digits as written: integers are mathematical (a JS number would round large ones)
            case 'IntLiteral': return { kind: 'int', value: intText(e), type, range };
            case 'BoolLiteral': return { kind: 'bool', value: e.value, type, range };
            case 'NullLiteral': return { kind: 'null', type, range };
            case 'ThisExpr': return { kind: 'this', type, range };
            case 'TidExpr': return { kind: 'tid', type, range };
            case 'NondetExpr': return { kind: 'nondet', type, range };
            case 'ResultExpr': return { kind: 'result', type, range };
            case 'OldExpr': return { kind: 'old', expr: this.expr(e.expr), type, range };
            case 'UnaryExpr': return { kind: 'unary', op: e.op, operand: this.expr(e.operand), type, range };
            case 'BinaryExpr': return { kind: 'binary', op: e.operator, left: this.expr(e.left), right: this.expr(e.right), type, range };
            case 'ConditionalExpr': return { kind: 'cond', cond: this.expr(e.condition), then: this.expr(e.then), else: this.expr(e.else), type, range };
            case 'CasExpr': return { kind: 'cas', target: this.expr(e.target), expected: this.expr(e.expected), update: this.expr(e.update), type, range };
            case 'QuantifiedExpr': return {
                kind: 'quant', quantifier: e.quantifier.endsWith('forall') ? 'forall' : 'exists', variable: this.varDecl(e.variable),
                range_: e.range ? this.expr(e.range) : undefined, body: this.expr(e.body), type, range,
            };
            case 'NewExpr': {
                if (e.isObject) return { kind: 'new', class: e.type.cls?.ref?.name ?? '', type, range };
                let element = modelType(typeOfTypeRef(e.type));
                for (let i = 0; i < e.dims.length; i++) element = { kind: 'array', element };
                return { kind: 'newArray', element, size: this.expr(e.size!), type, range };
            }
            // (`a[*]` is only valid in frames, which are modelled above)
            case 'IndexAccess': return { kind: 'index', array: this.expr(e.array), index: e.index ? this.expr(e.index) : { kind: 'int', value: '0', type: { kind: 'int' }, range }, primed: e.primed, type, range };
            case 'NameExpr': return this.name(e, type, range);
            case 'MemberAccess': return this.member(e, type, range);
        }
    }

    private name(e: ast.NameExpr, type: M.Type, range: M.Range): M.Expr {
        const d = e.ref.ref;
        const thisExpr = (): M.Expr => {
            const cls = AstUtils.getContainerOfType(e, ast.isClassDecl);
            return { kind: 'this', type: cls ? { kind: 'class', name: cls.name } : type, range };
        };
        if (ast.isMethodDecl(d)) {
            return { kind: 'call', method: methodId(d), receiver: isStatic(d) ? undefined : thisExpr(), args: e.args.map(a => this.expr(a)), type, range };
        }
        if (ast.isFieldDecl(d) || ast.isGhostField(d)) {
            if (isBuiltinMember(d)) return { kind: 'holder', receiver: thisExpr(), primed: e.primed, type, range };
            if (isStatic(d)) return { kind: 'global', field: fieldId(d), primed: e.primed, type, range };
            return { kind: 'field', receiver: thisExpr(), field: fieldId(d), primed: e.primed, type, range };
        }
        if (ast.isThreadDecl(d)) return { kind: 'threadId', thread: d.name, id: this.ids.get(d) ?? 0, type, range };
        if (ast.isLocalVarDecl(d) || ast.isParam(d) || ast.isQuantVar(d)) return { kind: 'var', id: varId(d), name: d.name, type, range };
        throw new Error(`unresolved or unsupported name '${e.ref.$refText}' reached the model builder`);
    }

    private member(e: ast.MemberAccess, type: M.Type, range: M.Range): M.Expr {
        const d = e.member.ref;
        const receiverIsClass = ast.isNameExpr(e.receiver) && ast.isClassDecl(e.receiver.ref.ref);
        if (ast.isMethodDecl(d)) {
            return { kind: 'call', method: methodId(d), receiver: isStatic(d) || receiverIsClass ? undefined : this.expr(e.receiver), args: e.args.map(a => this.expr(a)), type, range };
        }
        if (ast.isFieldDecl(d) || ast.isGhostField(d)) {
            if (isBuiltinMember(d)) {
                return d.name === 'length'
                    ? { kind: 'length', array: this.expr(e.receiver), type, range }
                    : { kind: 'holder', receiver: this.expr(e.receiver), primed: e.primed, type, range };
            }
            if (isStatic(d)) return { kind: 'global', field: fieldId(d), primed: e.primed, type, range };
            return { kind: 'field', receiver: this.expr(e.receiver), field: fieldId(d), primed: e.primed, type, range };
        }
        throw new Error(`unsupported member '${e.member.$refText}' reached the model builder`);
    }
}

function nameRangeOf(node: ast.FieldDecl | ast.GhostField | ast.MethodDecl | ast.ThreadDecl): M.Range {
    const doc = AstUtils.getDocument(node).uri.toString();
    const leaf = node.$cstNode && findNameLeaf(node);
    if (!leaf) return rangeOf(node);
    const r = leaf.range;
    return { file: doc, startLine: r.start.line, startChar: r.start.character, endLine: r.end.line, endChar: r.end.character };
}

import { GrammarUtils, type CstNode } from 'langium';
function findNameLeaf(node: AstNode): CstNode | undefined {
    return GrammarUtils.findNodeForProperty(node.$cstNode, 'name');
}

function lastLeafRange(node: AstNode): M.Range {
    let n: CstNode | undefined = node.$cstNode;
    while (n && 'content' in n && (n as { content: CstNode[] }).content.length > 0) {
        const c = (n as { content: CstNode[] }).content;
        n = c[c.length - 1];
    }
    const doc = AstUtils.getDocument(node).uri.toString();
    const r = n!.range;
    return { file: doc, startLine: r.start.line, startChar: r.start.character, endLine: r.end.line, endChar: r.end.character };
}

/**
 * The source text of an annotation expression, for messages and hover, on one
 * line: a JML continuation `@` at the start of a line is not part of it, and
 * each line break with its indentation becomes one space.
 */
function annotationText(node: { $cstNode?: { text: string } } | undefined): string {
    const text = node?.$cstNode?.text ?? '';
    return /[\r\n]/.test(text) ? text.replace(/[ \t]*\r?\n[ \t]*(?:@+(?!\*)[ \t]*)?/g, ' ') : text;
}

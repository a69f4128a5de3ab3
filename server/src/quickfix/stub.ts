// "Insert abstraction stub" (issue 4): an abstraction for a method, pre-filled
// from its body. One `step` per atomic operation that writes a shared
// location — the frame is what it writes, the predicate relates the pre- and
// post-state as far as the syntax tells (`m == 0 && m' == tid` for a spinning
// cas, `count' == count + 1` for `count++`, `true` when the value cannot be
// written in the method's scope); callees with an abstraction contribute their
// steps, callees without one their bodies. Writes that may happen any number
// of times (in loops, in branches) go into the `stutter`; a loop that only
// reads gives `stutter [] true`. `requires` are the facts every call site
// holds (facts.ts), `ensures` the return value when it does not depend on the
// shared state. The result is a guess that the checker then checks.
import { AstUtils } from 'langium';
import * as ast from '@calvin/language';
import { methodSpec } from '@calvin/language';
import { calleeOf, callerFacts, spinCas, type ProgramIndex } from './facts.js';
import {
    atom, callMap, frameText, identitySubst, locOf, locText, locToCaller, renderExpr, scopeOf, type CallMap, type Field, type Loc, type TextSubst,
} from './locations.js';

export interface Stub {
    requires: string[];
    steps: Array<{ frame: string[]; pred: string }>;
    stutter?: { frame: string[]; pred: string };
    ensures?: string;
}

const MAX_DEPTH = 4;

interface Ctx {
    subst: TextSubst;
    /** A location of the code being walked, in the stubbed method's scope (undefined: not expressible there). */
    up: (l: Loc) => Loc | undefined;
    /** Inside a loop or a branch: its writes may happen any number of times. */
    repeated: boolean;
    depth: number;
    /** The stubbed method's own body (its returns give the ensures). */
    top: boolean;
}

class StubBuilder {
    readonly steps: Array<{ frame: string[]; pred: string }> = [];
    readonly stutterFrame = new Set<string>();
    readonly stutterPreds = new Set<string>();
    readOnlyLoop = false;
    /** A return inside a branch or loop was passed: later writes may not happen. */
    mayHaveReturned = false;
    readonly returns: Array<string | undefined> = [];
    private readonly cls: ast.ClassDecl | undefined;

    constructor(private readonly index: ProgramIndex, readonly method: ast.MethodDecl) {
        this.cls = scopeOf(method);
    }

    /** Record one atomic write (or several, for `atomic`). */
    private emit(frame: string[], preds: string[], ctx: Ctx): void {
        if (frame.length === 0) return;
        const pred = preds.filter(p => p !== 'true').join(' && ') || 'true';
        if (ctx.repeated || this.mayHaveReturned) {
            frame.forEach(f => this.stutterFrame.add(f));
            this.stutterPreds.add(pred);
            return;
        }
        this.steps.push({ frame: [...new Set(frame)], pred });
    }

    /** The frame entry and the location's text (undefined: not expressible) of a write in the walked code. */
    private target(l: Loc | undefined, field: Field | undefined, ctx: Ctx): { frame: string; text?: string } | undefined {
        if (!field) return undefined;
        const top = l ? ctx.up(l) : undefined;
        if (!top) return { frame: `*.${field.name}` };
        return { frame: frameText(top, this.cls), text: locText(top, this.cls) };
    }

    private value(e: ast.Expression | undefined, ctx: Ctx): string | undefined {
        const t = e ? renderExpr(e, ctx.subst) : undefined;
        return t === undefined || t.includes('\u0000') ? undefined : t;
    }

    stmts(stmts: ast.Statement[], ctx: Ctx): void {
        for (const s of stmts) this.stmt(s, ctx);
    }

    stmt(s: ast.Statement | undefined, ctx: Ctx): void {
        if (!s) return; // (a statement the parser could not recover)
        if (ast.isBlock(s)) return this.stmts(s.stmts ?? [], ctx);
        if (ast.isSyncStmt(s)) { this.expr(s.lock, ctx); return this.stmts((s.body?.stmts ?? []), ctx); }
        if (ast.isAtomicStmt(s)) {
            // one atomic step: everything it writes, in one frame
            const inner = new StubBuilder(this.index, this.method);
            inner.stmts((s.body?.stmts ?? []), { ...ctx, repeated: false });
            const frame = [...inner.steps.flatMap(x => x.frame), ...inner.stutterFrame];
            const exact = inner.stutterFrame.size === 0;
            this.emit(frame, exact ? inner.steps.map(x => x.pred) : [], ctx);
            return;
        }
        if (ast.isLocalVarDecl(s)) {
            this.expr(s.init, ctx);
            const v = this.value(s.init, ctx);
            if (v !== undefined && !ctx.repeated) ctx.subst.locals.set(s, atom(v));
            else ctx.subst.locals.delete(s);
            return;
        }
        if (ast.isAssignStmt(s)) return this.assign(s, ctx);
        if (ast.isExprStmt(s)) return this.expr(s.expr, ctx);
        if (ast.isIfStmt(s)) {
            this.expr(s.condition, ctx);
            const branch = { ...ctx, repeated: true };
            this.stmt(s.then, branch);
            if (s.else) this.stmt(s.else, branch);
            return;
        }
        if (ast.isWhileStmt(s) || ast.isForStmt(s)) return this.loop(s, ctx);
        if (ast.isReturnStmt(s)) {
            this.expr(s.value, ctx);
            if (ctx.top) this.returns.push(s.value && stateFree(s.value) ? this.value(s.value, ctx) : undefined);
            if (ctx.repeated && ctx.top) this.mayHaveReturned = true;
            return;
        }
        if (ast.isAnnotation(s)) {
            for (const c of s.clauses) {
                if (!ast.isSetClause(c)) continue;
                const t = this.target(locOf(c.target), locOf(c.target)?.field, ctx);
                const v = this.value(c.value, ctx);
                if (t) this.emit([t.frame], [t.text && v ? `${t.text}' == ${v}` : 'true'], ctx);
            }
        }
    }

    private assign(s: ast.AssignStmt, ctx: Ctx): void {
        this.expr(s.value, ctx);
        if (ast.isIndexAccess(s.target)) this.expr(s.target.index, ctx);
        const target = s.target;
        // a local: remember its value where it is certain
        if (ast.isNameExpr(target) && ast.isLocalVarDecl(target.ref.ref)) {
            const v = s.op === '=' ? this.value(s.value, ctx) : undefined;
            if (v !== undefined && !ctx.repeated) ctx.subst.locals.set(target.ref.ref, atom(v));
            else ctx.subst.locals.delete(target.ref.ref);
            return;
        }
        if (ast.isNameExpr(target) && ast.isParam(target.ref.ref)) { ctx.subst.args.delete(target.ref.ref); return; }
        if (ast.isIndexAccess(target)) {
            // an element: `a[i]` with its new value when the index is known in the method's scope, `a[*]` otherwise
            const arr = locOf(target.array);
            const t = this.target(arr, arr?.field, ctx);
            if (!t) return;
            if (!t.text) { this.emit([t.frame], ['true'], ctx); return; } // `*.f`: its arrays' elements too
            const index = target.index && stateFree(target.index) ? this.value(target.index, ctx) : undefined;
            if (index === undefined) { this.emit([`${t.text}[*]`], ['true'], ctx); return; }
            const el = `${t.text}[${index}]`;
            const v = s.op === '=' ? this.value(s.value, ctx) : undefined;
            const pred = v !== undefined ? `${el}' == ${v}`
                : s.op === '++' || s.op === '--' ? `${el}' == ${el} ${s.op === '++' ? '+' : '-'} 1` : 'true';
            this.emit([el], [pred], ctx);
            return;
        }
        const l = locOf(target);
        const t = this.target(l, l?.field, ctx);
        if (!t) return;
        let pred = 'true';
        if (t.text) {
            const v = this.value(s.value, ctx);
            if (s.op === '=' && v !== undefined) pred = `${t.text}' == ${v}`;
            else if (s.op === '=' && ast.isNewExpr(s.value)) pred = `${t.text}' != null`;
            else if (s.op === '++' || s.op === '--') pred = `${t.text}' == ${t.text} ${s.op === '++' ? '+' : '-'} 1`;
            else if ((s.op === '+=' || s.op === '-=') && v !== undefined) pred = `${t.text}' == ${t.text} ${s.op[0]} ${atom(v)}`;
        }
        this.emit([t.frame], [pred], ctx);
    }

    private loop(s: ast.WhileStmt | ast.ForStmt, ctx: Ctx): void {
        if (ast.isForStmt(s) && s.init) this.stmt(s.init as ast.Statement, ctx);
        const spin = spinCas(s);
        if (spin) {
            // `while (!cas(L, a, b)) { body }`: failed attempts change nothing, the body's writes
            // may happen any number of times (the stutter); the successful cas is the step
            const inner = { ...ctx, repeated: true };
            this.expr(spin.expected, inner);
            this.expr(spin.update, inner);
            this.stmt(s.body, inner);
            if (ast.isForStmt(s) && s.update) this.stmt(s.update, inner);
            const l = locOf(spin.target);
            const t = this.target(l, l?.field, ctx);
            const a = this.value(spin.expected, ctx), b = this.value(spin.update, ctx);
            if (t) this.emit([t.frame], [t.text && a !== undefined && b !== undefined ? `${t.text} == ${atom(a)} && ${t.text}' == ${atom(b)}` : 'true'], ctx);
            return;
        }
        const steps = this.steps.length, frame = this.stutterFrame.size;
        // locals assigned in the loop have no single value after it
        for (const n of AstUtils.streamAst(s)) {
            if (ast.isAssignStmt(n) && ast.isNameExpr(n.target) && ast.isLocalVarDecl(n.target.ref.ref)) ctx.subst.locals.delete(n.target.ref.ref);
        }
        const inner = { ...ctx, repeated: true };
        this.expr(s.condition, inner);
        this.stmt(s.body, inner);
        if (ast.isForStmt(s) && s.update) this.stmt(s.update, inner);
        if (this.steps.length === steps && this.stutterFrame.size === frame) this.readOnlyLoop = true;
    }

    /** The writes of an expression: its `cas`es and calls, in order. */
    expr(e: ast.Expression | undefined, ctx: Ctx): void {
        if (!e) return;
        for (const n of AstUtils.streamAst(e)) {
            if (ast.isCasExpr(n)) {
                const l = locOf(n.target);
                const t = this.target(l, l?.field, ctx);
                const a = this.value(n.expected, ctx), b = this.value(n.update, ctx);
                if (t) {
                    this.emit([t.frame], [t.text && a !== undefined && b !== undefined
                        ? `(${t.text} == ${atom(a)} && ${t.text}' == ${atom(b)}) || (${t.text} != ${atom(a)} && ${t.text}' == ${t.text})` : 'true'], ctx);
                }
            } else if ((ast.isNameExpr(n) || ast.isMemberAccess(n)) && n.isCall) this.call(n, ctx);
        }
    }

    private call(call: ast.NameExpr | ast.MemberAccess, ctx: Ctx): void {
        const callee = calleeOf(call);
        if (!callee || ctx.depth >= MAX_DEPTH) return;
        const map = callMap(call, callee);
        const receiverText = ast.isMemberAccess(call) ? this.value(call.receiver, ctx) : ctx.subst.receiver;
        const args = new Map<ast.Param, string>();
        callee.params.forEach((p, i) => { const v = call.args[i] ? this.value(call.args[i], ctx) : undefined; if (v !== undefined) args.set(p, atom(v)); });
        const subst: TextSubst = { receiver: receiverText ?? (ast.isMemberAccess(call) ? '\u0000' : undefined), args: args as Map<never, string>, locals: new Map(), target: this.cls };
        const inner: Ctx = { subst, up: (l: Loc) => { const c = locToCaller(l, map as CallMap); return c ? ctx.up(c) : undefined; }, repeated: ctx.repeated, depth: ctx.depth + 1, top: false };
        const spec = methodSpec(callee);
        if (spec.abstraction || spec.requires.length > 0 || spec.ensures.length > 0) {
            for (const item of spec.abstraction?.items ?? []) {
                if (!ast.isAbsStep(item) && !ast.isAbsStutter(item)) continue;
                const frame = (item.frame?.entries ?? []).map(e => {
                    if (ast.isAnyObjectField(e)) return `*.${e.field.ref?.name ?? e.field.$refText}`;
                    // elements: of the array in the caller's terms (every element: the index is the callee's)
                    const elements = ast.isIndexAccess(e.location);
                    const l = locOf(ast.isIndexAccess(e.location) ? e.location.array : e.location);
                    const t = this.target(l, l?.field, inner);
                    return elements && t?.text ? `${t.text}[*]` : t?.frame;
                }).filter((x): x is string => x !== undefined);
                const pred = unusable(renderExpr(item.action, subst));
                if (ast.isAbsStutter(item)) { frame.forEach(f => this.stutterFrame.add(f)); this.stutterPreds.add(pred); } else this.emit(frame, [pred], inner);
            }
            return;
        }
        this.stmts((callee.body?.stmts ?? []), inner);
    }

    build(requires: string[]): Stub {
        const stub: Stub = { requires, steps: this.steps };
        if (this.stutterFrame.size > 0) {
            const preds = [...this.stutterPreds];
            stub.stutter = { frame: [...this.stutterFrame], pred: preds.length === 1 ? preds[0] : 'true' };
        } else if (this.readOnlyLoop) stub.stutter = { frame: [], pred: 'true' };
        const values = new Set(this.returns);
        if (this.returns.length > 0 && values.size === 1 && this.returns[0] !== undefined) stub.ensures = `\\result == ${this.returns[0]}`;
        return stub;
    }
}

/** A text rendered with an unknown receiver (marked by NUL) is not usable: `true` instead. */
function unusable(text: string | undefined): string {
    return text === undefined || text.includes('\u0000') ? 'true' : text;
}

/** An expression that does not read the shared state (literals, parameters, `tid`, arithmetic). */
function stateFree(e: ast.Expression): boolean {
    return AstUtils.streamAst(e).every(n => {
        if (ast.isNameExpr(n)) return !n.isCall && (ast.isParam(n.ref.ref) || ast.isThreadDecl(n.ref.ref));
        return ast.isIntLiteral(n) || ast.isBoolLiteral(n) || ast.isNullLiteral(n) || ast.isTidExpr(n) || ast.isThisExpr(n) || ast.isUnaryExpr(n) || ast.isBinaryExpr(n) || ast.isConditionalExpr(n);
    });
}

/** The parameters of class or array type the body dereferences (`p.f`, `p.m()`, `p[i]`): they must not be null. */
function dereferenced(method: ast.MethodDecl): ast.Param[] {
    const out = new Set<ast.Param>();
    for (const n of method.body ? AstUtils.streamAst(method.body) : []) {
        const base = ast.isMemberAccess(n) ? n.receiver : ast.isIndexAccess(n) ? n.array : undefined;
        if (base && ast.isNameExpr(base) && ast.isParam(base.ref.ref)) out.add(base.ref.ref);
    }
    return method.params.filter(p => out.has(p));
}

/** The stub of a method's abstraction, from its body and its callers. */
export function abstractionStub(method: ast.MethodDecl, index: ProgramIndex): Stub {
    const b = new StubBuilder(index, method);
    const cls = scopeOf(method);
    b.stmts((method.body?.stmts ?? []), { subst: identitySubst(cls), up: l => l, repeated: false, depth: 0, top: true });
    const plainRequires = methodSpec(method).requires.some(r => ast.isRequiresClause(r));
    const requires = plainRequires ? [] : [
        ...callerFacts(method, index).locs.map(l => `${locText(l, cls)} == tid`),
        ...dereferenced(method).map(p => `${p.name} != null`),
    ];
    return b.build(requires);
}

/** The annotation text, indented like the method. */
export function stubText(stub: Stub, indent: string): string {
    const items = [
        ...stub.requires.map(r => `requires ${r};`),
        ...(stub.stutter ? [`stutter [${stub.stutter.frame.join(', ')}] ${stub.stutter.pred};`] : []),
        ...stub.steps.map(s => `step [${s.frame.join(', ')}] ${s.pred};`),
        ...(stub.ensures ? [`ensures ${stub.ensures};`] : []),
    ];
    if (items.length === 0) return `${indent}/*@ abstraction { } */`;
    return [`${indent}/*@ abstraction {`, ...items.map(i => `${indent}      ${i}`), `${indent}    } */`].join('\n');
}

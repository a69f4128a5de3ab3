// "Insert abstraction stub" (issue 4): an abstraction for a method, pre-filled
// from its body. One `step` per atomic operation that writes a shared
// location — the frame is what it writes, the predicate relates the pre- and
// post-state as far as the syntax tells (`m == 0 && m' == tid` for a spinning
// cas, `count' == count + 1` for `count++`, `true` when the value cannot be
// written in the method's scope); an array element write frames the element
// (`a[i]`) when its index is stable (stable.ts) and all the elements (`a[*]`)
// otherwise. Callees with an abstraction contribute their steps, callees
// without one their bodies. Writes that may happen any number of times (in
// loops, in branches) go into the `stutter`; a loop that only reads gives
// `stutter [] true`. `requires` are the facts every call site holds
// (facts.ts), `ensures` the return value when it is stable. The result is a
// guess that the checker then checks.
import { AstUtils } from 'langium';
import * as ast from '@calvin/language';
import { isStatic, isSynchronized, methodSpec } from '@calvin/language';
import { calleeOf, callerFacts, spinCas, type ProgramIndex } from './facts.js';
import {
    atom, callMap, frameArrayText, frameText, identitySubst, inMethodScope, locOf, locText, pathOf, pathText, pathToCaller, renderExpr, scopeOf,
    type Field, type SourceLoc, type Path, type TextSubst,
} from './locations.js';
import { isStable, stableOf, type Stable } from './stable.js';

export interface Stub {
    requires: string[];
    steps: Array<{ frame: string[]; pred: string }>;
    stutter?: { frame: string[]; pred: string };
    ensures?: string;
}

const MAX_DEPTH = 4;

/** Marks a variable whose value cannot be written in the stubbed method's scope (see `value`). */
const UNKNOWN = '\u0000';

/** A location of the walked code in the stubbed method's scope. */
function upLoc(l: SourceLoc, ctx: Ctx): SourceLoc | undefined {
    if (l.k === 'static') return l;
    const base = ctx.up(l.base);
    return base ? { k: 'inst', base, field: l.field } : undefined;
}

/** A local's value: remembered where it is certain (stable when it reads no changing state), forgotten otherwise. */
function setLocal(ctx: Ctx, decl: ast.LocalVarDecl, value: string | undefined, stable: boolean): void {
    if (value !== undefined && !ctx.repeated) ctx.subst.locals.set(decl, atom(value));
    else ctx.subst.locals.delete(decl);
    if (value !== undefined && !ctx.repeated && stable) ctx.stable.add(decl);
    else ctx.stable.delete(decl);
}

/** A parameter assigned by the walked code: its name no longer stands for the value it was called with. */
function forgetParam(ctx: Ctx, decl: ast.Param): void {
    ctx.subst.args.set(decl, UNKNOWN);
    ctx.stable.delete(decl);
}

interface Ctx {
    subst: TextSubst;
    /** A path of the code being walked, in the stubbed method's scope (undefined: not expressible there). */
    up: (p: Path) => Path | undefined;
    /** The walked code's variables with known values that no step changes. */
    stable: Stable;
    /** Inside a loop or a branch: its writes may happen any number of times. */
    repeated: boolean;
    depth: number;
    /** The stubbed method's own body (its returns give the ensures). */
    top: boolean;
    /** Inside the monitor of the stubbed method's `this` (a synchronized method's body, `synchronized (this)`). */
    monitor?: boolean;
}

const HELD = 'this.holder == tid';

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
        // (no `this.holder == tid` under the method's own monitor: a step is an action of the caller's
        // state, where the caller does not hold that monitor; such a step could never be taken, and
        // every caller would be blocked at the call, proving anything after it)
        const pred = preds.filter(p => p !== 'true').join(' && ') || 'true';
        if (ctx.repeated || this.mayHaveReturned) {
            frame.forEach(f => this.stutterFrame.add(f));
            this.stutterPreds.add(pred);
            return;
        }
        this.steps.push({ frame: [...new Set(frame)], pred });
    }

    /** The frame entry and the location's text (undefined: not expressible) of a write in the walked code. */
    private target(l: SourceLoc | undefined, field: Field | undefined, ctx: Ctx): { frame: string; text?: string } | undefined {
        if (!field) return undefined;
        const top = l ? upLoc(l, ctx) : undefined;
        if (!top) return { frame: `*.${field.name}` };
        return { frame: frameText(top, this.cls), text: locText(top, this.cls) };
    }

    /**
     * The frame entry and the element's text of a write to `array[index]` in the
     * walked code: `a[i]` when the index is known and stable, `a[*]` when it is
     * not (index undefined: all the elements), `*.f` when the array is held in a
     * field f that the frame cannot name. Undefined: the array is unknown.
     */
    private element(array: ast.Expression | undefined, index: ast.Expression | undefined, ctx: Ctx): { frame: string; text?: string } | undefined {
        const p = pathOf(array);
        const top = p && ctx.up(p);
        const i = index && isStable(index, ctx.stable) ? this.value(index, ctx) : undefined;
        const text = top && i !== undefined ? `${pathText(top, this.cls)}[${i}]` : undefined;
        const arr = top && frameArrayText(top, this.cls);
        if (arr) return i === undefined ? { frame: `${arr}[*]` } : { frame: `${arr}[${i}]`, text };
        const held = top ?? p; // (a field's arrays: `*.f` lets their elements change too)
        return held?.k === 'field' || held?.k === 'global' ? { frame: `*.${held.field.name}`, text } : undefined;
    }

    /** The frame entry and text of a written location: a field or an array element. */
    private written(target: ast.Expression | undefined, ctx: Ctx): { frame: string; text?: string } | undefined {
        if (ast.isIndexAccess(target)) return this.element(target.array, target.index, ctx);
        const l = locOf(target);
        return this.target(l, l?.field, ctx);
    }

    /** The new value of a written location (`text`) as a two-state predicate, as far as the syntax tells. */
    private update(text: string, s: ast.AssignStmt, ctx: Ctx): string {
        const v = this.value(s.value, ctx);
        if (s.op === '=' && v !== undefined) return `${text}' == ${v}`;
        if (s.op === '=' && ast.isNewExpr(s.value)) return `${text}' != null`;
        if (s.op === '++' || s.op === '--') return `${text}' == ${text} ${s.op === '++' ? '+' : '-'} 1`;
        if ((s.op === '+=' || s.op === '-=') && v !== undefined) return `${text}' == ${text} ${s.op[0]} ${atom(v)}`;
        return 'true';
    }

    private value(e: ast.Expression | undefined, ctx: Ctx): string | undefined {
        const t = e ? renderExpr(e, ctx.subst) : undefined;
        return t === undefined || t.includes(UNKNOWN) ? undefined : t;
    }

    stmts(stmts: ast.Statement[], ctx: Ctx): void {
        for (const s of stmts) this.stmt(s, ctx);
    }

    stmt(s: ast.Statement | undefined, ctx: Ctx): void {
        if (!s) return; // (a statement the parser could not recover)
        if (ast.isBlock(s)) return this.stmts(s.stmts ?? [], ctx);
        if (ast.isSyncStmt(s)) {
            this.expr(s.lock, ctx);
            const own = ctx.top && ast.isThisExpr(s.lock);
            return this.stmts((s.body?.stmts ?? []), own ? { ...ctx, monitor: true } : ctx);
        }
        if (ast.isAtomicStmt(s)) {
            // one atomic step: everything it writes, in one frame
            const inner = new StubBuilder(this.index, this.method);
            inner.stmts((s.body?.stmts ?? []), { ...ctx, repeated: false, monitor: false }); // (the monitor conjunct: once, below)
            const frame = [...inner.steps.flatMap(x => x.frame), ...inner.stutterFrame];
            const exact = inner.stutterFrame.size === 0;
            this.emit(frame, exact ? inner.steps.map(x => x.pred) : [], ctx);
            return;
        }
        if (ast.isLocalVarDecl(s)) {
            this.expr(s.init, ctx);
            setLocal(ctx, s, this.value(s.init, ctx), s.init !== undefined && isStable(s.init, ctx.stable));
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
            if (ctx.top) this.returns.push(s.value && isStable(s.value, ctx.stable) ? this.value(s.value, ctx) : undefined);
            if (ctx.repeated && ctx.top) this.mayHaveReturned = true;
            return;
        }
        if (ast.isAnnotation(s)) {
            for (const c of s.clauses) {
                if (!ast.isSetClause(c)) continue;
                const t = this.written(c.target, ctx);
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
            setLocal(ctx, target.ref.ref, v, s.value !== undefined && isStable(s.value, ctx.stable));
            return;
        }
        if (ast.isNameExpr(target) && ast.isParam(target.ref.ref)) { forgetParam(ctx, target.ref.ref); return; }
        // an element: `a[i]` with its new value when the index is known and stable, `a[*]` otherwise
        const t = this.written(target, ctx);
        if (t) this.emit([t.frame], [t.text ? this.update(t.text, s, ctx) : 'true'], ctx);
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
            const t = this.written(spin.target, ctx);
            const a = this.value(spin.expected, ctx), b = this.value(spin.update, ctx);
            if (t) this.emit([t.frame], [t.text && a !== undefined && b !== undefined ? `${t.text} == ${atom(a)} && ${t.text}' == ${atom(b)}` : 'true'], ctx);
            return;
        }
        const steps = this.steps.length, frame = this.stutterFrame.size;
        // variables assigned in the loop have no single value in it or after it
        for (const n of AstUtils.streamAst(s)) {
            if (!ast.isAssignStmt(n) || !ast.isNameExpr(n.target)) continue;
            const d = n.target.ref.ref;
            if (ast.isLocalVarDecl(d)) setLocal(ctx, d, undefined, false);
            else if (ast.isParam(d)) forgetParam(ctx, d);
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
                const t = this.written(n.target, ctx);
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
        const stable: Stable = new Set();
        callee.params.forEach((p, i) => {
            const arg = call.args[i];
            const v = arg ? this.value(arg, ctx) : undefined;
            args.set(p, v !== undefined ? atom(v) : UNKNOWN);
            if (v !== undefined && isStable(arg, ctx.stable)) stable.add(p);
        });
        const receiverStable = ast.isMemberAccess(call) ? isStable(call.receiver, ctx.stable) : ctx.stable.has('this');
        if (receiverStable) stable.add('this');
        const subst: TextSubst = { receiver: receiverText ?? (ast.isMemberAccess(call) ? UNKNOWN : undefined), args: args as Map<never, string>, locals: new Map(), target: this.cls };
        const up = (p: Path) => { const c = pathToCaller(p, map); return c ? ctx.up(c) : undefined; };
        const inner: Ctx = { subst, up, stable, repeated: ctx.repeated, depth: ctx.depth + 1, top: false };
        const spec = methodSpec(callee);
        if (spec.abstraction || spec.requires.length > 0 || spec.ensures.length > 0) {
            for (const item of spec.abstraction?.items ?? []) {
                if (!ast.isAbsStep(item) && !ast.isAbsStutter(item)) continue;
                const frame = (item.frame?.entries ?? []).map(e => {
                    if (ast.isAnyObjectField(e)) return `*.${e.field.ref?.name ?? e.field.$refText}`;
                    // elements: the index in the caller's terms when it is stable there (`a[*]` has none)
                    if (ast.isIndexAccess(e.location)) return this.element(e.location.array, e.location.index, inner)?.frame;
                    const l = locOf(e.location);
                    return this.target(l, l?.field, inner)?.frame;
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
    return text === undefined || text.includes(UNKNOWN) ? 'true' : text;
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
    const up = (p: Path) => inMethodScope(p) ? p : undefined; // (its locals are not in the abstraction's scope)
    const monitor = isSynchronized(method) && !isStatic(method);
    b.stmts((method.body?.stmts ?? []), { subst: identitySubst(cls), up, stable: stableOf(method), repeated: false, depth: 0, top: true, monitor });
    const plainRequires = methodSpec(method).requires.some(r => ast.isRequiresClause(r));
    const held = callerFacts(method, index).locs.map(l => `${locText(l, cls)} == tid`);
    const requires = plainRequires ? [] : [
        ...held,
        // a synchronized method called without its monitor: it takes it (not re-entered), so the class invariant held then
        ...(monitor && !held.includes(HELD) ? ['this.holder != tid'] : []),
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

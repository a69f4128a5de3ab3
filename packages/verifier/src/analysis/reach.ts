import type { Action, Expr, MethodModel, ProgramModel, Stmt, ThreadModel } from '../model/program.js';
import { abstractionActions, frameElementsField, frameField } from '../model/program.js';
import { visit } from '../model/visit.js';

/** What a piece of code may touch, transitively through the methods it calls. */
export interface Reach {
    /** Methods called (directly or through inlined bodies and other callees' bodies). */
    methods: Set<string>;
    /** Fields read or written (code, annotations, abstractions of callees). */
    fields: Set<string>;
    /**
     * Fields written after initialization: by the body, the bodies it calls (also those of callees
     * with an abstraction: besides their frames, they may write objects private to the thread,
     * which then keep the values after publication), and the initializers of the objects it makes.
     */
    writes: Set<string>;
    /** Classes whose methods are called or whose fields are accessed. */
    classes: Set<string>;
    /** Whether it touches the top level (a global, a top-level procedure): its clauses then count. */
    topLevel: boolean;
}

function methodIndex(program: ProgramModel): Map<string, MethodModel> {
    const index = new Map<string, MethodModel>();
    for (const p of program.procedures) index.set(p.id, p);
    for (const c of program.classes) for (const m of c.methods) index.set(m.id, m);
    return index;
}

export function walkStmts(stmts: Stmt[], onStmt: (s: Stmt) => void, onExpr: (e: Expr) => void): void {
    for (const s of stmts) {
        onStmt(s);
        const exprs: Expr[] = [];
        const subs: Stmt[][] = [];
        switch (s.kind) {
            case 'local': if (s.init) exprs.push(s.init); break;
            case 'assign': exprs.push(s.target); if (s.value) exprs.push(s.value); break;
            case 'expr': exprs.push(s.expr); break;
            case 'if': exprs.push(s.cond); subs.push(s.then, s.else); break;
            case 'while': exprs.push(s.cond, ...s.invariants.map(c => c.expr)); subs.push(s.body, s.update); break;
            case 'return': if (s.value) exprs.push(s.value); break;
            case 'sync': exprs.push(s.lock); subs.push(s.body); break;
            case 'atomic': subs.push(s.body); break;
            case 'assert': case 'assume': exprs.push(s.cond); break;
            case 'set': exprs.push(s.target, s.value); break;
            case 'block': subs.push(s.body); break;
        }
        for (const e of exprs) visit(e, onExpr);
        for (const b of subs) walkStmts(b, onStmt, onExpr);
    }
}

/** Fields an expression names. */
function fieldsOf(e: Expr, out: Set<string>): void {
    visit(e, x => {
        if (x.kind === 'global' || x.kind === 'field') out.add(x.field);
    });
}

/** The field a write target names (array elements and locals name none). */
function writtenField(target: Expr): string | undefined {
    return target.kind === 'global' || target.kind === 'field' ? target.field : undefined;
}

function actionFields(a: Action, fields: Set<string>, writes: Set<string>): void {
    fieldsOf(a.expr, fields);
    for (const e of a.frame) {
        const f = frameField(e);
        if (f) { fields.add(f); writes.add(f); }
        const arr = frameElementsField(e);
        if (arr) fields.add(arr);
        if (e.kind === 'elems') { fieldsOf(e.array, fields); if (e.index) fieldsOf(e.index, fields); }
    }
    if (!a.hasFrame) {
        visit(a.expr, x => { if ((x.kind === 'global' || x.kind === 'field') && x.primed) writes.add(x.field); });
    }
}

/**
 * The reach of a body: calls are followed into callee bodies (for methods
 * without abstraction) or abstractions (for methods with one: their frames
 * bound what they write).
 */
export function reachOf(program: ProgramModel, body: Stmt[], owner?: string): Reach {
    const index = methodIndex(program);
    const reach: Reach = { methods: new Set(), fields: new Set(), writes: new Set(), classes: new Set(), topLevel: owner === undefined };
    if (owner) reach.classes.add(owner);
    // Bodies to scan: the root, the callees' bodies (a callee with an abstraction writes shared
    // locations in its frames, but its body may also write objects private to the thread and then
    // publish them: a field it writes does not keep its initial value), the initializers.
    const pending: Array<{ stmts: Stmt[]; countWrites: boolean }> = [{ stmts: body, countWrites: true }];
    const scanned = new Set<string>();
    while (pending.length > 0) {
        const { stmts, countWrites } = pending.pop()!;
        const writes = countWrites ? reach.writes : new Set<string>();
        walkStmts(stmts, s => {
            if (s.kind === 'assign' || s.kind === 'set') {
                const f = writtenField(s.target);
                if (f) writes.add(f);
            }
            if (s.kind === 'atomic') collectAtomicWrites(s.body, writes);
        }, e => {
            if (e.kind === 'global' || e.kind === 'field') reach.fields.add(e.field);
            if (e.kind === 'cas') {
                const f = writtenField(e.target);
                if (f) writes.add(f);
            }
            // `new C()` runs C's field initializers (and what they call) in this body
            if (e.kind === 'new' && !scanned.has(`new ${e.class}/${countWrites}`)) {
                scanned.add(`new ${e.class}/${countWrites}`);
                pending.push({ stmts: initializerStmts(program, e.class), countWrites });
            }
            if (e.kind !== 'call' || scanned.has(`${e.method}/${countWrites}`)) return;
            scanned.add(`${e.method}/${countWrites}`);
            reach.methods.add(e.method);
            const m = index.get(e.method);
            if (!m) return;
            if (m.owner) reach.classes.add(m.owner);
            else reach.topLevel = true;
            if (m.abstraction) {
                const actions = abstractionActions(m);
                for (const a of actions) actionFields(a, reach.fields, countWrites ? reach.writes : new Set());
                for (const c of [...m.abstraction.requires, ...m.abstraction.ensures]) fieldsOf(c.expr, reach.fields);
            }
            // Classes and fields reached through the callee's body count for E(p) and I(p) (language.md §6).
            pending.push({ stmts: m.body, countWrites });
        });
    }
    for (const f of reach.fields) {
        const dot = f.indexOf('.');
        if (dot > 0) reach.classes.add(f.slice(0, dot));
        else reach.topLevel = true;
    }
    return reach;
}

/** The instance field initializers of a class, as statements (what `new C()` runs). */
function initializerStmts(program: ProgramModel, className: string): Stmt[] {
    const cls = program.classes.find(c => c.name === className);
    return (cls?.fields ?? []).filter(f => !f.isStatic && f.init).map(f => ({ kind: 'expr', expr: f.init!, range: f.range }));
}

/** What the field initializers of the globals (and static fields) reach: they run before the threads start. */
function initializationReach(program: ProgramModel): Reach {
    const statics = [...program.globals, ...program.classes.flatMap(c => c.fields.filter(f => f.isStatic))];
    const stmts: Stmt[] = statics.filter(g => g.init).map(g => ({ kind: 'expr', expr: g.init!, range: g.range }));
    return reachOf(program, stmts);
}

/** Fields written while the field initializers of the globals run (before the threads start). */
export function initializationWrites(program: ProgramModel): Set<string> {
    return initializationReach(program).writes;
}

/** Methods the field initializers of the globals call (directly or not). */
export function initializationMethods(program: ProgramModel): Set<string> {
    return initializationReach(program).methods;
}

function collectAtomicWrites(stmts: Stmt[], writes: Set<string>): void {
    walkStmts(stmts, s => {
        if (s.kind === 'assign' || s.kind === 'set') {
            const f = writtenField(s.target);
            if (f) writes.add(f);
        }
    }, e => {
        if (e.kind === 'cas') {
            const f = writtenField(e.target);
            if (f) writes.add(f);
        }
    });
}

/** Reach of a thread's body. */
export function threadReach(program: ProgramModel, t: ThreadModel): Reach {
    return reachOf(program, t.body);
}

/** Reach of a method's own body (as checked against its abstraction). */
export function methodReach(program: ProgramModel, m: MethodModel): Reach {
    const r = reachOf(program, m.body, m.owner);
    if (m.abstraction) {
        for (const a of abstractionActions(m)) actionFields(a, r.fields, new Set());
    }
    return r;
}

/** For each method: the threads whose bodies reach it (through any chain of calls). */
export function callersOf(program: ProgramModel): Map<string, ThreadModel[]> {
    const result = new Map<string, ThreadModel[]>();
    for (const t of program.threads) {
        for (const m of threadReach(program, t).methods) {
            const list = result.get(m) ?? [];
            list.push(t);
            result.set(m, list);
        }
    }
    return result;
}

/**
 * Which threads (by single-instance id) write each field after
 * initialization; `any` when a replicated thread writes it, or a method with
 * an abstraction that no thread reaches (it is checked for any caller).
 */
export function fieldWriters(program: ProgramModel): Map<string, { ids: Set<number>; any: boolean }> {
    const writers = new Map<string, { ids: Set<number>; any: boolean }>();
    const index = methodIndex(program);
    const reached = new Set(program.threads.flatMap(t => [...threadReach(program, t).methods]));
    for (const m of index.values()) {
        if (!m.abstraction || reached.has(m.id)) continue;
        for (const f of reachOf(program, m.body, m.owner).writes) writers.set(f, { ids: new Set(), any: true });
        for (const a of abstractionActions(m)) {
            for (const e of a.frame) { const f = frameField(e); if (f) writers.set(f, { ids: new Set(), any: true }); }
        }
    }
    for (const t of program.threads) {
        for (const f of threadReach(program, t).writes) {
            const w = writers.get(f) ?? { ids: new Set(), any: false };
            if (t.id === undefined) w.any = true;
            else w.ids.add(t.id);
            writers.set(f, w);
        }
    }
    return writers;
}

import type { Action, Expr, MethodModel, ProgramModel, Stmt, ThreadModel, Type } from '../model/program.js';
import { abstractionActions } from '../model/program.js';
import { visit } from '../model/visit.js';
import { callersOf, threadReach, walkStmts } from './reach.js';

/**
 * Which arrays an array-typed field *owns* (pipeline stage 0, before the
 * specifications): a field f owns its arrays when no array it ever references
 * is referenced by any other location (another field, another object's f, an
 * array element, a global), so that the elements of the array `o.f`
 * references are reached only through `o.f` and through locals that copied it.
 * Only then can a `writable_if` on f (with `this := o`) protect the elements,
 * and only then can the threads that write them be counted (docs/semantics.md,
 * "Arrays").
 *
 * A flow-insensitive syntactic analysis of every body of the program
 * (threads, methods, field initializers), sound by construction:
 * - every value stored into f is `null`, a `new T[n]`, or a local that only
 *   ever holds `null` or new arrays and is stored nowhere else, stored in the
 *   same loop iteration it was declared in (so each array is stored once);
 * - every value read from f is only indexed, measured (`.length`), compared,
 *   copied into locals, or passed to methods without abstraction (inlined,
 *   checked with their callers) whose parameters are used the same way.
 * Anything else (returning it, storing it, passing it to a method with an
 * abstraction, a conditional expression) makes f not own its arrays.
 */
export interface ArrayOwnership {
    /** Array-typed fields (ids) that own their arrays. */
    owners: Set<string>;
    /** Why a field does not own its arrays (for hover and messages). */
    notOwned: Map<string, string>;
    /**
     * For each owning field: the single-instance threads that write elements
     * of its arrays after initialization (`any` when a replicated thread, or a
     * method with an abstraction that no thread reaches, may write them).
     */
    elementWriters: Map<string, { ids: Set<number>; any: boolean }>;
}

/** How an array-valued expression occurrence is used. */
type Use =
    | { k: 'ok' }
    | { k: 'store'; field: string; site: number }
    | { k: 'local'; v: string }
    | { k: 'arg'; method: string; index: number }
    | { k: 'escape'; why: string };

type ValueKind = { k: 'null' } | { k: 'fresh' } | { k: 'var'; v: string } | { k: 'field'; field: string } | { k: 'other' };

interface Store { field: string; value: ValueKind; loop?: number; site: number }

const OK: Use = { k: 'ok' };

class ArrayFacts {
    readonly fieldUses = new Map<string, Use[]>();
    readonly varUses = new Map<string, Use[]>();
    readonly varDefs = new Map<string, ValueKind[]>();
    readonly declLoop = new Map<string, number | undefined>();
    readonly params = new Set<string>();
    readonly stores: Store[] = [];
    /** Element writes: the array expression's value, and the body it is in. */
    readonly elementWrites: Array<{ array: ValueKind; scope: Scope }> = [];
    private sites = 0;
    private loops = 0;

    constructor(private readonly methods: Map<string, MethodModel>) { }

    private push<K>(m: Map<K, Use[]>, k: K, u: Use): void {
        const list = m.get(k);
        if (list) list.push(u);
        else m.set(k, [u]);
    }

    /** The kind of value an expression yields (for array-typed values). */
    private kindOf(e: Expr, scope: Scope): ValueKind {
        switch (e.kind) {
            case 'null': return { k: 'null' };
            case 'newArray': return { k: 'fresh' };
            case 'var': return { k: 'var', v: varKey(scope, e.id) };
            case 'global': case 'field': return { k: 'field', field: e.field };
            default: return { k: 'other' };
        }
    }

    /** Records how `e` (and its parts) use array values; `ctx` is how the parent uses e's value. */
    expr(e: Expr, scope: Scope, ctx: Use): void {
        const isArray = e.type.kind === 'array';
        switch (e.kind) {
            case 'var':
                if (isArray) this.push(this.varUses, varKey(scope, e.id), ctx);
                return;
            case 'global':
                if (isArray && !e.primed) this.push(this.fieldUses, e.field, ctx);
                return;
            case 'field':
                if (isArray && !e.primed) this.push(this.fieldUses, e.field, ctx);
                this.expr(e.receiver, scope, OK);
                return;
            case 'holder': this.expr(e.receiver, scope, OK); return;
            case 'index': this.expr(e.array, scope, OK); this.expr(e.index, scope, OK); return;
            case 'length': this.expr(e.array, scope, OK); return;
            case 'unary': this.expr(e.operand, scope, OK); return;
            case 'binary': this.expr(e.left, scope, OK); this.expr(e.right, scope, OK); return;
            case 'cond': {
                this.expr(e.cond, scope, OK);
                const branch: Use = isArray ? { k: 'escape', why: 'it is chosen by a conditional expression' } : OK;
                this.expr(e.then, scope, branch);
                this.expr(e.else, scope, branch);
                return;
            }
            case 'call':
                if (e.receiver) this.expr(e.receiver, scope, OK);
                e.args.forEach((a, i) => this.expr(a, scope, { k: 'arg', method: e.method, index: i }));
                return;
            case 'newArray': this.expr(e.size, scope, OK); return;
            case 'cas': {
                this.location(e.target, scope);
                this.expr(e.expected, scope, OK);
                this.storeInto(e.target, e.update, scope);
                return;
            }
            default: return; // literals, this, tid; \old, \result and quantifiers are annotation-only
        }
    }

    /** The parts of a location that is written (receiver, array, index): all read, none escapes. */
    private location(t: Expr, scope: Scope): void {
        if (t.kind === 'field' || t.kind === 'holder') this.expr(t.receiver, scope, OK);
        else if (t.kind === 'index') {
            this.expr(t.array, scope, OK);
            this.expr(t.index, scope, OK);
            this.elementWrites.push({ array: this.kindOf(t.array, scope), scope });
        }
    }

    /** `target = value` where target is a shared location. */
    private storeInto(target: Expr, value: Expr, scope: Scope): void {
        if ((target.kind === 'global' || target.kind === 'field') && target.type.kind === 'array') {
            const site = this.sites++;
            this.stores.push({ field: target.field, value: this.kindOf(value, scope), loop: scope.loop, site });
            this.expr(value, scope, { k: 'store', field: target.field, site });
            return;
        }
        this.expr(value, scope, value.type.kind === 'array' ? { k: 'escape', why: 'it is stored into an array element' } : OK);
    }

    stmts(ss: Stmt[], scope: Scope): void {
        for (const s of ss) this.stmt(s, scope);
    }

    private stmt(s: Stmt, scope: Scope): void {
        switch (s.kind) {
            case 'local': {
                const key = varKey(scope, s.decl.id);
                this.declLoop.set(key, scope.loop);
                if (s.init) {
                    this.def(key, this.kindOf(s.init, scope));
                    this.expr(s.init, scope, { k: 'local', v: key });
                } else this.def(key, { k: 'null' });
                return;
            }
            case 'assign': case 'set': {
                const t = s.target;
                const value = s.kind === 'set' ? s.value : s.value;
                if (t.kind === 'var') {
                    const key = varKey(scope, t.id);
                    if (value) {
                        this.def(key, s.kind === 'assign' && s.op !== '=' ? { k: 'other' } : this.kindOf(value, scope));
                        this.expr(value, scope, { k: 'local', v: key });
                    }
                    return;
                }
                this.location(t, scope);
                if (value && (s.kind === 'set' || s.op === '=')) this.storeInto(t, value, scope);
                else if (value) this.expr(value, scope, OK);
                return;
            }
            case 'expr': this.expr(s.expr, scope, OK); return;
            case 'if': this.expr(s.cond, scope, OK); this.stmts(s.then, scope); this.stmts(s.else, scope); return;
            case 'while': {
                const inner: Scope = { ...scope, loop: this.loops++ };
                this.expr(s.cond, inner, OK);
                this.stmts(s.body, inner);
                this.stmts(s.update, inner);
                return;
            }
            case 'return':
                if (s.value) this.expr(s.value, scope, s.value.type.kind === 'array' ? { k: 'escape', why: 'it is returned' } : OK);
                return;
            case 'sync': this.expr(s.lock, scope, OK); this.stmts(s.body, scope); return;
            case 'atomic': case 'block': this.stmts(s.body, scope); return;
            case 'assert': if (!s.annotation) this.expr(s.cond, scope, OK); return;
            default: return; // assume, witness: annotations
        }
    }

    private def(key: string, kind: ValueKind): void {
        const list = this.varDefs.get(key);
        if (list) list.push(kind);
        else this.varDefs.set(key, [kind]);
    }

    /** Arguments flow into the callee's parameters. */
    link(): void {
        for (const m of this.methods.values()) for (const p of m.params) this.params.add(varKey(methodScope(m), p.id));
    }

    paramKey(method: string, index: number): string | undefined {
        const m = this.methods.get(method);
        const p = m?.params[index];
        return m && p ? varKey(methodScope(m), p.id) : undefined;
    }

    hasAbstraction(method: string): boolean {
        return this.methods.get(method)?.abstraction !== undefined;
    }
}

interface Scope {
    /** `T:name` for a thread, `M:id` for a method, `I` for the globals' initializers, `N:C` for C's instance field initializers. */
    body: string;
    thread?: ThreadModel;
    method?: MethodModel;
    loop?: number;
}

function varKey(scope: Scope, id: string): string {
    return `${scope.body}|${id}`;
}

function methodScope(m: MethodModel): Scope {
    return { body: `M:${m.id}`, method: m };
}

export function arrayOwnership(program: ProgramModel): ArrayOwnership {
    const methods = new Map<string, MethodModel>();
    for (const p of program.procedures) methods.set(p.id, p);
    for (const c of program.classes) for (const m of c.methods) methods.set(m.id, m);
    const facts = new ArrayFacts(methods);
    const init: Scope = { body: 'I' };
    for (const g of program.globals) if (g.init) facts.expr(g.init, init, g.type.kind === 'array' ? { k: 'store', field: g.id, site: -1 } : OK);
    // instance field initializers run in whatever thread allocates the object
    for (const c of program.classes) for (const f of c.fields) if (f.init) facts.expr(f.init, f.isStatic ? init : { body: `N:${c.name}` }, f.type.kind === 'array' ? { k: 'store', field: f.id, site: -1 } : OK);
    for (const m of methods.values()) facts.stmts(m.body, methodScope(m));
    for (const t of program.threads) facts.stmts(t.body, { body: `T:${t.name}`, thread: t });
    facts.link();

    // Initializers store their value once per object (or once): a new array or null is owned.
    const initStores = new Map<string, ValueKind>();
    for (const g of program.globals) if (g.init && g.type.kind === 'array') initStores.set(g.id, initKind(g.init));
    for (const c of program.classes) for (const f of c.fields) if (f.init && f.type.kind === 'array') initStores.set(f.id, initKind(f.init));

    const arrayFields = [...program.globals, ...program.classes.flatMap(c => c.fields)].filter(f => f.type.kind === 'array');
    const owners = new Set<string>();
    const notOwned = new Map<string, string>();
    const usesOk = memoUsesOk(facts);
    for (const f of arrayFields) {
        const why = whyNotOwned(f.id, facts, usesOk, initStores.get(f.id));
        if (why) notOwned.set(f.id, why);
        else owners.add(f.id);
    }

    // Element writers of the owning fields: element writes through the field, or through a
    // variable that may hold one of its arrays (copied from it, or stored into it).
    const varFields = fieldsOfVariables(facts);
    const callers = callersOf(program);
    const elementWriters = new Map<string, { ids: Set<number>; any: boolean }>();
    for (const f of owners) elementWriters.set(f, { ids: new Set(), any: false });
    for (const w of facts.elementWrites) {
        const fields = w.array.k === 'field' ? [w.array.field] : w.array.k === 'var' ? [...(varFields.get(w.array.v) ?? [])] : [];
        for (const f of fields) {
            const writers = elementWriters.get(f);
            if (!writers || w.scope.body === 'I') continue;
            for (const t of threadsOf(w.scope, callers)) {
                if (t === 'any' || t.id === undefined) writers.any = true;
                else writers.ids.add(t.id);
            }
        }
    }
    return { owners, notOwned, elementWriters };
}

function initKind(e: Expr): ValueKind {
    return e.kind === 'null' ? { k: 'null' } : e.kind === 'newArray' ? { k: 'fresh' } : { k: 'other' };
}

/** The threads that may run a body: the thread itself, or every thread that reaches the method ('any' for a method checked on its own for any caller). */
function threadsOf(scope: Scope, callers: Map<string, ThreadModel[]>): Array<ThreadModel | 'any'> {
    if (scope.thread) return [scope.thread];
    if (scope.body.startsWith('N:')) return ['any'];
    if (!scope.method) return [];
    const ts = callers.get(scope.method.id) ?? [];
    if (ts.length === 0 && scope.method.abstraction) return ['any'];
    return ts;
}

/** Whether every use of a variable keeps its array value in locals and inlined parameters (no store, return or other escape). */
function memoUsesOk(facts: ArrayFacts): (v: string, except?: number) => string | undefined {
    const memo = new Map<string, string | undefined>();
    const check = (v: string, visiting: Set<string>, except?: number): string | undefined => {
        const key = `${v}#${except ?? ''}`;
        if (memo.has(key)) return memo.get(key);
        if (visiting.has(v)) return undefined; // a cycle of copies: judged by its other uses
        visiting.add(v);
        let why: string | undefined;
        for (const u of facts.varUses.get(v) ?? []) {
            why = useProblem(u, facts, x => check(x, visiting), except);
            if (why) break;
        }
        visiting.delete(v);
        memo.set(key, why);
        return why;
    };
    return (v, except) => check(v, new Set(), except);
}

/** Why a use lets an array escape (undefined: it does not). `except`: the one store site allowed. */
function useProblem(u: Use, facts: ArrayFacts, varOk: (v: string) => string | undefined, except?: number): string | undefined {
    switch (u.k) {
        case 'ok': return undefined;
        case 'escape': return u.why;
        case 'store': return u.site === except ? undefined : `it is stored into ${u.field}`;
        case 'local': return varOk(u.v);
        case 'arg': {
            if (facts.hasAbstraction(u.method)) return `it is passed to '${u.method}', which has an abstraction`;
            const p = facts.paramKey(u.method, u.index);
            return p ? varOk(p) : undefined;
        }
    }
}

function whyNotOwned(field: string, facts: ArrayFacts, usesOk: (v: string, except?: number) => string | undefined, initStore: ValueKind | undefined): string | undefined {
    if (initStore && initStore.k === 'other') return 'its initializer is not a new array';
    // values read from the field stay in locals
    for (const u of facts.fieldUses.get(field) ?? []) {
        const why = useProblem(u, facts, v => usesOk(v));
        if (why) return `an array read from it escapes: ${why}`;
    }
    // values stored into it are new arrays, stored once
    for (const s of facts.stores.filter(x => x.field === field)) {
        const v = s.value;
        if (v.k === 'null' || v.k === 'fresh') continue;
        if (v.k !== 'var' || facts.params.has(v.v)) return 'an array not allocated for it is stored into it';
        const defs = facts.varDefs.get(v.v) ?? [];
        if (!defs.every(d => d.k === 'null' || d.k === 'fresh')) return 'an array not allocated for it is stored into it';
        if (facts.declLoop.get(v.v) !== s.loop) return 'the same array may be stored into it more than once (in a loop)';
        const why = usesOk(v.v, s.site);
        if (why) return `an array stored into it is also used elsewhere: ${why}`;
    }
    return undefined;
}

/** For every variable: the array fields whose arrays it may hold (copied from them, or stored into them). */
function fieldsOfVariables(facts: ArrayFacts): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    const add = (v: string, f: string): boolean => {
        const set = out.get(v) ?? new Set<string>();
        if (set.has(f)) return false;
        set.add(f);
        out.set(v, set);
        return true;
    };
    for (const [v, defs] of facts.varDefs) for (const d of defs) if (d.k === 'field') add(v, d.field);
    for (const [v, uses] of facts.varUses) for (const u of uses) if (u.k === 'store') add(v, u.field);
    // copies and parameters: what flows into a variable from another one
    const edges: Array<[string, string]> = [];
    for (const [v, uses] of facts.varUses) {
        for (const u of uses) {
            if (u.k === 'local') edges.push([v, u.v]);
            else if (u.k === 'arg') {
                const p = facts.paramKey(u.method, u.index);
                if (p) edges.push([v, p]);
            }
        }
    }
    for (const [f, uses] of facts.fieldUses) {
        for (const u of uses) {
            if (u.k === 'local') add(u.v, f);
            else if (u.k === 'arg') {
                const p = facts.paramKey(u.method, u.index);
                if (p) add(p, f);
            }
        }
    }
    // a copy holds what its source holds, and the source what the copy is stored into
    for (let changed = true; changed;) {
        changed = false;
        for (const [from, to] of edges) {
            for (const f of out.get(from) ?? []) if (add(to, f)) changed = true;
            for (const f of out.get(to) ?? []) if (add(from, f)) changed = true;
        }
    }
    return out;
}

/**
 * Which threads may write array elements of each sort (`Int`, `Bool`,
 * `Ref`), as `fieldWriters` says it of fields: the single-instance threads
 * (ids), or `any` (a replicated thread, a method with an abstraction that no
 * thread calls: a library's, anyone may call it). What counts: an element
 * assignment or ghost `set`, a `cas` on an element, an abstraction action
 * whose frame names elements (or, without a frame, primes one), in a
 * thread's body and the methods it calls (those its objects' field
 * initializers call too). What only the globals' initializers call runs
 * before the threads start. A sort no thread writes keeps its elements'
 * values once the threads start (checking.md: stable everywhere); one only
 * thread T writes is stable for T.
 */
export function elementWriters(program: ProgramModel, sortOf: (t: Type) => string): Map<string, { ids: Set<number>; any: boolean }> {
    const ALL = ['Int', 'Bool', 'Ref'];
    const sortsOf = (stmts: Stmt[], actions: Action[]): Set<string> => {
        const out = new Set<string>();
        const target = (e: Expr) => { if (e.kind === 'index') out.add(e.type.kind === 'null' ? 'Ref' : sortOf(e.type)); };
        walkStmts(stmts, s => {
            if (s.kind === 'assign' || s.kind === 'set') target(s.target);
        }, e => { if (e.kind === 'cas') target(e.target); });
        for (const a of actions) {
            for (const f of a.frame) {
                if (f.kind !== 'elems') continue;
                const t = f.array.type;
                if (t.kind === 'array') out.add(sortOf(t.element));
                else ALL.forEach(x => out.add(x));
            }
            if (!a.hasFrame) visit(a.expr, x => { if (x.kind === 'index' && x.primed) target(x); });
        }
        return out;
    };
    const methods = new Map<string, MethodModel>();
    for (const m of [...program.procedures, ...program.classes.flatMap(c => c.methods)]) methods.set(m.id, m);
    const ofMethod = (m: MethodModel) => sortsOf(m.body, abstractionActions(m));
    const writers = new Map<string, { ids: Set<number>; any: boolean }>();
    const add = (sort: string, id: number | undefined) => {
        const w = writers.get(sort) ?? { ids: new Set<number>(), any: false };
        if (id === undefined) w.any = true; else w.ids.add(id);
        writers.set(sort, w);
    };
    const reached = new Set<string>();
    for (const t of program.threads) {
        const ms = threadReach(program, t).methods;
        ms.forEach(m => reached.add(m));
        const sorts = sortsOf(t.body, []);
        for (const id of ms) { const m = methods.get(id); if (m) ofMethod(m).forEach(x => sorts.add(x)); }
        for (const x of sorts) add(x, t.count === undefined ? t.id : undefined);
    }
    // a library's methods (no thread calls them), and an element `cas` written in a field initializer
    for (const m of methods.values()) if (m.abstraction && !reached.has(m.id)) ofMethod(m).forEach(x => add(x, undefined));
    for (const c of program.classes) for (const f of c.fields) if (f.init && !f.isStatic) sortsOf([{ kind: 'expr', expr: f.init, range: f.range }], []).forEach(x => add(x, undefined));
    return writers;
}

import type { Action, Clause, Expr, MethodModel, ProgramModel, Range, Stmt } from '../model/program.js';
import { initializationWrites, reachOf } from '../analysis/reach.js';
import {
    atomKey, atomPath, AtomIndex, atThis, otherMaySatisfy, pathField, pathKey, receiverOf, rebasePath,
    type Atom, type Const, type Disjunct, type Path,
} from './atoms.js';

/**
 * The facts each thread knows at each write (pipeline stage 2b): a forward
 * must-analysis over the program model, thread by thread, in TAR's
 * thread-modular style. Between two of the thread's own steps, the other
 * threads may write every location that one of their guards lets them write
 * in a state where the thread's facts hold; facts about such a location are
 * forgotten (an environment step, closed under repetition). The guards are
 * what the writes of all threads need (guards.ts), so the analysis is run to
 * a fixpoint, from "the environment writes nothing".
 *
 * Everything here is a guess for the checker to confirm: a fact wrongly kept
 * becomes an annotation whose check fails, never a proof.
 */

/** What another thread may write, as the analysis assumes it (one iteration of the fixpoint). */
export interface WriteModel {
    /** A field's guard as disjuncts, `'any'` when unknown (another thread may write it any time), undefined: nobody writes it after initialization. */
    guard(field: string): Disjunct[] | 'any' | undefined;
    /** The conditions under which an `environment` clause keeps the field unchanged (written clauses `A ==> f' == f`), `this` = the object. */
    keptWhen(field: string): Atom[][];
}

/** A write of a shared location by some thread, with what the thread knows there. */
export interface WriteSite {
    /** The written field; for an element write, the array-typed field whose array it is. */
    field: string;
    elements: boolean;
    /** Single-instance threads that perform it (undefined: any thread, or a replicated one). */
    threads?: number[];
    /** The facts at the write, about `this` (the written object) and globals. */
    atoms: Atom[];
    range: Range;
    /** The value written when it is the same constant every time the site runs (a constant, or `tid`). */
    value?: Const | 'tid';
    /** It adds a non-negative constant to the value the thread read of the location (`x++`, `x = x + 1`, `c = x; x = c + 2`). */
    increment?: boolean;
    /** Every time it runs, inside an `atomic` block (for messages: not "holding nothing"). */
    atomic?: boolean;
}

export function siteKey(r: Range): string {
    return `${r.file}:${r.startLine}:${r.startChar}`;
}

interface BoolVal { t: Atom[]; f: Atom[] }

interface State {
    dead: boolean;
    atoms: Map<string, Atom>;
    /** Locals that reference objects or arrays this thread allocated and has not published. */
    fresh: Set<string>;
    /** Boolean locals equal to a condition (`done = cas(m, 0, tid)`). */
    conds: Map<string, BoolVal>;
    /** Locals holding a value read from a shared location (then, not necessarily now), with when it was read. */
    prov: Map<string, Provenance>;
    /** Locals assigned a side-effect-free expression (`s = p.x + p.y`), for lifting assertions. */
    defs: Map<string, Expr>;
}

export interface Provenance { path: Path; seq: number }

/** An assertion of the code, with where the values it tests come from: invariant candidates (infer.ts). */
export interface AssertionSite {
    expr: Expr;
    range: Range;
    /** Locals → the shared location each was read from. */
    prov: Map<string, Provenance>;
    /** Locals → the side-effect-free expression they were assigned. */
    defs: Map<string, Expr>;
    /** Reference parameters of inlined calls → the caller's paths. */
    vars: Map<string, Path>;
    thisPath?: Path;
    /** Facts about tested fields at the assertion (for conditional candidates). */
    atoms: Atom[];
    /** An implicit check of the code (an index in bounds), not a written assertion. */
    implicit?: boolean;
}

interface Frame {
    thisPath?: Path;
    /** Reference parameters of inlined calls, bound to the arguments' paths. */
    vars: Map<string, Path>;
    returns: State[];
    returnVals: BoolVal[];
    /** Where each returned value was read from (undefined: not a read). */
    returnFrom: Array<Provenance | undefined>;
    loops: Array<{ breaks: State[] }>;
    depth: number;
    method?: MethodModel;
}

/** Who runs the code being analysed. */
interface Runner {
    threads?: number[];
    /** The single-instance id of the thread (undefined: replicated or several). */
    me?: number;
}

const MAX_INLINE = 12;

export class FactAnalysis {
    private readonly methods = new Map<string, MethodModel>();
    private readonly classesByName: Map<string, ProgramModel['classes'][number]>;
    readonly sites = new Map<string, WriteSite>();
    /**
     * Element kinds (elementKind: Int, Bool, Ref) of the element writes to arrays
     * not known to be private to the writer and not owned by a field (an owned array's writes
     * are sites of its field), and of cas on elements: such arrays' elements are written shared.
     */
    readonly sharedElementWrites = new Set<string>();
    /**
     * Fields some condition of the code tests (a branch, a loop, a cas, an
     * assume, a requires): the facts about them are what threads synchronize
     * on. Facts about other fields (the value a thread just wrote) are noise in
     * a guard.
     */
    readonly tested = new Set<string>();
    /** The assertions met, for invariant candidates. */
    readonly assertions: AssertionSite[] = [];
    private seq = 0;
    /** Atoms never to use at a site (the checker refuted them there): site key → atom keys. */
    private readonly excluded: Map<string, Set<string>>;
    private runner: Runner = {};
    /** Whether assertions are collected (not while analysing a method checked against its abstraction twice). */
    private recording = true;
    private readonly distinctRoots = new Set<string>();
    private inAtomic = false;

    constructor(private readonly program: ProgramModel, private readonly writes: WriteModel, excluded?: Map<string, Set<string>>,
        private readonly owners: Set<string> = new Set()) {
        for (const p of program.procedures) this.methods.set(p.id, p);
        for (const c of program.classes) for (const m of c.methods) this.methods.set(m.id, m);
        this.classesByName = new Map(program.classes.map(c => [c.name, c]));
        this.excluded = excluded ?? new Map();
        for (const g of [...program.globals, ...program.classes.flatMap(c => c.fields.filter(f => f.isStatic))]) {
            if (g.init?.kind === 'new' && writes.guard(g.id) === undefined) this.distinctRoots.add(g.id);
        }
    }

    /** Analyse every thread and every method checked against its abstraction. */
    run(callers: Map<string, Array<{ id?: number }>>): void {
        for (const t of this.program.threads) {
            this.runner = t.id !== undefined ? { threads: [t.id], me: t.id } : {};
            const st = this.initialState();
            this.stmts(t.body, st, this.frame(undefined, undefined));
        }
        for (const m of this.methods.values()) {
            if (!m.abstraction) continue;
            const cs = callers.get(m.id) ?? [];
            const ids = cs.map(c => c.id);
            const single = cs.length > 0 && ids.every(i => i !== undefined) ? [...new Set(ids as number[])].sort((a, b) => a - b) : undefined;
            this.runner = { threads: single, me: single && single.length === 1 ? single[0] : undefined };
            const st = this.emptyState();
            const fr = this.frame(undefined, m);
            for (const r of m.abstraction.requires) this.assume(st, this.condOf(r.expr, st, fr, true));
            const body = () => this.stmts(m.body, st, fr);
            if (m.isSynchronized && !m.isStatic) this.withMonitor({ base: { k: 'this' }, fields: [] }, st, body);
            else body();
        }
    }

    // ------------------------------------------------------------ states

    private emptyState(): State {
        return { dead: false, atoms: new Map(), fresh: new Set(), conds: new Map(), prov: new Map(), defs: new Map() };
    }

    /** The facts of Init: the initial values of globals and static fields (what their initializers store, when constant). */
    private initial?: Atom[];

    private initialState(): State {
        const st = this.emptyState();
        for (const a of this.initial ??= this.initialFacts()) st.atoms.set(atomKey(a), a);
        return st;
    }

    /**
     * The initial values of the globals some condition may test (facts about
     * the others never reach a guard, and every thread would carry them).
     */
    private initialFacts(): Atom[] {
        const out: Atom[] = [];
        const statics = [...this.program.globals, ...this.program.classes.flatMap(c => c.fields.filter(f => f.isStatic))];
        const assigned = initializationWrites(this.program);
        const tested = syntacticallyTested(this.program);
        for (const g of statics) {
            if (assigned.has(g.id) || g.type.kind === 'array' || g.type.kind === 'class' || !tested.has(g.id)) continue;
            const c = g.init ? constOf(g.init) : defaultConst(g.type.kind);
            if (c) out.push({ k: 'eq', loc: { base: { k: 'global', field: g.id }, fields: [] }, c });
        }
        // The fields of an object a global's initializer makes (`final Job job = new Job();`, a flag
        // kept in an object as Java code keeps it): their initial values, as for globals.
        for (const g of statics) {
            if (g.init?.kind !== 'new' || assigned.has(g.id)) continue;
            for (const f of this.classesByName.get(g.init.class)?.fields ?? []) {
                if (f.isStatic || assigned.has(f.id) || f.type.kind === 'array' || f.type.kind === 'class' || !tested.has(f.id)) continue;
                const c = f.init ? constOf(f.init) : defaultConst(f.type.kind);
                if (c) out.push({ k: 'eq', loc: { base: { k: 'global', field: g.id }, fields: [f.id] }, c });
            }
        }
        return out;
    }

    private copy(st: State): State {
        return { dead: st.dead, atoms: new Map(st.atoms), fresh: new Set(st.fresh), conds: new Map(st.conds), prov: new Map(st.prov), defs: new Map(st.defs) };
    }

    /** The join of states (must-facts: what all of them know). */
    private join(states: State[]): State {
        const live = states.filter(s => !s.dead);
        if (live.length === 0) return { ...this.emptyState(), dead: true };
        const out = this.copy(live[0]);
        for (const s of live.slice(1)) {
            for (const k of [...out.atoms.keys()]) if (!s.atoms.has(k)) out.atoms.delete(k);
            for (const f of [...out.fresh]) if (!s.fresh.has(f)) out.fresh.delete(f);
            for (const [v, c] of [...out.conds]) {
                const o = s.conds.get(v);
                if (!o || boolKey(o) !== boolKey(c)) out.conds.delete(v);
            }
            for (const [v, c] of [...out.prov]) {
                const o = s.prov.get(v);
                if (!o || o.seq !== c.seq || pathKey(o.path) !== pathKey(c.path)) out.prov.delete(v);
            }
            for (const [v, e] of [...out.defs]) if (s.defs.get(v) !== e) out.defs.delete(v);
        }
        return out;
    }

    private assign(to: State, from: State): void {
        to.dead = from.dead;
        to.atoms = from.atoms;
        to.fresh = from.fresh;
        to.conds = from.conds;
        to.prov = from.prov;
        to.defs = from.defs;
    }

    private add(st: State, a: Atom): void {
        // a new fact about a location replaces the contradicting ones
        if (a.k !== 'held' && a.k !== 'alias') {
            const pk = pathKey(atomPath(a));
            for (const [k, b] of st.atoms) if (b.k !== 'held' && b.k !== 'alias' && pathKey(atomPath(b)) === pk && !compatibleSame(a, b)) st.atoms.delete(k);
        }
        st.atoms.set(atomKey(a), a);
    }

    private assume(st: State, atoms: Atom[]): void {
        for (const a of atoms) this.add(st, a);
    }

    // ------------------------------------------------------------ the environment

    /**
     * Other threads take steps (E*): forget the facts about locations another
     * thread may write while this thread knows what it knows, until nothing changes.
     */
    private environment(st: State): void {
        if (this.inAtomic || st.dead) return;
        for (let changed = true; changed;) {
            changed = false;
            const mine = new AtomIndex(st.atoms.values());
            for (const [k, a] of st.atoms) {
                if (!this.stable(atomPath(a), mine, st)) {
                    st.atoms.delete(k);
                    changed = true;
                }
            }
        }
    }

    /** Whether the location a path denotes (and every reference on the way to it) keeps its value under the other threads' steps. */
    private stable(p: Path, mine: AtomIndex, st: State): boolean {
        if (p.base.k === 'local' && st.fresh.has(p.base.id)) return true;
        const fields = p.base.k === 'global' ? [p.base.field, ...p.fields] : p.fields;
        for (let i = 0; i < fields.length; i++) {
            const field = fields[i];
            const objFields = p.base.k === 'global' ? fields.slice(1, i) : fields.slice(0, i);
            const obj: Path | undefined = p.base.k === 'global' && i === 0 ? undefined : { base: p.base, fields: objFields };
            if (this.mayWrite(field, obj, mine)) return false;
        }
        return true;
    }

    private mayWrite(field: string, obj: Path | undefined, mine: AtomIndex): boolean {
        const g = this.writes.guard(field);
        if (g === undefined) return false;
        const keys = mine.keys;
        for (const cond of this.writes.keptWhen(field)) {
            const atoms = obj ? cond.map(a => ({ ...a, ...(a.k === 'held' ? { obj: atThis(a.obj, obj) } : { loc: atThis((a as { loc: Path }).loc, obj) }) }) as Atom) : cond;
            if (atoms.every(a => keys.has(atomKey(a)))) return false;
        }
        if (g === 'any') return true;
        const me = this.runner.me;
        return g.some(d => !(d.threads && d.threads.every(t => t === me)) && this.maySatisfy(d, obj, mine));
    }

    /**
     * otherMaySatisfy once its thread test has passed: then it depends only on
     * the disjunct, the object and the facts, so it is decided once for all the
     * threads that know the same facts. Every thread starts from Init: with n
     * threads each knowing n initial values and guards of n atoms, deciding it
     * per thread was O(n³).
     */
    private readonly satisfiable = new WeakMap<Disjunct, Map<string, boolean>>();
    /** Sets of facts (signatures) numbered, and the number of each index: short memo keys. */
    private readonly factSets = new Map<string, number>();
    private readonly factSetOf = new WeakMap<AtomIndex, number>();

    private maySatisfy(d: Disjunct, obj: Path | undefined, mine: AtomIndex): boolean {
        let memo = this.satisfiable.get(d);
        if (!memo) this.satisfiable.set(d, memo = new Map());
        let set = this.factSetOf.get(mine);
        if (set === undefined) {
            set = this.factSets.get(mine.signature);
            if (set === undefined) this.factSets.set(mine.signature, set = this.factSets.size);
            this.factSetOf.set(mine, set);
        }
        const key = `${set}|${obj ? pathKey(obj) : ''}`;
        let r = memo.get(key);
        if (r === undefined) memo.set(key, r = otherMaySatisfy(d, obj, mine, this.runner.me));
        return r;
    }

    // ------------------------------------------------------------ writes

    /**
     * Forget what a write of `field` (of the object `obj`; undefined: of any
     * object, or the global) may change; facts about other fields stay, and so
     * do facts about the same field of objects that cannot be `obj`.
     */
    private kill(st: State, field: string, obj?: Path): void {
        for (const [k, a] of st.atoms) {
            const p = atomPath(a);
            const fs = p.base.k === 'global' ? [p.base.field, ...p.fields] : p.fields;
            for (let i = 0; i < fs.length; i++) {
                if (fs[i] !== field) continue;
                const prefix: Path | undefined = p.base.k === 'global' ? (i === 0 ? undefined : { base: p.base, fields: p.fields.slice(0, i - 1) }) : { base: p.base, fields: p.fields.slice(0, i) };
                if (!obj || !prefix || this.mayAlias(prefix, obj)) { st.atoms.delete(k); break; }
            }
        }
        // a local read from the location no longer holds its value (`v = x; x = v + 1;`): nothing to lift through it
        for (const [v, from] of st.prov) {
            const p = from.path;
            if (pathField(p) !== field) continue;
            const of: Path | undefined = p.base.k === 'global' && p.fields.length === 0 ? undefined : { base: p.base, fields: p.fields.slice(0, -1) };
            if (!obj || !of || this.mayAlias(of, obj)) st.prov.delete(v);
        }
        for (const [v, e] of [...st.defs]) if (readsField(e, field)) st.defs.delete(v);
    }

    /**
     * Whether two object paths may denote the same object. Globals that hold
     * the objects their initializers create and that no thread changes are
     * taken as distinct objects (a guess for the checker to confirm).
     */
    private mayAlias(a: Path, b: Path): boolean {
        if (pathKey(a) === pathKey(b)) return true;
        if (a.fields.length === 0 && b.fields.length === 0 && a.base.k === 'global' && b.base.k === 'global') {
            return !(this.distinctRoots.has(a.base.field) && this.distinctRoots.has(b.base.field));
        }
        return true;
    }

    /** `target`: the written location, or for an element write the object whose field references the array. */
    private write(st: State, fr: Frame, target: Path | undefined, field: string, elements: boolean, range: Range, opAtoms: Atom[], value?: { c?: Const; tid?: boolean; local?: string }, increment = false): void {
        if (st.dead) return;
        const obj = target ? (elements ? target : receiverOf(target)) : undefined;
        const priv = obj && obj.base.k === 'local' && st.fresh.has(obj.base.id);
        if (!priv) this.record(st, field, elements, obj, range, opAtoms, elements ? undefined : value?.c ?? (value?.tid ? 'tid' : undefined), increment);
        if (elements) return;
        this.kill(st, field, target ? receiverOf(target) : undefined);
        if (target && value) {
            if (value.c) this.add(st, { k: 'eq', loc: target, c: value.c });
            else if (value.tid) this.add(st, { k: 'eqTid', loc: target });
            else if (value.local) this.add(st, { k: 'alias', loc: target, local: value.local });
        }
        void fr;
    }

    private record(st: State, field: string, elements: boolean, obj: Path | undefined, range: Range, opAtoms: Atom[], value: Const | 'tid' | undefined, increment: boolean): void {
        const key = siteKey(range);
        const excluded = this.excluded.get(key);
        const atoms: Atom[] = [];
        const seen = new Set<string>();
        for (const a of [...st.atoms.values(), ...opAtoms]) {
            if (a.k === 'alias') continue;
            const r = relativize(a, obj);
            if (!r) continue;
            const k = atomKey(r);
            if (excluded?.has(k) || seen.has(k)) continue;
            seen.add(k);
            atoms.push(r);
        }
        const old = this.sites.get(key);
        if (!old) {
            this.sites.set(key, { field, elements, threads: this.runner.threads, atoms, range, value, increment, atomic: this.inAtomic || undefined });
            return;
        }
        old.increment = old.increment && increment;
        if (!this.inAtomic) old.atomic = undefined;
        if (old.value !== undefined && (value === undefined || valueKey(value) !== valueKey(old.value))) old.value = undefined;
        const keys = new Set(atoms.map(atomKey));
        old.atoms = old.atoms.filter(a => keys.has(atomKey(a)));
        old.threads = old.threads && this.runner.threads ? [...new Set([...old.threads, ...this.runner.threads])].sort((a, b) => a - b) : undefined;
    }

    // ------------------------------------------------------------ statements

    private frame(thisPath: Path | undefined, method: MethodModel | undefined, depth = 0): Frame {
        return { thisPath, vars: new Map(), returns: [], returnVals: [], returnFrom: [], loops: [], depth, method };
    }

    private stmts(stmts: Stmt[], st: State, fr: Frame): void {
        for (const s of stmts) {
            if (st.dead) return;
            this.stmt(s, st, fr);
        }
    }

    private stmt(s: Stmt, st: State, fr: Frame): void {
        switch (s.kind) {
            case 'block': this.stmts(s.body, st, fr); return;
            case 'local': {
                const v = s.init ? this.expr(s.init, st, fr) : {};
                this.setLocal(st, s.decl.id, v);
                if (s.init && pure(s.init)) st.defs.set(s.decl.id, s.init);
                return;
            }
            case 'assign': this.assignStmt(s, st, fr); return;
            case 'expr': this.expr(s.expr, st, fr); return;
            case 'if': {
                const c = this.cond(s.cond, st, fr);
                const a = this.copy(st);
                this.assume(a, c.t);
                this.stmts(s.then, a, fr);
                const b = this.copy(st);
                this.assume(b, c.f);
                this.stmts(s.else, b, fr);
                this.assign(st, this.join([a, b]));
                return;
            }
            case 'while': this.loop(s, st, fr); return;
            case 'return': {
                const v = s.value ? this.expr(s.value, st, fr) : {};
                fr.returns.push(this.copy(st));
                fr.returnVals.push(v.cond ?? { t: [], f: [] });
                fr.returnFrom.push(v.read ? { path: v.read, seq: ++this.seq } : v.local ? st.prov.get(v.local) : undefined);
                st.dead = true;
                return;
            }
            case 'break': {
                fr.loops[fr.loops.length - 1]?.breaks.push(this.copy(st));
                st.dead = true;
                return;
            }
            case 'continue': st.dead = true; return;
            case 'sync': {
                this.expr(s.lock, st, fr);
                const o = this.pathOf(s.lock, fr);
                if (!o) { this.stmts(s.body, st, fr); return; }
                this.withMonitor(o, st, () => this.stmts(s.body, st, fr));
                return;
            }
            case 'atomic': {
                this.environment(st);
                const was = this.inAtomic;
                this.inAtomic = true;
                try { this.stmts(s.body, st, fr); } finally { this.inAtomic = was; }
                return;
            }
            case 'assume': this.assume(st, this.condOf(s.cond, st, fr, true)); return;
            case 'assert': {
                if (!this.recording) return;
                this.assertions.push({
                    expr: s.cond, range: s.range, prov: new Map(st.prov), defs: new Map(st.defs), vars: new Map(fr.vars), thisPath: fr.thisPath,
                    atoms: [...st.atoms.values()].filter(a => a.k !== 'alias'),
                });
                return;
            }
            case 'set': {
                const target = this.pathOf(s.target, fr);
                const field = target ? pathField(target) : undefined;
                const increment = target !== undefined && this.increments(s.value, '=', target, st, fr);
                const v = this.expr(s.value, st, fr);
                if (field) this.write(st, fr, target, field, false, s.target.range, [], valueOf(v), increment);
                return;
            }
            case 'witness': return;
        }
    }

    /** An index the code must keep in bounds: `0 <= i && i < a.length`, a candidate like an assertion. */
    private boundsSite(array: Expr, index: Expr, range: Range, st: State, fr: Frame): void {
        if (!this.recording || st.dead) return;
        const BOOL = { kind: 'boolean' } as const, INT = { kind: 'int' } as const;
        const cond: Expr = {
            kind: 'binary', op: '&&', type: BOOL, range,
            left: { kind: 'binary', op: '>=', left: index, right: { kind: 'int', value: '0', type: INT, range }, type: BOOL, range },
            right: { kind: 'binary', op: '<', left: index, right: { kind: 'length', array, type: INT, range }, type: BOOL, range },
        };
        this.assertions.push({ expr: cond, range, prov: new Map(st.prov), defs: new Map(st.defs), vars: new Map(fr.vars), thisPath: fr.thisPath, atoms: [], implicit: true });
    }

    private withMonitor(o: Path, st: State, body: () => void): void {
        this.environment(st);
        const held = { k: 'held' as const, obj: o };
        const before = st.atoms.has(atomKey(held));
        this.add(st, held);
        body();
        if (!before) st.atoms.delete(atomKey(held));
        this.environment(st);
    }

    private assignStmt(s: Extract<Stmt, { kind: 'assign' }>, st: State, fr: Frame): void {
        const t = s.target;
        if (t.kind === 'var') {
            fr.vars.delete(t.id);
            const v = s.op === '=' ? this.expr(s.value!, st, fr) : (s.value && this.expr(s.value, st, fr), {});
            this.setLocal(st, t.id, v);
            if (s.op === '=' && pure(s.value!) && !mentionsVar(s.value!, t.id)) st.defs.set(t.id, s.value!);
            return;
        }
        if (t.kind === 'index') {
            this.expr(t.array, st, fr);
            this.expr(t.index, st, fr);
            this.boundsSite(t.array, t.index, t.range, st, fr);
            if (s.op !== '=') this.environment(st);
            if (s.value) this.expr(s.value, st, fr);
            this.environment(st);
            const arr = this.arrayOwnerPath(t.array, st, fr);
            if (arr) this.write(st, fr, arr.obj, arr.field, true, t.range, []);
            else if (!st.dead && !this.freshArray(t.array, st, fr)) this.sharedElementWrites.add(elementKind(t.type));
            return;
        }
        const target = this.pathOf(t, fr);
        if (t.kind === 'field') this.expr(t.receiver, st, fr);
        const field = target ? pathField(target) : undefined;
        if (!field) return;
        const increment = this.increments(s.value, s.op, target!, st, fr);
        // x++, x += e: a read, then the write
        if (s.op !== '=') this.environment(st);
        const v = s.op === '=' ? this.expr(s.value!, st, fr) : (s.value && this.expr(s.value, st, fr), {});
        this.environment(st);
        this.write(st, fr, target, field, false, t.range, [], s.op === '=' ? valueOf(v) : undefined, increment);
        if (s.op === '=' && v.fresh) st.fresh.delete(v.fresh); // publication
    }

    /** Whether an assignment adds a non-negative constant to the value the thread read of its target. */
    private increments(value: Expr | undefined, op: string, target: Path, st: State, fr: Frame): boolean {
        const nonNegative = (e: Expr | undefined) => e?.kind === 'int' && BigInt(e.value) >= 0n;
        if (op === '++') return true;
        if (op === '+=') return nonNegative(value);
        if (op !== '=' || value?.kind !== 'binary' || value.op !== '+') return false;
        const [x, k] = nonNegative(value.right) ? [value.left, value.right] : nonNegative(value.left) ? [value.right, value.left] : [undefined, undefined];
        if (!x || !k) return false;
        const read = x.kind === 'var' ? st.prov.get(x.id)?.path : (x.kind === 'global' || x.kind === 'field') ? this.pathOf(x, fr) : undefined;
        return read !== undefined && pathKey(read) === pathKey(target);
    }

    private setLocal(st: State, id: string, v: ExprVal): void {
        for (const [k, a] of st.atoms) if (a.k === 'alias' && a.local === id) st.atoms.delete(k);
        st.conds.delete(id);
        st.fresh.delete(id);
        st.prov.delete(id);
        st.defs.delete(id);
        for (const [k, e] of [...st.defs]) if (mentionsVar(e, id)) st.defs.delete(k);
        if (v.read) st.prov.set(id, { path: v.read, seq: ++this.seq });
        else if (v.from) st.prov.set(id, v.from);
        else if (v.local && st.prov.has(v.local)) st.prov.set(id, st.prov.get(v.local)!);
        if (v.cond) st.conds.set(id, v.cond);
        if (v.read) this.add(st, { k: 'alias', loc: v.read, local: id });
        if (v.fresh) { st.fresh.delete(v.fresh); st.fresh.add(id); }
        if (v.newObject) st.fresh.add(id);
    }

    private loop(s: Extract<Stmt, { kind: 'while' }>, st: State, fr: Frame): void {
        // The head: what the loop (condition, body, update) may write is forgotten, and the
        // environment runs; one pass over the body then gives facts that hold on every iteration.
        for (const w of this.writesOf([s], fr, new Set())) this.kill(st, w.field, w.obj);
        const assigned = assignedLocals([...s.body, ...s.update], s.cond);
        for (const v of assigned) this.setLocal(st, v, {});
        this.environment(st);
        const c = this.cond(s.cond, st, fr);
        const body = this.copy(st);
        this.assume(body, c.t);
        fr.loops.push({ breaks: [] });
        this.stmts(s.body, body, fr);
        if (!body.dead) this.stmts(s.update, body, fr);
        const { breaks } = fr.loops.pop()!;
        const exit = this.copy(st);
        this.assume(exit, c.f);
        this.assign(st, this.join([exit, ...breaks]));
    }

    /**
     * The locations statements may write (syntactically, through the calls
     * they make): the field, and the object when its path is known.
     */
    private writesOf(stmts: Stmt[], fr: Frame, seen: Set<string>): Array<{ field: string; obj?: Path }> {
        const out: Array<{ field: string; obj?: Path }> = [];
        const target = (t: Expr) => {
            if (t.kind === 'var' || t.kind === 'index') return;
            const p = this.pathOf(t, fr);
            const f = p ? pathField(p) : t.kind === 'global' || t.kind === 'field' ? t.field : undefined;
            if (f) out.push({ field: f, obj: p ? receiverOf(p) : undefined });
        };
        const exprs = (e: Expr) => {
            if (e.kind === 'cas') target(e.target);
            if (e.kind === 'call') {
                const m = this.methods.get(e.method);
                const recv = e.receiver ? this.pathOf(e.receiver, fr) : (m && !m.isStatic && m.owner ? fr.thisPath ?? { base: { k: 'this' }, fields: [] } : undefined);
                if (m?.abstraction) {
                    const subst = this.substitution(m, recv, e.args.map(a => this.pathOf(a, fr)));
                    for (const a of [...(m.abstraction.stutter ? [m.abstraction.stutter] : []), ...m.abstraction.steps]) out.push(...actionWrites(a, subst, x => this.pathOf(x, subst)));
                } else if (m && !seen.has(m.id) && fr.depth < MAX_INLINE) {
                    const inner = this.frame(recv, m, fr.depth + 1);
                    m.params.forEach((p, i) => { const a = e.args[i] && this.pathOf(e.args[i], fr); if (a && (p.type.kind === 'class' || p.type.kind === 'array')) inner.vars.set(p.id, a); });
                    out.push(...this.writesOf(m.body, inner, new Set([...seen, m.id])));
                } else if (m) {
                    for (const f of reachOf(this.program, m.body, m.owner).writes) out.push({ field: f });
                }
            }
            for (const c of children(e)) exprs(c);
        };
        const walk = (ss: Stmt[]) => {
            for (const x of ss) {
                switch (x.kind) {
                    case 'assign': target(x.target); exprs(x.target); if (x.value) exprs(x.value); break;
                    case 'set': target(x.target); break;
                    case 'local': if (x.init) exprs(x.init); break;
                    case 'expr': exprs(x.expr); break;
                    case 'if': exprs(x.cond); walk(x.then); walk(x.else); break;
                    case 'while': exprs(x.cond); walk(x.body); walk(x.update); break;
                    case 'return': if (x.value) exprs(x.value); break;
                    case 'sync': exprs(x.lock); walk(x.body); break;
                    case 'atomic': case 'block': walk(x.body); break;
                    default: break;
                }
            }
        };
        walk(stmts);
        return out;
    }

    // ------------------------------------------------------------ expressions

    private pathOf(e: Expr, fr: Frame): Path | undefined {
        switch (e.kind) {
            case 'this': return fr.thisPath ?? { base: { k: 'this' }, fields: [] };
            case 'var': return fr.vars.get(e.id) ?? { base: { k: 'local', id: e.id }, fields: [] };
            case 'global': return { base: { k: 'global', field: e.field }, fields: [] };
            case 'field': {
                const r = this.pathOf(e.receiver, fr);
                return r ? { base: r.base, fields: [...r.fields, e.field] } : undefined;
            }
            default: return undefined;
        }
    }

    /** Whether an array expression is a local holding an array this thread made and has not published. */
    private freshArray(e: Expr, st: State, fr: Frame): boolean {
        const p = this.pathOf(e, fr);
        return p !== undefined && p.base.k === 'local' && p.fields.length === 0 && st.fresh.has(p.base.id);
    }

    /** The array-typed field (and its object) whose array an array expression denotes. */

    private arrayOwnerPath(e: Expr, st: State, fr: Frame): { obj: Path | undefined; field: string } | undefined {
        let p = this.pathOf(e, fr);
        if (p && p.base.k === 'local' && p.fields.length === 0) {
            if (st.fresh.has(p.base.id)) return undefined;
            const alias = [...st.atoms.values()].find(a => a.k === 'alias' && a.local === (p!.base as { id: string }).id);
            p = alias ? atomPath(alias) : undefined;
        }
        if (!p) return undefined;
        const field = pathField(p);
        if (!field || !this.owners.has(field)) return undefined;
        return { obj: receiverOf(p), field };
    }

    /** Evaluate an expression for its effects (reads, calls, cas) and what its value says. */
    private expr(e: Expr, st: State, fr: Frame): ExprVal {
        switch (e.kind) {
            case 'int': return { c: { k: 'int', v: BigInt(e.value) } };
            case 'bool': return { c: { k: 'bool', v: e.value } };
            case 'null': return { c: { k: 'null' } };
            case 'tid': return { tid: true };
            case 'this': case 'threadId': case 'result': case 'old': case 'quant': return {};
            case 'nondet': return {};
            case 'var': {
                if (fr.vars.has(e.id)) return {};
                const cond = st.conds.get(e.id);
                const out: ExprVal = { local: e.id };
                if (cond) out.cond = cond;
                if (st.fresh.has(e.id)) out.fresh = e.id;
                return out;
            }
            case 'global': case 'field': {
                if (e.kind === 'field') this.expr(e.receiver, st, fr);
                this.environment(st);
                const p = this.pathOf(e, fr);
                if (!p) return {};
                const out: ExprVal = { read: p };
                if (e.type.kind === 'boolean') out.cond = { t: [{ k: 'eq', loc: p, c: { k: 'bool', v: true } }], f: [{ k: 'eq', loc: p, c: { k: 'bool', v: false } }] };
                return out;
            }
            case 'holder': this.expr(e.receiver, st, fr); return {};
            case 'length': this.expr(e.array, st, fr); return {};
            case 'index': this.expr(e.array, st, fr); this.expr(e.index, st, fr); this.environment(st); this.boundsSite(e.array, e.index, e.range, st, fr); return {};
            case 'unary': {
                const v = this.expr(e.operand, st, fr);
                if (e.op === '!' && v.cond) return { cond: { t: v.cond.f, f: v.cond.t } };
                return {};
            }
            case 'binary': return { cond: this.binary(e, st, fr) };
            case 'cond': {
                this.cond(e.cond, st, fr);
                const a = this.copy(st);
                this.expr(e.then, a, fr);
                const b = this.copy(st);
                this.expr(e.else, b, fr);
                this.assign(st, this.join([a, b]));
                return {};
            }
            case 'cas': return { cond: this.cas(e, st, fr) };
            case 'new': {
                // the new object's field initializers run on it: private, no facts to keep
                const cls = this.classesByName.get(e.class);
                for (const f of cls?.fields ?? []) if (!f.isStatic && f.init) this.expr(f.init, st, fr);
                return { newObject: true };
            }
            case 'newArray': this.expr(e.size, st, fr); return { newObject: true };
            case 'call': return this.call(e, st, fr);
        }
    }

    private cond(e: Expr, st: State, fr: Frame): BoolVal {
        const v = this.expr(e, st, fr);
        const c = v.cond ?? { t: [], f: [] };
        this.markTested(c);
        return c;
    }

    private markTested(c: BoolVal): void {
        for (const a of [...c.t, ...c.f]) {
            const f = pathField(atomPath(a));
            if (f && a.k !== 'held') this.tested.add(f);
        }
    }

    private binary(e: Extract<Expr, { kind: 'binary' }>, st: State, fr: Frame): BoolVal | undefined {
        if (e.op === '&&' || e.op === '||') {
            const l = this.cond(e.left, st, fr);
            // the right operand runs only sometimes: its effects join with not running it
            const r0 = this.copy(st);
            this.assume(r0, e.op === '&&' ? l.t : l.f);
            const r = this.cond(e.right, r0, fr);
            this.assign(st, this.join([st, r0]));
            return e.op === '&&' ? { t: [...l.t, ...r.t], f: intersect(l.f, r.f) } : { t: intersect(l.t, r.t), f: [...l.f, ...r.f] };
        }
        const l = this.expr(e.left, st, fr);
        const r = this.expr(e.right, st, fr);
        if (e.op !== '==' && e.op !== '!=') return undefined;
        const eq = this.equality(l, r, st) ?? this.equality(r, l, st);
        if (!eq) return undefined;
        return e.op === '==' ? eq : { t: eq.f, f: eq.t };
    }

    /** `loc == value` for a location (read now, or a local that still holds its value) and a constant or tid. */
    private equality(a: ExprVal, b: ExprVal, st: State): BoolVal | undefined {
        let loc = a.read;
        if (!loc && a.local) {
            const alias = [...st.atoms.values()].find(x => x.k === 'alias' && x.local === a.local);
            if (alias) loc = atomPath(alias);
        }
        if (!loc) return undefined;
        if (b.c) {
            if (b.c.k === 'bool') return { t: [{ k: 'eq', loc, c: b.c }], f: [{ k: 'eq', loc, c: { k: 'bool', v: !b.c.v } }] };
            return { t: [{ k: 'eq', loc, c: b.c }], f: [{ k: 'ne', loc, c: b.c }] };
        }
        if (b.tid) return { t: [{ k: 'eqTid', loc }], f: [] };
        return undefined;
    }

    private cas(e: Extract<Expr, { kind: 'cas' }>, st: State, fr: Frame): BoolVal {
        if (e.target.kind === 'field') this.expr(e.target.receiver, st, fr);
        if (e.target.kind === 'index') this.sharedElementWrites.add(elementKind(e.target.type));
        const expected = this.expr(e.expected, st, fr);
        const update = this.expr(e.update, st, fr);
        this.environment(st);
        const target = this.pathOf(e.target, fr);
        const field = target ? pathField(target) : undefined;
        if (!target || !field) return { t: [], f: [] };
        // the write happens when the location holds the expected value
        const pre: Atom[] = expected.c ? [{ k: 'eq', loc: target, c: expected.c }] : expected.tid ? [{ k: 'eqTid', loc: target }] : [];
        this.tested.add(field);
        const after = this.copy(st);
        this.write(after, fr, target, field, false, e.target.range, pre, valueOf(update));
        const t = [...after.atoms.values()].filter(a => pathKey(atomPath(a)) === pathKey(target));
        // the write's effect on other facts (a successful cas) joins with the failed cas (no write)
        this.kill(st, field, receiverOf(target));
        return { t, f: [] };
    }

    private call(e: Extract<Expr, { kind: 'call' }>, st: State, fr: Frame): ExprVal {
        const m = this.methods.get(e.method);
        const recvPath = e.receiver ? this.pathOf(e.receiver, fr) : (m && !m.isStatic && m.owner ? fr.thisPath ?? { base: { k: 'this' }, fields: [] } : undefined);
        if (e.receiver) this.expr(e.receiver, st, fr);
        const args = e.args.map(a => ({ expr: a, val: this.expr(a, st, fr), path: this.pathOf(a, fr) }));
        if (!m) return {};
        if (m.abstraction) {
            // the object passed to (or the receiver of) a method with an abstraction may be stored by it: published
            for (const a of args) if (a.val.fresh) st.fresh.delete(a.val.fresh);
            if (recvPath?.base.k === 'local' && recvPath.fields.length === 0) st.fresh.delete(recvPath.base.id);
            return this.abstractCall(m, recvPath, args.map(a => a.path), st, fr);
        }
        if (fr.depth >= MAX_INLINE) { this.havocAll(st); return {}; }
        const inner = this.frame(recvPath, m, fr.depth + 1);
        m.params.forEach((p, i) => {
            const a = args[i];
            if (!a) return;
            if (a.path && (p.type.kind === 'class' || p.type.kind === 'array')) inner.vars.set(p.id, a.path);
            else if (a.val.cond) st.conds.set(p.id, a.val.cond);
            const from = a.val.read ? { path: a.val.read, seq: ++this.seq } : a.val.local ? st.prov.get(a.val.local) : undefined;
            if (from) st.prov.set(p.id, from); else st.prov.delete(p.id);
        });
        const body = () => this.stmts(m.body, st, inner);
        if (m.isSynchronized && recvPath) this.withMonitor(recvPath, st, body);
        else body();
        const joined = this.join([st, ...inner.returns]);
        this.assign(st, joined);
        if (inner.returnVals.length === 0) return {};
        const froms = inner.returnFrom;
        const from = froms.length > 0 && froms.every(f => f && pathKey(f.path) === pathKey(froms[0]!.path)) ? froms[froms.length - 1] : undefined;
        return { cond: { t: inner.returnVals.map(v => v.t).reduce(intersect), f: inner.returnVals.map(v => v.f).reduce(intersect) }, ...(from ? { from } : {}) };
    }

    /** A call replaced by its abstraction: its steps write their frames and establish what their actions say of the post-state. */
    private abstractCall(m: MethodModel, recv: Path | undefined, args: Array<Path | undefined>, st: State, fr: Frame): ExprVal {
        const abs = m.abstraction!;
        const subst = this.substitution(m, recv, args);
        for (const r of abs.requires) this.assume(st, this.condOf(r.expr, st, subst, true));
        const actions: Action[] = [...(abs.stutter ? [abs.stutter] : []), ...abs.steps];
        for (const a of actions) {
            this.environment(st);
            for (const w of actionWrites(a, subst, x => this.pathOf(x, subst))) this.kill(st, w.field, w.obj);
            if (a !== abs.stutter) this.assume(st, this.condOf(a.expr, st, subst, true, true));
        }
        this.environment(st);
        let result: BoolVal | undefined;
        for (const c of abs.ensures) {
            this.assume(st, this.condOf(c.expr, st, subst, true));
            result ??= resultCond(c, e => this.condOf(e, st, subst, true));
        }
        void fr;
        return result ? { cond: result } : {};
    }

    private substitution(m: MethodModel, recv: Path | undefined, args: Array<Path | undefined>): Frame {
        const f = this.frame(recv, m, 0);
        m.params.forEach((p, i) => { if (args[i]) f.vars.set(p.id, args[i]!); });
        return f;
    }

    /** The atoms a (side-effect-free) annotation condition gives when it holds; `primed`: read the post-state of an action. */
    private condOf(e: Expr, st: State, fr: Frame, positive: boolean, primedOnly = false): Atom[] {
        const v = annotationCond(e, x => this.pathOf(x, fr), primedOnly);
        if (!primedOnly) this.markTested(v);
        void st;
        return positive ? v.t : v.f;
    }

    private havocAll(st: State): void {
        for (const [k, a] of st.atoms) if (a.k !== 'held') st.atoms.delete(k);
    }
}

// ------------------------------------------------------------------ helpers

interface ExprVal {
    c?: Const;
    tid?: boolean;
    /** A shared location read by this expression (its value). */
    read?: Path;
    local?: string;
    cond?: BoolVal;
    /** A local referencing a private object. */
    fresh?: string;
    /** The value was read from a shared location (e.g. the result of an inlined getter). */
    from?: Provenance;
    newObject?: boolean;
}

function valueOf(v: ExprVal): { c?: Const; tid?: boolean; local?: string } | undefined {
    if (v.c) return { c: v.c };
    if (v.tid) return { tid: true };
    if (v.local) return { local: v.local };
    return undefined;
}

/**
 * The fields a condition of the program may test: read in a branch or loop
 * condition, an assume, a cas, a requires or an abstraction action, or read
 * into a local that such a condition tests.
 */
function syntacticallyTested(program: ProgramModel): Set<string> {
    const fields = new Set<string>();
    const locals = new Set<string>();
    const fieldsIn = (e: Expr) => {
        if (e.kind === 'global' || e.kind === 'field') fields.add(e.field);
        if (e.kind === 'var') locals.add(e.id);
        for (const c of children(e)) fieldsIn(c);
    };
    const bodies: Stmt[][] = [...program.threads.map(t => t.body), ...program.procedures.map(m => m.body), ...program.classes.flatMap(c => c.methods.map(m => m.body))];
    const conditions = (ss: Stmt[]) => {
        for (const x of ss) {
            switch (x.kind) {
                case 'if': fieldsIn(x.cond); conditions(x.then); conditions(x.else); break;
                case 'while': fieldsIn(x.cond); conditions(x.body); conditions(x.update); break;
                case 'assume': case 'assert': fieldsIn(x.cond); break;
                case 'sync': case 'atomic': case 'block': conditions(x.body); break;
                default: break;
            }
        }
    };
    const casTargets = (e: Expr) => { if (e.kind === 'cas') fieldsIn(e.target); if (e.kind === 'cond') fieldsIn(e.cond); for (const c of children(e)) casTargets(c); };
    for (const b of bodies) {
        conditions(b);
        walkExprs(b, casTargets);
    }
    for (const m of [...program.procedures, ...program.classes.flatMap(c => c.methods)]) {
        for (const c of [...(m.abstraction?.requires ?? []), ...(m.abstraction?.ensures ?? [])]) fieldsIn(c.expr);
        for (const a of [...(m.abstraction?.steps ?? [])]) fieldsIn(a.expr);
    }
    // fields read into a local that a condition tests
    for (const b of bodies) walkStmtsFlat(b, x => {
        if (x.kind === 'local' && x.init && locals.has(x.decl.id)) fieldsIn(x.init);
        if (x.kind === 'assign' && x.target.kind === 'var' && x.value && locals.has(x.target.id)) fieldsIn(x.value);
    });
    return fields;
}

function walkStmtsFlat(ss: Stmt[], f: (s: Stmt) => void): void {
    for (const x of ss) {
        f(x);
        if (x.kind === 'if') { walkStmtsFlat(x.then, f); walkStmtsFlat(x.else, f); }
        if (x.kind === 'while') { walkStmtsFlat(x.body, f); walkStmtsFlat(x.update, f); }
        if (x.kind === 'sync' || x.kind === 'atomic' || x.kind === 'block') walkStmtsFlat(x.body, f);
    }
}

function walkExprs(ss: Stmt[], f: (e: Expr) => void): void {
    walkStmtsFlat(ss, x => {
        switch (x.kind) {
            case 'local': if (x.init) f(x.init); break;
            case 'assign': f(x.target); if (x.value) f(x.value); break;
            case 'expr': f(x.expr); break;
            case 'if': case 'while': f(x.cond); break;
            case 'return': if (x.value) f(x.value); break;
            case 'sync': f(x.lock); break;
            default: break;
        }
    });
}

/** Without effects: values, locals, reads and operators (what an assertion can be lifted through). */
function pure(e: Expr): boolean {
    switch (e.kind) {
        case 'int': case 'bool': case 'null': case 'var': case 'global': case 'this': return true;
        case 'field': return pure(e.receiver);
        case 'unary': return pure(e.operand);
        case 'binary': return pure(e.left) && pure(e.right);
        default: return false;
    }
}

/** Whether an expression reads a field (or global) with this id. */
function readsField(e: Expr, field: string): boolean {
    if ((e.kind === 'global' || e.kind === 'field') && e.field === field) return true;
    return children(e).some(c => readsField(c, field));
}

function mentionsVar(e: Expr, id: string): boolean {
    if (e.kind === 'var') return e.id === id;
    return children(e).some(c => mentionsVar(c, id));
}

function valueKey(v: Const | 'tid'): string {
    return v === 'tid' ? 'tid' : `${v.k}:${v.k === 'null' ? '' : String(v.v)}`;
}

function constOf(e: Expr): Const | undefined {
    if (e.kind === 'int') return { k: 'int', v: BigInt(e.value) };
    if (e.kind === 'bool') return { k: 'bool', v: e.value };
    if (e.kind === 'null') return { k: 'null' };
    if (e.kind === 'unary' && e.op === '-' && e.operand.kind === 'int') return { k: 'int', v: -BigInt(e.operand.value) };
    return undefined;
}

function defaultConst(kind: string): Const | undefined {
    return kind === 'int' ? { k: 'int', v: 0n } : kind === 'boolean' ? { k: 'bool', v: false } : undefined;
}

function boolKey(b: BoolVal): string {
    return `${b.t.map(atomKey).sort().join('&')}|${b.f.map(atomKey).sort().join('&')}`;
}

function intersect(a: Atom[], b: Atom[]): Atom[] {
    const keys = new Set(b.map(atomKey));
    return a.filter(x => keys.has(atomKey(x)));
}

/** Two atoms about the same location that can both hold. */
function compatibleSame(a: Atom, b: Atom): boolean {
    if (a.k === 'eq' && b.k === 'eq') return a.c.k === b.c.k && String(a.c.k === 'null' ? '' : a.c.v) === String(b.c.k === 'null' ? '' : b.c.v);
    if (a.k === 'eq' && b.k === 'ne') return atomKey({ ...b, k: 'eq' }) !== atomKey(a);
    if (a.k === 'ne' && b.k === 'eq') return atomKey({ ...a, k: 'eq' }) !== atomKey(b);
    if ((a.k === 'eqTid' && b.k === 'eq') || (a.k === 'eq' && b.k === 'eqTid')) return false;
    return true;
}

/** An atom about the written object (`this`) and globals; facts about other objects or locals say nothing there. */
function relativize(a: Atom, obj: Path | undefined): Atom | undefined {
    const p = atomPath(a);
    let q: Path | undefined;
    if (obj) q = rebasePath(p, obj, { base: { k: 'this' }, fields: [] });
    if (!q) q = p.base.k === 'global' ? p : undefined;
    if (!q) return undefined;
    return a.k === 'held' ? { k: 'held', obj: q } : { ...a, loc: q } as Atom;
}

/** Locals assigned in statements (and the condition). */
function assignedLocals(stmts: Stmt[], cond: Expr): Set<string> {
    const out = new Set<string>();
    const visitStmts = (ss: Stmt[]) => {
        for (const s of ss) {
            if (s.kind === 'assign' && s.target.kind === 'var') out.add(s.target.id);
            if (s.kind === 'local') out.add(s.decl.id);
            if (s.kind === 'if') { visitStmts(s.then); visitStmts(s.else); }
            if (s.kind === 'while') { visitStmts(s.body); visitStmts(s.update); }
            if (s.kind === 'sync' || s.kind === 'atomic' || s.kind === 'block') visitStmts(s.body);
        }
    };
    visitStmts(stmts);
    void cond;
    return out;
}

/** The fields an abstraction action may change, and of which object when the frame says (its frame, or the primed names when it has none). */
function actionWrites(a: Action, fr: Frame, pathOf: (e: Expr) => Path | undefined): Array<{ field: string; obj?: Path }> {
    const out: Array<{ field: string; obj?: Path }> = [];
    if (a.hasFrame) {
        for (const e of a.frame) {
            switch (e.kind) {
                case 'global': out.push({ field: e.field }); break;
                case 'this': out.push({ field: e.field, obj: fr.thisPath ?? { base: { k: 'this' }, fields: [] } }); break;
                case 'param': out.push({ field: e.field, obj: fr.vars.get(e.param) }); break;
                case 'any': out.push({ field: e.field }); break;
                case 'elems': break;
            }
        }
        return out;
    }
    const walk = (e: Expr) => {
        if (e.kind === 'global' && e.primed) out.push({ field: e.field });
        if (e.kind === 'field' && e.primed) out.push({ field: e.field, obj: pathOf(e.receiver) });
        for (const c of children(e)) walk(c);
    };
    walk(a.expr);
    return out;
}

function children(e: Expr): Expr[] {
    switch (e.kind) {
        case 'field': return [e.receiver];
        case 'holder': return [e.receiver];
        case 'length': return [e.array];
        case 'index': return [e.array, e.index];
        case 'unary': return [e.operand];
        case 'binary': return [e.left, e.right];
        case 'cond': return [e.cond, e.then, e.else];
        case 'call': return [...(e.receiver ? [e.receiver] : []), ...e.args];
        case 'cas': return [e.target, e.expected, e.update];
        case 'old': return [e.expr];
        case 'quant': return [...(e.range_ ? [e.range_] : []), e.body];
        case 'newArray': return [e.size];
        default: return [];
    }
}

/**
 * The atoms of an annotation condition (requires, ensures, an action): when
 * it holds (t) and when it does not (f). `primedOnly`: an action, of which
 * only the post-state conjuncts (`m' == tid`) say something afterwards.
 */
export function annotationCond(e: Expr, pathOf: (e: Expr) => Path | undefined, primedOnly = false): BoolVal {
    const loc = (x: Expr): Path | undefined => {
        if ((x.kind === 'global' || x.kind === 'field') && (primedOnly ? x.primed : !x.primed)) {
            const base = x.kind === 'field' ? pathOf(x.receiver) : undefined;
            if (x.kind === 'global') return { base: { k: 'global', field: x.field }, fields: [] };
            return base ? { base: base.base, fields: [...base.fields, x.field] } : undefined;
        }
        if (x.kind === 'holder' && !primedOnly && !x.primed) return undefined;
        return undefined;
    };
    const cst = (x: Expr): Const | undefined => constOf(x);
    const go = (x: Expr): BoolVal => {
        switch (x.kind) {
            case 'binary': {
                if (x.op === '&&') { const l = go(x.left), r = go(x.right); return { t: [...l.t, ...r.t], f: intersect(l.f, r.f) }; }
                if (x.op === '||') { const l = go(x.left), r = go(x.right); return { t: intersect(l.t, r.t), f: [...l.f, ...r.f] }; }
                if (x.op === '==' || x.op === '!=') {
                    const one = (a: Expr, b: Expr): BoolVal | undefined => {
                        if (a.kind === 'holder' && !a.primed && !primedOnly && b.kind === 'tid') {
                            const o = pathOf(a.receiver);
                            return o ? { t: [{ k: 'held', obj: o }], f: [] } : undefined;
                        }
                        const p = loc(a);
                        if (!p) return undefined;
                        const c = cst(b);
                        if (c) return c.k === 'bool'
                            ? { t: [{ k: 'eq', loc: p, c }], f: [{ k: 'eq', loc: p, c: { k: 'bool', v: !c.v } }] }
                            : { t: [{ k: 'eq', loc: p, c }], f: [{ k: 'ne', loc: p, c }] };
                        if (b.kind === 'tid') return { t: [{ k: 'eqTid', loc: p }], f: [] };
                        return undefined;
                    };
                    const v = one(x.left, x.right) ?? one(x.right, x.left);
                    if (!v) return { t: [], f: [] };
                    return x.op === '==' ? v : { t: v.f, f: v.t };
                }
                return { t: [], f: [] };
            }
            case 'unary': if (x.op === '!') { const v = go(x.operand); return { t: v.f, f: v.t }; } return { t: [], f: [] };
            case 'global': case 'field': {
                const p = loc(x);
                if (!p || x.type.kind !== 'boolean') return { t: [], f: [] };
                return { t: [{ k: 'eq', loc: p, c: { k: 'bool', v: true } }], f: [{ k: 'eq', loc: p, c: { k: 'bool', v: false } }] };
            }
            default: return { t: [], f: [] };
        }
    };
    return go(e);
}

/** `\result == (cond)` or `\result <==> cond` in an ensures: what a true / false result says. */
function resultCond(c: Clause, condOf: (e: Expr) => Atom[]): BoolVal | undefined {
    const e = c.expr;
    if (e.kind !== 'binary' || (e.op !== '==' && e.op !== '<==>')) return undefined;
    const other = e.left.kind === 'result' ? e.right : e.right.kind === 'result' ? e.left : undefined;
    if (!other || other.type.kind !== 'boolean') return undefined;
    const neg: Expr = { kind: 'unary', op: '!', operand: other, type: other.type, range: other.range };
    return { t: condOf(other), f: condOf(neg) };
}

/** The kind of an element type, as the element maps are split: int, boolean, or a reference. */
export function elementKind(t: { kind: string }): 'Int' | 'Bool' | 'Ref' {
    return t.kind === 'int' ? 'Int' : t.kind === 'boolean' ? 'Bool' : 'Ref';
}

import type { Range } from '../model/program.js';
import type { AtomicOp, CheckInfo, Cmd, OpCmd } from '../il/il.js';
import { OP_PRE } from '../il/il.js';
import type { InlinedBody } from '../lower/lower.js';
import { ALLOC, DTYPE, isMadeFact, LEN, LINKED, OWNER } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Sort, Term } from '../smt/term.js';
import type { BoundedProgram, ThreadInstance } from './program.js';
import type { Heap, Value } from './heap.js';
import { headIsPoint, isHeapFact } from './machine.js';
import { typeOfKey } from './eval.js';
import { quantIntBounds } from '../smt/int-range.js';
import { WitnessUnsupported } from './types.js';

/**
 * The bounded program as SMT terms (issue 14; the encoding of the
 * interference-abstractions paper): every thread is unrolled on its own into
 * a tree of *events* — the same points the interpreter stops at (machine.ts),
 * each with its path condition — in static single assignment form, loops
 * unrolled `bounds.loops` times. A read of shared memory is a fresh constant
 * whose value the encoding (encode.ts) links to the write it reads from; a
 * write is a record (location, value, condition). Locals are terms over these
 * constants and the `nondet()` choices. References are integers: 0 is null,
 * the objects of the field initializers have the numbers the interpreter gave
 * them, and every allocation event gets a number of its own.
 */

/** A point in time: just before an event's effect, or just after it. */
export interface TimePoint {
    event: SymEvent;
    phase: 'pre' | 'post';
}

export interface SymWrite {
    event: SymEvent;
    /** Order among the event's stores. */
    pos: number;
    map: string;
    keys: Term[];
    value: Term;
    /** The condition inside the operation (branches of an atomic block, a successful cas). */
    when: Term;
}

/** A read of shared memory: a constant linked to the write it reads from. */
export interface ReadVar {
    name: string;
    sort: Sort;
    map: string;
    keys: Term[];
    /** Undefined: a read of a final field between operations (written once, so at any time after). */
    at?: TimePoint;
}

export interface SymAssert {
    check: CheckInfo;
    cond: Term;
    /** The condition inside the operation under which it is checked. */
    when: Term;
    /** Position among the event's asserts. */
    pos: number;
}

/** A location an operation touches (for races). */
export interface Footprint {
    map: string;
    keys: Term[];
    write: boolean;
    when: Term;
}

export type EventPoint =
    | { k: 'op'; op: AtomicOp }
    | { k: 'check'; cmd: Extract<Cmd, { k: 'checkLocal' | 'checkState' | 'assumeState' }> }
    | { k: 'head'; loop: Extract<Cmd, { k: 'loop' }>; iteration: number; instance: number }
    | { k: 'call'; body: InlinedBody; instance: number }
    | { k: 'return'; body: InlinedBody; range: Range; instance: number };

export interface SymEvent {
    id: number;
    thread: ThreadInstance;
    /** Position in the thread: increasing along every path. */
    idx: number;
    point: EventPoint;
    /** Reaching the point (a Bool constant). */
    guard: Term;
    /** The thread's locals at the point (before the event). */
    locals: Map<string, Term>;
    /** The locals after an operation (its own locals included). */
    localsAfter?: Map<string, Term>;
    writes: SymWrite[];
    footprint: Footprint[];
    /** Conditions that must hold when the event is taken (a blocking `assume`). */
    blocks: Term[];
    asserts: SymAssert[];
    /** An allocation's reference. */
    allocRef?: bigint;
    allocType?: number;
    /** The inlined methods with an abstraction the event is inside (instances, innermost last). */
    calls: number[];
}

interface State {
    guard: Term;
    locals: Map<string, Term>;
    exitRange?: Range;
}

/** A `nondet()` choice: the interpreter takes them in the order of `order` along the path. */
export interface Havoc {
    name: string;
    thread: number;
    order: number;
    guard: Term;
}

const BOOKKEEPING = new Set([ALLOC, OWNER, LINKED]);
/** The pseudo-locals of a thread's own objects' OWNER and LINKED (ownRead). */
const OWN = 'own!', LNK = 'lnk!';
const FATAL_CODES = new Set(['assert', 'null', 'bounds', 'div-zero']);
/** More events than this make an encoding the solver would not finish in time. */
const MAX_EVENTS = 5000;


export class SymProgram {
    readonly events: SymEvent[] = [];
    readonly byThread: SymEvent[][] = [];
    readonly writes: SymWrite[] = [];
    readonly reads: ReadVar[] = [];
    readonly havocs: Havoc[] = [];
    /** Declared constants and their sorts. */
    readonly decls = new Map<string, Sort>();
    /** Definitions and facts (assertions) of the unrolling. */
    readonly facts: Term[] = [];
    /** Lengths and dynamic types of the objects (field initializers: constants; allocations: terms). */
    readonly lengths: Array<{ ref: bigint; len: Term }> = [];
    readonly types: Array<{ ref: bigint; type: number }> = [];
    /** References of the objects of the field initializers are at most this. */
    readonly initRefMax: bigint;
    private nextRef: bigint;
    private counter = 0;
    private readMemo = new Map<string, Term>();
    private loopInstances = 0;
    /** A path still looping after `bounds.loops` iterations was cut: larger bounds may reach more. */
    loopCut = false;
    private callInstances = 0;
    private readonly writtenMaps = new Set<string>();

    constructor(readonly bp: BoundedProgram, readonly init: Heap) {
        this.initRefMax = init.nextRef - 1n;
        this.nextRef = init.nextRef;
        for (const [ref, len] of init.len) this.lengths.push({ ref, len: T.int(len) });
        for (const [ref, type] of init.dtype) this.types.push({ ref, type });
        for (const t of bp.threads) collectWritten(t.body, this.writtenMaps);
        for (const t of bp.threads) this.unrollThread(t);
        // lengths and types asked while unrolling: now that every allocation is known
        this.unrolled = true;
        for (const d of this.deferred) this.facts.push(T.eq(d.c, d.fn === LEN ? this.lengthOf(d.a) : this.typeOf(d.a)));
        this.deferred.length = 0;
    }

    private unrolled = false;
    private readonly deferred: Array<{ c: Term; a: Term; fn: string }> = [];

    /** Whether some event writes the state variable. */
    written(map: string): boolean {
        return this.writtenMaps.has(map);
    }

    // ------------------------------------------------------------ constants

    fresh(prefix: string, sort: Sort): Term {
        const name = `${prefix}${this.counter++}`;
        this.decls.set(name, sort);
        return T.v(name, sort);
    }

    /** A constant equal to the term (terms stay small); literals and constants as they are. */
    define(prefix: string, t: Term): Term {
        if (t.t === 'var' || t.t === 'int' || t.t === 'bool') return t;
        const c = this.fresh(prefix, smtSort(T.sortOf(t)));
        this.facts.push(T.eq(c, t));
        return c;
    }

    /** The value of a state variable at keys at a point in time (a fresh read, or the same one again). */
    readAt(map: string, keys: Term[], at: TimePoint): Term {
        const sort = smtSort(this.bp.ctx.vocab.sortOfVar(map));
        if (BOOKKEEPING.has(map)) return this.bookkeeping(map, keys[0]);
        // no thread writes it: the value the field initializers left
        if (!this.writtenMaps.has(map)) return this.initialValue(map, keys);
        const memo = `${at.event.id}:${at.phase}:${map}:${keys.map(T.key).join(',')}`;
        const hit = this.readMemo.get(memo);
        if (hit) return hit;
        const c = this.fresh('rd', sort);
        this.reads.push({ name: (c as { name: string }).name, sort, map, keys, at });
        this.readMemo.set(memo, c);
        return c;
    }

    /** A final field read between operations (lower.ts reads those without a step): its one value. */
    private finalRead(map: string, keys: Term[]): Term {
        const f = this.bp.ctx.vocab.stateVar(map).field;
        if (!f?.isFinal) throw new WitnessUnsupported(`a read of ${map} outside an atomic operation`);
        if (!this.writtenMaps.has(map) || keys.length === 0 || (keys[0].t === 'int' && keys[0].value <= this.initRefMax)) return this.initialValue(map, keys);
        const memo = `final:${map}:${keys.map(T.key).join(',')}`;
        const hit = this.readMemo.get(memo);
        if (hit) return hit;
        const c = this.fresh('rd', smtSort(this.bp.ctx.vocab.sortOfVar(map)));
        this.reads.push({ name: (c as { name: string }).name, sort: smtSort(this.bp.ctx.vocab.sortOfVar(map)), map, keys });
        this.readMemo.set(memo, c);
        return c;
    }

    /**
     * The checker's bookkeeping of allocation and privacy: the objects of the
     * field initializers are allocated and published; the others are treated
     * as allocated when not null and published (only heap facts and class
     * clauses ask, and the replay decides exactly).
     */
    private bookkeeping(map: string, key: Term): Term {
        if (key.t === 'int' && key.value <= this.initRefMax) {
            const v = this.init.get(map, [key.value]);
            return typeof v === 'boolean' ? T.bool(v) : T.int(v);
        }
        if (map === ALLOC) return T.ne(key, T.int(0));
        if (map === OWNER) return T.int(0);
        return T.FALSE;
    }

    /** A location's value after the field initializers (the default where they did not write). */
    initialValue(map: string, keys: Term[]): Term {
        const sort = this.bp.ctx.vocab.sortOfVar(map);
        let out: Term = sort === 'Bool' ? T.FALSE : T.int(0);
        for (const e of this.init.entries(map)) {
            const value = typeof e.value === 'boolean' ? T.bool(e.value) : T.int(e.value);
            out = T.ite(keysEqual(e.keys.map(k => (typeof k === 'boolean' ? T.bool(k) : T.int(k))), keys), value, out);
        }
        return out;
    }

    lengthOf(a: Term): Term {
        if (!this.unrolled && !(a.t === 'int' && a.value <= this.initRefMax)) {
            const c = this.fresh('len', 'Int');
            this.deferred.push({ c, a, fn: LEN });
            return c;
        }
        let out: Term = T.int(0);
        for (const { ref, len } of this.lengths) out = T.ite(T.eq(a, T.int(ref)), len, out);
        return out;
    }

    typeOf(a: Term): Term {
        if (!this.unrolled && !(a.t === 'int' && a.value <= this.initRefMax)) {
            const c = this.fresh('type', 'Int');
            this.deferred.push({ c, a, fn: DTYPE });
            return c;
        }
        let out: Term = T.int(0);
        for (const { ref, type } of this.types) out = T.ite(T.eq(a, T.int(ref)), T.int(type), out);
        return out;
    }

    /**
     * A term of the IL as a term over the constants: locals from `locals`,
     * reads of state `s` through `read(s)`; quantifiers are unrolled over the
     * objects of the field initializers (references) or a constant range
     * (integers).
     */
    sym(t: Term, locals: ReadonlyMap<string, Term>, read: (map: string, keys: Term[], state: string | undefined) => Term, bound: ReadonlyMap<string, Term> = new Map()): Term {
        const go = (x: Term): Term => this.sym(x, locals, read, bound);
        switch (t.t) {
            case 'int': case 'bool': return t;
            case 'var': {
                const b = bound.get(t.name);
                if (b) return b;
                if (t.name === 'null') return T.int(0);
                const l = locals.get(t.name);
                if (!l) throw new Error(`witness search: no value for ${t.name}`);
                return l;
            }
            case 'read': return read(t.map, t.keys.map(go), t.state);
            case 'app': {
                if (isMadeFact(t)) return T.TRUE; // (who made an object: true of every execution)
                const args = t.args.map(go);
                if (t.fn === LEN) return this.lengthOf(args[0]);
                if (t.fn === DTYPE) return this.typeOf(args[0]);
                return mkApp(t.fn, args, t.sort);
            }
            case 'quant': {
                const [v, ...rest] = t.vars;
                const inner: Term = rest.length === 0 ? t.body : { ...t, vars: rest };
                const domain = this.domain(t, v, x => go(x), locals);
                const parts = domain.map(d => this.sym(inner, locals, read, new Map([...bound, [v.name, d]])));
                return t.q === 'forall' ? T.and(...parts) : T.or(...parts);
            }
        }
    }

    private domain(t: Extract<Term, { t: 'quant' }>, v: { name: string; sort: Sort; type?: string }, go: (x: Term) => Term, locals: ReadonlyMap<string, Term>): Term[] {
        if (v.sort === 'Bool') return [T.FALSE, T.TRUE];
        if (v.sort === 'Ref') {
            const type = v.type ? typeOfKey(v.type) : undefined;
            const id = type ? this.bp.ctx.vocab.typeId(type) : undefined;
            // the objects of the initializers and the thread's own (the others': bookkeeping() publishes them)
            const own = new Set(this.ownRefs(locals));
            return [T.int(0), ...this.types.filter(x => (x.ref <= this.initRefMax || own.has(x.ref)) && (id === undefined || x.type === id)).map(x => T.int(x.ref))];
        }
        const { lo, hi } = quantIntBounds(t, v.name, x => { try { const k = go(x); return k.t === 'int' ? k.value : undefined; } catch { return undefined; } });
        if (lo === undefined || hi === undefined || hi - lo > 1000n) throw new WitnessUnsupported('a quantifier over int whose range is not a small constant one');
        const out: Term[] = [];
        for (let i = lo; i <= hi; i++) out.push(T.int(i));
        return out;
    }

    /** A term at a point in time of an event: its locals, and reads in the given states. */
    symAt(e: SymEvent, t: Term, states: (s: string | undefined) => TimePoint, locals: ReadonlyMap<string, Term> = e.locals): Term {
        return this.sym(t, locals, (map, keys, s) => (BOOKKEEPING.has(map) ? this.ownRead(map, keys[0], locals) : this.readAt(map, keys, states(s))), new Map());
    }

    /**
     * OWNER and LINKED of an object: the thread's own allocations carry them
     * in its state (pseudo-locals `own!r`, `lnk!r`: only the allocating thread
     * changes them, by publishing or linking), the others as in bookkeeping().
     */
    private ownRead(map: string, key: Term, locals: ReadonlyMap<string, Term>): Term {
        const prefix = map === OWNER ? OWN : map === LINKED ? LNK : undefined;
        if (!prefix) return this.bookkeeping(map, key);
        if (key.t === 'int') return locals.get(`${prefix}${key.value}`) ?? this.bookkeeping(map, key);
        let v = this.bookkeeping(map, key);
        for (const [name, value] of locals) {
            if (name.startsWith(prefix)) v = T.ite(T.eq(key, T.int(BigInt(name.slice(prefix.length)))), value, v);
        }
        return v;
    }

    /** The thread's own allocations (their references), from its state. */
    private ownRefs(locals: ReadonlyMap<string, Term>): bigint[] {
        return [...locals.keys()].filter(k => k.startsWith(OWN)).map(k => BigInt(k.slice(OWN.length)));
    }

    // ------------------------------------------------------------ unrolling

    private thread!: ThreadInstance;
    private threadEvents!: SymEvent[];
    private idx = 0;
    private pending = new Map<string, State[]>();
    private calls: number[] = [];

    private unrollThread(t: ThreadInstance): void {
        this.thread = t;
        this.threadEvents = [];
        this.byThread.push(this.threadEvents);
        this.idx = 0;
        this.pending = new Map();
        this.calls = [];
        this.cmds(t.body, { guard: T.TRUE, locals: new Map() });
    }

    private event(point: EventPoint, s: State): SymEvent {
        if (this.events.length >= MAX_EVENTS) throw new WitnessUnsupported(`the program within the bounds has more than ${MAX_EVENTS} steps; lower the bounds`);
        const guard = this.define('g', s.guard);
        const e: SymEvent = {
            id: this.events.length, thread: this.thread, idx: this.idx++, point, guard, locals: new Map(s.locals),
            writes: [], footprint: [], blocks: [], asserts: [], calls: [...this.calls],
        };
        this.events.push(e);
        this.threadEvents.push(e);
        return e;
    }

    private cmds(cmds: Cmd[], s: State): State {
        for (const c of cmds) {
            if (isFalse(s.guard)) return s;
            s = this.cmd(c, s);
        }
        return s;
    }

    private pre(e: SymEvent): TimePoint {
        return { event: e, phase: 'pre' };
    }

    private cmd(c: Cmd, s: State): State {
        const ev = (t: Term, st: State = s) => this.sym(t, st.locals, (map, keys) => this.finalRead(map, keys));
        switch (c.k) {
            case 'op': return this.op(c.op, s);
            case 'checkLocal': case 'checkState': case 'assumeState': {
                const e = this.event({ k: 'check', cmd: c }, s);
                const cond = () => this.symAt(e, c.cond, st => { if (st !== undefined) throw new WitnessUnsupported(`a check in state ${st}`); return this.pre(e); });
                if (c.k === 'assumeState') e.blocks.push(cond());
                // a check that does not stop the thread (a callee's requires) is encoded only when it is the failure searched for
                else if (FATAL_CODES.has(c.check.code)) e.asserts.push({ check: c.check, cond: cond(), when: T.TRUE, pos: 0 });
                else {
                    let memo: Term | undefined;
                    e.asserts.push({ check: c.check, get cond() { return memo ??= cond(); }, when: T.TRUE, pos: 0 });
                }
                return s;
            }
            case 'local': {
                const locals = new Map(s.locals);
                locals.set(c.var, this.define('l', ev(c.value)));
                return { ...s, locals };
            }
            case 'havocLocal': {
                const locals = new Map(s.locals);
                for (const v of c.vars) locals.set(v, this.nondet(s.guard));
                return { ...s, locals };
            }
            case 'assumeLocal': return { ...s, guard: this.define('g', T.and(s.guard, ev(c.cond))) };
            case 'snapshot': return s;
            case 'if': {
                const cond = this.define('c', ev(c.cond));
                const a = this.cmds(c.then, { ...s, guard: T.and(s.guard, cond) });
                const b = this.cmds(c.else, { ...s, guard: T.and(s.guard, T.not(cond)) });
                return this.merge([a, b]);
            }
            case 'loop': {
                const instance = this.loopInstances++;
                let cur = s;
                // `loops` iterations, and one more pass for the test that leaves the loop after them
                // (its path on past the end of the body is cut like any other)
                for (let i = 0; i <= this.bp.bounds.loops && !isFalse(cur.guard); i++) {
                    if (headIsPoint(c)) this.event({ k: 'head', loop: c, iteration: i, instance }, cur);
                    cur = this.cmds(c.body, cur);
                }
                // still looping after the bound: the thread goes no further within the bounds
                if (!isFalse(cur.guard)) this.loopCut = true;
                return this.merge(this.take(c.label));
            }
            case 'break': this.exit(c.label, s); return { ...s, guard: T.FALSE };
            case 'continue': this.exit(c.label, s); return { ...s, guard: T.FALSE };
            case 'exit': this.exit(c.label, { ...s, exitRange: c.range }); return { ...s, guard: T.FALSE };
            case 'scope': {
                const body = this.bp.inlined.get(c);
                let instance = -1;
                if (body) {
                    instance = this.callInstances++;
                    this.event({ k: 'call', body, instance }, s);
                    this.calls.push(instance);
                }
                const end = this.cmds(c.body, s);
                const exits = [end, ...this.take(c.label)];
                // (the range of the `return` that left this scope is this scope's, not the enclosing method's)
                if (!body) return this.merge(exits.map(x => ({ ...x, exitRange: undefined })));
                this.calls.pop();
                for (const x of exits) {
                    if (isFalse(x.guard)) continue;
                    this.event({ k: 'return', body, range: x.exitRange ?? body.method.endRange, instance }, x);
                }
                return this.merge(exits.map(x => ({ ...x, exitRange: undefined })));
            }
        }
    }

    private exit(label: string, s: State): void {
        if (isFalse(s.guard)) return;
        const list = this.pending.get(label) ?? [];
        list.push(s);
        this.pending.set(label, list);
    }

    private take(label: string): State[] {
        const list = this.pending.get(label) ?? [];
        this.pending.delete(label);
        return list;
    }

    private nondet(guard: Term): Term {
        const c = this.fresh('nd', 'Bool');
        this.havocs.push({ name: (c as { name: string }).name, thread: this.thread.index, order: this.havocs.length, guard: this.define('g', guard) });
        return c;
    }

    /** One state from several disjoint paths. */
    private merge(states: State[]): State {
        const live = states.filter(x => !isFalse(x.guard));
        if (live.length === 0) return { guard: T.FALSE, locals: states[0]?.locals ?? new Map() };
        if (live.length === 1) return live[0];
        const guard = this.define('g', T.or(...live.map(x => x.guard)));
        const locals = new Map<string, Term>();
        const names = new Set(live.flatMap(x => [...x.locals.keys()]));
        for (const n of names) {
            const having = live.filter(x => x.locals.has(n));
            const values = having.map(x => x.locals.get(n)!);
            if (values.every(v => T.sameTerm(v, values[0]))) { locals.set(n, values[0]); continue; }
            let t = values[values.length - 1];
            for (let i = values.length - 2; i >= 0; i--) t = T.ite(having[i].guard, values[i], t);
            locals.set(n, this.define('m', t));
        }
        return { guard, locals };
    }

    // ------------------------------------------------------------ operations

    private op(op: AtomicOp, s: State): State {
        const e = this.event({ k: 'op', op }, s);
        const locals = new Map(s.locals);
        const alloc = op.kind === 'alloc';
        const overlay: Array<{ map: string; keys: Term[]; value: Term; when: Term }> = [];
        let when: Term = T.TRUE;
        const read = (map: string, keys: Term[], state: string | undefined): Term => {
            if (state === OP_PRE) return this.readAt(map, keys, this.pre(e));
            if (state !== undefined) throw new WitnessUnsupported(`a read of state ${state} in an operation`);
            if (BOOKKEEPING.has(map)) return this.ownRead(map, keys[0], locals);
            e.footprint.push({ map, keys, write: false, when });
            let v = this.readAt(map, keys, this.pre(e));
            for (const o of overlay) if (o.map === map) v = T.ite(T.and(o.when, keysEqual(o.keys, keys)), o.value, v);
            return v;
        };
        const ev = (t: Term) => this.sym(t, locals, read);
        const exec = (cmds: OpCmd[], inner: Term): void => {
            for (const c of cmds) {
                when = inner;
                switch (c.k) {
                    case 'assume': {
                        if (alloc) { this.allocFacts(e, c.cond, ev); break; }
                        if (isHeapFact(c.cond)) break;
                        e.blocks.push(T.implies(inner, ev(c.cond)));
                        break;
                    }
                    case 'assert': e.asserts.push({ check: c.check, cond: this.define('a', ev(c.cond)), when: inner, pos: e.asserts.length }); break;
                    case 'local': locals.set(c.var, this.define('l', ev(c.value))); break;
                    case 'havocLocal':
                        for (const v of c.vars) {
                            if (alloc && op.fresh?.some(f => f.t === 'var' && f.name === v)) {
                                e.allocRef = this.nextRef++;
                                locals.set(v, T.int(e.allocRef));
                                if (this.bp.ctx.vocab.has(OWNER)) { locals.set(`${OWN}${e.allocRef}`, T.int(0)); locals.set(`${LNK}${e.allocRef}`, T.FALSE); }
                            } else locals.set(v, this.nondet(T.and(s.guard, inner)));
                        }
                        break;
                    case 'store': {
                        if (c.map === OWNER || c.map === LINKED) {
                            // (only the thread's own objects: the others' stay as bookkeeping() says)
                            const key = ev(c.keys[0]), value = ev(c.value);
                            const prefix = c.map === OWNER ? OWN : LNK;
                            for (const r of this.ownRefs(locals)) {
                                const hit = T.and(inner, T.eq(key, T.int(r)));
                                if (hit.t === 'bool' && !hit.value) continue;
                                locals.set(`${prefix}${r}`, this.define('o', T.ite(hit, value, locals.get(`${prefix}${r}`)!)));
                            }
                            break;
                        }
                        if (alloc || BOOKKEEPING.has(c.map)) break;
                        const keys = c.keys.map(k => this.define('k', ev(k)));
                        const value = this.define('w', ev(c.value));
                        const w: SymWrite = { event: e, pos: e.writes.length, map: c.map, keys, value, when: inner };
                        e.writes.push(w);
                        this.writes.push(w);
                        e.footprint.push({ map: c.map, keys, write: true, when: inner });
                        overlay.push({ map: c.map, keys, value, when: inner });
                        break;
                    }
                    case 'update':
                        if (c.map === OWNER && c.params.length === 1) {
                            // publication: each of the thread's own objects, with the update's parameter bound to it
                            const next = this.ownRefs(locals).map(r => [r, this.sym(c.value, locals, read, new Map([[c.params[0].name, T.int(r)]]))] as const);
                            for (const [r, v] of next) locals.set(`${OWN}${r}`, this.define('o', T.ite(inner, v, locals.get(`${OWN}${r}`)!)));
                            break;
                        }
                        if (c.map === OWNER || c.map === LINKED || (alloc && this.bp.ctx.vocab.stateVar(c.map).kind === 'elems')) break;
                        throw new WitnessUnsupported(`an update of ${c.map} in the real program`);
                    case 'havocMap': throw new WitnessUnsupported('an abstraction step in the real program');
                    case 'if': {
                        const cond = this.define('c', ev(c.cond));
                        const before = new Map(locals);
                        exec(c.then, T.and(inner, cond));
                        const afterThen = new Map(locals);
                        locals.clear();
                        for (const [k, v] of before) locals.set(k, v);
                        exec(c.else, T.and(inner, T.not(cond)));
                        for (const k of new Set([...afterThen.keys(), ...locals.keys()])) {
                            const a = afterThen.get(k), b = locals.get(k);
                            if (a && b && !T.sameTerm(a, b)) locals.set(k, this.define('m', T.ite(cond, a, b)));
                            else if (a && !b) locals.set(k, a);
                        }
                        break;
                    }
                }
            }
        };
        exec(op.body, T.TRUE);
        e.localsAfter = new Map(locals);
        return { ...s, locals };
    }

    /** An allocation: its reference's type and length (the lowering's assumptions about the new object). */
    private allocFacts(e: SymEvent, cond: Term, ev: (t: Term) => Term): void {
        const conj = T.conjuncts(cond);
        for (const c of conj) {
            if (c.t !== 'app' || c.fn !== '=' || c.args.length !== 2) continue;
            const [l, r] = c.args;
            if (l.t !== 'app' || e.allocRef === undefined) continue;
            if (l.fn === DTYPE && r.t === 'int') { e.allocType = Number(r.value); this.types.push({ ref: e.allocRef, type: Number(r.value) }); }
            if (l.fn === LEN) this.lengths.push({ ref: e.allocRef, len: this.define('len', ev(r)) });
        }
    }
}

/** The state variables the threads' operations store into (allocation and bookkeeping aside). */
function collectWritten(cmds: Cmd[], out: Set<string>): void {
    const inOp = (cs: OpCmd[]) => {
        for (const c of cs) {
            if (c.k === 'store' && !BOOKKEEPING.has(c.map)) out.add(c.map);
            else if (c.k === 'if') { inOp(c.then); inOp(c.else); }
        }
    };
    for (const c of cmds) {
        if (c.k === 'op' && c.op.kind !== 'alloc') inOp(c.op.body);
        else if (c.k === 'if') { collectWritten(c.then, out); collectWritten(c.else, out); }
        else if (c.k === 'loop' || c.k === 'scope') collectWritten(c.body, out);
    }
}

export function keysEqual(a: Term[], b: Term[]): Term {
    return T.and(...a.map((k, i) => T.eq(k, b[i])));
}

function isFalse(t: Term): boolean {
    return t.t === 'bool' && !t.value;
}

/** References are integers in the search. */
export function smtSort(s: Sort): Sort {
    return s === 'Ref' ? 'Int' : s;
}

function mkApp(fn: string, args: Term[], sort: Sort): Term {
    switch (fn) {
        case 'and': return T.and(...args);
        case 'or': return T.or(...args);
        case 'not': return T.not(args[0]);
        case '=>': return T.implies(args[0], args[1]);
        case '=': return T.eq(args[0], args[1]);
        case 'ite': return T.ite(args[0], args[1], args[2]);
        case '+': case '*': return args.length === 2 ? T.arith(fn, args[0], args[1]) : { t: 'app', fn, args, sort: 'Int' };
        case '-': return args.length === 2 ? T.arith('-', args[0], args[1]) : T.neg(args[0]);
        case '<': case '<=': case '>': case '>=': return T.cmp(fn, args[0], args[1]);
        default: return { t: 'app', fn, args, sort: smtSort(sort) };
    }
}

export type { Value };

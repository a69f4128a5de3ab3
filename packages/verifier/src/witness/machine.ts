import type { Range } from '../model/program.js';
import type { AtomicOp, CheckInfo, Cmd, OpCmd } from '../il/il.js';
import type { InlinedBody } from '../lower/lower.js';
import { ALLOC, DTYPE, LEN, LINKED, MADE_AT, MADE_BY, OWNER } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import type { BoundedProgram, ThreadInstance } from './program.js';
import { Heap, type Value } from './heap.js';
import { evalTerm, type EvalEnv } from './eval.js';
import { callContext, ensuresConditions, nextPositionSet, stepConditions, W_OLD, W_PRE, type StepWrite } from './simulation.js';
import { FATAL_CODES, WitnessUnsupported } from './types.js';

/**
 * The concrete interpreter of the bounded program (issue 14): the ground
 * truth every witness is replayed on. It runs the same intermediate language
 * as the checker (il/), one atomic operation at a time, on concrete values:
 * integers as BigInt, booleans, references to a finite heap, monitors'
 * holders. A thread runs its local computation on its own and stops at the
 * next *point*: an atomic operation, a check or assumption written in the
 * program, the head of a loop with a written invariant, and the entry and
 * return of an inlined method with an abstraction (where the simulation by
 * the abstraction is followed). The search (unroll.ts) numbers exactly the
 * same points, so a schedule is a list of "thread t takes its next point".
 */
export type Point =
    | { k: 'op'; op: AtomicOp }
    | { k: 'check'; cmd: Extract<Cmd, { k: 'checkLocal' | 'checkState' | 'assumeState' }> }
    | { k: 'head'; loop: Extract<Cmd, { k: 'loop' }>; iteration: number }
    | { k: 'call'; body: InlinedBody }
    | { k: 'return'; body: InlinedBody; range: Range }
    /** The thread can never go on (an `assume` on locals that is false, a call deeper than the bound). */
    | { k: 'stuck' }
    | { k: 'end' };

/** Whether a loop's head is a point (it has written invariants). */
export function headIsPoint(loop: Extract<Cmd, { k: 'loop' }>): boolean {
    return loop.invariants.length > 0;
}

/** State variables of the checker's bookkeeping (allocation and privacy), not of the program. */
export const BOOKKEEPING_MAPS = new Set([ALLOC, OWNER, LINKED]);

/** Whether a condition is one of the checker's facts about the heap model (typing, privacy), true of every real heap. */
export function isHeapFact(t: Term): boolean {
    let found = false;
    T.rewrite(t, x => {
        if ((x.t === 'read' && BOOKKEEPING_MAPS.has(x.map)) || (x.t === 'app' && (x.fn === DTYPE || x.fn === MADE_BY || x.fn === MADE_AT))) found = true;
        return undefined;
    });
    return found;
}

/** A read or a write of a step, for the trace. */
export interface Access {
    map: string;
    keys: Value[];
    value: Value;
    /** For a write: the value before. */
    old?: Value;
    write: boolean;
}

/** The simulation of an inlined method by its abstraction, followed concretely. */
export interface CallState {
    body: InlinedBody;
    old: Heap;
    positions: Set<number>;
    /** The step after which no position was left (the first one). */
    failedAt?: AtomicOp;
}

/** What happened when a thread took its point. */
export interface StepOutcome {
    thread: number;
    point: Point;
    status: 'ok' | 'failed' | 'blocked' | 'stuck';
    /** The check that failed (status 'failed'). */
    failed?: CheckInfo;
    accesses: Access[];
    /** The stores before and after (ops). */
    pre?: Heap;
    post?: Heap;
    /** For a return: the call that returns (its simulation state). */
    call?: CallState;
    /** A condition of the heap model that did not hold (a mismatch between the checker's model and this run). */
    mismatch?: string;
    /** The values the failed check shows (`index`, `length`, `divisor`...). */
    shown?: Array<{ name: string; value: Value; ref: boolean }>;
}

/** Whether a thread goes on after the step (it succeeded, or only a check that does not stop it failed). */
export function goesOn(s: StepOutcome): boolean {
    return s.status === 'ok' || (s.status === 'failed' && s.point.k === 'check' && !FATAL_CODES.has(s.failed!.code));
}

/** The run of the field initializers (the store `Init`). */
export interface InitRun {
    /** The store after them (when they fail, the store where they stopped). */
    heap: Heap;
    /** Their operations, in order (for the trace). */
    steps: StepOutcome[];
    /** Every step that failed a check, with the number of operations before it (`steps.slice(0, before)`). */
    failures: Array<{ outcome: StepOutcome; before: number }>;
    /** Simulation failures of the methods with an abstraction they call (a step no abstraction step matches). */
    simulation: Array<{ outcome: StepOutcome; before: number; call: CallState }>;
    /** The returns of those methods (their simulation state at the return), with the `ensures` false there. */
    returns: Array<{ outcome: StepOutcome; before: number; ensuresFailed: string[] }>;
    /** The failure that stopped them (a fatal check): no thread starts. */
    aborted?: StepOutcome;
    /** The interpreter that ran them (to evaluate at their steps). */
    machine: Machine;
}

/** The values a failed check names, in the state where it failed. */
function shownValues(check: CheckInfo, env: EvalEnv): Array<{ name: string; value: Value; ref: boolean }> {
    const out: Array<{ name: string; value: Value; ref: boolean }> = [];
    for (const [name, t] of check.show ?? []) {
        try { out.push({ name, value: evalTerm(t, { ...env, onRead: undefined }), ref: T.sortOf(t) === 'Ref' }); } catch { /* not evaluable here */ }
    }
    return out;
}

interface Running {
    inst: ThreadInstance;
    locals: Map<string, Value>;
    gen: Generator<Point, void, void>;
    pending: Point;
    nondet: boolean[];
    calls: CallState[];
    snapshots: Map<string, Heap>;
}

type Signal = { k: 'normal' } | { k: 'break'; label: string } | { k: 'exit'; label: string; range?: Range };

const LOCAL_STEPS = 200_000;

class Stop extends Error { }

export class Machine {
    heap: Heap;
    readonly threads: Running[] = [];
    /** Failures of the simulation of inlined methods by their abstractions, in order. */
    readonly simulationFailures: Array<{ thread: number; call: CallState; op: AtomicOp }> = [];
    /** The field initializers' run (Machine.initial): not one of the threads. */
    private initRun?: Running;

    constructor(readonly bp: BoundedProgram, initial: Heap, nondet: boolean[][] = []) {
        this.heap = initial.clone();
        for (const inst of bp.threads) {
            const r: Running = { inst, locals: new Map(), gen: undefined as never, pending: { k: 'end' }, nondet: [...(nondet[inst.index] ?? [])], calls: [], snapshots: new Map() };
            r.gen = this.run(r, inst.body);
            this.threads.push(r);
            this.advance(r);
        }
    }

    /** The store after the field initializers (and their steps, for the trace); a failed check is recorded, a fatal one stops them. */
    static initial(bp: BoundedProgram): InitRun {
        const m = new Machine({ ...bp, threads: [] }, new Heap(bp.ctx.vocab));
        const inst: ThreadInstance = { index: -1, name: 'init', model: undefined as never, tid: 0, body: bp.init };
        const r: Running = { inst, locals: new Map(), gen: undefined as never, pending: { k: 'end' }, nondet: [], calls: [], snapshots: new Map() };
        m.initRun = r;
        r.gen = m.run(r, bp.init);
        m.advance(r);
        const out: InitRun = { heap: m.heap, steps: [], failures: [], simulation: [], returns: [], machine: m };
        while (r.pending.k !== 'end') {
            const failuresBefore = m.simulationFailures.length;
            const s = m.take(r);
            const before = out.steps.length;
            if (s.status === 'failed') out.failures.push({ outcome: s, before });
            for (const f of m.simulationFailures.slice(failuresBefore)) out.simulation.push({ outcome: s, before, call: f.call });
            if (s.point.k === 'return' && s.call) out.returns.push({ outcome: s, before, ensuresFailed: m.failingEnsures(-1, s.call) });
            if (!goesOn(s)) {
                if (s.status === 'failed') { out.aborted = s; break; }
                throw new WitnessUnsupported(`the field initializers do not run to their end (${s.status})`);
            }
            if (s.point.k === 'op') out.steps.push(s);
        }
        out.heap = m.heap;
        return out;
    }

    pending(t: number): Point {
        return this.threads[t].pending;
    }

    locals(t: number): ReadonlyMap<string, Value> {
        return this.running(t).locals;
    }

    /** Thread t takes its pending point. */
    step(t: number): StepOutcome {
        return this.take(this.threads[t]);
    }

    /** An environment to evaluate terms of thread t: its locals, the current store, and named stores. */
    env(t: number, states: Record<string, Heap> = {}): EvalEnv {
        return this.envOf(this.running(t), states);
    }

    private running(t: number): Running {
        return t === -1 && this.initRun ? this.initRun : this.threads[t];
    }

    private envOf(r: Running, states: Record<string, Heap> = {}): EvalEnv {
        return { locals: r.locals, heap: s => (s === undefined ? this.heap : states[s] ?? r.snapshots.get(s) ?? fail(`no state ${s}`)) };
    }

    /**
     * What an operation would access if thread t took it now (a dry run on a
     * copy): for races, the locations two pending operations touch.
     */
    dryRun(t: number): StepOutcome {
        const r = this.threads[t];
        const saved = { heap: this.heap, locals: new Map(r.locals), nondet: [...r.nondet], calls: r.calls, failures: this.simulationFailures.length };
        this.heap = this.heap.clone();
        r.calls = r.calls.map(c => ({ ...c, positions: new Set(c.positions) }));
        try {
            const p = r.pending;
            return p.k === 'op' ? this.execOp(r, p.op) : { thread: r.inst.index, point: p, status: 'ok', accesses: [] };
        } finally {
            this.heap = saved.heap;
            r.locals.clear();
            for (const [k, v] of saved.locals) r.locals.set(k, v);
            r.nondet = saved.nondet;
            r.calls = saved.calls;
            this.simulationFailures.length = saved.failures;
        }
    }

    // ------------------------------------------------------------ taking a point

    private take(r: Running): StepOutcome {
        const p = r.pending;
        let out: StepOutcome;
        switch (p.k) {
            case 'op': out = this.execOp(r, p.op); break;
            case 'check': out = this.execCheck(r, p.cmd); break;
            case 'head': out = { thread: r.inst.index, point: p, status: 'ok', accesses: [] }; break;
            case 'call': {
                r.calls.push({ body: p.body, old: this.heap.clone(), positions: new Set([0]) });
                out = { thread: r.inst.index, point: p, status: 'ok', accesses: [] };
                break;
            }
            case 'return': {
                const call = r.calls.pop();
                if (!call || call.body !== p.body) throw new Error('witness interpreter: unbalanced calls');
                out = { thread: r.inst.index, point: p, status: 'ok', accesses: [], call };
                break;
            }
            case 'stuck': return { thread: r.inst.index, point: p, status: 'stuck', accesses: [] };
            case 'end': return { thread: r.inst.index, point: p, status: 'stuck', accesses: [] };
        }
        if (goesOn(out)) this.advance(r);
        return out;
    }

    private advance(r: Running): void {
        try {
            const n = r.gen.next();
            r.pending = n.done ? { k: 'end' } : n.value;
        } catch (e) {
            if (e instanceof Stop) r.pending = { k: 'stuck' };
            else throw e;
        }
    }

    private execCheck(r: Running, c: Extract<Cmd, { k: 'checkLocal' | 'checkState' | 'assumeState' }>): StepOutcome {
        const accesses: Access[] = [];
        const env: EvalEnv = { ...this.envOf(r), onRead: (map, keys, value) => { if (!BOOKKEEPING_MAPS.has(map)) accesses.push({ map, keys, value, write: false }); } };
        const ok = evalTerm(c.cond, env) === true;
        const point: Point = { k: 'check', cmd: c };
        if (ok) return { thread: r.inst.index, point, status: 'ok', accesses };
        if (c.k === 'assumeState') return { thread: r.inst.index, point, status: 'blocked', accesses };
        return { thread: r.inst.index, point, status: 'failed', failed: c.check, accesses, shown: shownValues(c.check, env) };
    }

    private execOp(r: Running, op: AtomicOp): StepOutcome {
        const pre = this.heap.clone();
        const work = this.heap.clone();
        const locals = new Map(r.locals);
        const accesses: Access[] = [];
        const writes: StepWrite[] = [];
        const point: Point = { k: 'op', op };
        const out: StepOutcome = { thread: r.inst.index, point, status: 'ok', accesses, pre };
        const env: EvalEnv = {
            locals, heap: s => (s === undefined ? work : s === 'op~pre' ? pre : r.snapshots.get(s) ?? fail(`no state ${s}`)),
            onRead: (map, keys, value, state) => { if (state === undefined && !BOOKKEEPING_MAPS.has(map)) accesses.push({ map, keys, value, write: false }); },
        };
        const ev = (t: Term) => evalTerm(t, env);
        const alloc = op.kind === 'alloc';
        const exec = (cmds: OpCmd[]): boolean => {
            for (const c of cmds) {
                switch (c.k) {
                    case 'assume': {
                        if (alloc) allocFacts(c.cond, work, env);
                        // (an allocation's facts read the heap, they are not accesses of the program)
                        if ((alloc ? evalTerm(c.cond, { ...env, onRead: undefined }) : ev(c.cond)) === true) break;
                        if (isHeapFact(c.cond) || alloc) out.mismatch = `a fact of the heap model does not hold in ${op.label ?? op.kind}`;
                        out.status = 'blocked';
                        return false;
                    }
                    case 'assert':
                        if (ev(c.cond) !== true) { out.status = 'failed'; out.failed = c.check; out.shown = shownValues(c.check, env); return false; }
                        break;
                    case 'local': locals.set(c.var, ev(c.value)); break;
                    case 'havocLocal':
                        for (const v of c.vars) {
                            if (alloc && op.fresh?.some(f => f.t === 'var' && f.name === v)) locals.set(v, work.fresh());
                            else locals.set(v, this.choice(r));
                        }
                        break;
                    case 'store': {
                        const keys = c.keys.map(ev);
                        const value = ev(c.value);
                        const old = work.get(c.map, keys);
                        work.set(c.map, keys, value);
                        if (!BOOKKEEPING_MAPS.has(c.map) && !alloc) {
                            accesses.push({ map: c.map, keys, value, old, write: true });
                            writes.push({ map: c.map, keys: keys.map(constant), when: T.TRUE });
                        }
                        break;
                    }
                    case 'update': {
                        // a fresh array's elements start at their default: nothing to do
                        if (alloc && work.vocab.stateVar(c.map).kind === 'elems') break;
                        if (c.params.some(p => p.sort !== 'Ref')) throw new WitnessUnsupported(`an update of ${c.map} over integers`);
                        const refs = [0n, ...work.allocated()];
                        const tuples = c.params.reduce<Value[][]>((acc) => acc.flatMap(t => refs.map(x => [...t, x])), [[]]);
                        const values = tuples.map(tu => evalTerm(c.value, { ...env, bound: new Map(c.params.map((p, i) => [p.name, tu[i]])) }));
                        tuples.forEach((tu, i) => work.set(c.map, tu, values[i]));
                        break;
                    }
                    case 'havocMap': throw new WitnessUnsupported('an abstraction step in the real program');
                    case 'if':
                        if (!exec(ev(c.cond) === true ? c.then : c.else)) return false;
                        break;
                }
            }
            return true;
        };
        if (!exec(op.body)) return out;
        // commit
        this.heap = work;
        for (const [k, v] of locals) r.locals.set(k, v);
        out.post = work;
        this.followSimulation(r, op, pre, writes);
        return out;
    }

    /** The positions of the abstractions of the methods the thread is in, after one of its steps. */
    private followSimulation(r: Running, op: AtomicOp, pre: Heap, writes: StepWrite[]): void {
        if (r.calls.length === 0 || op.kind === 'alloc') return;
        const vocab = this.bp.ctx.vocab;
        const tid = T.int(r.inst.tid);
        for (const call of r.calls) {
            if (call.positions.size === 0) continue;
            const ctx = callContext(vocab, call.body, tid);
            const priv = (o: Term) => T.or(T.not(T.read(ALLOC, [o], 'Bool', W_PRE)), T.eq(T.read(OWNER, [o], 'Int', W_PRE), tid));
            // (`witness step N` marks a step of the innermost method with an abstraction)
            const witness = call === r.calls[r.calls.length - 1] ? op.witness : undefined;
            const c = stepConditions(vocab, call.body, ctx, writes, vocab.has(ALLOC) ? priv : () => T.FALSE, witness);
            const env = this.envOf(r, { [W_PRE]: pre, [W_OLD]: call.old });
            const n = call.body.method.abstraction!.steps.length;
            call.positions = nextPositionSet(call.positions, n, j => evalTerm(c.steps[j - 1], env) === true, evalTerm(c.stutter, env) === true);
            if (call.positions.size === 0) {
                call.failedAt = op;
                this.simulationFailures.push({ thread: r.inst.index, call, op });
            }
        }
    }

    /** The `ensures` of a returning call that do not hold (current state; `\old` at the call). */
    failingEnsures(t: number, call: CallState): string[] {
        const ctx = callContext(this.bp.ctx.vocab, call.body, T.int(this.running(t).inst.tid));
        const env = this.env(t, { [W_OLD]: call.old });
        return ensuresConditions(call.body, ctx).filter(e => evalTerm(e.cond, env) !== true).map(e => e.text);
    }

    private choice(r: Running): boolean {
        // no more choices: the search cut the thread here (a loop at its bound)
        if (r.nondet.length === 0) throw new Stop();
        return r.nondet.shift()!;
    }

    // ------------------------------------------------------------ running local code

    private *run(r: Running, cmds: Cmd[]): Generator<Point, void, void> {
        const budget = { n: 0 };
        yield* this.exec(r, cmds, budget);
    }

    private *exec(r: Running, cmds: Cmd[], budget: { n: number }): Generator<Point, Signal, void> {
        const ev = (t: Term) => evalTerm(t, { locals: r.locals, heap: s => (s === undefined ? this.heap : r.snapshots.get(s) ?? fail(`no state ${s}`)) });
        for (const c of cmds) {
            if (++budget.n > LOCAL_STEPS) throw new Stop();
            switch (c.k) {
                case 'op': yield { k: 'op', op: c.op }; break;
                case 'checkLocal': case 'checkState': case 'assumeState': yield { k: 'check', cmd: c }; break;
                case 'local': r.locals.set(c.var, ev(c.value)); break;
                case 'havocLocal': for (const v of c.vars) r.locals.set(v, this.choice(r)); break;
                case 'assumeLocal':
                    if (ev(c.cond) !== true) { for (;;) yield { k: 'stuck' }; }
                    break;
                case 'snapshot': r.snapshots.set(c.name, this.heap.clone()); break;
                case 'if': {
                    const s = yield* this.exec(r, ev(c.cond) === true ? c.then : c.else, budget);
                    if (s.k !== 'normal') return s;
                    break;
                }
                case 'loop': {
                    for (let i = 0; ; i++) {
                        if (++budget.n > LOCAL_STEPS) throw new Stop();
                        if (headIsPoint(c)) yield { k: 'head', loop: c, iteration: i };
                        const s = yield* this.exec(r, c.body, budget);
                        if (s.k === 'break' && s.label === c.label) break;
                        if (s.k !== 'normal') return s;
                    }
                    break;
                }
                case 'break': return { k: 'break', label: c.label };
                case 'continue': return { k: 'exit', label: c.label };
                case 'exit': return { k: 'exit', label: c.label, range: c.range };
                case 'scope': {
                    const body = this.bp.inlined.get(c);
                    if (body) yield { k: 'call', body };
                    const s = yield* this.exec(r, c.body, budget);
                    if (s.k === 'exit' && s.label === c.label) {
                        if (body) yield { k: 'return', body, range: s.range ?? body.method.endRange };
                        break;
                    }
                    if (s.k !== 'normal') return s;
                    if (body) yield { k: 'return', body, range: body.method.endRange };
                    break;
                }
            }
        }
        return { k: 'normal' };
    }
}

/** A replay that does not follow its witness (a bug of the search). */
export class ReplayMismatch extends Error { }

function fail(message: string): never {
    throw new Error(`witness interpreter: ${message}`);
}

function constant(v: Value): Term {
    return typeof v === 'boolean' ? T.bool(v) : T.int(v);
}

/** In an allocation, the new object's dynamic type and length, from the lowering's assumptions about it. */
function allocFacts(cond: Term, heap: Heap, env: EvalEnv): void {
    const conj = T.conjuncts(cond);
    for (const c of conj) {
        if (c.t !== 'app' || c.fn !== '=' || c.args.length !== 2) continue;
        const [l, r] = c.args;
        if (l.t === 'app' && (l.fn === DTYPE || l.fn === LEN)) {
            const ref = evalTerm(l.args[0], env) as bigint;
            const v = evalTerm(r, env) as bigint;
            if (l.fn === DTYPE) heap.dtype.set(ref, Number(v));
            else heap.len.set(ref, v);
        }
    }
}

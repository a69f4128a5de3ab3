import type { Clause, Range } from '../model/program.js';
import type { VDiagnostic } from '../report/result.js';
import type { Access, CheckInfo } from '../il/il.js';
import { EPOST, EPRE, guardTerm, mapsOfExpr, relationCtx, stateCtx, type Guard } from '../spec/environment.js';
import { mentionsThis, translate } from '../spec/translate.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import type { InlinedBody } from '../lower/lower.js';
import type { ThreadInstance } from './program.js';
import type { Encoder } from './encode.js';
import { FATAL } from './encode.js';
import { keysEqual, type SymAssert, type SymEvent, type SymProgram, type TimePoint } from './symbolic.js';
import { callContext, ensuresConditions, nextPositions, stepConditions, W_OLD, W_PRE } from './simulation.js';
import { sameRange, WitnessUnsupported } from './types.js';
import { elemsVar, HOLDER, sortOfType, type Vocabulary } from '../heap/vocabulary.js';

/**
 * What a witness must reach for each diagnostic code (issue 14), as
 * candidate failures of the encoding: each is a formula over the events that
 * holds exactly when the failure happens at that event (or pair of events).
 */
export type Candidate =
    /** A check (assert, null, bounds, div-zero, a callee's requires) fails at the event. */
    | { kind: 'check'; event: SymEvent; assert: SymAssert }
    /** Two threads' conflicting accesses are both enabled: the trace stops before `event`, `other` pending too. */
    | { kind: 'race'; event: SymEvent; other: SymEvent }
    /** The write at `event` happens while its writable_if is false. */
    | { kind: 'writable'; event: SymEvent; access: Access; guard: Guard; obj?: Term; owns?: Term }
    | { kind: 'invariant'; event: SymEvent; clause: Clause; className?: string }
    | { kind: 'env'; event: SymEvent; clause: Clause; className?: string; other: ThreadInstance }
    | { kind: 'loop-invariant'; event: SymEvent; text: string }
    /** The method's step at `event` is neither an abstraction step nor a stutter, whatever the witness. */
    | { kind: 'bad-step'; event: SymEvent; body: InlinedBody }
    /** The method returns (at `event`) before all steps of its abstraction happened. */
    | { kind: 'missing-steps'; event: SymEvent; body: InlinedBody }
    | { kind: 'ensures'; event: SymEvent; body: InlinedBody; text: string };

/** What one diagnostic asks for, in the terms of `Candidate`. */
export interface Goal {
    code: VDiagnostic['code'];
    /** Where the failure is (undefined: anywhere, for searches over a whole program). */
    range?: Range;
    /** For invariant/env: the clauses named (by the related information or the message). */
    clauses?: Clause[];
    /** For invariant: the check at a call that the callee's abstraction may assume the invariant (not a step that breaks it). */
    assumed?: boolean;
    /** For abstraction failures: which kind, and the method's name. */
    abstraction?: { kind: 'requires' | 'bad-step' | 'missing-steps' | 'ensures'; method?: string; text?: string };
    /** For loop invariants: entry (iteration 0) or preservation (a later iteration). */
    loopEntry?: boolean;
    /** Only these kinds of race (both by default). */
    raceKinds?: Array<'race' | 'writable'>;
    /** The racy access reads or writes (both when unknown). */
    raceAccess?: 'read' | 'write';
}

/** Goals for every failure anywhere in a program (a correct program has a witness for none of them). */
export function everyFailure(vocab: Vocabulary): Goal[] {
    const program = vocab.program;
    return [
        { code: 'race' }, { code: 'assert' }, { code: 'null' }, { code: 'bounds' }, { code: 'div-zero' },
        { code: 'invariant', clauses: [...program.invariants, ...program.classes.flatMap(c => c.invariants)] },
        { code: 'invariant', assumed: true },
        { code: 'env', clauses: [...program.environments, ...program.classes.flatMap(c => c.environments)] },
        { code: 'loop-invariant' },
        { code: 'abstraction', abstraction: { kind: 'requires' } },
        { code: 'abstraction', abstraction: { kind: 'bad-step' } },
        { code: 'abstraction', abstraction: { kind: 'missing-steps' } },
        { code: 'abstraction', abstraction: { kind: 'ensures' } },
    ];
}

/** The goal of a verifier diagnostic. */
export function goalOf(d: VDiagnostic, vocab: Vocabulary): Goal {
    const goal: Goal = { code: d.code, range: d.range };
    const relatedRanges = d.related.map(r => r.range);
    if (d.code === 'invariant') {
        const all = [...vocab.program.invariants, ...vocab.program.classes.flatMap(c => c.invariants)];
        const text = /invariant '(.*)'/.exec(d.message)?.[1];
        goal.clauses = pick(all, relatedRanges, text);
        if (/ assumes the invariant '/.test(d.message)) goal.assumed = true;
    } else if (d.code === 'env') {
        const all = [...vocab.program.environments, ...vocab.program.classes.flatMap(c => c.environments)];
        const text = /environment assumption '(.*)'/.exec(d.message)?.[1];
        goal.clauses = pick(all, relatedRanges, text);
    } else if (d.code === 'abstraction') {
        const m = d.message;
        if (/the precondition/.test(m)) goal.abstraction = { kind: 'requires' };
        else if (/may return before (all \d+ steps|the step) of its abstraction/.test(m)) goal.abstraction = { kind: 'missing-steps', method: /^'([^']+)'/.exec(m)?.[1] };
        else if (/the postcondition '(.*)' of '([^']+)'/.test(m)) {
            const x = /the postcondition '(.*)' of '([^']+)'/.exec(m)!;
            goal.abstraction = { kind: 'ensures', method: x[2], text: x[1] };
        } else goal.abstraction = { kind: 'bad-step', method: /abstraction of '([^']+)'/.exec(m)?.[1] };
    } else if (d.code === 'loop-invariant') {
        goal.loopEntry = /when the loop is entered/.test(d.message);
    } else if (d.code === 'race') {
        goal.raceKinds = /violates its writable_if/.test(d.message) ? ['writable'] : ['race', 'writable'];
        const rw = /^(read|write) of /.exec(d.message)?.[1];
        if (rw === 'read' || rw === 'write') goal.raceAccess = rw;
    }
    return goal;
}

function pick(all: Clause[], ranges: Range[], text: string | undefined): Clause[] {
    const byRange = all.filter(c => ranges.some(r => sameRange(r, c.range)));
    if (byRange.length > 0) return byRange;
    const byText = text ? all.filter(c => c.text === text) : [];
    return byText.length > 0 ? byText : all;
}

/** For a check of an invariant at a call: it is one of the goal's clauses (a call checks one per invariant). */
export function sameClause(check: CheckInfo, goal: Goal): boolean {
    const r = check.related?.range;
    return check.code !== 'invariant' || !r || !goal.clauses || goal.clauses.some(c => sameRange(c.range, r));
}

/** Whether a range is the goal's (any range, for a goal without one). */
export function inRange(r: Range, goal: Goal): boolean {
    return goal.range === undefined || sameRange(r, goal.range);
}

/** Whether an operation's event stands at the goal's range (its own, or a call that led to it). */
function at(e: SymEvent, goal: Goal): boolean {
    return e.point.k === 'op' && (inRange(e.point.op.range, goal) || e.point.op.chain.some(f => inRange(f.range, goal)));
}

/** Whether an event writes one of the state variables (a step that writes none of a clause's cannot break it). */
function writesAny(e: SymEvent, maps: Set<string>): boolean {
    return e.writes.some(w => maps.has(w.map));
}

const SYNC_KINDS = new Set(['cas', 'atomic', 'enter', 'exit', 'ghost', 'step', 'stutter']);

/** Whether an operation's accesses are synchronization accesses (never racy with each other). */
export function syncOp(e: SymEvent): boolean {
    if (e.point.k !== 'op') return true;
    const op = e.point.op;
    return SYNC_KINDS.has(op.kind) || op.accesses.every(a => a.sync);
}

/**
 * Adds the candidates of a goal to the encoder; returns them by selector
 * index. Throws WitnessUnsupported when the goal names nothing of the program.
 */
export function addCandidates(goal: Goal, sp: SymProgram, enc: Encoder): Candidate[] {
    const out: Candidate[] = [];
    const add = (c: Candidate, formula: Term, relax: SymAssert[] = []) => {
        if (formula.t === 'bool' && !formula.value) return;
        enc.candidate(formula, relax);
        out.push(c);
    };
    const vocab = sp.bp.ctx.vocab;
    const pre = (e: SymEvent): TimePoint => ({ event: e, phase: 'pre' });
    const x = (e: SymEvent) => enc.x(e);
    const events = sp.events;
    // the checks of the goal's code at its range fail
    const addChecks = () => {
        for (const e of events) {
            for (const a of e.asserts) {
                if (a.check.code !== goal.code || !inRange(a.check.range, goal) || !sameClause(a.check, goal)) continue;
                add({ kind: 'check', event: e, assert: a }, T.and(x(e), a.when, T.not(a.cond)), [a]);
            }
        }
    };

    switch (goal.code) {
        case 'invariant':
            // a step that breaks the invariant, or (assumed) the check at a call that it holds
            if (goal.assumed) addChecks();
            else addBroken(goal, sp, enc, add);
            break;
        case 'assert': case 'null': case 'bounds': case 'div-zero': case 'abstraction':
            if (goal.code === 'abstraction' && goal.abstraction?.kind !== 'requires') addSimulation(goal, sp, enc, add);
            else addChecks();
            break;
        case 'race': {
            const kinds = goal.raceKinds ?? ['race', 'writable'];
            for (const e1 of events) {
                if (e1.point.k !== 'op') continue;
                const op = e1.point.op;
                const accesses = op.accesses.filter(a => inRange(a.range, goal) && (goal.raceAccess === undefined || a.write === (goal.raceAccess === 'write')));
                if (accesses.length === 0) continue;
                if (kinds.includes('race') && !syncOp(e1)) {
                    for (const e2 of events) {
                        if (e2.thread === e1.thread || e2.point.k !== 'op') continue;
                        const conflict = conflictTerm(e1, e2, syncOp(e2), vocab);
                        if (conflict.t === 'bool' && !conflict.value) continue;
                        // (both pending in one state: the trace ends before the first of the two, in either order)
                        add({ kind: 'race', event: e1, other: e2 }, T.and(x(e1), x(e2), conflict, T.or(adjacent(e1, e2, enc), adjacent(e2, e1, enc))));
                    }
                }
                if (kinds.includes('writable')) {
                    for (const a of accesses) {
                        if (!a.write) continue;
                        // the store must happen (an atomic block's branch, a successful cas)
                        const stores = e1.writes.filter(w => w.map === writtenMap(a));
                        const performs = stores.length > 0 ? T.or(...stores.map(w => w.when)) : T.TRUE;
                        const locals = e1.localsAfter ?? e1.locals;
                        const published = (t: Term | undefined) => (t ? enc.published(sp.sym(t, locals, () => { throw new WitnessUnsupported('a read in the object of a guarded write'); }), pre(e1)) : T.TRUE);
                        for (const g of guardsOf(a, sp, enc, e1)) {
                            const guard = guardTerm(vocab, g.guard, W_PRE, T.int(e1.thread.tid), g.obj);
                            const cond = sp.symAt(e1, guard, () => pre(e1), locals);
                            const owns = g.owns ? sp.symAt(e1, g.owns, () => pre(e1), locals) : T.TRUE;
                            add({ kind: 'writable', event: e1, access: a, guard: g.guard, obj: g.obj, owns: g.owns }, T.and(x(e1), performs, g.when, owns, T.not(cond), published(writtenObject(a, g.obj))));
                        }
                    }
                }
            }
            break;
        }
        case 'env': {
            for (const e of events) {
                if (!at(e, goal)) continue;
                for (const clause of goal.clauses ?? []) {
                    if (!writesAny(e, mapsOfExpr(clause.expr, vocab))) continue;
                    const className = classOf(sp, clause, 'environments');
                    for (const other of sp.bp.threads) {
                        if (other === e.thread) continue;
                        const rel = relationHolds(sp, enc, e, clause, className, other.tid);
                        add({ kind: 'env', event: e, clause, className, other }, T.and(x(e), T.not(rel)));
                    }
                }
            }
            break;
        }
        case 'loop-invariant': {
            for (const e of events) {
                const p = e.point;
                if (p.k !== 'head') continue;
                for (const inv of p.loop.invariants) {
                    if (!inRange(inv.check.range, goal)) continue;
                    if (goal.loopEntry !== undefined && goal.loopEntry !== (p.iteration === 0)) continue;
                    const cond = (h: SymEvent) => sp.symAt(h, inv.cond, () => pre(h));
                    const earlier = events.filter(h => h.point.k === 'head' && h.point.instance === p.instance && h.point.iteration < p.iteration);
                    add({ kind: 'loop-invariant', event: e, text: inv.text }, T.and(x(e), T.not(cond(e)), ...earlier.map(cond)));
                }
            }
            break;
        }
        default:
            throw new WitnessUnsupported(`no witness search for '${goal.code}' diagnostics`);
    }
    return out;
}

/** A step of a thread that breaks one of the goal's invariant clauses. */
function addBroken(goal: Goal, sp: SymProgram, enc: Encoder, add: (c: Candidate, f: Term, relax?: SymAssert[]) => void): void {
    const vocab = sp.bp.ctx.vocab;
    const pre = (e: SymEvent): TimePoint => ({ event: e, phase: 'pre' });
    const post = (e: SymEvent): TimePoint => ({ event: e, phase: 'post' });
    const x = (e: SymEvent) => enc.x(e);
    for (const e of sp.events) {
        if (!at(e, goal)) continue;
        for (const clause of goal.clauses ?? []) {
            const className = classOf(sp, clause, 'invariants');
            // a step can break an invariant by changing what it mentions, or (a class invariant) by publishing an object
            const publishes = className !== undefined && e.writes.some(w => vocab.sortOfVar(w.map) === 'Ref');
            if (!publishes && !writesAny(e, mapsOfExpr(clause.expr, vocab))) continue;
            const before = clauseHolds(sp, enc, e, clause, className, pre(e));
            const after = clauseHolds(sp, enc, e, clause, className, post(e));
            add({ kind: 'invariant', event: e, clause, className }, T.and(x(e), before, T.not(after)));
        }
    }
}

/** The class whose clause list holds the clause (undefined: top level). */
function classOf(sp: SymProgram, clause: Clause, list: 'invariants' | 'environments'): string | undefined {
    return sp.bp.ctx.vocab.program.classes.find(c => c[list].includes(clause))?.name;
}

/** The objects a class clause ranges over at a point in time (with the condition that they are published then). */
function objectsOf(sp: SymProgram, enc: Encoder, className: string, tp: TimePoint): Array<{ ref: Term; when: Term }> {
    const id = sp.bp.ctx.vocab.typeId({ kind: 'class', name: className });
    return sp.types.filter(t => t.type === id).map(t => {
        const ref = T.int(t.ref);
        return { ref, when: t.ref <= sp.initRefMax ? T.TRUE : enc.published(ref, tp) };
    });
}

/** An invariant at a point in time (for every published object of its class, for a class invariant about `this`). */
export function clauseHolds(sp: SymProgram, enc: Encoder, e: SymEvent, clause: Clause, className: string | undefined, tp: TimePoint): Term {
    const vocab = sp.bp.ctx.vocab;
    const tid = T.int(e.thread.tid);
    const one = (thisTerm?: Term) => sp.symAt(e, translate(clause.expr, stateCtx(vocab, tid, undefined, thisTerm)), () => tp, e.localsAfter ?? e.locals);
    if (!className || !mentionsThis(clause.expr)) return one();
    return T.and(...objectsOf(sp, enc, className, tp).map(o => T.implies(o.when, one(o.ref))));
}

/** Another thread's environment clause over the event's step (for every published object of its class, for a class clause about `this`). */
function relationHolds(sp: SymProgram, enc: Encoder, e: SymEvent, clause: Clause, className: string | undefined, other: number): Term {
    const vocab = sp.bp.ctx.vocab;
    const states = (s: string | undefined): TimePoint => ({ event: e, phase: s === EPOST ? 'post' : 'pre' });
    const one = (thisTerm?: Term) => sp.symAt(e, translate(clause.expr, relationCtx(vocab, T.int(other), thisTerm)), s => states(s === EPRE ? EPRE : s), e.localsAfter ?? e.locals);
    if (!className || !mentionsThis(clause.expr)) return one();
    return T.and(...objectsOf(sp, enc, className, { event: e, phase: 'pre' }).map(o => T.implies(o.when, one(o.ref))));
}

/**
 * The object whose publication makes a guarded write shared: the array, for an
 * element of an array reached through a local (private or not by itself);
 * otherwise the object the guard is at (none for a global).
 */
export function writtenObject(a: Access, guardObj: Term | undefined): Term | undefined {
    return a.loc.kind === 'elem' && !a.loc.via ? a.loc.arr : guardObj;
}

/** The state variable a write access stores into. */
export function writtenMap(a: Access): string {
    return a.loc.kind === 'holder' ? HOLDER : a.loc.map;
}

/**
 * The guards of a guarded write: the field's writable_if, or for an element the
 * guard of the field that owns the array. An array reached through a local is
 * owned by whichever location references it (as the checker's writable check
 * says, sim/simulate.ts): one guard per guarded array field and object of its
 * class, each applying when that location references the array (`owns`, an IL
 * term in state W_PRE over the event's locals; `when`, the object is published).
 */
export function guardsOf(a: Access, sp: SymProgram, enc: Encoder, e: SymEvent): Array<{ guard: Guard; obj?: Term; owns?: Term; when: Term }> {
    const spec = sp.bp.ctx.spec;
    const vocab = sp.bp.ctx.vocab;
    const one = (guard: Guard | undefined, obj?: Term) => (guard ? [{ guard, obj, when: T.TRUE }] : []);
    if (a.loc.kind === 'global' && a.field) return one(spec.guards.get(a.field.id));
    if (a.loc.kind === 'field' && a.field) return one(spec.guards.get(a.field.id), a.loc.obj);
    if (a.loc.kind !== 'elem') return [];
    if (a.loc.via) return one(spec.elementGuards.get(a.loc.via.field.id), a.loc.via.obj);
    const out: Array<{ guard: Guard; obj?: Term; owns?: Term; when: Term }> = [];
    for (const g of spec.elementGuards.values()) {
        const f = g.field;
        if (f.type.kind !== 'array' || elemsVar(sortOfType(f.type.element)) !== a.loc.map) continue;
        const fv = vocab.varOfField(f.id);
        if (f.isStatic) out.push({ guard: g, owns: T.eq(vocab.read(fv, [], W_PRE), a.loc.arr), when: T.TRUE });
        else for (const o of objectsOf(sp, enc, f.owner!, { event: e, phase: 'pre' })) {
            out.push({ guard: g, obj: o.ref, owns: T.eq(vocab.read(fv, [o.ref], W_PRE), a.loc.arr), when: o.when });
        }
    }
    return out;
}

/** Two operations touch the same location, one writing, not both synchronizing. */
function conflictTerm(e1: SymEvent, e2: SymEvent, sync2: boolean, vocab: SymProgram['bp']['ctx']['vocab']): Term {
    if (sync2 && syncOp(e1)) return T.FALSE;
    const parts: Term[] = [];
    for (const f1 of e1.footprint) {
        for (const f2 of e2.footprint) {
            if (f1.map !== f2.map || (!f1.write && !f2.write)) continue;
            if (vocab.stateVar(f1.map).kind === 'holder') continue;
            parts.push(T.and(f1.when, f2.when, keysEqual(f1.keys, f2.keys)));
        }
    }
    return T.or(...parts);
}

/**
 * e1 is the last event of its thread in its segment and e2 the first of its
 * thread in the next one: in the state before e1, both threads are at them.
 */
function adjacent(e1: SymEvent, e2: SymEvent, enc: Encoder): Term {
    return T.and(enc.segNext(e1, e2), enc.lastInSegment(e1), enc.firstInSegment(e2));
}

// ------------------------------------------------------------ simulation by the abstraction

function addSimulation(goal: Goal, sp: SymProgram, enc: Encoder, add: (c: Candidate, f: Term, relax?: SymAssert[]) => void): void {
    const vocab = sp.bp.ctx.vocab;
    const a = goal.abstraction!;
    const calls = sp.events.filter(e => e.point.k === 'call' && (!a.method || e.point.body.method.name === a.method));
    for (const call of calls) {
        const p = call.point as Extract<SymEvent['point'], { k: 'call' }>;
        const body = p.body;
        const n = body.method.abstraction!.steps.length;
        const ctx = callContext(vocab, body, T.int(call.thread.tid));
        const inside = sp.byThread[call.thread.index].filter(e => e.idx > call.idx && e.calls.includes(p.instance) && e.point.k === 'op' && e.point.op.kind !== 'alloc');
        const returns = sp.byThread[call.thread.index].filter(e => e.point.k === 'return' && e.point.instance === p.instance);
        const initial = Array.from({ length: n + 1 }, (_, j) => T.bool(j === 0));
        const after = new Map<SymEvent, Term[]>();
        // the positions just before an event: after the last step of the call taken before it
        const before = (e: SymEvent): Term[] => {
            const earlier = inside.filter(o => o.idx < e.idx);
            let pos = initial;
            for (const o of earlier) {
                const later = earlier.filter(q => q.idx > o.idx);
                const last = T.and(enc.x(o), ...later.map(q => T.not(enc.x(q))));
                const po = after.get(o)!;
                pos = pos.map((v, j) => T.ite(last, po[j], v));
            }
            return pos.map(t => sp.define('dp', t));
        };
        for (const e of inside) {
            const states = (s: string | undefined): TimePoint => s === W_PRE ? { event: e, phase: 'pre' } : s === W_OLD ? { event: call, phase: 'pre' } : { event: e, phase: 'post' };
            // (`witness step N` marks a step of the innermost method with an abstraction)
            const witness = e.point.k === 'op' && e.calls[e.calls.length - 1] === p.instance ? e.point.op.witness : undefined;
            const c = stepConditionsAt(sp, enc, e, body, ctx, states, witness);
            const b = before(e);
            const nxt = nextPositions(b, c).map(t => sp.define('dp', t));
            after.set(e, nxt);
            if (a.kind === 'bad-step' && at(e, goal)) add({ kind: 'bad-step', event: e, body }, T.and(enc.x(e), T.or(...b), T.not(T.or(...nxt))));
        }
        for (const r of returns) {
            const rp = r.point as Extract<SymEvent['point'], { k: 'return' }>;
            if (!inRange(rp.range, goal)) continue;
            const pos = before(r);
            if (a.kind === 'missing-steps') add({ kind: 'missing-steps', event: r, body }, T.and(enc.x(r), T.not(pos[n])));
            if (a.kind === 'ensures') {
                for (const en of ensuresConditions(body, ctx)) {
                    if (a.text && en.text !== a.text) continue;
                    const cond = sp.symAt(r, en.cond, s => (s === W_OLD ? { event: call, phase: 'pre' } : { event: r, phase: 'pre' }));
                    add({ kind: 'ensures', event: r, body, text: en.text }, T.and(enc.x(r), T.not(cond)));
                }
            }
        }
    }
}

/** stepConditions for a symbolic event: the writes' keys are terms of the encoding already; the rest is translated at the event. */
function stepConditionsAt(sp: SymProgram, enc: Encoder, e: SymEvent, body: InlinedBody, ctx: ReturnType<typeof callContext>, states: (s: string | undefined) => TimePoint, witness?: number): { steps: Term[]; stutter: Term } {
    // Key terms of the writes are encoding terms; name them as locals so that `sym` leaves them alone.
    const locals = new Map(e.localsAfter ?? e.locals);
    const writes = e.writes.map((w, i) => {
        const keys = w.keys.map((k, j) => { const name = `wk~${e.id}~${i}~${j}`; locals.set(name, k); return T.v(name, 'Int'); });
        const when = `ww~${e.id}~${i}`;
        locals.set(when, w.when);
        return { map: w.map, keys, when: T.v(when, 'Bool') };
    });
    const priv = (o: Term): Term => {
        const name = `priv~${e.id}~${T.key(o)}`;
        locals.set(name, enc.privateTo(e.thread.index, sp.sym(o, locals, () => T.int(0)), { event: e, phase: 'pre' }));
        return T.v(name, 'Bool');
    };
    const c = stepConditions(sp.bp.ctx.vocab, body, ctx, writes, priv, witness);
    const tr = (t: Term) => sp.sym(t, locals, (map, keys, s) => sp.readAt(map, keys, states(s)));
    return { steps: c.steps.map(tr), stutter: tr(c.stutter) };
}

export { FATAL };

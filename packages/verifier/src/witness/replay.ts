import { ALLOC, OWNER } from '../heap/vocabulary.js';
import { EPOST, EPRE, guardTerm, TID } from '../spec/environment.js';
import * as T from '../smt/term.js';
import type { BoundedProgram } from './program.js';
import type { Heap } from './heap.js';
import { evalTerm } from './eval.js';
import { goesOn, Machine, ReplayMismatch, type InitRun, type Point, type StepOutcome } from './machine.js';
import type { EventPoint, SymEvent } from './symbolic.js';
import type { Candidate } from './targets.js';
import { syncOp, writtenMap, writtenObject } from './targets.js';
import { W_PRE } from './simulation.js';
import { actionOf, Namer, sourceText, stepOf, type SourceReader } from './format.js';
import { sameRange, type WitnessStep } from './types.js';

/** A trace the search found: the events in the order taken, and each thread's `nondet()` choices. */
export interface Schedule {
    events: SymEvent[];
    nondet: boolean[][];
}

export type ReplayResult = { ok: true; steps: WitnessStep[]; summary: string } | { ok: false; why: string };

function matches(p: Point, q: EventPoint): boolean {
    switch (q.k) {
        case 'op': return p.k === 'op' && p.op === q.op;
        case 'check': return p.k === 'check' && p.cmd === q.cmd;
        case 'head': return p.k === 'head' && p.loop === q.loop && p.iteration === q.iteration;
        case 'call': return p.k === 'call' && p.body === q.body;
        case 'return': return p.k === 'return' && p.body === q.body && sameRange(p.range, q.range);
    }
}

function describe(p: Point): string {
    switch (p.k) {
        case 'op': return `${p.op.label ?? p.op.kind} (line ${p.op.range.startLine + 1})`;
        case 'check': return `a check (line ${(p.cmd.k === 'assumeState' ? undefined : p.cmd.check.range.startLine + 1) ?? '?'})`;
        case 'head': return `the head of a loop, iteration ${p.iteration + 1}`;
        case 'call': return `a call of ${p.body.method.name}`;
        case 'return': return `the return of ${p.body.method.name}`;
        case 'stuck': return 'a point it cannot pass';
        case 'end': return 'its end';
    }
}

/**
 * Replays a schedule on the concrete interpreter and checks that it reaches
 * the failure (issue 14): the search's model is never trusted, only this.
 */
export function replay(bp: BoundedProgram, init: Pick<InitRun, 'heap'>, schedule: Schedule, cand: Candidate, source: SourceReader): ReplayResult {
    const vocab = bp.ctx.vocab;
    const namer = new Namer(vocab, init.heap);
    let m: Machine;
    try {
        m = new Machine(bp, init.heap, schedule.nondet);
    } catch (e) {
        if (e instanceof ReplayMismatch) return { ok: false, why: e.message };
        throw e;
    }
    const steps: WitnessStep[] = [];
    const name = (t: number) => bp.threads[t].name;
    const show = (s: StepOutcome, failing = false) => {
        const p = s.point;
        // the trace shows the atomic operations; the other points only where the failure is
        if (p.k !== 'op' && !failing) return;
        const range = p.k === 'op' ? p.op.range : p.k === 'check' && p.cmd.k !== 'assumeState' ? p.cmd.check.range : p.k === 'return' ? p.range : undefined;
        if (!range) return;
        const shown = (s.shown ?? []).map(x => `${x.name}: ${x.ref && typeof x.value === 'bigint' ? namer.object(x.value, m.heap) : String(x.value)}`);
        const values = [namer.values(s.accesses, m.heap), ...shown].filter(x => x !== '').join(', ');
        steps.push(stepOf(name(s.thread), range, actionOf(s, namer, source, m.heap), values, failing));
    };
    try {
        const events = schedule.events;
        for (let i = 0; i < events.length; i++) {
            const e = events[i];
            const t = e.thread.index;
            const p = m.pending(t);
            if (!matches(p, e.point)) return { ok: false, why: `${name(t)} is at ${describe(p)}, not where the trace goes next (step ${i + 1})` };
            const last = i === events.length - 1;
            const out = m.step(t);
            if (out.mismatch) return { ok: false, why: out.mismatch };
            if (last && cand.kind === 'check' && cand.event === e) {
                if (out.status !== 'failed' || out.failed !== cand.assert.check) return { ok: false, why: `the check at line ${cand.assert.check.range.startLine + 1} does not fail (${out.status})` };
                show(out, true);
                return { ok: true, steps, summary: `${name(t)}: ${cand.assert.check.message}` };
            }
            if (!goesOn(out)) return { ok: false, why: `${name(t)} cannot take ${describe(p)} (${out.status}${out.failed ? `: ${out.failed.message}` : ''})` };
            const isLast = last && ['invariant', 'env', 'loop-invariant', 'bad-step', 'missing-steps', 'ensures', 'writable'].includes(cand.kind) && cand.event === e;
            if (!isLast) { show(out); continue; }
            return finish(bp, m, out, cand, steps, show, name);
        }
        if (cand.kind === 'race') return raceState(m, cand, steps, namer, source, name);
        return { ok: false, why: 'the trace ends before the failure' };
    } catch (e) {
        if (e instanceof ReplayMismatch) return { ok: false, why: e.message };
        throw e;
    }
}

/** The failure at the last step of the trace. */
function finish(bp: BoundedProgram, m: Machine, out: StepOutcome, cand: Candidate, steps: WitnessStep[], show: (s: StepOutcome, failing?: boolean) => void, name: (t: number) => string): ReplayResult {
    const vocab = bp.ctx.vocab;
    const t = out.thread;
    const tid = bp.threads[t].tid;
    switch (cand.kind) {
        case 'writable': {
            const env = { locals: m.locals(t), heap: (s: string | undefined) => (s === W_PRE ? out.pre! : m.heap) };
            const guard = guardTerm(vocab, cand.guard, W_PRE, T.int(tid), cand.obj);
            if (evalTerm(guard, env) !== false) return { ok: false, why: 'the writable_if holds at the write' };
            if (!out.accesses.some(x => x.write && x.map === writtenMap(cand.access))) return { ok: false, why: 'the step does not write the location' };
            if (cand.owns && evalTerm(cand.owns, env) !== true) return { ok: false, why: 'the guarded location does not reference the array written' };
            const written = writtenObject(cand.access, cand.obj);
            if (written) {
                const o = evalTerm(written, env) as bigint;
                if (vocab.has(ALLOC) && (out.pre!.get(ALLOC, [o]) !== true || out.pre!.get(OWNER, [o]) !== 0n)) return { ok: false, why: 'the object written is private to the thread' };
            }
            show(out, true);
            const text = cand.guard.inferred ? cand.guard.inferred.text : cand.guard.clauses.map(c => c.text).join(' && ');
            return { ok: true, steps, summary: `${name(t)} writes ${cand.access.text} while its writable_if '${text}' is false` };
        }
        case 'invariant': {
            const inv = bp.ctx.invariants.find(i => i.clause === cand.clause);
            if (!inv) return { ok: false, why: 'unknown invariant' };
            const at = (h: Heap) => evalTerm(inv.term, { locals: new Map(), heap: () => h, bound: new Map([['tid', BigInt(tid)]]) });
            if (at(out.pre!) !== true || at(out.post!) !== false) return { ok: false, why: `the step does not break the invariant '${inv.text}'` };
            show(out, true);
            return { ok: true, steps, summary: `${name(t)}'s step breaks the invariant '${inv.text}'` };
        }
        case 'env': {
            const c = bp.ctx.guarantee.find(g => g.clause === cand.clause);
            if (!c) return { ok: false, why: 'unknown environment clause' };
            const rel = T.substitute(c.relation, new Map([[TID.t === 'var' ? TID.name : 'tid', T.int(cand.other.tid)]]));
            const held = evalTerm(rel, { locals: new Map(), heap: s => (s === EPRE ? out.pre! : s === EPOST ? out.post! : m.heap) });
            if (held !== false) return { ok: false, why: `the step satisfies ${cand.other.name}'s environment assumption` };
            show(out, true);
            return { ok: true, steps, summary: `${name(t)}'s step breaks ${cand.other.name}'s environment assumption '${c.text}'` };
        }
        case 'loop-invariant': {
            const p = out.point;
            const inv = p.k === 'head' ? p.loop.invariants.find(i => i.text === cand.text) : undefined;
            if (!inv) return { ok: false, why: 'not at the loop head' };
            if (evalTerm(inv.cond, m.env(t)) !== false) return { ok: false, why: `the loop invariant '${inv.text}' holds there` };
            steps.push(stepOf(name(t), inv.check.range, `loop_invariant ${inv.text}`, '', true));
            return { ok: true, steps, summary: `${name(t)} reaches the loop with '${inv.text}' false` };
        }
        case 'bad-step': {
            const f = m.simulationFailures.find(x => x.thread === t && x.op === (cand.event.point.k === 'op' ? cand.event.point.op : undefined) && x.call.body === cand.body);
            if (!f) return { ok: false, why: 'the step is simulated by the abstraction' };
            show(out, true);
            return { ok: true, steps, summary: `${name(t)}'s step in '${cand.body.method.name}' is no step (nor a stutter) of its abstraction` };
        }
        case 'missing-steps': {
            const n = cand.body.method.abstraction!.steps.length;
            // no position left (an earlier step matched none of the abstraction's): no run of it happened either
            if (!out.call || out.call.positions.has(n)) return { ok: false, why: 'the method returns after all its steps' };
            show(out, true);
            const steps_ = n === 1 ? 'the step' : `all ${n} steps`;
            const how = out.call.positions.size === 0 ? `with its steps matching no run of its abstraction (${n === 1 ? 'its step did not happen' : `not all ${n} steps happened`})` : `before ${steps_} of its abstraction happened`;
            return { ok: true, steps, summary: `${name(t)} returns from '${cand.body.method.name}' ${how}` };
        }
        case 'ensures': {
            if (!out.call || !m.failingEnsures(t, out.call).includes(cand.text)) return { ok: false, why: `the postcondition '${cand.text}' holds` };
            show(out, true);
            return { ok: true, steps, summary: `${name(t)} returns from '${cand.body.method.name}' with '${cand.text}' false` };
        }
        default:
            return { ok: false, why: `unexpected ${cand.kind}` };
    }
}

/** A race: both threads are at their accesses, which touch the same location, one writing. */
function raceState(m: Machine, cand: Extract<Candidate, { kind: 'race' }>, steps: WitnessStep[], namer: Namer, source: SourceReader, name: (t: number) => string): ReplayResult {
    const [e1, e2] = [cand.event, cand.other];
    const [t1, t2] = [e1.thread.index, e2.thread.index];
    if (!matches(m.pending(t1), e1.point) || !matches(m.pending(t2), e2.point)) return { ok: false, why: 'the threads are not at the racing accesses' };
    const d1 = m.dryRun(t1), d2 = m.dryRun(t2);
    if (d1.status !== 'ok' || d2.status !== 'ok') return { ok: false, why: 'an access of the race cannot happen there' };
    if (syncOp(e1) && syncOp(e2)) return { ok: false, why: 'both accesses synchronize' };
    const same = d1.accesses.find(a => m.heap.vocab.stateVar(a.map).kind !== 'holder'
        && d2.accesses.some(b => b.map === a.map && b.keys.join() === a.keys.join() && (a.write || b.write)));
    if (!same) return { ok: false, why: 'the accesses do not touch the same location' };
    const loc = namer.location(same.map, same.keys, m.heap);
    // Both accesses can happen in this state; shown one after the other, the second with the
    // values the first leaves (a write of 5 then one of 2 reads `5 → 2`, not `0 → 2` again).
    const o1 = m.step(t1);
    const after = goesOn(o1) ? m.dryRun(t2) : undefined;
    const shown2 = after?.status === 'ok' ? after : d2;
    for (const [d, t] of [[o1, t1], [shown2, t2]] as const) {
        const p = d.point;
        if (p.k !== 'op') continue;
        const text = sourceText(p.op.range, source);
        steps.push(stepOf(name(t), p.op.range, `${p.op.kind === 'read' ? 'read ' : ''}${text}`, namer.values(d.accesses, m.heap), true));
    }
    const w1 = d1.accesses.some(a => a.write && a.map === same.map), w2 = d2.accesses.some(a => a.write && a.map === same.map);
    return { ok: true, steps, summary: `${name(t1)} ${w1 ? 'writes' : 'reads'} ${loc} while ${name(t2)} may ${w2 ? 'write' : 'read'} it at the same time` };
}

import type { Range } from '../model/program.js';
import type { BoundedProgram } from './program.js';
import type { InitRun, StepOutcome } from './machine.js';
import { actionOf, Namer, stepOf, type SourceReader } from './format.js';
import { inRange, sameClause, type Goal } from './targets.js';
import type { WitnessStep } from './types.js';

/**
 * Failures inside the field initializers (the store `Init`): they run before
 * any thread, alone and in one way only (no interleaving, no choice), so the
 * interpreter's run of them (Machine.initial) decides: the witness is their
 * operations up to the step that fails. A failed check that does not stop a
 * thread (the invariants or the `requires` a called method assumes) is passed
 * over; a fatal one ends the initializers, and no thread ever starts.
 */
export function initWitness(goal: Goal, bp: BoundedProgram, init: InitRun, source: SourceReader): { steps: WitnessStep[]; summary: string } | undefined {
    const found = failureOf(goal, init);
    if (!found) return undefined;
    const namer = new Namer(bp.ctx.vocab, init.heap);
    const show = (s: StepOutcome, failing = false): WitnessStep | undefined => {
        const p = s.point;
        const range: Range | undefined = p.k === 'op' ? p.op.range : p.k === 'check' && p.cmd.k !== 'assumeState' ? p.cmd.check.range : p.k === 'return' ? p.range : undefined;
        if (!range) return undefined;
        const shown = (s.shown ?? []).map(x => `${x.name}: ${x.ref && typeof x.value === 'bigint' ? namer.object(x.value, init.heap) : String(x.value)}`);
        const values = [namer.values(s.accesses, init.heap), ...shown].filter(x => x !== '').join(', ');
        return stepOf('init', range, actionOf(s, namer, source, init.heap), values, failing);
    };
    const steps = init.steps.slice(0, found.before).map(s => show(s)).filter((s): s is WitnessStep => s !== undefined);
    const last = show(found.outcome, true);
    if (!last) return undefined;
    steps.push(last);
    return { steps, summary: `the field initializers: ${found.summary}` };
}

function failureOf(goal: Goal, init: InitRun): { outcome: StepOutcome; before: number; summary: string } | undefined {
    const a = goal.abstraction;
    const method = (name: string) => !a?.method || a.method === name;
    if (goal.code !== 'abstraction' || a?.kind === 'requires') {
        if (goal.code === 'invariant' && !goal.assumed) return undefined;
        const f = init.failures.find(x => {
            const c = x.outcome.failed!;
            return c.code === goal.code && inRange(c.range, goal) && sameClause(c, goal);
        });
        return f && { ...f, summary: f.outcome.failed!.message };
    }
    if (a?.kind === 'bad-step') {
        const f = init.simulation.find(x => {
            const p = x.outcome.point;
            return p.k === 'op' && (inRange(p.op.range, goal) || p.op.chain.some(c => inRange(c.range, goal))) && method(x.call.body.method.name);
        });
        return f && { ...f, summary: `a step in '${f.call.body.method.name}' is no step (nor a stutter) of its abstraction` };
    }
    for (const r of init.returns) {
        const p = r.outcome.point;
        const call = r.outcome.call;
        if (p.k !== 'return' || !call || !inRange(p.range, goal) || !method(call.body.method.name)) continue;
        const n = call.body.method.abstraction!.steps.length;
        if (a?.kind === 'missing-steps' && !call.positions.has(n)) {
            return { ...r, summary: `'${call.body.method.name}' returns before ${n === 1 ? 'the step' : `all ${n} steps`} of its abstraction happened` };
        }
        const ensures = a?.kind === 'ensures' ? r.ensuresFailed.find(t => a.text === undefined || t === a.text) : undefined;
        if (ensures !== undefined) return { ...r, summary: `'${call.body.method.name}' returns with '${ensures}' false` };
    }
    return undefined;
}

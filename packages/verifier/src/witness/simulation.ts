import type { InlinedBody } from '../lower/lower.js';
import { sortOfType, type Vocabulary } from '../heap/vocabulary.js';
import { actionPredicate, frameOf, inFrame, type FrameInfo } from '../spec/abstraction.js';
import { translate, type TrContext } from '../spec/translate.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';

/**
 * Whether a real execution of a method is simulated by its abstraction
 * (checking.md, abstraction check), step by step: the positions of the
 * abstraction the execution may be at form a set, starting at {0}; each of
 * the method's own steps moves a position j to j+1 when it satisfies step
 * j+1 (within its frame), and keeps it when it is a stutter (it changes
 * nothing other threads can see, or satisfies the `stutter` action). The
 * execution is not simulated when the set becomes empty, or when the method
 * returns without position n (all steps done) or with its `ensures` false.
 * Unlike the checker, which picks one witness per step, this considers every
 * choice: a failure here is a failure of any witness.
 *
 * The conditions are terms over the state before the step (`W_PRE`), the
 * state after it (the current state) and the state at the call (`W_OLD`),
 * so that the interpreter evaluates them and the search encodes them alike.
 */
export const W_PRE = 'w~pre';
export const W_OLD = 'w~old';

/** A store of a step: where (keys as terms) and when it happened. */
export interface StepWrite {
    map: string;
    keys: Term[];
    when: Term;
}

/** How annotation expressions of the method read its `this`, parameters, `tid` and `\result`. */
export function callContext(vocab: Vocabulary, body: InlinedBody, tid: Term): TrContext {
    const m = body.method;
    const base: TrContext = {
        vocab, tid, thisTerm: body.receiver,
        local: id => {
            const i = m.params.findIndex(p => p.id === id);
            if (i < 0) throw new Error(`unknown parameter ${id}`);
            return T.v(body.params[i], sortOfType(m.params[i].type));
        },
    };
    const result = body.resultVar ? T.v(body.resultVar, sortOfType(m.returnType)) : undefined;
    return { ...base, result, old: { ...base, pre: W_OLD } };
}

const BOOKKEEPING = new Set(['holder', 'alloc', 'owner', 'linked']);

/** The step's stores stay within the frame, leave the location unchanged, or touch an object private to the thread. */
function frameOk(vocab: Vocabulary, writes: StepWrite[], frame: FrameInfo, priv: (o: Term) => Term): Term {
    const parts: Term[] = [];
    for (const w of writes) {
        if (BOOKKEEPING.has(vocab.stateVar(w.map).kind)) continue;
        const unchanged = T.eq(vocab.read(w.map, w.keys), vocab.read(w.map, w.keys, W_PRE));
        parts.push(T.implies(w.when, T.or(inFrame(frame, w.map, w.keys), unchanged, w.keys.length > 0 ? priv(w.keys[0]) : T.FALSE)));
    }
    return T.and(...parts);
}

/**
 * For one step of the method: whether it may be abstraction step j (index
 * j-1), and whether it may be a stutter. A step marked `witness step N` (in
 * this method's body: `witness`) is step N and nothing else, as the checker
 * takes it.
 */
export function stepConditions(vocab: Vocabulary, body: InlinedBody, ctx: TrContext, writes: StepWrite[], priv: (o: Term) => Term, witness?: number): { steps: Term[]; stutter: Term } {
    const abs = body.method.abstraction!;
    const pre: TrContext = { ...ctx, pre: W_PRE };
    const marked = witness !== undefined && witness >= 1 && witness <= abs.steps.length ? witness : undefined;
    const steps = abs.steps.map((a, i) => marked !== undefined && i !== marked - 1 ? T.FALSE
        : T.and(actionPredicate(a, pre), frameOk(vocab, writes, frameOf(vocab, a, pre), priv)));
    if (marked !== undefined) return { steps, stutter: T.FALSE };
    const none = frameOk(vocab, writes, new Map(), priv);
    const stutter = abs.stutter ? T.or(none, T.and(actionPredicate(abs.stutter, pre), frameOk(vocab, writes, frameOf(vocab, abs.stutter, pre), priv))) : none;
    return { steps, stutter };
}

/** The positions after a step, from those before it. */
export function nextPositions(before: Term[], c: { steps: Term[]; stutter: Term }): Term[] {
    return before.map((_, j) => T.or(T.and(before[j], c.stutter), j > 0 ? T.and(before[j - 1], c.steps[j - 1]) : T.FALSE));
}

/** The method's `ensures`, at a return (current state; `\old` is the state at the call). */
export function ensuresConditions(body: InlinedBody, ctx: TrContext): Array<{ text: string; cond: Term }> {
    return body.method.abstraction!.ensures.map(e => ({ text: e.text, cond: translate(e.expr, { ...ctx, pre: undefined }) }));
}

/** Concrete positions after a step (for the interpreter). */
export function nextPositionSet(before: Set<number>, n: number, canStep: (j: number) => boolean, canStutter: boolean): Set<number> {
    const out = new Set<number>();
    for (const j of before) {
        if (canStutter) out.add(j);
        if (j < n && canStep(j + 1)) out.add(j + 1);
    }
    return out;
}

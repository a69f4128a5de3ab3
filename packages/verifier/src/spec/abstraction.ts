import type { AbstractionModel, Action, MethodModel, Range } from '../model/program.js';
import { ALLOC, OWNER, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import type { Access, Loc, OpCmd } from '../il/il.js';
import { preName } from '../il/il.js';
import { stateVarsOf, translate, type TrContext } from './translate.js';

/** The shared variables an action may change, and at which objects (for field entries). */
export interface FrameInfo {
    /** Variables that may change anywhere. */
    whole: Set<string>;
    /** Field maps that may change only at these objects. */
    atObjects: Map<string, Term[]>;
}

/**
 * The frame of an action (Plato's `<X>_V`): the locations its frame names;
 * without a frame, the shared variables it mentions primed.
 */
export function frameOf(vocab: Vocabulary, action: Action, ctx: TrContext, hasFrame: boolean): FrameInfo {
    const whole = new Set<string>();
    const atObjects = new Map<string, Term[]>();
    if (!hasFrame) {
        for (const v of stateVarsOf(action.expr, vocab).post) whole.add(v);
        return { whole, atObjects };
    }
    for (const e of action.frame) {
        const name = vocab.varOfField(e.field);
        if (e.kind === 'global' || e.kind === 'any') whole.add(name);
        else {
            const obj = e.kind === 'this' ? ctx.thisTerm! : ctx.local(e.param);
            const list = atObjects.get(name) ?? [];
            list.push(obj);
            atObjects.set(name, list);
        }
    }
    for (const v of whole) atObjects.delete(v);
    return { whole, atObjects };
}

/** Every variable a frame lets change. */
export function frameVars(f: FrameInfo): string[] {
    return [...f.whole, ...f.atObjects.keys()];
}

/**
 * "Nothing outside the frame changes", between two states. Monitor, allocation
 * and ownership bookkeeping (holder, alloc, owner) is not constrained: entering
 * and leaving monitors and allocating are invisible to abstractions; and
 * objects private to the thread may change freely.
 */
export function frameConstraint(vocab: Vocabulary, frame: FrameInfo, pre: (n: string) => Term, post: (n: string) => Term, tid: Term, only?: Set<string>): Term {
    const parts: Term[] = [];
    for (const sv of vocab.allVars()) {
        if (only && !only.has(sv.name)) continue;
        if (sv.kind === 'holder' || sv.kind === 'alloc' || sv.kind === 'owner') continue;
        if (frame.whole.has(sv.name)) continue;
        if (sv.kind === 'global') {
            parts.push(T.eq(post(sv.name), pre(sv.name)));
            continue;
        }
        if (T.sameTerm(post(sv.name), pre(sv.name))) continue;
        const o = T.v(`o!frame`, 'Ref');
        const notPrivate = T.and(T.select(pre(ALLOC), o), T.ne(T.select(pre(OWNER), o), tid));
        const objs = frame.atObjects.get(sv.name) ?? [];
        const guard = T.and(notPrivate, ...objs.map(x => T.ne(o, x)));
        // "forall o. guard(o) ==> post[o] == pre[o]" as an equation between arrays: no quantifier to instantiate
        parts.push(T.eq(post(sv.name), T.lambda('o!frame', 'Ref', T.ite(guard, T.select(pre(sv.name), o), T.select(post(sv.name), o)))));
    }
    return T.and(...parts);
}

/** An abstraction action as a relation between the state before (`pre~x`) and after (`x`) an operation. */
export function actionRelation(vocab: Vocabulary, action: Action, ctx: TrContext, hasFrame: boolean, tid: Term, only?: Set<string>): { relation: Term; frame: FrameInfo; predicate: Term } {
    const twoState: TrContext = {
        ...ctx,
        state: (name, post) => post ? T.v(name, vocab.sortOfVar(name)) : T.v(preName(name), vocab.sortOfVar(name)),
    };
    const frame = frameOf(vocab, action, ctx, hasFrame);
    const predicate = translate(action.expr, twoState);
    const fc = frameConstraint(vocab, frame, n => T.v(preName(n), vocab.sortOfVar(n)), n => T.v(n, vocab.sortOfVar(n)), tid, only);
    return { relation: T.and(predicate, fc), frame, predicate };
}

export interface InlinedAction {
    body: OpCmd[];
    accesses(range: Range): Access[];
}

/** The inlined form of a method's abstraction actions (InlineAbs). */
export function abstractionActions(vocab: Vocabulary, m: MethodModel, abs: AbstractionModel, ctx: TrContext, tid: Term): { steps: InlinedAction[]; stutter?: InlinedAction } {
    void m;
    const inline = (a: Action): InlinedAction => {
        const { relation, frame } = actionRelation(vocab, a, ctx, a.hasFrame, tid);
        return {
            body: [{ k: 'havoc', vars: frameVars(frame) }, { k: 'assume', cond: relation }],
            accesses: (range) => {
                const out: Access[] = [];
                for (const v of frame.whole) out.push({ loc: vocab.vars.get(v)?.kind === 'global' ? { kind: 'global', var: v } : { kind: 'all', var: v }, write: true, sync: true, field: vocab.vars.get(v)?.field, range, text: vocab.vars.get(v)?.field?.name ?? v });
                for (const [v, objs] of frame.atObjects) {
                    for (const obj of objs) out.push({ loc: { kind: 'field', var: v, obj } as Loc, write: true, sync: true, field: vocab.vars.get(v)?.field, range, text: vocab.vars.get(v)?.field?.name ?? v });
                }
                return out;
            },
        };
    };
    return { steps: abs.steps.map(inline), stutter: abs.stutter ? inline(abs.stutter) : undefined };
}

import type { Action, FieldModel } from '../model/program.js';
import { frameElementsField, frameField } from '../model/program.js';
import { elemsVar, sortOfType, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { BoundVar, Term } from '../smt/term.js';
import { stateVarsOf, translate, type TrContext } from './translate.js';

/**
 * The frame of an abstraction action (Plato's `<X>_V`): which locations it may
 * change. A state variable maps to the key prefixes at which it may change
 * (`[o]` for a field of object o, `[a]` for every element of array a,
 * `[a, i]` for one element), or to 'all'. A frame entry naming an array-typed
 * field also frames the elements of the array the field references before the
 * step; `a[e]` and `a[*]` frame elements only (the array and `e` are evaluated
 * before the step).
 */
export type FrameInfo = Map<string, Term[][] | 'all'>;

export function frameOf(vocab: Vocabulary, action: Action, ctx: TrContext): FrameInfo {
    const frame: FrameInfo = new Map();
    const addAll = (name: string) => frame.set(name, 'all');
    const addAt = (name: string, keys: Term[]) => {
        const cur = frame.get(name);
        if (cur === 'all') return;
        frame.set(name, [...(cur ?? []), keys]);
    };
    if (!action.hasFrame) {
        for (const v of stateVarsOf(action.expr, vocab).post) addAll(v);
        return frame;
    }
    const pre: TrContext = { ...ctx, twoState: false };
    for (const e of action.frame) {
        if (e.kind === 'elems') {
            const elems = elemsVar(sortOfType(e.array.type.kind === 'array' ? e.array.type.element : { kind: 'int' }));
            if (!vocab.has(elems)) continue;
            const arr = translate(e.array, pre);
            addAt(elems, e.index ? [arr, translate(e.index, pre)] : [arr]);
            continue;
        }
        const name = vocab.varOfField(e.field);
        const field = vocab.fields.get(e.field)!;
        if (e.kind === 'global' || e.kind === 'any') {
            addAll(name);
            if (field.type.kind === 'array') addAll(elemsVar(sortOfType(field.type.element)));
            continue;
        }
        const obj = e.kind === 'this' ? ctx.thisTerm! : ctx.local(e.param);
        addAt(name, [obj]);
        if (field.type.kind === 'array') {
            // the elements of the array the field references before the step
            const arr = vocab.read(name, [obj], ctx.pre);
            addAt(elemsVar(sortOfType(field.type.element)), [arr]);
        }
    }
    return frame;
}

/** The state variables a frame may change or reads to find its locations (`frameOf`, without a context). */
export function frameMaps(vocab: Vocabulary, action: Action): Set<string> {
    const out = new Set<string>();
    for (const e of action.frame) {
        if (e.kind === 'elems') {
            if (e.array.type.kind === 'array') out.add(elemsVar(sortOfType(e.array.type.element)));
            for (const x of [e.array, ...(e.index ? [e.index] : [])]) for (const m of stateVarsOf(x, vocab).pre) out.add(m);
            continue;
        }
        out.add(vocab.varOfField(e.field));
        const field = vocab.fields.get(e.field);
        if (field?.type.kind === 'array') out.add(elemsVar(sortOfType(field.type.element)));
    }
    return out;
}

/** The key variables of a state variable, as bound variables named by `prefix`. */
export function keyParams(vocab: Vocabulary, map: string, prefix: string): BoundVar[] {
    return vocab.stateVar(map).keys.map((sort, i) => ({ name: `${prefix}${i}`, sort }));
}

/**
 * Whether the frame covers the locations of `map` whose keys start with
 * `prefix` (a whole location when the prefix has every key; every element of
 * an array for `[a]`).
 */
export function inFrame(frame: FrameInfo, map: string, prefix: Term[]): Term {
    const entry = frame.get(map);
    if (!entry) return T.FALSE;
    if (entry === 'all' || prefix.length === 0) return T.TRUE;
    return T.or(...entry.filter(e => e.length <= prefix.length).map(e => T.and(...e.map((k, i) => T.eq(prefix[i], k)))));
}

/** `where` of a havoc at the frame's locations of `map`, over its key variables. */
export function frameWhere(entry: Term[][] | 'all', params: BoundVar[]): Term {
    if (entry === 'all' || params.length === 0) return T.TRUE;
    return T.or(...entry.map(e => T.and(...e.map((k, i) => T.eq(T.v(params[i].name, params[i].sort), k)))));
}

/** An action as a relation between the state before (`ctx.pre`) and after (the current state): the predicate only (frames are separate). */
export function actionPredicate(action: Action, ctx: TrContext): Term {
    return translate(action.expr, { ...ctx, twoState: true, post: undefined });
}

/** The fields an action's frame names (for messages). */
export function frameFields(vocab: Vocabulary, action: Action): FieldModel[] {
    const out: FieldModel[] = [];
    for (const e of action.frame) {
        const id = frameField(e) ?? frameElementsField(e);
        const f = id ? vocab.fields.get(id) : undefined;
        if (f) out.push(f);
    }
    return out;
}

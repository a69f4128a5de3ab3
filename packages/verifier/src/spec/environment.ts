import { append } from '../smt/append.js';
import type { Clause, Expr, FieldModel, ProgramModel, Type } from '../model/program.js';
import {
    ALLOC, allocated, elemsVar, HOLDER, holderOf, OWNER, ownerOf, publishedOf, sortOfType, typeKey, type Vocabulary,
} from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { BoundVar, Term } from '../smt/term.js';
import { keyParams } from './abstraction.js';
import type { ArrayOwnership } from '../analysis/arrays.js';
import { hasPrime, mentionsThis, translate, type TrContext } from './translate.js';
import { visit } from '../model/visit.js';
import { initializedFacts } from './initialized.js';

/**
 * Environment assumptions as relations between two states (pipeline stage 3).
 * A conjunct of E(p) relates the state before another thread's step (`EPRE`)
 * and after it (`EPOST`), from the point of view of the thread `TID` being
 * checked. Most conjuncts are *frames*: "while `keep` holds at these keys,
 * this state variable does not change". The VC generator builds the state
 * after an environment step from the frames (the variable keeps its value
 * where some frame's `keep` holds, and is arbitrary elsewhere), so that an
 * environment step needs no quantifier; what frames cannot say is assumed as
 * the `residual` relation.
 */
export const EPRE = 'E~pre';
export const EPOST = 'E~post';
export const TID: Term = T.v('tid', 'Int');

export interface Frame {
    map: string;
    /** The keys (named `k!0`, `k!1`, ... for every frame of a map). */
    params: BoundVar[];
    /** Over EPRE, the params and TID; may contain `exists` over objects (instantiated at the objects in scope). */
    keep: Term;
}

export type ConjunctKind = 'env' | 'writable' | 'builtin' | 'final' | 'candidate';

export interface Conjunct {
    kind: ConjunctKind;
    /** Where it comes from (hover, messages). */
    origin: string;
    /** Calvin text of the conjunct (hover). */
    text: string;
    clause?: Clause;
    field?: FieldModel;
    /** State variables it mentions. */
    maps: Set<string>;
    frames: Frame[];
    /** What the frames do not say, over EPRE/EPOST (undefined: the frames say everything). */
    residual?: Term;
    /** The whole relation over EPRE/EPOST (guarantee checks, E* closure). */
    relation: Term;
    /** The built-in monitor/allocation/ownership rules, constructed specially. */
    builtin?: 'holder' | 'alloc' | 'owner';
    /** The class of a class `environment` clause. */
    className?: string;
    /** A `writable` conjunct about the elements of the arrays `field` owns (not the field itself). */
    elements?: boolean;
}

/** A field's protection: its `writable_if` (declared or inferred). */
export interface Guard {
    field: FieldModel;
    clauses: Clause[];
    /** `tid == T1 || ...` inferred from the threads that write the field (docs/semantics.md), or false. */
    inferred?: { writers: number[]; text: string };
}

export interface SpecContext {
    vocab: Vocabulary;
    /** Guards of every field (undefined: unprotected). */
    guards: Map<string, Guard>;
    /**
     * Guards of the elements of the arrays that array-typed fields own
     * (analysis/arrays.ts): the field's own `writable_if` (with `this :=` the
     * object that references the array), or inferred from the threads that
     * write the elements. Undefined: the elements are not protected by a guard.
     */
    elementGuards: Map<string, Guard>;
    /** Array-typed fields that do not own their arrays, and why. */
    notOwned: Map<string, string>;
}

/** The context to translate a clause as a relation between EPRE and EPOST for thread `tid`. */
export function relationCtx(vocab: Vocabulary, tid: Term, thisTerm?: Term): TrContext {
    return {
        vocab, pre: EPRE, twoState: true, post: EPOST, thisTerm, tid,
        local: id => { throw new Error(`local ${id} in a specification clause`); },
    };
}

/** The context to translate a state predicate in one state (undefined: the current state). */
export function stateCtx(vocab: Vocabulary, tid: Term, state: string | undefined, thisTerm?: Term): TrContext {
    return {
        vocab, pre: state, thisTerm, tid,
        local: id => { throw new Error(`local ${id} in a specification clause`); },
    };
}

export function mapsOfExpr(e: Expr, vocab: Vocabulary, out = new Set<string>()): Set<string> {
    visit(e, x => {
        if (x.kind === 'global' || x.kind === 'field') out.add(vocab.varOfField(x.field));
        else if (x.kind === 'holder') out.add(HOLDER);
        else if (x.kind === 'index') out.add(elemsVar(x.type.kind === 'null' ? 'Ref' : sortOfType(x.type)));
    });
    return out;
}

function classType(name: string): Type {
    return { kind: 'class', name };
}

const objVar = (name: string, cls: string): BoundVar => ({ name, sort: 'Ref', type: typeKey(classType(cls)) });

// ------------------------------------------------------------------ environment clauses

/** An `environment` clause; a class clause about `this` holds for every published object of the class. */
export function clauseConjunct(vocab: Vocabulary, clause: Clause, className: string | undefined): Conjunct {
    const quantified = className !== undefined && mentionsThis(clause.expr);
    const o = T.v('o!env', 'Ref');
    const origin = clause.inferred ? `inferred environment of ${className ? `class ${className}` : 'the program'} (${clause.inferred.origin})` : `environment of ${className ? `class ${className}` : 'the program'}`;
    const body = translate(clause.expr, relationCtx(vocab, TID, quantified ? o : undefined));
    const relation = quantified
        ? T.forall([objVar('o!env', className!)], T.implies(publishedOf(vocab, classType(className!), o, EPRE), body))
        : body;
    const frames = clauseFrames(vocab, clause.expr, quantified ? className : undefined);
    const maps = mapsOfExpr(clause.expr, vocab);
    if (quantified) maps.add(ALLOC).add(OWNER);
    return { kind: 'env', origin, clause, text: clause.text, maps, frames: frames ?? [], residual: frames ? undefined : relation, relation, className };
}

/**
 * Frames of an environment clause of the form `A ==> e' == e` (or a
 * conjunction of such), where e is a global, a field of `this` (class
 * clauses) or a field of an object the clause names and A has no primes.
 */
function clauseFrames(vocab: Vocabulary, e: Expr, className: string | undefined): Frame[] | undefined {
    const parts: Array<{ cond?: Expr; target: Expr }> = [];
    const collect = (x: Expr): boolean => {
        if (x.kind === 'binary' && x.op === '&&') return collect(x.left) && collect(x.right);
        if (x.kind === 'binary' && x.op === '==>') {
            const t = unchangedTarget(x.right);
            if (!t || hasPrime(x.left)) return false;
            parts.push({ cond: x.left, target: t });
            return true;
        }
        const t = unchangedTarget(x);
        if (!t) return false;
        parts.push({ target: t });
        return true;
    };
    if (!collect(e)) return undefined;
    const frames: Frame[] = [];
    for (const { cond, target } of parts) {
        if (target.kind === 'global') {
            if (className) return undefined; // "for every object, A(o) ==> g unchanged" is not a frame
            const map = vocab.varOfField(target.field);
            frames.push({ map, params: [], keep: cond ? translate(cond, relationCtx(vocab, TID)) : T.TRUE });
            continue;
        }
        if (target.kind !== 'field') return undefined;
        const map = vocab.varOfField(target.field);
        const [k] = keyParams(vocab, map, 'k!');
        const key = T.v(k.name, 'Ref');
        if (target.receiver.kind === 'this' && className) {
            const c = cond ? translate(cond, relationCtx(vocab, TID, key)) : T.TRUE;
            frames.push({ map, params: [k], keep: T.and(publishedOf(vocab, classType(className), key, EPRE), c) });
        } else if (!className && !mentionsThis(target.receiver)) {
            const ctx = relationCtx(vocab, TID);
            const c = cond ? translate(cond, ctx) : T.TRUE;
            frames.push({ map, params: [k], keep: T.and(T.eq(key, translate(target.receiver, ctx)), c) });
        } else return undefined;
    }
    return frames;
}

/** `e' == e` (either order) for a global or field access e: returns e. */
function unchangedTarget(x: Expr): Expr | undefined {
    if (x.kind !== 'binary' || x.op !== '==') return undefined;
    const [a, b] = [x.left, x.right];
    const primedOf = (p: Expr, q: Expr) =>
        (p.kind === 'global' && q.kind === 'global' && p.primed && !q.primed && p.field === q.field)
        || (p.kind === 'field' && q.kind === 'field' && p.primed && !q.primed && p.field === q.field && sameExpr(p.receiver, q.receiver) && !hasPrime(p.receiver));
    if (primedOf(a, b)) return b;
    if (primedOf(b, a)) return a;
    return undefined;
}

function sameExpr(a: Expr, b: Expr): boolean {
    if (a.kind !== b.kind) return false;
    switch (a.kind) {
        case 'this': case 'tid': case 'null': return true;
        case 'var': return a.id === (b as typeof a).id;
        case 'global': return a.field === (b as typeof a).field && a.primed === (b as typeof a).primed;
        case 'field': return a.field === (b as typeof a).field && a.primed === (b as typeof a).primed && sameExpr(a.receiver, (b as typeof a).receiver);
        default: return false;
    }
}

// ------------------------------------------------------------------ writable_if

/** P[tid := j] (and this := obj), in a state. */
export function guardTerm(vocab: Vocabulary, g: Guard, state: string | undefined, tid: Term, obj: Term | undefined): Term {
    if (g.inferred) return T.or(...g.inferred.writers.map(w => T.eq(tid, T.int(w))));
    return T.and(...g.clauses.map(c => translate(c.expr, stateCtx(vocab, tid, state, obj))));
}

/** "Another thread may write f here": `\exists int j; j > 0 && j != tid && P[tid := j]`, in a state. */
export function otherMayWrite(vocab: Vocabulary, g: Guard, state: string | undefined, tid: Term, obj: Term | undefined): Term {
    return existsOtherThread(tid, j => guardTerm(vocab, g, state, j, obj));
}

/** A condition on the state before a step, for the thread tid, about an object (undefined for a global). */
export type StateCondition = (state: string | undefined, tid: Term, obj: Term | undefined) => Term;

/**
 * "While cond holds, f does not change" (and the elements of the array it
 * references, when `elements`), for every published object of f's class or
 * for a global f: its frames and the relation they say.
 */
export function unchangedWhile(vocab: Vocabulary, f: FieldModel, what: 'field' | 'elements' | 'both', cond: StateCondition): { frames: Frame[]; relation: Term; maps: Set<string> } {
    const map = vocab.varOfField(f.id);
    const elems = what !== 'field' && f.type.kind === 'array' ? elemsVar(sortOfType(f.type.element)) : undefined;
    const field = what !== 'elements';
    const maps = new Set<string>([map]);
    if (elems) maps.add(elems);
    const unchanged = (o: Term | undefined): Term => {
        const keys = o ? [o] : [];
        let t = field ? T.eq(vocab.read(map, keys, EPOST), vocab.read(map, keys, EPRE)) : T.TRUE;
        if (elems) {
            const arr = vocab.read(map, keys, EPRE);
            const ix = T.v('i!u', 'Int');
            t = T.and(t, T.forall([{ name: 'i!u', sort: 'Int' }], T.eq(vocab.read(elems, [arr, ix], EPOST), vocab.read(elems, [arr, ix], EPRE))));
        }
        return t;
    };
    if (f.isStatic) {
        const c = cond(EPRE, TID, undefined);
        const frames: Frame[] = field ? [{ map, params: [], keep: c }] : [];
        if (elems) {
            const [a, i] = keyParams(vocab, elems, 'k!');
            frames.push({ map: elems, params: [a, i], keep: T.and(T.eq(T.v(a.name, 'Ref'), vocab.read(map, [], EPRE)), c) });
        }
        return { frames, relation: T.implies(c, unchanged(undefined)), maps };
    }
    const cls = classType(f.owner!);
    maps.add(ALLOC).add(OWNER);
    const [k] = keyParams(vocab, map, 'k!');
    const key = T.v(k.name, 'Ref');
    const frames: Frame[] = field ? [{ map, params: [k], keep: T.and(publishedOf(vocab, cls, key, EPRE), cond(EPRE, TID, key)) }] : [];
    if (elems) {
        // kept when some published object of the class that references the array satisfies cond
        const [a, i] = keyParams(vocab, elems, 'k!');
        const ov = T.v('o!ue', 'Ref');
        frames.push({
            map: elems, params: [a, i],
            keep: T.exists([objVar('o!ue', f.owner!)], T.and(publishedOf(vocab, cls, ov, EPRE), T.eq(vocab.read(map, [ov], EPRE), T.v(a.name, 'Ref')), cond(EPRE, TID, ov))),
        });
    }
    const o = T.v('o!u', 'Ref');
    const relation = T.forall([objVar('o!u', f.owner!)], T.implies(T.and(publishedOf(vocab, cls, o, EPRE), cond(EPRE, TID, o)), unchanged(o)));
    return { frames, relation, maps };
}

/**
 * The derived conjunct of a `writable_if P` (language.md §6):
 * `f' != f ==> (\exists int j; j > 0 && j != tid; P[tid := j])`, for every
 * published object of the class for an instance field. As frames: f keeps its
 * value where no other thread's guard holds. (The elements of the array f
 * references: `elementsConjunct`.)
 */
export function writableConjunct(vocab: Vocabulary, g: Guard): Conjunct {
    const f = g.field;
    const { frames, relation, maps } = unchangedWhile(vocab, f, 'field', (state, tid, obj) => T.not(otherMayWrite(vocab, g, state, tid, obj)));
    for (const c of g.clauses) mapsOfExpr(c.expr, vocab, maps);
    const guardText = g.inferred ? g.inferred.text : clausesText(g.clauses);
    return {
        kind: 'writable', field: f, clause: g.clauses[0], maps, frames, relation,
        origin: g.inferred ? `inferred protection of ${f.id} (${g.inferred.writers.length === 0 ? 'no thread writes it' : 'the only threads that write it'})`
            : g.clauses[0]?.inferred ? `inferred writable_if of ${f.id} (${g.clauses[0].inferred.origin})` : `writable_if of ${f.id}`,
        text: otherThreadText(`${f.name}' != ${f.name}`, guardText),
    };
}

/**
 * The derived conjunct for the elements of the arrays an array-typed field f
 * owns: `a[i]' != a[i] ==> (\exists int j; j > 0 && j != tid; P[tid := j, this := o])`
 * for the object o whose f references a (language.md §6), with P f's
 * `writable_if` or the guard inferred from the threads that write the
 * elements. As frames: an element keeps its value where the object that
 * references its array lets no other thread write.
 */
export function elementsConjunct(vocab: Vocabulary, g: Guard): Conjunct {
    const f = g.field;
    const { frames, relation, maps } = unchangedWhile(vocab, f, 'elements', (state, tid, obj) => T.not(otherMayWrite(vocab, g, state, tid, obj)));
    for (const c of g.clauses) mapsOfExpr(c.expr, vocab, maps);
    const guardText = g.inferred ? g.inferred.text : clausesText(g.clauses);
    const el = `${f.name}[i]`;
    return {
        kind: 'writable', field: f, elements: true, clause: g.clauses[0], maps, frames, relation,
        origin: g.inferred
            ? `inferred protection of the elements of ${f.id}'s arrays (${g.inferred.writers.length === 0 ? 'no thread writes them' : 'the only threads that write them'})`
            : `writable_if of ${f.id} (the elements of its arrays)`,
        text: otherThreadText(`${el}' != ${el}`, guardText),
    };
}

/**
 * `lhs ==> (\exists int j; j > 0 && j != tid; P[tid := j])` as Calvin text,
 * with the substitution done (j renamed if P already uses it), so that it can
 * be pasted into an annotation.
 */
export function otherThreadText(lhs: string, guard: string): string {
    let j = 'j';
    for (let n = 1; new RegExp(`\\b${j}\\b`).test(guard); n++) j = `j${n}`;
    return `${lhs} ==> (\\exists int ${j}; ${j} > 0 && ${j} != tid; ${guard.replace(/\btid\b/g, j)})`;
}

/**
 * `\exists int j; j > 0 && j != tid && P(j)`: eliminated where P pins j down
 * (`j == e` in every disjunct, as in `tid == Producer && ...` or `o.holder == tid`).
 */
export function existsOtherThread(tid: Term, p: (j: Term) => Term): Term {
    const j = T.v('j!w', 'Int') as Extract<Term, { t: 'var' }>;
    const body = p(j);
    const elim = eliminate(body, j, tid);
    if (elim) return elim;
    return T.exists([{ name: 'j!w', sort: 'Int' }], T.and(T.cmp('>', j, T.int(0)), T.ne(j, tid), body));
}

function mentions(t: Term, name: string): boolean {
    return T.freeVars(t).has(name);
}

/** \exists j (j > 0, j != tid). body — without the quantifier, or undefined when j is not pinned down. */
function eliminate(body: Term, j: Extract<Term, { t: 'var' }>, tid: Term): Term | undefined {
    if (!mentions(body, j.name)) return body;
    if (body.t !== 'app') return undefined;
    if (body.fn === 'or') {
        const parts = body.args.map(a => eliminate(a, j, tid));
        return parts.every(x => x) ? T.or(...(parts as Term[])) : undefined;
    }
    if (body.fn === 'ite' && !mentions(body.args[0], j.name)) {
        const a = eliminate(body.args[1], j, tid), b = eliminate(body.args[2], j, tid);
        return a && b ? T.or(T.and(body.args[0], a), T.and(T.not(body.args[0]), b)) : undefined;
    }
    const conjuncts = body.fn === 'and' ? body.args : [body];
    for (const c of conjuncts) {
        if (c.t === 'app' && c.fn === '=' && c.args.length === 2) {
            const [l, r] = c.args;
            const e = l.t === 'var' && l.name === j.name && !mentions(r, j.name) ? r
                : r.t === 'var' && r.name === j.name && !mentions(l, j.name) ? l : undefined;
            if (e) return T.and(T.cmp('>', e, T.int(0)), T.ne(e, tid), T.substitute(body, new Map([[j.name, e]])));
        }
    }
    return undefined;
}

// ------------------------------------------------------------------ final fields and built-in rules

function finalConjunct(vocab: Vocabulary, f: FieldModel): Conjunct {
    const map = vocab.varOfField(f.id);
    const origin = f.isFinal ? `${f.id} is final` : `${f.id} is written by no thread after initialization`;
    const base = { kind: 'final' as const, origin, text: `${f.name}' == ${f.name}`, field: f, maps: new Set([map]) };
    if (f.isStatic) {
        return { ...base, frames: [{ map, params: [], keep: T.TRUE }], relation: T.eq(vocab.read(map, [], EPOST), vocab.read(map, [], EPRE)) };
    }
    const [k] = keyParams(vocab, map, 'k!');
    const o = T.v('o!f', 'Ref');
    return {
        ...base,
        frames: [{ map, params: [k], keep: allocated(T.v(k.name, 'Ref'), EPRE) }],
        relation: T.forall([{ name: 'o!f', sort: 'Ref' }], T.implies(allocated(o, EPRE), T.eq(vocab.read(map, [o], EPOST), vocab.read(map, [o], EPRE)))),
    };
}

/** Built-in assumptions every thread makes of the others (monitors, allocation, private objects). */
export function builtinConjuncts(vocab: Vocabulary): Conjunct[] {
    if (!vocab.has(ALLOC)) return [];
    const o = T.v('o!b', 'Ref');
    const ov: BoundVar[] = [{ name: 'o!b', sort: 'Ref' }];
    const out: Conjunct[] = [
        {
            kind: 'builtin', origin: 'monitors', builtin: 'holder', maps: new Set([HOLDER]), frames: [],
            text: "o.holder == tid <==> o.holder' == tid (no other thread takes or releases a monitor this thread holds)",
            relation: T.forall(ov, T.iff(T.eq(holderOf(o, EPRE), TID), T.eq(holderOf(o, EPOST), TID))),
        },
        {
            kind: 'builtin', origin: 'allocation', builtin: 'alloc', maps: new Set([ALLOC]), frames: [],
            text: 'allocated objects stay allocated',
            relation: T.forall(ov, T.implies(allocated(o, EPRE), allocated(o, EPOST))),
        },
        {
            kind: 'builtin', origin: 'ownership', builtin: 'owner', maps: new Set([OWNER, ALLOC]), frames: [],
            text: 'objects private to this thread stay private; published objects stay published',
            relation: T.forall(ov, T.and(T.iff(T.eq(ownerOf(o, EPRE), TID), T.eq(ownerOf(o, EPOST), TID)),
                T.implies(T.and(allocated(o, EPRE), T.eq(ownerOf(o, EPRE), T.int(0))), T.eq(ownerOf(o, EPOST), T.int(0))))),
        },
    ];
    // Objects private to this thread are not changed by others.
    const maps = vocab.allVars().filter(x => x.kind === 'field' || x.kind === 'elems' || x.kind === 'linked').map(x => x.name);
    if (maps.length > 0) {
        out.push({
            kind: 'builtin', origin: 'private objects', maps: new Set([OWNER, ALLOC, ...maps]),
            text: 'objects private to this thread are not changed by others',
            frames: maps.map(m => {
                const params = keyParams(vocab, m, 'k!');
                return { map: m, params, keep: T.and(allocated(T.v(params[0].name, 'Ref'), EPRE), T.eq(ownerOf(T.v(params[0].name, 'Ref'), EPRE), TID)) };
            }),
            relation: T.and(...maps.map(m => {
                const params = keyParams(vocab, m, 'p!');
                const keys = params.map(p => T.v(p.name, p.sort));
                return T.forall(params, T.implies(T.and(allocated(keys[0], EPRE), T.eq(ownerOf(keys[0], EPRE), TID)), T.eq(vocab.read(m, keys, EPOST), vocab.read(m, keys, EPRE))));
            })),
        });
    }
    return out;
}

// ------------------------------------------------------------------ guards

/** Which threads (by single-instance id) write each field after initialization; a replicated writer means "any". */
export function inferGuards(program: ProgramModel, vocab: Vocabulary, writers: Map<string, { ids: Set<number>; any: boolean }>): Map<string, Guard> {
    const guards = new Map<string, Guard>();
    for (const f of vocab.fields.values()) {
        if (f.writableIf.length > 0) {
            guards.set(f.id, { field: f, clauses: f.writableIf });
            continue;
        }
        const w = writers.get(f.id);
        if (w?.any) continue; // written by a replicated thread (or any caller): unprotected
        const ids = [...(w?.ids ?? [])].sort((a, b) => a - b);
        const names = ids.map(id => program.threads.find(t => t.id === id)?.name ?? String(id));
        guards.set(f.id, { field: f, clauses: [], inferred: { writers: ids, text: ids.length === 0 ? 'false' : names.map(n => `tid == ${n}`).join(' || ') } });
    }
    return guards;
}

/**
 * Guards of the elements of the arrays each owning field owns: its declared
 * `writable_if`, or `tid == T1 || ...` for the single-instance threads that
 * write them (`false` when none does); none when a replicated thread may.
 */
export function inferElementGuards(program: ProgramModel, vocab: Vocabulary, ownership: ArrayOwnership): Map<string, Guard> {
    const out = new Map<string, Guard>();
    for (const id of ownership.owners) {
        const f = vocab.fields.get(id);
        if (!f) continue;
        if (f.writableIf.length > 0) {
            out.set(id, { field: f, clauses: f.writableIf });
            continue;
        }
        const w = ownership.elementWriters.get(id);
        if (!w || w.any) continue;
        const ids = [...w.ids].sort((a, b) => a - b);
        const names = ids.map(i => program.threads.find(t => t.id === i)?.name ?? String(i));
        out.set(id, { field: f, clauses: [], inferred: { writers: ids, text: ids.length === 0 ? 'false' : names.map(n => `tid == ${n}`).join(' || ') } });
    }
    return out;
}

// ------------------------------------------------------------------ E(p)

/** E(p): the environment assumption of a procedure or thread (language.md §6), from the clauses and fields it involves. */
export function environmentOf(spec: SpecContext, classes: Set<string>, topLevel: boolean, fields: Set<string>): Conjunct[] {
    const { vocab } = spec;
    // (each conjunct is made once per program: the checks share them, and so do their fingerprints' parts)
    let made = conjunctsOf.get(spec);
    if (!made) conjunctsOf.set(spec, made = new Map());
    const once = <T>(key: unknown, make: () => T): T => {
        if (!made!.has(key)) made!.set(key, make());
        return made!.get(key) as T;
    };
    const out: Conjunct[] = [];
    if (topLevel) for (const c of vocab.program.environments) out.push(once(c, () => clauseConjunct(vocab, c, undefined)));
    for (const cls of vocab.program.classes) {
        if (!classes.has(cls.name)) continue;
        for (const c of cls.environments) out.push(once(c, () => clauseConjunct(vocab, c, cls.name)));
    }
    for (const fid of fields) {
        const f = vocab.fields.get(fid);
        if (!f) continue;
        const g = spec.guards.get(fid);
        // final, or written by no thread after initialization: stable everywhere (checking.md)
        if (f.isFinal || vocab.stableFields.has(fid)) out.push(once(`final:${fid}`, () => finalConjunct(vocab, f)));
        else if (g) out.push(once(`writable:${fid}`, () => writableConjunct(vocab, g)));
        const eg = spec.elementGuards.get(fid);
        if (eg) out.push(once(`elements:${fid}`, () => elementsConjunct(vocab, eg)));
    }
    for (const [map, writers] of vocab.elementWriters) out.push(once(`stable:${map}`, () => stableElementsConjunct(vocab, map, writers)));
    for (const map of vocab.privateElements) if (vocab.elementWriters.get(map)?.length !== 0) out.push(once(`published:${map}`, () => publishedElementsConjunct(vocab, map)));
    append(out, once('builtin', () => builtinConjuncts(vocab)));
    return out;
}

const conjunctsOf = new WeakMap<SpecContext, Map<unknown, unknown>>();

/**
 * The elements of a sort that no thread writes do not change (checking.md:
 * stable everywhere); those that only thread T writes do not change for T.
 */
function stableElementsConjunct(vocab: Vocabulary, map: string, writers: number[]): Conjunct {
    const [a, i] = keyParams(vocab, map, 'k!');
    const o = T.v('o!e', 'Ref');
    const k = T.v('i!e', 'Int');
    const sort = vocab.stateVar(map).sort;
    const what = sort === 'Int' ? 'int' : sort === 'Bool' ? 'boolean' : 'reference';
    const only = writers.length === 1 ? T.eq(TID, T.int(writers[0])) : T.TRUE;
    const name = writers.length === 1 ? vocab.program.threads.find(t => t.id === writers[0])?.name ?? String(writers[0]) : undefined;
    return {
        kind: 'final', maps: new Set([map]),
        origin: name ? `only ${name} writes ${what} array elements` : `no thread writes ${what} array elements`,
        text: `${name ? `tid == ${name} ==> ` : ''}a[i]' == a[i] (every ${what} array)`,
        frames: [{ map, params: [a, i], keep: T.and(only, allocated(T.v(a.name, 'Ref'), EPRE)) }],
        relation: T.implies(only, T.forall([{ name: 'o!e', sort: 'Ref' }, { name: 'i!e', sort: 'Int' }],
            T.implies(allocated(o, EPRE), T.eq(vocab.read(map, [o, k], EPOST), vocab.read(map, [o, k], EPRE))))),
    };
}

/**
 * The elements of a published array of a sort that threads write only while the array is
 * private to the writer (inferred: ProgramModel.privateElements; every element write is checked
 * to be to a private array) do not change.
 */
function publishedElementsConjunct(vocab: Vocabulary, map: string): Conjunct {
    const [a, i] = keyParams(vocab, map, 'k!');
    const o = T.v('o!e', 'Ref');
    const k = T.v('i!e', 'Int');
    const sort = vocab.stateVar(map).sort;
    const what = sort === 'Int' ? 'int' : sort === 'Bool' ? 'boolean' : 'reference';
    const published = (x: Term) => T.and(allocated(x, EPRE), T.eq(ownerOf(x, EPRE), T.int(0)));
    return {
        kind: 'final', maps: new Set([map, ALLOC, OWNER]),
        origin: `inferred: threads write ${what} array elements only while the array is private to the writer`,
        text: `a[i]' == a[i] (every published ${what} array)`,
        frames: [{ map, params: [a, i], keep: published(T.v(a.name, 'Ref')) }],
        relation: T.forall([{ name: 'o!e', sort: 'Ref' }, { name: 'i!e', sort: 'Int' }],
            T.implies(published(o), T.eq(vocab.read(map, [o, k], EPOST), vocab.read(map, [o, k], EPRE)))),
    };
}

// ------------------------------------------------------------------ I(p)

/** A conjunct of I(p): a state predicate (over the current state), for every published object of its class when it is about `this`. */
export interface Invariant {
    /** The class it belongs to (undefined: a top-level invariant). */
    className?: string;
    origin: string;
    text: string;
    clause: Clause;
    maps: Set<string>;
    /**
     * Over the current state; a class invariant is `forall o: C. published(o)
     * && o != null && initialized(o) ==> P(o)` (`initializedFacts`: what holds
     * of every object that ran its initializers, as every published one did).
     */
    term: Term;
}

export function invariantConjunct(vocab: Vocabulary, clause: Clause, className: string | undefined): Invariant {
    const quantified = className !== undefined && mentionsThis(clause.expr);
    const o = T.v('o!inv', 'Ref');
    const body = translate(clause.expr, stateCtx(vocab, TID, undefined, quantified ? o : undefined));
    const initialized = quantified ? initializedFacts(vocab, o, classType(className!)) : T.TRUE;
    const term = quantified
        ? T.forall([objVar('o!inv', className!)], T.implies(T.and(publishedOf(vocab, classType(className!), o), T.ne(o, T.NULL), initialized), body))
        : body;
    const maps = mapsOfExpr(clause.expr, vocab);
    if (quantified) maps.add(ALLOC).add(OWNER);
    for (const r of T.readsOf(initialized)) maps.add(r.map);
    const of = className ? `class ${className}` : 'the program';
    return { className, origin: clause.inferred ? `inferred invariant of ${of} (${clause.inferred.origin})` : `invariant of ${of}`, text: clause.text, clause, maps, term };
}

/** Every invariant of the program. */
export function allInvariants(vocab: Vocabulary): Invariant[] {
    const out: Invariant[] = vocab.program.invariants.map(c => invariantConjunct(vocab, c, undefined));
    for (const cls of vocab.program.classes) for (const c of cls.invariants) out.push(invariantConjunct(vocab, c, cls.name));
    return out;
}

/** Every `environment` clause of the program (what each step must guarantee to the others). */
export function allEnvironmentClauses(vocab: Vocabulary): Conjunct[] {
    const out: Conjunct[] = vocab.program.environments.map(c => clauseConjunct(vocab, c, undefined));
    for (const cls of vocab.program.classes) for (const c of cls.environments) out.push(clauseConjunct(vocab, c, cls.name));
    return out;
}

/** Several writable_if clauses as one condition: `(A) && (B)` (one clause as written). */
export function clausesText(clauses: Array<{ text: string }>): string {
    return clauses.length === 1 ? clauses[0].text : clauses.map(c => `(${c.text})`).join(' && ');
}

import type { Clause, Expr, FieldModel, ProgramModel, Range } from '../model/program.js';
import { ALLOC, elemsVar, HOLDER, OWNER, sortOfType, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import type { Reach } from '../analysis/reach.js';
import { reachOf, threadReach } from '../analysis/reach.js';
import { mentionsThis, publishedOfClass, translate, visit, type TrContext } from './translate.js';

/** Reads a state variable in one of the states a formula relates. */
export type StateFn = (name: string) => Term;

/**
 * One conjunct of E(p) or I(p), with its origin (shown on hover and in
 * messages). `build` instantiates it between two states for a thread id.
 */
export interface Conjunct {
    kind: 'env' | 'writable' | 'builtin' | 'invariant' | 'candidate';
    origin: string;
    /** Calvin text of the conjunct, for hover. */
    text: string;
    build(pre: StateFn, post: StateFn, tid: Term): Term;
    /** State variables it mentions (pre or post). */
    vars: Set<string>;
    /** The source clause (environment, invariant, writable_if). */
    clause?: Clause;
    field?: FieldModel;
    /**
     * "keep(o) ==> v'[o] == v[o]" parts (o undefined for a scalar v): an
     * environment step can be built from them as `v' = lambda o. keep(o) ? v[o] : havoc[o]`,
     * without quantifiers.
     */
    frames?: Frame[];
    /** The frames (or the built-in construction) say all the conjunct says: it need not be assumed as well. */
    exact?: boolean;
    /** Built-in conjuncts the environment step constructs directly. */
    construct?: 'holder' | 'alloc' | 'owner';
}

export interface Frame {
    var: string;
    keep(pre: StateFn, tid: Term, o: Term | undefined): Term;
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
}

function ctxFor(vocab: Vocabulary, pre: StateFn, post: StateFn, tid: Term, thisTerm?: Term): TrContext {
    return {
        vocab,
        state: (name, primed) => (primed ? post(name) : pre(name)),
        local: id => { throw new Error(`local ${id} in a specification clause`); },
        thisTerm,
        tid,
    };
}

function varsOf(e: Expr, vocab: Vocabulary, out = new Set<string>()): Set<string> {
    visit(e, x => {
        if (x.kind === 'global' || x.kind === 'field') out.add(vocab.varOfField(x.field));
        else if (x.kind === 'holder') out.add(HOLDER);
        else if (x.kind === 'index') out.add(elemsVar(x.type.kind === 'null' ? 'Ref' : sortOfType(x.type)));
        else if (x.kind === 'this') out.add(ALLOC).add(OWNER);
    });
    return out;
}

/** A class clause about `this` holds for every published object of the class. */
function clauseConjunct(vocab: Vocabulary, kind: 'env' | 'invariant', clause: Clause, className: string | undefined): Conjunct {
    const quantified = className !== undefined && mentionsThis(clause.expr);
    const origin = `${kind === 'env' ? 'environment' : 'invariant'} of ${className ? `class ${className}` : 'the program'}`;
    const frames = kind === 'env' ? clauseFrames(vocab, clause.expr, quantified ? className : undefined) : undefined;
    return {
        kind, origin, clause, text: clause.text, frames, exact: frames !== undefined,
        vars: varsOf(clause.expr, vocab),
        build(pre, post, tid) {
            if (!quantified) return translate(clause.expr, ctxFor(vocab, pre, post, tid));
            const o = T.v(`o!${className}`, 'Ref');
            const body = translate(clause.expr, ctxFor(vocab, pre, post, tid, o));
            // Triggers: the object's fields in the states involved. Without them Z3 picks
            // `dtype o` or `alloc[o]`, which match every reference in every state (a matching loop).
            const patterns: Term[][] = [];
            for (const v of this.vars) {
                const kind = vocab.vars.get(v)?.kind;
                if (kind !== 'field' && kind !== 'holder') continue;
                for (const s of [post(v), pre(v)]) if (!patterns.some(p => T.sameTerm(p[0], T.select(s, o)))) patterns.push([T.select(s, o)]);
            }
            return T.forall([{ name: `o!${className}`, sort: 'Ref' }], T.implies(publishedOfClass({ state: (n) => pre(n) }, vocab, className!, o), body), patterns.length > 0 ? patterns : undefined);
        },
    };
}

/**
 * An environment clause of the form `A ==> e' == e` (or a conjunction of
 * such) where e is a global, a field of `this` (class clauses) or a field of an
 * object the clause names: frames "keep e while A".
 */
function clauseFrames(vocab: Vocabulary, e: Expr, className: string | undefined): Frame[] | undefined {
    const parts: Array<{ cond?: Expr; target: Expr }> = [];
    const collect = (x: Expr): boolean => {
        if (x.kind === 'binary' && x.op === '&&') return collect(x.left) && collect(x.right);
        if (x.kind === 'binary' && x.op === '==>') {
            const t = unchangedTarget(x.right);
            if (!t) return false;
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
        if (cond && hasPrime(cond)) return undefined;
        const ctx = (pre: StateFn, tid: Term, o: Term | undefined) => ctxFor(vocab, pre, pre, tid, o);
        const condAt = (pre: StateFn, tid: Term, o: Term | undefined) => cond ? translate(cond, ctx(pre, tid, o)) : T.TRUE;
        if (target.kind === 'global') {
            if (className) return undefined; // "for every object, A(o) ==> g unchanged" needs a quantifier
            frames.push({ var: vocab.varOfField(target.field), keep: (pre, tid) => condAt(pre, tid, undefined) });
        } else if (target.kind === 'field') {
            const name = vocab.varOfField(target.field);
            if (target.receiver.kind === 'this' && className) {
                frames.push({ var: name, keep: (pre, tid, o) => T.and(publishedOfClass({ state: n => pre(n) }, vocab, className, o!), condAt(pre, tid, o)) });
            } else if (!className && !mentionsThis(target.receiver)) {
                const recv = target.receiver;
                frames.push({ var: name, keep: (pre, tid, o) => T.and(T.eq(o!, translate(recv, ctx(pre, tid, undefined))), condAt(pre, tid, undefined)) });
            } else return undefined;
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

function hasPrime(e: Expr): boolean {
    let found = false;
    visit(e, x => { if ((x.kind === 'global' || x.kind === 'field' || x.kind === 'holder' || x.kind === 'index') && x.primed) found = true; });
    return found;
}

function sameExpr(a: Expr, b: Expr): boolean {
    if (a.kind !== b.kind) return false;
    switch (a.kind) {
        case 'this': case 'tid': case 'null': return true;
        case 'var': return a.id === (b as typeof a).id;
        case 'global': return a.field === (b as typeof a).field;
        case 'field': return a.field === (b as typeof a).field && sameExpr(a.receiver, (b as typeof a).receiver);
        default: return false;
    }
}

/**
 * The derived conjunct of a `writable_if P` (language.md §6):
 * `f' != f ==> (\exists j; j != 0 && j != tid; P[tid := j])`, for every
 * published object of the class for an instance field, and for the elements of
 * the array it references when f is array-typed.
 */
function writableConjunct(vocab: Vocabulary, g: Guard): Conjunct {
    const f = g.field;
    const name = vocab.varOfField(f.id);
    const vars = new Set<string>([name]);
    for (const c of g.clauses) varsOf(c.expr, vocab, vars);
    const isArray = f.type.kind === 'array';
    const elems = isArray ? elemsVar(sortOfType((f.type as { element: import('../model/program.js').Type }).element)) : undefined;
    if (elems) vars.add(elems);
    if (!f.isStatic) vars.add(ALLOC).add(OWNER);
    const guardText = g.inferred ? g.inferred.text : clausesText(g.clauses);
    // Another thread may write f only where the guard holds for it: keep f where no other thread's guard holds.
    const otherMayWrite = (pre: StateFn, tid: Term, obj: Term | undefined) => existsOtherThread(tid, j => guardTerm(vocab, g, pre, j, obj));
    return {
        kind: 'writable', field: f, clause: g.clauses[0],
        exact: !isArray,
        frames: [{
            var: name,
            keep: (pre, tid, o) => o
                ? T.and(publishedOfClass({ state: n => pre(n) }, vocab, f.owner!, o), T.not(otherMayWrite(pre, tid, o)))
                : T.not(otherMayWrite(pre, tid, undefined)),
        }],
        origin: g.inferred ? `inferred protection of ${f.id} (${g.inferred.writers.length === 0 ? 'no thread writes it' : 'the only threads that write it'})` : `writable_if of ${f.id}`,
        text: `${f.name}' != ${f.name} ==> (\\exists int j; j != 0 && j != tid; (${guardText})[tid := j])`,
        vars,
        build(pre, post, tid) {
            const guardAt = (obj: Term | undefined) => otherMayWrite(pre, tid, obj);
            if (f.isStatic) {
                const changed = T.ne(post(name), pre(name));
                const elemChanged = elems ? T.ne(T.select(post(elems), pre(name)), T.select(pre(elems), pre(name))) : T.FALSE;
                return T.implies(T.or(changed, elemChanged), guardAt(undefined));
            }
            const o = T.v('o!w', 'Ref');
            const changed = T.ne(T.select(post(name), o), T.select(pre(name), o));
            const elemChanged = elems
                ? T.ne(T.select(post(elems), T.select(pre(name), o)), T.select(pre(elems), T.select(pre(name), o)))
                : T.FALSE;
            return T.forall([{ name: 'o!w', sort: 'Ref' }],
                T.implies(T.and(publishedOfClass({ state: n => pre(n) }, vocab, f.owner!, o), T.or(changed, elemChanged)), guardAt(o)),
                [[T.select(post(name), o)]]);
        },
    };
}

/**
 * `\exists int j; j != 0 && j != tid && P(j)`: eliminated where P pins j down
 * (`j == e` in every disjunct, as in `tid == Producer && ...` or `o.holder == tid`).
 */
export function existsOtherThread(tid: Term, p: (j: Term) => Term): Term {
    const j = { t: 'var' as const, name: 'j!w', sort: 'Int' as const };
    const body = p(j);
    const elim = eliminate(body, j, tid);
    if (elim) return elim;
    return T.exists([{ name: 'j!w', sort: 'Int' }], T.and(T.ne(j, T.int(0)), T.ne(j, tid), body));
}

function mentions(t: Term, name: string): boolean {
    return T.freeVars(t).has(name);
}

/** \exists j (j != 0, j != tid). body — without the quantifier, or undefined when j is not pinned down. */
function eliminate(body: Term, j: Extract<Term, { t: 'var' }>, tid: Term): Term | undefined {
    if (!mentions(body, j.name)) return T.and(body, T.TRUE);
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
            if (e) return T.and(T.ne(e, T.int(0)), T.ne(e, tid), T.substitute(body, new Map([[j.name, e]])));
        }
    }
    return undefined;
}

/** P[tid := j] (and this := obj) in the pre-state. */
export function guardTerm(vocab: Vocabulary, g: Guard, pre: StateFn, tid: Term, obj: Term | undefined): Term {
    if (g.inferred) return T.or(...g.inferred.writers.map(w => T.eq(tid, T.int(w))));
    return T.and(...g.clauses.map(c => translate(c.expr, ctxFor(vocab, pre, pre, tid, obj))));
}

/** Built-in assumptions every thread makes of the others (monitors, allocation, private objects). */
export function builtinConjuncts(vocab: Vocabulary): Conjunct[] {
    const o = T.v('o!b', 'Ref');
    const ov = [{ name: 'o!b', sort: 'Ref' as const }];
    const maps = vocab.allVars().filter(v => v.kind === 'field' || v.kind === 'elems').map(v => v.name);
    const all: Conjunct[] = [
        {
            kind: 'builtin', origin: 'monitors', text: "o.holder == tid <==> o.holder' == tid (no other thread takes or releases a monitor this thread holds)",
            vars: new Set([HOLDER]), exact: true, construct: 'holder',
            build: (pre, post, tid) => T.forall(ov, T.iff(T.eq(T.select(pre(HOLDER), o), tid), T.eq(T.select(post(HOLDER), o), tid)), [[T.select(post(HOLDER), o)]]),
        },
        {
            kind: 'builtin', origin: 'allocation', text: 'allocated objects stay allocated',
            vars: new Set([ALLOC]), exact: true, construct: 'alloc',
            build: (pre, post) => T.forall(ov, T.implies(T.select(pre(ALLOC), o), T.select(post(ALLOC), o)), [[T.select(post(ALLOC), o)]]),
        },
        {
            kind: 'builtin', origin: 'ownership', text: 'objects private to this thread stay private; published objects stay published',
            vars: new Set([OWNER]), exact: true, construct: 'owner',
            build: (pre, post, tid) => T.and(
                T.forall(ov, T.iff(T.eq(T.select(pre(OWNER), o), tid), T.eq(T.select(post(OWNER), o), tid)), [[T.select(post(OWNER), o)]]),
                T.forall(ov, T.implies(T.eq(T.select(pre(OWNER), o), T.int(0)), T.eq(T.select(post(OWNER), o), T.int(0))), [[T.select(post(OWNER), o)]]),
            ),
        },
        {
            kind: 'builtin', origin: 'private objects', text: 'objects private to this thread are not changed by others',
            vars: new Set([OWNER, ...maps]), exact: true,
            frames: maps.map(m => ({ var: m, keep: (pre: StateFn, tid: Term, obj: Term | undefined) => T.eq(T.select(pre(OWNER), obj!), tid) })),
            build: (pre, post, tid) => T.and(...maps.map(m => T.forall(ov, T.implies(T.eq(T.select(pre(OWNER), o), tid), T.eq(T.select(post(m), o), T.select(pre(m), o))), [[T.select(post(m), o)]]))),
        },
    ];
    // Only the bookkeeping the program has (vocabulary: heapFeatures).
    return all.filter(c => [...c.vars].every(v => vocab.has(v)));
}

/** Which threads (by single-instance id) write each field after initialization; a replicated writer means "any". */
export function inferGuards(program: ProgramModel, vocab: Vocabulary): Map<string, Guard> {
    const writers = new Map<string, { ids: Set<number>; any: boolean }>();
    // A method with an abstraction that no thread reaches is checked for any caller: its writes are by "any thread".
    const reached = new Set(program.threads.flatMap(t => [...threadReach(program, t).methods]));
    for (const m of vocab.allMethods()) {
        if (!m.abstraction || reached.has(m.id)) continue;
        for (const f of reachOf(program, m.body, m.owner).writes) writers.set(f, { ids: new Set(), any: true });
        for (const a of [...m.abstraction.steps, ...(m.abstraction.stutter ? [m.abstraction.stutter] : [])]) {
            for (const e of a.frame) writers.set(e.field, { ids: new Set(), any: true });
        }
    }
    for (const t of program.threads) {
        for (const f of threadReach(program, t).writes) {
            const w = writers.get(f) ?? { ids: new Set(), any: false };
            if (t.id === undefined) w.any = true;
            else w.ids.add(t.id);
            writers.set(f, w);
        }
    }
    const guards = new Map<string, Guard>();
    for (const f of vocab.fields.values()) {
        if (f.writableIf.length > 0) {
            guards.set(f.id, { field: f, clauses: f.writableIf });
            continue;
        }
        const w = writers.get(f.id);
        if (w?.any) continue; // written by a replicated thread: unprotected
        const ids = [...(w?.ids ?? [])].sort((a, b) => a - b);
        const names = ids.map(id => program.threads.find(t => t.id === id)?.name ?? String(id));
        guards.set(f.id, { field: f, clauses: [], inferred: { writers: ids, text: ids.length === 0 ? 'false' : names.map(n => `tid == ${n}`).join(' || ') } });
    }
    return guards;
}

/** E(p): the environment assumption of a procedure or thread (language.md §6). */
export function environmentOf(spec: SpecContext, reach: Reach, topLevel: boolean): Conjunct[] {
    const { vocab } = spec;
    const out: Conjunct[] = [];
    if (topLevel) for (const c of vocab.program.environments) out.push(clauseConjunct(vocab, 'env', c, undefined));
    for (const cls of vocab.program.classes) {
        if (!reach.classes.has(cls.name)) continue;
        for (const c of cls.environments) out.push(clauseConjunct(vocab, 'env', c, cls.name));
    }
    for (const fid of reach.fields) {
        const g = spec.guards.get(fid);
        const f = vocab.fields.get(fid);
        if (!g || !f || f.isFinal) continue;
        out.push(writableConjunct(vocab, g));
    }
    // final fields never change
    for (const fid of reach.fields) {
        const f = vocab.fields.get(fid);
        if (f?.isFinal) out.push(finalConjunct(vocab, f));
    }
    out.push(...builtinConjuncts(vocab));
    return out;
}

function finalConjunct(vocab: Vocabulary, f: FieldModel): Conjunct {
    const name = vocab.varOfField(f.id);
    return {
        kind: 'builtin', origin: `${f.id} is final`, text: `${f.name}' == ${f.name}`, field: f,
        vars: new Set([name]), exact: true,
        frames: [{ var: name, keep: (pre, _tid, o) => (o ? T.select(pre(ALLOC), o) : T.TRUE) }],
        build: (pre, post) => {
            if (f.isStatic) return T.eq(post(name), pre(name));
            const o = T.v('o!f', 'Ref');
            return T.forall([{ name: 'o!f', sort: 'Ref' }], T.implies(T.select(pre(ALLOC), o), T.eq(T.select(post(name), o), T.select(pre(name), o))), [[T.select(post(name), o)]]);
        },
    };
}

/** I(p): the invariant of a procedure or thread. */
export function invariantOf(spec: SpecContext, reach: Reach, topLevel: boolean): Conjunct[] {
    const { vocab } = spec;
    const out: Conjunct[] = [];
    if (topLevel) for (const c of vocab.program.invariants) out.push(clauseConjunct(vocab, 'invariant', c, undefined));
    for (const cls of vocab.program.classes) {
        if (!reach.classes.has(cls.name)) continue;
        for (const c of cls.invariants) out.push(clauseConjunct(vocab, 'invariant', c, cls.name));
    }
    return out;
}

/** A one-state conjunct's value in a state. */
export function holds(c: Conjunct, state: StateFn, tid: Term): Term {
    return c.build(state, state, tid);
}

export type { Range };

/** Several writable_if clauses as one condition: `(A) && (B)` (one clause as written). */
export function clausesText(clauses: Array<{ text: string }>): string {
    return clauses.length === 1 ? clauses[0].text : clauses.map(c => `(${c.text})`).join(' && ');
}

import { append } from '../smt/append.js';
import type { Expr, FieldModel } from '../model/program.js';
import { ALLOC, heapFacts, HOLDER, OWNER, typeKey, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { BoundVar, Term } from '../smt/term.js';
import { symbol, toSmt } from '../smt/term.js';
import type { QueryLog, SolverSession, Trace } from '../solver-host/types.js';
import {
    clauseConjunct, clausesText, EPOST, EPRE, guardTerm, mapsOfExpr, stateCtx, TID, unchangedWhile, type Conjunct, type Guard, type Invariant, type SpecContext, type StateCondition,
} from '../spec/environment.js';
import { exprText, hasPrime as hasPrimeExpr, mentionsThis, translate } from '../spec/translate.js';
import { visit } from '../model/visit.js';
import { userDisjuncts } from '../infer/infer.js';
import { atomExpr, atomKey, atomPath, atomText, type Atom, type Namer } from '../infer/atoms.js';
import { envState } from '../encode/env-step.js';
import { Formulas, PRELUDE, type Ground, type State } from '../encode/formulas.js';

export interface Closure {
    /** The reflexive-transitive relation used for E* (built-in rules and surviving candidates). */
    conjuncts: Conjunct[];
    /** True when every conjunct of E survived: E* = E (the paper's first optimization). */
    exact: boolean;
    /** Conjuncts of E dropped because they are not transitive (E* is over-approximated by the rest). */
    dropped: Conjunct[];
    /** Candidates derived from guards that were kept. */
    derived: Conjunct[];
    /** The solver could not decide: E* is over-approximated by the built-in rules only. */
    unknown?: string;
    queries: number;
}

/**
 * E*: Calvin replaces `E*` by `E` when E is reflexive and transitive. When it
 * is not (a `writable_if` conjunct is not, for instance: a thread may acquire
 * a lock and then write), Houdini finds the largest set S of candidates —
 * the conjuncts of E and conjuncts derived from the `writable_if` guards
 * ("while P holds for me, f does not change") — such that E implies S and S
 * is reflexive and closed under E (S;E ⊆ S). Then E* ⊆ S: S over-approximates
 * E* soundly, and is what the checks use for the environment's steps.
 *
 * One incremental query per Houdini round, over three states s1 -S-> s2 -E-> s3
 * (and s1 -E-> t2), every candidate checked at an arbitrary object.
 */
export async function closure(spec: SpecContext, env: Conjunct[], inv: Invariant[], tidConstraint: Term, session: SolverSession, log?: QueryLog, options: { syntactic?: boolean; trace?: Trace } = {}): Promise<Closure> {
    const { vocab, guards } = spec;
    const what = (f: FieldModel) => (spec.elementGuards.has(f.id) ? 'both' as const : 'field' as const);
    const builtin = env.filter(c => c.kind === 'builtin' || c.kind === 'final');
    const own = env.filter(c => c.kind !== 'builtin' && c.kind !== 'final');
    const derived: Conjunct[] = [];
    for (const c of own) if (c.kind === 'writable' && c.field) {
        const id = c.field.id;
        // The elements' conjunct derives candidates (from their own guard) only when the field has
        // no writable conjunct of its own, whose candidates keep both: a stable field (final, or
        // written by no thread after initialization). Without them E* loses the elements'
        // protection (its conjunct is not transitive: a thread may take the monitor, then write)
        // and a monitor's invariant over them fails on the environment's steps.
        if (c.elements && own.some(d => d.kind === 'writable' && !d.elements && d.field?.id === id)) continue;
        const g = c.elements ? spec.elementGuards.get(id) : guards.get(id);
        const w = c.elements ? () => 'elements' as const : what;
        append(derived, derivedCandidates(vocab, g, w));
        append(derived, exclusionCandidates(vocab, g, w));
        append(derived, stabilizedCandidates(vocab, g, guards, w));
        append(derived, jointCandidates(vocab, g, what));
    }
    append(derived, crossCandidates(vocab, own, inv, guards, derived, what));
    append(derived, clauseParts(vocab, own));
    // the same candidate may come from a guard and from its atom
    const seen = new Set(own.map(c => c.text));
    for (let i = derived.length - 1; i >= 0; i--) {
        if (seen.has(derived[i].text)) derived.splice(i, 1);
    }
    for (const c of derived) seen.add(c.text);
    const unique = derived.filter((c, i) => derived.findIndex(d => d.text === c.text) === i);
    derived.length = 0;
    append(derived, unique);
    const candidates = [...own, ...derived];
    if (candidates.length === 0) return { conjuncts: builtin, exact: true, dropped: [], derived: [], queries: 0 };
    if (options.syntactic !== false && syntacticallyTransitive(env)) return { conjuncts: env, exact: true, dropped: [], derived: [], queries: 0 };

    const f = new Formulas(vocab);
    const maps = new Set<string>();
    for (const c of [...env, ...derived]) {
        for (const m of c.maps) maps.add(m);
        for (const fr of c.frames) { maps.add(fr.map); T.mapsOf(fr.keep, maps); }
    }
    for (const i of inv) if ([...i.maps].some(m => maps.has(m))) for (const m of i.maps) maps.add(m);
    const mapList = vocab.allVars().map(v => v.name).filter(m => maps.has(m));
    const invs = inv.filter(i => [...i.maps].every(m => maps.has(m)));

    // One arbitrary object per class (and array type): the checked candidates are checked at it,
    // and environment frames that name "some object referencing this array" are instantiated at it.
    const ground: Ground = new Map();
    const fixed = new Map<string, Term>();
    for (const c of vocab.program.classes) {
        const key = typeKey({ kind: 'class', name: c.name })!;
        const o = f.declareConst(`o!${c.name}`, 'Ref');
        fixed.set(key, o);
        ground.set(key, [o]);
        ground.set('*', [...(ground.get('*') ?? []), o]);
    }
    f.fixedSkolem = (b: BoundVar) => (b.type ? fixed.get(b.type) : undefined);

    f.decls.push(`(declare-const tid Int)`);
    const enable = candidates.map((_, k) => `e!${k}`);
    enable.forEach(e => f.decls.push(`(declare-const ${e} Bool)`));
    const asserts: Term[] = [tidConstraint];
    const s1: State = new Map(mapList.map(m => [m, f.arbitrary(m, 's1')]));
    // The objects final globals name are objects of their class too: what is assumed of every
    // object (class invariants) is instantiated at them as well (candidates about `lock.in1`).
    for (const g of vocab.fields.values()) {
        if (!isFinalClassGlobal(g)) continue;
        const name = s1.get(vocab.varOfField(g.id));
        const key = typeKey(g.type);
        if (!name || !key || !ground.has(key)) continue;
        ground.get(key)!.push(T.v(name, 'Ref'));
    }
    const scope = (states: Array<[string | undefined, State]>) => ({ states: new Map<string | undefined, State>(states), locals: new Map<string, Term>() });
    const assume = (t: Term, states: Array<[string | undefined, State]>) => {
        const g = f.ground(f.resolve(t, scope(states)), 'assume', ground);
        if (!(g.t === 'bool' && g.value)) asserts.push(g);
    };
    const wellFormed = (s: State) => {
        for (const h of heapFacts(vocab, undefined, maps)) assume(h, [[undefined, s]]);
        for (const i of invs) assume(i.term, [[undefined, s]]);
    };
    const candidateIndex = new Map(candidates.map((c, k) => [c, k]));
    // s1 -S-> s2: the candidates' frames, guarded by their enable literals
    const s2 = envState(f, mapList, [...builtin, ...candidates], s1, ground, 's2', c => {
        const k = candidateIndex.get(c);
        return k === undefined ? T.TRUE : T.v(enable[k], 'Bool');
    });
    // s2 -E-> s3 and s1 -E-> t2
    const s3 = envState(f, mapList, env, s2, ground, 's3');
    const t2 = envState(f, mapList, env, s1, ground, 't2');
    f.groundCheckedObjects = true;
    // The checks: c(s1, s3) (closed under E), c(s1, t2) (implied by E), c(s1, s1) (reflexive),
    // each at the one arbitrary object of its class (fixedSkolem): every candidate is asked about
    // on its own below, and an object per candidate would be one more object at which every
    // invariant and frame is instantiated in each of the four states (issue 15: 134 KB -> 27 KB
    // for a bounded buffer's E*, the same conjuncts kept everywhere in the corpus).
    const errs: Array<{ err: string; k: number }> = [];
    candidates.forEach((c, k) => {
        const pairs: Array<[State, State]> = [[s1, s3]];
        if (derived.includes(c)) pairs.push([s1, t2]);
        if (c.residual) pairs.push([s1, s1]);
        for (const [a, b] of pairs) {
            const cond = f.ground(f.resolve(c.relation, scope([[EPRE, a], [EPOST, b]])), 'assert', ground);
            const err = `ce!${errs.length}`;
            f.decls.push(`(declare-const ${err} Bool)`);
            asserts.push(T.eq(T.v(err, 'Bool'), T.and(T.v(enable[k], 'Bool'), T.not(cond))));
            errs.push({ err, k });
        }
    });
    // The assumptions, at every object a check is made at
    candidates.forEach((c, k) => { if (c.residual) assume(T.implies(T.v(enable[k], 'Bool'), c.residual), [[EPRE, s1], [EPOST, s2]]); });
    for (const c of env) {
        if (!c.residual) continue;
        assume(c.residual, [[EPRE, s2], [EPOST, s3]]);
        assume(c.residual, [[EPRE, s1], [EPOST, t2]]);
    }
    for (const s of [s1, s2, s3, t2]) wellFormed(s);

    asserts.push(T.or(...errs.map(e => T.v(e.err, 'Bool'))));
    const script = [PRELUDE, ...f.decls, ...f.definitions(asserts), ...asserts.map(a => `(assert ${toSmt(a)})`)].join('\n') + '\n';

    const send = async (text: string) => {
        log?.(text);
        const t0 = Date.now();
        const out = await session.eval(text);
        options.trace?.(`[closure solver] ${Date.now() - t0} ms for ${text.length} chars`);
        return out;
    };
    await send(script);
    const live = new Set(candidates.map((_, k) => k));
    let queries = 0;
    let unknown: string | undefined;
    // Each round asks, for every live candidate, whether it can fail given the others (one
    // `check-sat-assuming` each, all in one round trip): a model refutes one candidate at a
    // time, so this takes a few rounds instead of one query per dropped candidate.
    const fails = candidates.map((_, k) => {
        const mine = errs.filter(e => e.k === k).map(e => e.err);
        return mine.length === 1 ? mine[0] : `(or ${mine.join(' ')})`;
    });
    for (;;) {
        const order = [...live];
        if (order.length === 0) break;
        const lits = candidates.map((_, k) => (live.has(k) ? enable[k] : `(not ${enable[k]})`)).join(' ');
        // First one query for all of them: when none can fail (the last round, and often the
        // only one) it answers for all at once (issue 15: a round of one query per candidate
        // cost up to a second in WebAssembly).
        queries++;
        const all = (await send(`(check-sat-assuming (${lits} (or ${order.map(k => fails[k]).join(' ')})))\n`)).trim().split('\n').pop()?.trim();
        if (all === 'unsat') break;
        if (all !== 'sat') {
            unknown = all ?? 'no answer';
            live.clear();
            break;
        }
        queries += order.length;
        const text = order.map(k => `(check-sat-assuming (${lits} ${fails[k]}))`).join('\n') + '\n';
        const answers = (await send(text)).trim().split('\n').map(l => l.trim()).filter(l => l !== '');
        if (answers.length !== order.length) throw new Error(`closure: ${answers.length} answers to ${order.length} queries`);
        const undecided = answers.find(a => a !== 'sat' && a !== 'unsat');
        if (undecided) {
            unknown = undecided;
            live.clear();
            break;
        }
        let dropped = 0;
        order.forEach((k, i) => {
            if (answers[i] !== 'sat') return;
            live.delete(k);
            dropped++;
            options.trace?.(`[closure] drop ${candidates[k].text}`);
        });
        if (dropped === 0) break;
    }
    const kept = candidates.filter((_, k) => live.has(k));
    const droppedOwn = own.filter(c => !kept.includes(c));
    return {
        conjuncts: [...builtin, ...kept], exact: droppedOwn.length === 0 && !unknown, dropped: droppedOwn,
        derived: kept.filter(c => derived.includes(c)), unknown, queries,
    };
}

/**
 * E is reflexive and transitive without asking the solver when it is made of
 * frames only, each of whose `keep` conditions reads only locations that E
 * keeps under that same condition (or always), or that the built-in rules
 * keep stable (a published object stays published, a monitor this thread
 * holds stays held): the condition then still holds after any number of
 * steps, and so does the frame. (`m == tid ==> m' == m` with
 * `m == tid ==> x' == x`, for instance.)
 */
export function syntacticallyTransitive(env: Conjunct[]): boolean {
    const frames = env.flatMap(c => c.frames);
    if (env.some(c => c.residual !== undefined && !c.builtin)) return false;
    const keptUnder = (map: string, keys: Term[], keep: Term, params: string[]): boolean => frames.some(f => {
        if (f.map !== map) return false;
        if (f.keep.t === 'bool' && f.keep.value) return true;
        // the same condition, at the same keys
        if (keys.length !== f.params.length || !keys.every((k, i) => k.t === 'var' && k.name === params[i] && f.params[i].name === params[i])) return false;
        return T.sameTerm(f.keep, keep);
    });
    for (const f of frames) {
        if (f.keep.t === 'bool') continue;
        const params = f.params.map(p => p.name);
        const conjuncts = new Set((f.keep.t === 'app' && f.keep.fn === 'and' ? f.keep.args : [f.keep]).map(T.key));
        const has = (t: Term) => conjuncts.has(T.key(t));
        for (const r of T.readsOf(f.keep)) {
            if (r.state !== EPRE) return false;
            const o = r.keys[0];
            // a condition that says the object is published, private to this thread, or
            // its monitor held by this thread stays true: the built-in rules keep it
            if (r.map === ALLOC && has(r)) continue;
            if (r.map === OWNER && has(T.read(ALLOC, [o], 'Bool', EPRE)) && (has(T.eq(r, T.int(0))) || has(T.eq(r, TID)))) continue;
            if (r.map === HOLDER && has(T.eq(r, TID))) continue;
            if (!keptUnder(r.map, r.keys, f.keep, params)) return false;
        }
    }
    return true;
}

/**
 * From `writable_if P` on f: "while P holds for this thread, f does not
 * change", and the same for each atom A of P (A ==> unchanged, !A ==>
 * unchanged). For an array-typed field, the elements of the array it
 * references do not change either.
 */
function derivedCandidates(vocab: Vocabulary, g: Guard | undefined, what: (f: FieldModel) => Unchanged): Conjunct[] {
    if (!g || g.inferred) return [];
    const w = what(g.field);
    const out: Conjunct[] = [guarded(vocab, g.field, clausesText(g.clauses), (state, tid, obj) => guardTerm(vocab, g, state, tid, obj), g.clauses.flatMap(c => [...mapsOfExpr(c.expr, vocab)]), w)];
    for (const clause of g.clauses) {
        for (const atom of atomsOf(clause.expr)) {
            const build = (state: string | undefined, tid: Term, obj: Term | undefined) => translate(atom, stateCtx(vocab, tid, state, obj));
            const maps = [...mapsOfExpr(atom, vocab)];
            out.push(guarded(vocab, g.field, exprText(atom), build, maps, w));
            out.push(guarded(vocab, g.field, `!(${exprText(atom)})`, (s, t, o) => T.not(build(s, t, o)), maps, w));
        }
    }
    return out;
}

const MAX_EXCLUSIONS = 8;

/**
 * From a guard that is a disjunction of conjunctions of simple facts
 * (`a.held == tid || (b.held == tid && useB)`): the states in which no other
 * thread can satisfy any of its disjuncts, one fact of this thread against
 * each disjunct (`a.held == tid && !useB`), as "while they hold, f does not
 * change" (time-varying locks: the lock that protects f depends on a flag).
 */
function exclusionCandidates(vocab: Vocabulary, g: Guard | undefined, what: (f: FieldModel) => Unchanged): Conjunct[] {
    if (!g || g.inferred) return [];
    const ds = userDisjuncts(g.clauses);
    if (ds === 'any' || ds.length < 2) return [];
    const combos = killerCombos(ds);
    if (!combos) return [];
    const f = g.field;
    const out: Conjunct[] = [];
    for (const c of combos) {
        const k = killerCondition(vocab, c, f);
        out.push(guarded(vocab, f, k.text, (state, tid, obj) => translate(k.cond, stateCtx(vocab, tid, state, obj)), [...mapsOfExpr(k.cond, vocab)], what(f)));
    }
    return out;
}

/**
 * What this thread may know that no other thread satisfies any disjunct of a
 * guard: one fact against each disjunct (`tid == T` against `tid == T`,
 * `m.holder == tid` against `m.holder == tid`, `!useB` against `useB`), and
 * their combinations (at most MAX_EXCLUSIONS). Undefined when some disjunct
 * has no such fact.
 */
function killerCombos(ds: ReturnType<typeof userDisjuncts>): Atom[][] | undefined {
    if (ds === 'any' || ds.length === 0) return undefined;
    const killers = ds.map(d => d.atoms.flatMap((a): Atom[] => {
        switch (a.k) {
            case 'eqTid': return [a];
            case 'held': return [a];
            case 'eq': return a.c.k === 'bool' ? [{ k: 'eq', loc: a.loc, c: { k: 'bool', v: !a.c.v } }] : [{ k: 'ne', loc: a.loc, c: a.c }];
            case 'ne': return [{ k: 'eq', loc: a.loc, c: a.c }];
            default: return [];
        }
    }));
    if (killers.some(k => k.length === 0)) return undefined;
    let combos: Atom[][] = [[]];
    for (const k of killers) {
        const next: Atom[][] = [];
        for (const c of combos) for (const a of k) {
            const merged = c.some(x => atomKey(x) === atomKey(a)) ? c : [...c, a];
            if (!next.some(n => n.length === merged.length && n.every(x => merged.some(y => atomKey(x) === atomKey(y))))) next.push(merged);
        }
        combos = next.slice(0, MAX_EXCLUSIONS);
    }
    return combos;
}

/** A combination of killer atoms of f's guard as one condition (`this` is f's object). */
function killerCondition(vocab: Vocabulary, atoms: Atom[], f: FieldModel): { cond: Expr; text: string } {
    const n: Namer = { field: id => vocab.fields.get(id), threadName: id => vocab.program.threads.find(t => t.id === id)?.name ?? String(id), thisClass: f.isStatic ? undefined : f.owner };
    const exprs = atoms.map(a => atomExpr(a, n, f.nameRange));
    const cond = exprs.reduce((x, y): Expr => ({ kind: 'binary', op: '&&', left: x, right: y, type: { kind: 'boolean' }, range: f.nameRange }));
    return { cond, text: atoms.map(a => atomText(a, n)).join(' && ') };
}

const MAX_JOINT = 8;

/**
 * "While a disjunct of f's guard holds for me, f and the globals the disjunct
 * reads do not change", for a global or static f: locations whose stability
 * depends on each other are stable together, neither alone (a hand-off slot:
 * `owner` changes only while `full`, `full` only by the owner, so
 * `tid == owner && !full` keeps both, and the payload the owner writes).
 */
function jointCandidates(vocab: Vocabulary, g: Guard | undefined, what: (f: FieldModel) => Unchanged): Conjunct[] {
    if (!g || g.inferred || g.clauses.length !== 1 || (g.field.owner !== undefined && !g.field.isStatic)) return [];
    const disjuncts = (e: Expr): Expr[] => (e.kind === 'binary' && e.op === '||' ? [...disjuncts(e.left), ...disjuncts(e.right)] : [e]);
    const out: Conjunct[] = [];
    for (const d of disjuncts(g.clauses[0].expr)) {
        if (hasPrimeExpr(d) || mentionsThis(d)) continue;
        const reads = new Set<string>();
        let simple = true;
        visit(d, x => {
            if (x.kind === 'global') reads.add(x.field);
            else if (x.kind === 'field' || x.kind === 'index') simple = false;
        });
        const others = [...reads].map(id => vocab.fields.get(id)).filter((v): v is FieldModel => v !== undefined && !v.isFinal && v.id !== g.field.id);
        if (!simple || others.length === 0) continue;
        const cond: StateCondition = (state, tid, obj) => translate(d, stateCtx(vocab, tid, state, obj));
        const parts = [g.field, ...others].map(v => unchangedWhile(vocab, v, what(v), cond));
        const maps = new Set<string>(mapsOfExpr(d, vocab));
        for (const p of parts) for (const m of p.maps) maps.add(m);
        const kept = [g.field, ...others].map(v => `${v.name}' == ${v.name}`).join(' && ');
        out.push({
            kind: 'candidate', origin: `derived for ${g.field.id}`, text: `${exprText(d)} ==> ${kept}`, field: g.field, maps,
            frames: parts.flatMap(p => p.frames), relation: T.and(...parts.map(p => p.relation)),
        });
        if (out.length >= MAX_JOINT) break;
    }
    return out;
}

const MAX_STABILIZED = 16;

/**
 * "While what an atom reads cannot change, the atom stays false": for a conjunct
 * A of f's guard that reads shared state (double buffering's `this == back` in
 * `writable_if tid == Writer && this == back`), `K && !(A) ==> f unchanged`,
 * where K is what this thread may know that no other thread may write what A
 * reads (`lock.holder == tid`, from `back`'s guard `lock.holder == tid && ...`).
 * `!(A) ==> f unchanged` alone is not transitive (back may change, then the
 * writer writes), and E* then loses f's protection entirely. Only the killers
 * of globals and static fields are used (an instance field's guard speaks of
 * its own object), and final ones need none.
 */
function stabilizedCandidates(vocab: Vocabulary, g: Guard | undefined, guards: Map<string, Guard>, what: (f: FieldModel) => Unchanged): Conjunct[] {
    if (!g || g.inferred) return [];
    const out: Conjunct[] = [];
    for (const clause of g.clauses) for (const a of conjunctsOf(clause.expr)) {
        if (hasPrimeExpr(a) || mapsOfExpr(a, vocab).size === 0) continue;
        // the variables A reads, each with the conditions that keep it stable
        const reads = new Set<string>();
        let simple = true;
        visit(a, x => {
            if (x.kind === 'global') reads.add(x.field);
            else if (x.kind === 'field' || x.kind === 'index' || x.kind === 'holder') simple = false;
        });
        if (!simple || reads.size === 0) continue;
        let combos: Array<{ conds: Expr[]; texts: string[] }> = [{ conds: [], texts: [] }];
        for (const id of reads) {
            const v = vocab.fields.get(id);
            if (!v) { combos = []; break; }
            if (v.isFinal) continue;
            const gv = guards.get(id);
            const ks = gv && !gv.inferred ? killerCombos(userDisjuncts(gv.clauses)) : undefined;
            const usable = (ks ?? []).filter(k => k.every(x => atomPath(x).base.k !== 'this' && atomPath(x).base.k !== 'local'));
            const next: typeof combos = [];
            for (const c of combos) for (const k of usable) {
                const kc = killerCondition(vocab, k, v);
                next.push({ conds: [...c.conds, kc.cond], texts: [...c.texts, kc.text] });
            }
            combos = next.slice(0, MAX_EXCLUSIONS);
        }
        for (const c of combos) {
            if (c.conds.length === 0) continue; // every read is final: derivedCandidates has `!(A)`
            const notA: Expr = { kind: 'unary', op: '!', operand: a, type: { kind: 'boolean' }, range: a.range };
            const cond = [...c.conds, notA].reduce((x, y): Expr => ({ kind: 'binary', op: '&&', left: x, right: y, type: { kind: 'boolean' }, range: a.range }));
            const label = `${c.texts.join(' && ')} && !(${exprText(a)})`;
            out.push(guarded(vocab, g.field, label, (state, tid, obj) => translate(cond, stateCtx(vocab, tid, state, obj)), [...mapsOfExpr(cond, vocab)], what(g.field)));
            if (out.length >= MAX_STABILIZED) return out;
        }
    }
    return out;
}

const MAX_CROSS = 160;

/**
 * "A ==> f unchanged" for the protected fields f of E and the boolean fields A
 * (flags) that the invariants, guards and environment clauses involved
 * mention (of the same class, for an instance field): protection that holds
 * because of other state, such as a ghost flag that says a reader is inside
 * (`r1In ==> data' == data`).
 */
function crossCandidates(vocab: Vocabulary, own: Conjunct[], inv: Invariant[], guards: Map<string, Guard>, existing: Conjunct[], what: (f: FieldModel) => 'field' | 'both'): Conjunct[] {
    const atoms: Array<{ e: Expr; cls?: string }> = [];
    const add = (e: Expr, cls: string | undefined) => {
        const boolReads: Expr[] = [];
        visit(e, x => { if ((x.kind === 'global' || x.kind === 'field') && x.type.kind === 'boolean' && !x.primed) boolReads.push(x); });
        for (const a of boolReads) {
            const quantified = cls !== undefined && mentionsThis(a);
            atoms.push({ e: a, cls: quantified ? cls : undefined });
        }
    };
    for (const i of inv) add(i.clause.expr, i.className);
    // The premise of an environment clause `P ==> (x' == x && ...)`: while it holds for this thread,
    // the clause keeps what P reads, and so the guards that P excludes (a hand-off: while
    // `state != 0 && owner == tid`, no other thread is the owner a write of the payload needs).
    const premises: Array<{ e: Expr; cls?: string }> = [];
    for (const c of own) {
        if (c.kind === 'writable' && c.field) for (const w of guards.get(c.field.id)?.clauses ?? []) add(w.expr, c.field.owner);
        if (c.kind === 'env' && c.clause) {
            add(c.clause.expr, c.className);
            const e = c.clause.expr;
            if (e.kind === 'binary' && e.op === '==>' && !hasPrimeExpr(e.left)) premises.push({ e: e.left, cls: c.className !== undefined && mentionsThis(e.left) ? c.className : undefined });
        }
    }
    const seen = new Set(existing.map(c => c.text));
    const out: Conjunct[] = [];
    const fields = new Set<FieldModel>();
    for (const c of own) {
        if (c.frames.length === 0 || !c.field && c.kind !== 'env') continue;
        if (c.field) fields.add(c.field);
        for (const fr of c.frames) {
            const sv = vocab.vars.get(fr.map);
            if (sv?.field) fields.add(sv.field);
        }
    }
    for (const f of fields) {
        // (a guard over thread identities only, `tid == T1`, says in every state who may change f:
        // "A ==> f unchanged" adds nothing but queries)
        if (threadsOnly(vocab, guards.get(f.id))) continue;
        const sources: Array<{ e: Expr; cls?: string; premise?: boolean }> = [...atoms, ...premises.map(p => ({ ...p, premise: true }))];
        // A class's flag about an object that a final global names (`lock.in1` for `final RW
        // lock`) protects a global or static field as the flag of a global would: the atom at
        // that object.
        const atFinals: Array<{ e: Expr; cls?: string; premise?: boolean }> = [];
        if (f.owner === undefined || f.isStatic) {
            for (const src of sources) {
                if (src.cls === undefined) continue;
                for (const g of finalGlobalsOf(vocab, src.cls)) atFinals.push({ e: atObject(src.e, g), premise: src.premise });
            }
        }
        for (const { e, cls, premise } of [...sources, ...atFinals]) {
            if (hasPrimeExpr(e)) continue;
            if (cls !== undefined && cls !== f.owner) continue;
            if (cls === undefined && !f.isStatic && mentionsThis(e)) continue;
            const build = (state: string | undefined, tid: Term, obj: Term | undefined) => translate(e, stateCtx(vocab, tid, state, cls ? obj : undefined));
            const maps = [...mapsOfExpr(e, vocab)];
            const both = [[exprText(e), build], [`!(${exprText(e)})`, (st: string | undefined, t: Term, o: Term | undefined) => T.not(build(st, t, o))]] as const;
            for (const [label, cond] of premise ? both.slice(0, 1) : both) {
                const c = guarded(vocab, f, label, cond, maps, what(f));
                if (seen.has(c.text)) continue;
                seen.add(c.text);
                out.push(c);
                if (out.length >= MAX_CROSS) return out;
            }
        }
    }
    return out;
}

/** A final global (or final static field) of a class type: it names one object for good. */
function isFinalClassGlobal(g: FieldModel): boolean {
    return g.isFinal && (g.owner === undefined || g.isStatic) && g.type.kind === 'class';
}

/** The conjuncts of a conjunction (`a && b && c`). */
function conjunctsOf(e: Expr): Expr[] {
    return e.kind === 'binary' && e.op === '&&' ? [...conjunctsOf(e.left), ...conjunctsOf(e.right)] : [e];
}

/** The final globals (and final static fields) of a class type, as expressions. */
function finalGlobalsOf(vocab: Vocabulary, cls: string): Expr[] {
    const out: Expr[] = [];
    for (const g of vocab.fields.values()) {
        if (!isFinalClassGlobal(g) || (g.type as { name: string }).name !== cls) continue;
        out.push({ kind: 'global', field: g.id, primed: false, type: g.type, range: g.nameRange });
        if (out.length >= 4) break;
    }
    return out;
}

/** An expression about `this` at another object (`this` replaced by `obj`). */
function atObject(e: Expr, obj: Expr): Expr {
    const sub = (x: Expr): Expr => {
        if (x.kind === 'this') return obj;
        const out: Record<string, unknown> = { ...x };
        for (const [k, v] of Object.entries(x)) {
            if (k === 'type' || k === 'range') continue;
            if (v && typeof v === 'object' && 'kind' in (v as object) && 'type' in (v as object)) out[k] = sub(v as Expr);
            else if (Array.isArray(v)) out[k] = v.map(y => (y && typeof y === 'object' && 'kind' in y && 'type' in y ? sub(y as Expr) : y));
        }
        return out as unknown as Expr;
    };
    return sub(e);
}

/**
 * The parts of an environment clause written as one conjunction
 * (`phase' >= phase && phase' <= phase + 1`): when the whole is not
 * transitive, a part may be (the phase never decreases), and E* keeps it.
 */
function clauseParts(vocab: Vocabulary, own: Conjunct[]): Conjunct[] {
    const out: Conjunct[] = [];
    for (const c of own) {
        if (c.kind !== 'env' || !c.clause) continue;
        const ps = conjunctsOf(c.clause.expr);
        if (ps.length < 2) continue;
        for (const p of ps) {
            const part = clauseConjunct(vocab, { ...c.clause, expr: p, text: exprText(p) }, c.className);
            out.push({ ...part, kind: 'candidate', origin: `a part of the ${part.origin}` });
        }
    }
    return out;
}

/** Whether a guard is written (or inferred) over `tid` and constants only. */
function threadsOnly(vocab: Vocabulary, g: Guard | undefined): boolean {
    if (!g || g.clauses.length === 0) return false;
    return g.clauses.every(c => mapsOfExpr(c.expr, vocab).size === 0 && !mentionsThis(c.expr));
}

/** "cond ==> f unchanged" (for every published object of f's class, with the elements of an array field). */
/** What a derived candidate keeps: the field, the elements of its arrays, or both. */
type Unchanged = 'field' | 'elements' | 'both';

function guarded(vocab: Vocabulary, f: FieldModel, label: string, cond: StateCondition, condMaps: string[], what: Unchanged): Conjunct {
    const { frames, relation, maps } = unchangedWhile(vocab, f, what, cond);
    for (const m of condMaps) maps.add(m);
    const kept = what === 'elements' ? `${f.name}[*]` : f.name;
    return { kind: 'candidate', origin: `derived for ${f.id}`, text: `${label} ==> ${kept}' == ${kept}`, field: f, maps, frames, relation };
}

/** The boolean atoms of a guard: the comparisons and boolean reads under its connectives and conditionals. */
export function atomsOf(e: Expr, out: Expr[] = []): Expr[] {
    if (e.kind === 'binary' && (e.op === '&&' || e.op === '||' || e.op === '==>' || e.op === '<==>')) {
        atomsOf(e.left, out);
        atomsOf(e.right, out);
    } else if (e.kind === 'unary' && e.op === '!') {
        atomsOf(e.operand, out);
    } else if (e.kind === 'cond') {
        atomsOf(e.cond, out);
        atomsOf(e.then, out);
        atomsOf(e.else, out);
    } else if (e.type.kind === 'boolean' && e.kind !== 'bool') {
        out.push(e);
    }
    return out;
}

export { symbol };

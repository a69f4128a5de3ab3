import type { SolverSession } from '../solver/index.js';
import type { Vocabulary } from '../heap/vocabulary.js';
import { ALLOC, elemsVar, heapFacts, nullUnallocated, OWNER, sortOfType } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import { sortToSmt, symbol, toSmt } from '../smt/term.js';
import { clausesText, guardTerm, type Conjunct, type Guard, type StateFn } from '../spec/environment.js';
import { publishedOfClass } from '../spec/translate.js';
import { PRELUDE } from '../vc/vcgen.js';
import { atomsOf } from './atoms.js';
import { freshQuery, type QueryLog } from './run.js';

export interface Closure {
    /** The reflexive-transitive relation used for E*. */
    conjuncts: Conjunct[];
    /** True when every conjunct of E survived: E* = E (the paper's first optimization). */
    exact: boolean;
    /** Conjuncts of E dropped because they are not transitive (E* is over-approximated by the rest). */
    dropped: Conjunct[];
    /** Solver gave up: E* is over-approximated by the built-in conjuncts only. */
    unknown?: string;
}

/**
 * E*: Calvin replaces `E*` by `E` when E is reflexive and transitive. When it
 * is not (a `writable_if` conjunct is not, for instance: a thread may acquire a
 * lock and then write), Houdini finds the largest set of conjuncts of E, plus
 * candidates derived from the `writable_if` guards ("while P holds for me, f
 * does not change"), that E implies and that is reflexive and transitive; that
 * set over-approximates E* soundly.
 */
export async function closure(vocab: Vocabulary, env: Conjunct[], inv: Conjunct[], guards: Map<string, Guard>, tid: Term, tidConstraint: Term, session: SolverSession, log?: QueryLog): Promise<Closure> {
    const candidates: Array<{ c: Conjunct; derived: boolean }> = env.map(c => ({ c, derived: false }));
    for (const c of env) if (c.kind === 'writable' && c.field) candidates.push(...derivedCandidates(vocab, c, guards.get(c.field.id)).map(d => ({ c: d, derived: true })));
    const states = ['s1', 's2', 's3', 's4', 's5'];
    const st = (s: string): StateFn => name => T.v(`${s}~${name}`, vocab.sortOfVar(name));
    const lines: string[] = [PRELUDE, '(declare-const tid Int)'];
    for (const s of states) for (const v of vocab.allVars()) lines.push(`(declare-const ${symbol(`${s}~${v.name}`)} ${sortToSmt(v.sort)})`);
    const wellFormed = (s: StateFn) => T.and(nullUnallocated(vocab, s), ...heapFacts(vocab, s), ...inv.map(c => c.build(s, s, tid)));
    lines.push(`(assert ${toSmt(tidConstraint)})`);
    for (const s of states) lines.push(`(assert ${toSmt(wellFormed(st(s)))})`);
    // s4 -> s5: one step of E (to check that derived candidates are implied by E)
    lines.push(`(assert ${toSmt(T.and(...env.map(c => c.build(st('s4'), st('s5'), tid))))})`);
    candidates.forEach(({ c, derived }, k) => {
        lines.push(`(declare-const e!${k} Bool)`);
        lines.push(`(assert (=> e!${k} ${toSmt(c.build(st('s1'), st('s2'), tid))}))`);
        lines.push(`(assert (=> e!${k} ${toSmt(c.build(st('s2'), st('s3'), tid))}))`);
        const parts = [c.build(st('s1'), st('s1'), tid), c.build(st('s1'), st('s3'), tid), derived ? c.build(st('s4'), st('s5'), tid) : T.TRUE];
        parts.forEach((p, i) => lines.push(`(declare-const ok!${k}!${i} Bool)`, `(assert (= ok!${k}!${i} ${toSmt(p)}))`));
        lines.push(`(declare-const ok!${k} Bool)`, `(assert (= ok!${k} (and ok!${k}!0 ok!${k}!1 ok!${k}!2)))`);
    });
    // One query per candidate ("is c_k implied, reflexive and transitive, given the others?"): a
    // candidate the solver cannot decide is dropped, which keeps the result sound.
    candidates.forEach((_, k) => lines.push(`(declare-const f!${k} Bool)`, `(assert (=> f!${k} (not ok!${k})))`));
    const send = async (text: string) => { log?.(text); return session.eval(text); };
    const script = lines.join('\n') + '\n';
    const live = new Set(candidates.map((_, k) => k));
    let unknown: string | undefined;
    for (let changed = true; changed;) {
        changed = false;
        for (const k of [...live]) {
            const lits = candidates.map((_, i) => (live.has(i) ? `e!${i}` : `(not e!${i})`));
            const answer = (await send(freshQuery(script, 3000, `${lits.join(" ")} f!${k}`, true))).trim().split('\n').pop()!.trim();
            if (answer.startsWith('unsat')) continue;
            if (!answer.startsWith('sat')) unknown = answer;
            if (process.env.CALVIN_DEBUG) {
                const why = answer.startsWith('sat') ? await send(`(get-value (ok!${k}!0 ok!${k}!1 ok!${k}!2))\n`) : '';
                console.error(`[closure] drop (${answer}) ${candidates[k].c.text} ${why.replace(/\s+/g, ' ')}`);
            }
            live.delete(k);
            changed = true;
        }
    }
    void unknown;
    const kept = candidates.filter((_, k) => live.has(k));
    const dropped = candidates.filter(({ derived }, k) => !derived && !live.has(k)).map(x => x.c);
    return { conjuncts: kept.map(x => x.c), exact: dropped.length === 0, dropped };
}

/**
 * From `writable_if P` on f: "while P holds for this thread, f does not
 * change", and the same for each atom A of P (A ==> unchanged, !A ==> unchanged).
 */
function derivedCandidates(vocab: Vocabulary, w: Conjunct, g: Guard | undefined): Conjunct[] {
    if (!g || g.inferred) return [];
    const f = g.field;
    const name = vocab.varOfField(f.id);
    const elems = f.type.kind === 'array' ? elemsVar(sortOfType(f.type.element)) : undefined;
    const unchangedAt = (pre: StateFn, post: StateFn, obj: Term | undefined): Term => {
        const val = (s: StateFn) => obj ? T.select(s(name), obj) : s(name);
        return T.and(T.eq(val(post), val(pre)), elems ? T.eq(T.select(post(elems), val(pre)), T.select(pre(elems), val(pre))) : T.TRUE);
    };
    const make = (label: string, cond: (pre: StateFn, tid: Term, obj: Term | undefined) => Term): Conjunct => ({
        kind: 'candidate', origin: `derived from the writable_if of ${f.id}`, text: `${label} ==> ${f.name}' == ${f.name}`,
        field: f, vars: new Set([...w.vars]),
        exact: !elems,
        frames: [{
            var: name,
            keep: (pre, tid, o) => f.isStatic ? cond(pre, tid, undefined) : T.and(publishedOfClass({ state: n => pre(n) }, vocab, f.owner!, o!), cond(pre, tid, o)),
        }],
        build(pre, post, tid) {
            if (f.isStatic) return T.implies(cond(pre, tid, undefined), unchangedAt(pre, post, undefined));
            const o = T.v('o!d', 'Ref');
            return T.forall([{ name: 'o!d', sort: 'Ref' }], T.implies(
                T.and(publishedOfClass({ state: n => pre(n) }, vocab, f.owner!, o), cond(pre, tid, o)), unchangedAt(pre, post, o)),
            [[T.select(post(name), o)]]);
        },
    });
    const whole = make(clausesText(g.clauses), (pre, tid, obj) => guardTerm(vocab, g, pre, tid, obj));
    const out = [whole];
    for (const clause of g.clauses) {
        for (const atom of atomsOf(clause.expr)) {
            out.push(make(atom.text, (pre, tid, obj) => atom.build(vocab, pre, tid, obj)));
            out.push(make(`!(${atom.text})`, (pre, tid, obj) => T.not(atom.build(vocab, pre, tid, obj))));
        }
    }
    void ALLOC; void OWNER;
    return out;
}

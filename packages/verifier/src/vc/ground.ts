import * as T from '../smt/term.js';
import type { Sort, Term } from '../smt/term.js';

/**
 * A quantifier-free version of a VC (pipeline stage 6, used by stage 7 when Z3
 * cannot decide the full one in time; finding counterexamples with λ-built heap
 * steps and heap invariants is where Z3's model-based quantifier
 * instantiation gives up).
 *
 * Assumed universal facts — `forall o: Ref. P(o)` and map definitions
 * `m = λo. e(o)` — are replaced by their instances at the ground reference
 * terms of the VC (two rounds); universal conditions that are *checked* are
 * skolemized (one fresh witness). The result is weaker than the VC in its
 * assumptions only, so an `unsat` answer still proves every check. A model is
 * a counterexample to the instantiated facts; it is a real one whenever the
 * instances cover the references the failing execution involves (the usual
 * case: programs name their objects).
 */
export interface Grounding {
    /** Rewrites a statement's condition; `assumed` tells assumptions from checked conditions. */
    rewrite(t: Term, assumed: boolean): Term;
    /** Fresh constants introduced by skolemization. */
    constants: Map<string, Sort>;
}

const MAX_TERMS = 64;

export function grounding(conds: Term[]): Grounding {
    const constants = new Map<string, Sort>();
    let terms = groundRefs(conds, new Map());
    let skolems = 0;
    const skolem = (sort: Sort): Term => {
        const name = `gsk!${skolems++}`;
        constants.set(name, sort);
        return T.v(name, sort);
    };
    /** `universal`: a `forall` here holds for every value (an assumption in positive position). */
    const rw = (t: Term, universal: boolean): Term => {
        switch (t.t) {
            case 'quant': {
                // `forall` assumed (or `exists` checked) holds for every value: instances;
                // `forall` checked (or `exists` assumed) needs one value: a witness.
                const everyValue = (t.q === 'forall') === universal;
                if (everyValue && t.vars.length === 1 && t.vars[0].sort === 'Ref') {
                    const v = t.vars[0].name;
                    const body = t.q === 'forall' ? t.body : T.not(t.body);
                    const inst = T.and(...[...terms.values()].map(g => rw(T.substitute(body, new Map([[v, g]])), true)));
                    return t.q === 'forall' ? inst : T.not(inst);
                }
                if (!everyValue) {
                    const map = new Map(t.vars.map(x => [x.name, skolem(x.sort)] as const));
                    return rw(T.substitute(t.body, map), universal);
                }
                return t;
            }
            case 'app': {
                switch (t.fn) {
                    case 'and': return T.and(...t.args.map(a => rw(a, universal)));
                    case 'or': return T.or(...t.args.map(a => rw(a, universal)));
                    case 'not': return T.not(rw(t.args[0], !universal));
                    case '=>': return T.implies(rw(t.args[0], !universal), rw(t.args[1], universal));
                    case '=': {
                        const [a, b] = t.args;
                        const lam = b.t === 'lambda' ? b : a.t === 'lambda' ? a : undefined;
                        const other = lam === b ? a : b;
                        if (!lam || lam.v.sort !== 'Ref' || typeof T.sortOf(other) === 'string') return t;
                        const at = (g: Term) => T.eq(T.select(other, g), T.substitute(lam.body, new Map([[lam.v.name, g]])));
                        // A definition holds at every reference; its negation needs one witness.
                        return universal ? T.and(...[...terms.values()].map(g => rw(at(g), true))) : rw(at(skolem('Ref')), false);
                    }
                    default: return t;
                }
            }
            default: return t;
        }
    };
    // Two rounds: references that the first instances name (fields of the objects named) count too.
    const first = conds.map(c => rw(c, true));
    terms = groundRefs(first, terms);
    return {
        constants,
        rewrite: (t, assumed) => rw(t, assumed),
    };
}

/** The ground terms of sort Ref (not under a binder), up to MAX_TERMS, added to `into`. */
function groundRefs(ts: Term[], into: Map<string, Term>): Map<string, Term> {
    const out = new Map(into);
    const seen = new Set<Term>();
    const walk = (t: Term): void => {
        if (out.size >= MAX_TERMS || seen.has(t)) return;
        seen.add(t);
        if (t.t === 'lambda' || t.t === 'quant') return;
        if ((t.t === 'var' || t.t === 'app') && T.sortOf(t) === 'Ref') {
            const key = T.toSmt(t);
            if (!out.has(key)) out.set(key, t);
        }
        if (t.t === 'app') t.args.forEach(walk);
    };
    ts.forEach(walk);
    if (!out.has('null')) out.set('null', T.NULL);
    return out;
}

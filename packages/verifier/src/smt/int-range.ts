// The range of an integer quantifier's variable, when its range says it with
// constants: the interpreter's and the witness search's quantifiers over int
// enumerate it, and annotations expand a small one (spec/translate.ts).
import * as T from './term.js';
import type { Term } from './term.js';

/**
 * Bounds of an integer quantifier's variable from its range (`lo <= j && j <
 * hi` and the like), with `value` the constant a bound evaluates to (if any):
 * the interpreter's and the symbolic search's quantifiers over int, and translate.ts.
 */
export function quantIntBounds(t: Extract<Term, { t: 'quant' }>, name: string, value: (x: Term) => bigint | undefined): { lo?: bigint; hi?: bigint } {
    const body = t.body;
    const range = t.q === 'forall' ? (body.t === 'app' && body.fn === '=>' ? body.args[0] : undefined) : body;
    const conj: Term[] = [];
    const collect = (x: Term) => { if (x.t === 'app' && x.fn === 'and') x.args.forEach(collect); else conj.push(x); };
    if (range) collect(range);
    let lo: bigint | undefined, hi: bigint | undefined;
    const isVar = (x: Term) => x.t === 'var' && x.name === name;
    const mentions = (x: Term): boolean => x.t === 'var' ? x.name === name : x.t === 'app' ? x.args.some(mentions) : x.t === 'read' ? x.keys.some(mentions) : false;
    for (const c of conj) {
        if (c.t !== 'app' || c.args.length !== 2 || !['<', '<=', '>', '>=', '='].includes(c.fn)) continue;
        let [l, r] = c.args;
        let op = c.fn;
        if (!isVar(l) && isVar(r)) { [l, r] = [r, l]; op = ({ '<': '>', '<=': '>=', '>': '<', '>=': '<=', '=': '=' } as Record<string, string>)[op]; }
        if (!isVar(l) || mentions(r)) continue;
        const k = value(r);
        if (k === undefined) continue;
        if (op === '<') hi = min(hi, k - 1n);
        else if (op === '<=') hi = min(hi, k);
        else if (op === '>') lo = max(lo, k + 1n);
        else if (op === '>=') lo = max(lo, k);
        else { lo = max(lo, k); hi = min(hi, k); }
    }
    return { lo, hi };
}

const min = (a: bigint | undefined, b: bigint) => (a === undefined || b < a ? b : a);
const max = (a: bigint | undefined, b: bigint) => (a === undefined || b > a ? b : a);

/** Quantifiers over an int range of at most this many values become a conjunction (or disjunction) of its instances. */
export const EXPAND_INT_RANGE = 16;

/**
 * `forall j. range ==> body` (`exists j. range && body`) over int, whose range
 * bounds j by constants to at most EXPAND_INT_RANGE values: the conjunction
 * (disjunction) of its instances at those values, the same formula without a
 * quantifier (Z3 then needs no instantiation of it: a counterexample to an
 * invariant over a fixed-size array's elements is found at once). Otherwise the
 * quantifier as it is.
 */
export function expandSmallIntRange(t: Term): Term {
    if (t.t !== 'quant' || t.vars.length !== 1 || t.vars[0].sort !== 'Int') return t;
    const name = t.vars[0].name;
    const { lo, hi } = quantIntBounds(t, name, x => (x.t === 'int' ? x.value : undefined));
    if (lo === undefined || hi === undefined || hi - lo + 1n > BigInt(EXPAND_INT_RANGE)) return t;
    const instances: Term[] = [];
    for (let i = lo; i <= hi; i++) instances.push(T.substitute(t.body, new Map([[name, T.int(i)]])));
    return t.q === 'forall' ? T.and(...instances) : T.or(...instances);
}

// Quantifiers over a small constant range of int in annotations become the
// conjunction (disjunction) of their instances (smt/int-range.ts): the same
// formula, with nothing for Z3 to instantiate. (Found trying a class invariant
// over a fixed-size array's elements: a failing check ran out of time.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as T from '../../packages/verifier/src/smt/term.js';
import { EXPAND_INT_RANGE, expandSmallIntRange } from '../../packages/verifier/src/smt/int-range.js';

const k = T.v('q!k', 'Int');
const vars = [{ name: 'q!k', sort: 'Int' as const }];
const a = (i: T.Term) => T.read('arr', [i], 'Int');
const range = (lo: number, hi: number) => T.and(T.cmp('<=', T.int(lo), k), T.cmp('<', k, T.int(hi)));

describe('annotations: quantifiers over a small constant int range', () => {
    it('forall: the conjunction of its instances, the range kept in each (other conditions of the range too)', () => {
        const t = T.forall(vars, T.implies(T.and(range(0, 3), T.ne(k, T.v('tid', 'Int'))), T.cmp('>=', a(k), T.int(0))));
        const e = expandSmallIntRange(t);
        assert.notEqual(e.t, 'quant');
        assert.equal(T.key(e), T.key(T.and(...[0, 1, 2].map(i => T.substitute(t.t === 'quant' ? t.body : t, new Map([['q!k', T.int(i)]]))))));
    });

    it('exists: the disjunction; an empty range: false (forall: true)', () => {
        const e = expandSmallIntRange(T.exists(vars, T.and(range(2, 4), T.eq(a(k), T.int(7)))));
        assert.notEqual(e.t, 'quant');
        assert.match(T.toSmt(e), /^\(or /);
        assert.equal(T.key(expandSmallIntRange(T.exists(vars, T.and(range(3, 3), T.eq(a(k), T.int(7)))))), T.key(T.FALSE));
        assert.equal(T.key(expandSmallIntRange(T.forall(vars, T.implies(range(3, 3), T.eq(a(k), T.int(7)))))), T.key(T.TRUE));
    });

    it('a range bounded by a non-constant, unbounded, or larger than the limit stays a quantifier', () => {
        const n = T.v('n', 'Int');
        for (const r of [T.and(T.cmp('<=', T.int(0), k), T.cmp('<', k, n)), T.cmp('<=', T.int(0), k), range(0, EXPAND_INT_RANGE + 1)]) {
            assert.equal(expandSmallIntRange(T.forall(vars, T.implies(r, T.cmp('>=', a(k), T.int(0))))).t, 'quant');
        }
        assert.notEqual(expandSmallIntRange(T.forall(vars, T.implies(range(0, EXPAND_INT_RANGE), T.cmp('>=', a(k), T.int(0))))).t, 'quant');
    });
});

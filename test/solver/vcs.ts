// Small verification conditions with a known answer, for the solver tests and
// the solver benchmark. Deterministic: the same seed gives the same text.
//
// Shape (n Int variables): a chain x_i >= x_(i-1) + c_i from x_0 >= 0, windows
// x_j - x_i <= (c_(i+1) + ... + c_j) + slack, and disjunctions; all satisfied by
// the least solution x_i = c_1 + ... + c_i. The goal then either allows that
// solution (sat) or asks x_(n-1) below it (unsat).
import * as path from 'node:path';
import { ROOT } from '../util/paths.js';

/** The worker bundle the tests and the benchmark use (built by `npm run build`). */
export const WORKER_SCRIPT = path.join(ROOT, 'packages/cli/out/z3-worker.cjs');

export interface Vc {
    text: string;
    expected: 'sat' | 'unsat';
}

function prng(seed: number): () => number {
    let s = (seed * 2654435761) >>> 0 || 1;
    return () => {
        // xorshift32
        s ^= s << 13; s >>>= 0;
        s ^= s >>> 17;
        s ^= s << 5; s >>>= 0;
        return s / 0x100000000;
    };
}

export function makeVc(seed: number, vars = 50): Vc {
    const rnd = prng(seed + 1);
    const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
    const x = (i: number) => `x${i}`;
    const c = [0];
    const sum = [0];
    for (let i = 1; i < vars; i++) {
        c.push(int(0, 3));
        sum.push(sum[i - 1] + c[i]);
    }
    const out: string[] = [];
    for (let i = 0; i < vars; i++) out.push(`(declare-const ${x(i)} Int)`);
    out.push(`(assert (>= ${x(0)} 0))`);
    for (let i = 1; i < vars; i++) out.push(`(assert (>= ${x(i)} (+ ${x(i - 1)} ${c[i]})))`);
    for (let k = 0; k < vars / 2; k++) {
        const i = int(0, vars - 2);
        const j = int(i + 1, vars - 1);
        out.push(`(assert (<= (- ${x(j)} ${x(i)}) ${sum[j] - sum[i] + int(0, 4)}))`);
    }
    for (let k = 0; k < vars / 5; k++) {
        const i = int(1, vars - 1);
        out.push(`(assert (or (= ${x(i)} (+ ${x(i - 1)} ${c[i]})) (> ${x(i)} (+ ${x(i - 1)} ${c[i] + 5}))))`);
    }
    const expected = rnd() < 0.5 ? 'sat' : 'unsat';
    const last = x(vars - 1);
    if (expected === 'sat') out.push(`(assert (<= ${last} ${sum[vars - 1] + int(0, 2)}))`);
    else out.push(`(assert (< ${last} ${sum[vars - 1] - int(0, 2)}))`);
    out.push('(check-sat)');
    return { text: out.join('\n') + '\n', expected };
}

/** An integer problem Z3 does not finish quickly (no positive a^3 + b^3 = c^3). */
export const HARD_QUERY = [
    '(declare-const a Int)', '(declare-const b Int)', '(declare-const c Int)',
    '(assert (and (> a 0) (> b 0) (> c 0)))',
    '(assert (= (+ (* a a a) (* b b b)) (* c c c)))',
    '(check-sat)',
].join('\n') + '\n';

/** The first line the solver printed (sat / unsat / unknown / an error). */
export function firstLine(output: string): string {
    return output.split('\n', 1)[0].trim();
}

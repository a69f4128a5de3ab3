// Regression tests of the verifier core's resource use on extreme programs
// (issue 10): the cost of nested loops grows linearly with the nesting (it
// used to double per level), and a program with ~90k globals is lowered, turned
// into its simulation-checking program and its VC without overflowing the
// stack (lists used to be appended with `push(...list)`).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { model } from '../util/model.js';
import type { FieldModel, ProgramModel } from '../../packages/verifier/src/model/program.js';
import { checkSpec, checksOf, programContext } from '../../packages/verifier/src/driver/program-context.js';
import { lowerCheck, simulationProgram } from '../../packages/verifier/src/driver/stages.js';
import { TID } from '../../packages/verifier/src/spec/environment.js';
import { vcgen } from '../../packages/verifier/src/vc/vcgen.js';
import { createBackend, verifyProgram, type SolverBackend } from '../../packages/verifier/src/index.js';
import { ROOT } from '../util/paths.js';


/** `depth` nested `while (nondet())` loops around a write, then an assertion the write breaks. */
function nestedLoops(depth: number): { text: string; assertLine: number } {
    const lines = ['int g = 0;', 'thread T {'];
    for (let i = 0; i < depth; i++) lines.push(`${'  '.repeat(i + 1)}while (nondet()) {`);
    lines.push(`${'  '.repeat(depth + 1)}g = 1;`);
    for (let i = depth - 1; i >= 0; i--) lines.push(`${'  '.repeat(i + 1)}}`);
    lines.push('  assert g == 0;', '}');
    return { text: lines.join('\n') + '\n', assertLine: lines.length - 1 };
}

describe('resource limits of the verifier core', () => {
    let solver: SolverBackend;
    before(() => { solver = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await solver?.dispose(); });

    it('30 nested loops are checked in a few seconds, with the exact diagnostics', async () => {
        const { text, assertLine } = nestedLoops(30);
        const m = await model(text);
        const start = Date.now();
        const r = await verifyProgram(m, { solver });
        const ms = Date.now() - start;
        assert.deepEqual(r.diagnostics.filter(d => d.severity !== 'info').map(d => `${d.range.startLine + 1}:${d.code}`), [`${assertLine}:assert`]);
        // (2^30 walks of the innermost body before the fix: it never finished)
        assert.ok(ms < 15_000, `took ${ms} ms`);
    });

    it('a program with 90,000 globals is lowered and simulated without a stack overflow', async () => {
        // The front end is too slow for this size in a unit test: the model is built from a
        // small program whose one global is cloned.
        const m = await model('int g = 0;\nthread T { g = 1; int x = g; assert x == 1; }\n');
        const proto = m.globals[0];
        const globals: FieldModel[] = [];
        for (let i = 0; i < 90_000; i++) globals.push({ ...proto, id: `g${i}`, name: `g${i}` });
        // g0 keeps the thread's references (the prototype's id is `g`)
        globals[0] = proto;
        const big: ProgramModel = { ...m, globals };
        const ctx = programContext(big);
        const u = checksOf(ctx).find(x => x.kind === 'thread')!;
        const lowered = lowerCheck(ctx, u);
        assert.equal(lowered.init!.length, 90_000);
        const { env, inv, tidConstraint } = checkSpec(ctx, u);
        const seq = simulationProgram(lowered, {
            vocab: ctx.vocab, guards: ctx.spec.guards, elementGuards: ctx.spec.elementGuards, notOwned: ctx.spec.notOwned,
            env, star: env, inv, guarantee: ctx.guarantee, tid: TID, tidConstraint,
        }, inv);
        assert.ok(seq.body.length > 90_000);
        const vc = vcgen(ctx.vocab, seq);
        assert.ok(vc.obligations.length > 0);
    });
});

// Golden tests of the verifier's stages (in the style of Boogie's and
// rust-analyzer's expect files): for every program in test/verifier/stages/,
// each check's intermediate language (il/print.ts) goes to NAME.il.expect and
// its simulation-checking program (sim/print.ts) to NAME.sim.expect. A change
// to lowering or to the simulation shows up as a readable diff here.
//
// After an intended change, regenerate them and review the diff:
//   UPDATE_EXPECT=1 npm test -- stages
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../language/src/index.js';
import { checksOf, programContext } from '../../packages/verifier/src/driver/program-context.js';
import { checkStages } from '../../packages/verifier/src/driver/verify.js';
import { printIL } from '../../packages/verifier/src/il/print.js';
import { printProgram } from '../../packages/verifier/src/sim/print.js';
import { createBackend, type SolverBackend } from '../../packages/verifier/src/index.js';
import { ROOT } from '../util/paths.js';

const DIR = path.join(ROOT, 'test/verifier/stages');
const UPDATE = process.env.UPDATE_EXPECT === '1';
const programs = fs.readdirSync(DIR).filter(f => f.endsWith('.calvin')).sort();

/** Both printed stages of every check of a program, in the order of its checks. */
async function stagesOf(file: string, solver: SolverBackend): Promise<{ il: string; sim: string }> {
    const { shared, Calvin } = createCalvinCoreServices();
    const text = fs.readFileSync(file, 'utf8');
    const res = await buildProgram(shared, [{ uri: pathToFileURL(file).toString(), text }]);
    const doc = res.documents[0];
    const errors = (doc.diagnostics ?? []).filter(d => d.severity === 1).map(d => d.message);
    assert.deepEqual(errors, [], `${path.basename(file)} has front-end errors`);
    const ctx = programContext(toProgramModel(programOf(doc, shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem));
    const il: string[] = [];
    const sim: string[] = [];
    for (const check of checksOf(ctx)) {
        const stages = await checkStages(ctx, check.key, { solver, timeLimitMs: 10_000 });
        assert.ok(stages, check.key);
        il.push(`// check ${check.key}\n${stages.init ? `// field initializers\n${printIL(stages.init)}// body\n` : ''}${printIL(stages.body)}`);
        sim.push(`// check ${check.key}${stages.envStar ? ` (${stages.envStar})` : ''}\n${printProgram(stages.seq)}`);
    }
    return { il: il.join('\n'), sim: sim.join('\n') };
}

function compare(expectFile: string, actual: string): void {
    const name = path.relative(ROOT, expectFile);
    if (UPDATE) {
        fs.writeFileSync(expectFile, actual);
        return;
    }
    assert.ok(fs.existsSync(expectFile), `${name} is missing: run UPDATE_EXPECT=1 npm test -- stages`);
    const expected = fs.readFileSync(expectFile, 'utf8');
    assert.equal(actual, expected, `${name} differs (after an intended change: UPDATE_EXPECT=1 npm test -- stages, then review the diff)`);
}

describe('verifier stages: printed IL and simulation-checking programs match their .expect files', () => {
    let solver: SolverBackend;
    before(() => { solver = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await solver?.dispose(); });

    it('has the programs of the stage tests', () => {
        assert.deepEqual(programs, ['abstraction_two_steps.calvin', 'array.calvin', 'lock.calvin', 'loop.calvin', 'monitor.calvin']);
    });

    for (const program of programs) {
        it(program, async () => {
            const base = path.join(DIR, program.replace(/\.calvin$/, ''));
            const { il, sim } = await stagesOf(`${base}.calvin`, solver);
            compare(`${base}.il.expect`, il);
            compare(`${base}.sim.expect`, sim);
        });
    }

    it('every .expect file belongs to a program', () => {
        const stale = fs.readdirSync(DIR).filter(f => f.endsWith('.expect') && !programs.includes(f.replace(/\.(il|sim)\.expect$/, '.calvin')));
        assert.deepEqual(stale, []);
    });
});

// The planner's fingerprints (packages/verifier/src/incremental/plan.ts): a
// check's fingerprint covers everything its verification condition depends on.
// A method without abstraction is inlined into its callers: changing only its
// body changes the fingerprint of every check that inlines it, and of no other.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../language/src/index.js';
import { planChecks } from '../../packages/verifier/src/incremental/plan.js';
import type { ProgramModel } from '../../packages/verifier/src/model/program.js';

async function model(text: string): Promise<ProgramModel> {
    const { shared, Calvin } = createCalvinCoreServices();
    const res = await buildProgram(shared, [{ uri: 'file:///p.calvin', text }]);
    const doc = res.documents[0];
    assert.deepEqual((doc.diagnostics ?? []).filter(d => d.severity === 1).map(d => d.message), []);
    return toProgramModel(programOf(doc, shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem);
}

const PROGRAM = `
int x = 0;
int y = 0;
void bump() { int t = x; x = t + 1; }
/*@ abstraction { step [y] y' == 0; } */
void reset() { y = 0; }
thread A { bump(); }
thread B { bump(); reset(); }
thread C { reset(); }
`;

const fingerprints = async (text: string) => new Map(planChecks(await model(text), { timeLimitMs: 1000 }).map(p => [p.name, p.fingerprint]));

describe('fingerprints', () => {
    it("changing only an inlined callee's body changes the fingerprints of exactly the checks that inline it", async () => {
        const before = await fingerprints(PROGRAM);
        const after = await fingerprints(PROGRAM.replace('x = t + 1;', 'x = t + 2;'));
        const changed = [...before.keys()].filter(k => before.get(k) !== after.get(k)).sort();
        assert.deepEqual(changed, ['A', 'B']);
    });
    it("changing a method with an abstraction changes its own check only (callers use the abstraction)", async () => {
        const before = await fingerprints(PROGRAM);
        const after = await fingerprints(PROGRAM.replace('void reset() { y = 0; }', 'void reset() { int u = 1; y = 0; }'));
        const changed = [...before.keys()].filter(k => before.get(k) !== after.get(k)).sort();
        assert.deepEqual(changed, ['reset']);
    });
    it('whitespace and comments change no fingerprint', async () => {
        const before = await fingerprints(PROGRAM);
        const after = await fingerprints(`// header\n\n${PROGRAM.replace('void bump() {', 'void   bump()   {  /* c */')}`);
        assert.deepEqual([...after], [...before]);
    });
});

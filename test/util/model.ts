import assert from 'node:assert/strict';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../language/src/index.js';
import type { ProgramModel } from '../../packages/verifier/src/model/program.js';

/** The program model of a one-file program, built by the real front end (which must report no error). */
export async function model(text: string): Promise<ProgramModel> {
    const { shared, Calvin } = createCalvinCoreServices();
    const res = await buildProgram(shared, [{ uri: 'file:///test/p.calvin', text }]);
    const doc = res.documents[0];
    const errors = (doc.diagnostics ?? []).filter(d => d.severity === 1);
    assert.deepEqual(errors.map(e => e.message), []);
    return toProgramModel(programOf(doc, shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem);
}

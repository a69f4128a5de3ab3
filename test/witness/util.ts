// Helpers of the witness tests: programs from files through the real front end,
// the checker's diagnostics, and the witness search with the real Z3.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../language/src/index.js';
import type { ProgramModel } from '../../packages/verifier/src/model/program.js';
import { verifyProgram, verifyWithInference, type SolverBackend, type VDiagnostic } from '../../packages/verifier/src/index.js';

/** The program model of one file (its own program) or of a source text. */
export async function programOfText(text: string, file = '/virtual/test.calvin'): Promise<ProgramModel> {
    const { shared, Calvin } = createCalvinCoreServices();
    const uri = pathToFileURL(path.resolve(file)).toString();
    const res = await buildProgram(shared, [{ uri, text }]);
    const doc = res.documents[0];
    const errors = (doc.diagnostics ?? []).filter(d => d.severity === 1);
    if (errors.length > 0) throw new Error(`front end: ${errors.map(e => e.message).join('; ')}`);
    return toProgramModel(programOf(doc, shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem);
}

export async function programOfFile(file: string): Promise<{ program: ProgramModel; text: string }> {
    const text = fs.readFileSync(file, 'utf8');
    return { program: await programOfText(text, file), text };
}

/**
 * The checker's error diagnostics of a program, as `calvin check` gives them
 * (with the inferred protection), and the program they are about (the inferred
 * one: the witness search reads its guards).
 */
export async function checked(program: ProgramModel, solver: SolverBackend, options: { infer?: boolean } = {}): Promise<{ program: ProgramModel; errors: VDiagnostic[] }> {
    if (options.infer === false) {
        const r = await verifyProgram(program, { solver, timeLimitMs: 10_000, concurrency: 2 });
        return { program, errors: r.diagnostics.filter(d => d.severity === 'error') };
    }
    const r = await verifyWithInference(program, { solver, timeLimitMs: 10_000, concurrency: 2 });
    return { program: r.inference.program, errors: r.diagnostics.filter(d => d.severity === 'error') };
}

/** `line:col code` of a diagnostic (1-based). */
export function where(d: VDiagnostic): string {
    return `${d.range.startLine + 1}:${d.range.startChar + 1} ${d.code}`;
}

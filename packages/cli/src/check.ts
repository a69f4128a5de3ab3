import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildProgram, createCalvinCoreServices, type Program } from '@calvin/language';
import { createBackend } from '@calvin/verifier';
import { compareDiagnostics, type CheckReport, type CliDiagnostic } from './diagnostic.js';
import { collectFiles, readSource } from './files.js';
import { verifyDocuments, type VerifyStepOptions } from './verify-step.js';

const SEVERITY: Record<number, CliDiagnostic['severity']> = { 1: 'error', 2: 'warning', 3: 'info', 4: 'info' };

export interface CheckOptions {
    /** Run the verifier after the front end (default true). */
    verify: boolean;
    verifier: VerifyStepOptions;
    verbose: boolean;
}

/** The front end, then the verifier on every program the front end accepted. */
export async function check(args: string[], options: CheckOptions): Promise<CheckReport & { skipped: string[] }> {
    const start = Date.now();
    const files = collectFiles(args);
    const sources = files.map(f => ({ file: f, uri: pathToFileURL(path.resolve(f)).toString(), text: readSource(f) }));
    // Z3 takes a few hundred milliseconds to start: let it start while the front end runs.
    const backend = options.verify && files.length > 0 ? createBackend(options.verifier.solver, { workers: options.verifier.jobs }) : undefined;
    try {
        return await checkWith(files, sources, options, start, backend);
    } finally {
        await backend?.dispose();
    }
}

async function checkWith(files: string[], sources: Array<{ file: string; uri: string; text: string }>, options: CheckOptions, start: number, backend: ReturnType<typeof createBackend> | undefined): Promise<CheckReport & { skipped: string[] }> {
    const { shared, Calvin } = createCalvinCoreServices();
    const result = await buildProgram(shared, sources.map(s => ({ uri: s.uri, text: s.text })));
    const diagnostics: CliDiagnostic[] = [];
    let procedures = 0;
    for (const [i, doc] of result.documents.entries()) {
        const program = doc.parseResult.value as Program;
        procedures += countProcedures(program);
        for (const d of doc.diagnostics ?? []) {
            diagnostics.push({
                file: sources[i].file,
                line: d.range.start.line + 1,
                column: d.range.start.character + 1,
                endLine: d.range.end.line + 1,
                endColumn: d.range.end.character + 1,
                severity: SEVERITY[d.severity ?? 1] ?? 'error',
                code: String(d.code ?? 'syntax'),
                message: String(d.message),
            });
        }
    }
    let skipped: string[] = [];
    let checks: CheckReport['checks'];
    if (options.verify) {
        const byUri = new Map(sources.map(s => [s.uri, s.file]));
        const fileOf = (uri: string) => byUri.get(uri) ?? uri;
        const step = await verifyDocuments(result.documents, [...shared.workspace.LangiumDocuments.all], Calvin, fileOf, options.verifier, backend);
        diagnostics.push(...step.diagnostics);
        skipped = step.skipped;
        if (options.verbose) checks = step.units;
    }
    diagnostics.sort(compareDiagnostics);
    return { files: files.length, procedures, diagnostics, timeMs: Date.now() - start, ...(checks ? { checks } : {}), skipped };
}

/** Methods, top-level procedures and threads: the units the checker works on. */
function countProcedures(program: Program): number {
    let n = 0;
    for (const d of program.decls) {
        if (d.$type === 'ThreadDecl' || d.$type === 'MethodDecl') n++;
        else if (d.$type === 'ClassDecl') n += d.members.filter(m => m.$type === 'MethodDecl').length;
    }
    return n;
}

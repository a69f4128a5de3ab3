import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildProgram, createCalvinCoreServices, MAX_FILE_BYTES, type Program } from '@calvin/language';
import type { SolverBackend } from '@calvin/verifier';
import { compareDiagnostics, type CheckReport, type CliDiagnostic } from './diagnostic.js';
import { collectFiles, readSource } from './files.js';
import { warn } from './format.js';
import { commandBackend, verifyDocuments, type VerifyStepOptions } from './verify-step.js';

const SEVERITY: Record<number, CliDiagnostic['severity']> = { 1: 'error', 2: 'warning', 3: 'info', 4: 'info' };

export interface CheckCommandOptions {
    /** Run the verifier after the front end (default true). */
    verify: boolean;
    verifier: VerifyStepOptions;
    verbose: boolean;
}

/** The front end, then the verifier on every program the front end accepted. */
export type CheckOutcome = CheckReport & { skipped: string[]; checked: number; notChecked: number };

export async function check(args: string[], options: CheckCommandOptions): Promise<CheckOutcome> {
    const start = Date.now();
    const { files, skipped: unreadable } = collectFiles(args);
    for (const s of unreadable) warn(`skipped '${s.path}': ${s.why}`);
    const sources = files.map(f => ({ file: f, uri: pathToFileURL(path.resolve(f)).toString(), ...readSource(f, MAX_FILE_BYTES) }));
    // Z3 takes a few hundred milliseconds to start: let it start while the front end runs.
    const backend = options.verify && files.length > 0 ? commandBackend(options.verifier) : undefined;
    try {
        return await checkWith(files, sources, options, start, backend);
    } finally {
        // The report is complete: the solver's shutdown never holds it back (the CLI
        // exits once the report is written, which ends the workers in any state).
        backend?.dispose().catch(() => undefined);
    }
}

async function checkWith(files: string[], sources: Array<{ file: string; uri: string; text: string; tooLarge?: number }>, options: CheckCommandOptions, start: number, backend: SolverBackend | undefined): Promise<CheckOutcome> {
    const trace = options.verifier.trace;
    trace?.('[front end] start');
    const { shared, Calvin } = createCalvinCoreServices();
    const result = await buildProgram(shared, sources.map(s => ({ uri: s.uri, text: s.text })));
    trace?.(`[front end] ${sources.length} file(s) parsed, linked and validated`);
    const diagnostics: CliDiagnostic[] = [];
    for (const s of sources) {
        if (s.tooLarge === undefined) continue;
        diagnostics.push({
            file: s.file, line: 1, column: 1, endLine: 1, endColumn: 1, severity: 'error', code: 'syntax',
            message: `This file is too large for Calvin (${(s.tooLarge / 1e6).toFixed(1)} MB; the limit is ${(MAX_FILE_BYTES / 1e6).toFixed(1)} MB): it is not checked. Split it into several files.`,
        });
    }
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
    let checked = 0, notChecked = 0;
    let checks: CheckReport['checks'];
    if (options.verify) {
        const byUri = new Map(sources.map(s => [s.uri, s.file]));
        const fileOf = (uri: string) => byUri.get(uri) ?? uri;
        const step = await verifyDocuments(result.documents, [...shared.workspace.LangiumDocuments.all], Calvin, fileOf, options.verifier, backend);
        diagnostics.push(...step.diagnostics);
        skipped = step.skipped;
        checked = step.checked;
        notChecked = step.notChecked;
        if (options.verbose) checks = step.checks;
    }
    diagnostics.sort(compareDiagnostics);
    return { files: files.length, procedures, diagnostics, timeMs: Date.now() - start, ...(checks ? { checks } : {}), skipped, checked, notChecked };
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

// The verifier's part of `calvin check`: every program (a group of linked files)
// whose files the front end accepted is verified; findings become CLI diagnostics.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LangiumDocument } from 'langium';
import { programOf, toProgramModel, type CalvinServices } from '@calvin/language';
import { createBackend, diagnosticText, inParallel, oneLine, verifyProgram, verifyWithInference, WitnessSearch, witnessJson, type BackendKind, type InferredAnnotation, type Range, type SolverBackend, type CheckResult, type VDiagnostic, type WitnessBounds } from '@calvin/verifier';
import type { CliDiagnostic } from './diagnostic.js';

export interface VerifyStepOptions {
    solver: BackendKind;
    /** The native z3 executable (z3-native). */
    z3Path?: string;
    /** Hard limit per solver query (ms). */
    timeLimitMs: number;
    /** Z3's resource limit per query. */
    resourceLimit?: number;
    dumpSmtDir?: string;
    /** Solver instances working in parallel. */
    jobs: number;
    /** Details of internal errors (stack traces), for --verbose or CALVIN_DEBUG. */
    log?: (message: string) => void;
    /** Debugging lines of the verifier (CALVIN_DEBUG). */
    trace?: (line: string) => void;
    /** Infer the protection the programs leave out (default true; `--no-infer`). */
    infer: boolean;
    /** Search a concrete interleaving for every error (default true; `--no-witness`), within these bounds. */
    witness?: { bounds?: Partial<WitnessBounds> };
}

/** The witness searches of one program have this many time limits (--time-limit) in all. */
const WITNESS_BUDGET = 2;

/**
 * The solver of a command: native z3 hands the queries it gives up on to Z3 in
 * WebAssembly (solver-host/fallback.ts: Debian's z3 4.8 loops on some that the
 * later release answers at once).
 */
export function commandBackend(options: Pick<VerifyStepOptions, 'solver' | 'jobs' | 'z3Path' | 'trace'>): SolverBackend {
    return createBackend(options.solver, {
        workers: options.jobs, z3Path: options.z3Path, fallback: true,
        onFallback: why => options.trace?.(`[solver] native z3 gave up on a query (${why}): Z3 in WebAssembly takes the rest of its session`),
    });
}

/** --dump-smt: every query of a check into DIR/<check>.smt2. */
function queryFile(dir: string): (check: string) => (text: string) => void {
    return check => {
        fs.mkdirSync(dir, { recursive: true });
        const file = path.join(dir, `${check.replace(/[^\w.-]/g, '_')}.smt2`);
        fs.writeFileSync(file, `; Calvin verification queries for ${check}\n`);
        return text => fs.appendFileSync(file, text);
    };
}

/** What --verbose shows of one check. */
export interface CheckSummary {
    file: string;
    name: string;
    kind: CheckResult['kind'];
    status: CheckResult['status'];
    timeMs: number;
    queries: number;
    envStar: string;
}

export interface VerifyStepResult {
    diagnostics: CliDiagnostic[];
    checks: CheckSummary[];
    /** Files whose program was not verified because the front end reported errors in it. */
    skipped: string[];
    /** Checks that ran (whatever their verdict), and checks or programs that could not run at all. */
    checked: number;
    notChecked: number;
    /** The annotations inferred and verified (with inference on). */
    inferred: InferredAnnotation[];
}

export async function verifyDocuments(
    documents: LangiumDocument[], all: LangiumDocument[], Calvin: CalvinServices,
    fileOf: (uri: string) => string, options: VerifyStepOptions, backend?: SolverBackend,
): Promise<VerifyStepResult> {
    const out: VerifyStepResult = { diagnostics: [], checks: [], skipped: [], checked: 0, notChecked: 0, inferred: [] };
    const groups: LangiumDocument[][] = [];
    const grouped = new Set<string>();
    for (const doc of documents) {
        if (grouped.has(doc.uri.toString())) continue;
        const group = programOf(doc, all);
        group.forEach(d => grouped.add(d.uri.toString()));
        groups.push(group);
    }
    const todo = groups.filter(g => {
        const ok = g.every(d => !(d.diagnostics ?? []).some(x => (x.severity ?? 1) === 1));
        if (!ok) out.skipped.push(...g.map(d => fileOf(d.uri.toString())));
        return ok;
    });
    if (todo.length === 0) return out;
    const solver = backend ?? commandBackend(options);
    try {
        // Programs are verified side by side (their checks share the solver pool, whose queue keeps
        // every solver busy); a few at a time bounds the memory. The report keeps the programs' order.
        const outcomes = await inParallel(todo, options.jobs + 1, group => verifyGroup(group, Calvin, fileOf, options, solver));
        for (const o of outcomes) {
            out.diagnostics.push(...o.diagnostics);
            out.inferred.push(...o.inferred);
            out.checks.push(...o.checks);
            out.checked += o.checked;
            out.notChecked += o.notChecked;
        }
    } finally {
        if (!backend) await solver.dispose();
    }
    return out;
}

type GroupOutcome = Pick<VerifyStepResult, 'diagnostics' | 'checks' | 'checked' | 'notChecked' | 'inferred'>;

/** One program: its checks (with inference unless --no-infer), then a witness search for each error. */
async function verifyGroup(group: LangiumDocument[], Calvin: CalvinServices, fileOf: (uri: string) => string, options: VerifyStepOptions, solver: SolverBackend): Promise<GroupOutcome> {
    const out: GroupOutcome = { diagnostics: [], checks: [], checked: 0, notChecked: 0, inferred: [] };
    // one program's failure never discards the others' results
    let result: Awaited<ReturnType<typeof verifyProgram>>;
    let model: ReturnType<typeof toProgramModel>;
    let checkedModel: ReturnType<typeof toProgramModel> | undefined;
    try {
        model = toProgramModel(group, Calvin.types.TypeSystem);
        options.trace?.(`[model] ${fileOf(group[0].uri.toString())}: ${model.threads.length} thread(s), ${model.procedures.length} procedure(s)`);
        const verifyOptions = {
            solver, timeLimitMs: options.timeLimitMs, resourceLimit: options.resourceLimit, concurrency: options.jobs + 1, log: options.log, trace: options.trace,
            dumpQueries: options.dumpSmtDir ? queryFile(options.dumpSmtDir) : undefined,
            // test/robustness injects an internal error with it; never set in normal use
            testFault: process.env.CALVIN_TEST_FAULT || undefined,
        };
        if (options.infer) {
            const r = await verifyWithInference(model, verifyOptions);
            out.inferred.push(...r.inference.annotations);
            result = r;
            // (the witness search reads the protection the checks used: the inferred one)
            checkedModel = r.inference.program;
        } else result = await verifyProgram(model, verifyOptions);
    } catch (e) {
        options.log?.(`internal error: ${(e as Error)?.stack ?? e}`);
        const file = fileOf(group[0].uri.toString());
        out.diagnostics.push({
            file, line: 1, column: 1, endLine: 1, endColumn: 1, severity: 'error', code: 'unknown',
            message: `this program was not checked: internal error (${oneLine(e)}); please report it`,
        });
        out.notChecked++;
        return out;
    }
    const texts = new Map(group.map(d => [d.uri.toString(), d.textDocument.getText()]));
    // (a witness is a confirmation, not the verdict: the searches of one program share a budget of
    // WITNESS_BUDGET time limits from the first one on, so that a program with several errors the
    // bounds cannot reach does not take 1.3 time limits per search and stage in turn)
    const budgetMs = WITNESS_BUDGET * (options.timeLimitMs ?? 10_000);
    const witnessOptions = { solver, bounds: options.witness?.bounds, timeLimitMs: options.timeLimitMs, source: (f: string) => texts.get(f), log: options.log, trace: options.trace, budgetMs };
    let search: WitnessSearch | undefined;
    const searchFor = () => (search ??= new WitnessSearch(checkedModel ?? model, { ...witnessOptions, deadline: Date.now() + budgetMs }));
    // the searches run side by side too (each on a solver of the pool), the diagnostics stay in order
    out.diagnostics = await inParallel(result.diagnostics, options.jobs + 1, async d => {
        const cli = toCli(d, fileOf);
        if (options.witness && d.severity === 'error' && d.code !== 'unknown') {
            // (a failure of the witness search costs only the witness, never the diagnostic)
            const w = await searchFor().find(d).catch(e => ({ status: 'not-confirmed' as const, bounds: { loops: 0, switches: 0, copies: 0, inlineDepth: 0 }, reason: `the witness search failed: ${oneLine(e)}`, timeMs: 0 }));
            const j = witnessJson(w);
            cli.witness = { ...j, steps: j.steps.map(st => ({ ...st, file: fileOf(st.file) })) };
            if (w.status === 'confirmed') cli.message = diagnosticText(d, true);
        }
        return cli;
    });
    if (result.checks.length === 0 && result.diagnostics.some(d => d.code === 'unknown' && d.severity === 'error')) out.notChecked++;
    for (const u of result.checks) {
        // a check whose solver could not run (or died under it) was not checked: when no check
        // could run at all, `calvin check` exits 2 instead of 0 with warnings
        if (u.status === 'error' || (u.status === 'unknown' && (u.unknown?.reason === 'solver-error' || u.unknown?.reason === 'solver-crash'))) out.notChecked++;
        else out.checked++;
        out.checks.push({ file: fileOf(u.range.file), name: u.name, kind: u.kind, status: u.status, timeMs: u.timeMs, queries: u.queries, envStar: u.envStar });
    }
    return out;
}

function toCli(d: VDiagnostic, fileOf: (uri: string) => string): CliDiagnostic {
    const at = (r: Range) => ({ file: fileOf(r.file), line: r.startLine + 1, column: r.startChar + 1 });
    return {
        ...at(d.range),
        endLine: d.range.endLine + 1,
        endColumn: d.range.endChar + 1,
        severity: d.severity,
        code: d.code,
        message: diagnosticText(d),
        related: d.related.length > 0 ? d.related.map(r => ({ ...at(r.range), message: r.message })) : undefined,
    };
}

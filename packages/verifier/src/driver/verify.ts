import { append } from '../smt/append.js';
import type { MethodModel, ProgramModel, Range } from '../model/program.js';
import type { Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import { TID, type Conjunct, type Invariant, type SpecContext } from '../spec/environment.js';
import { LoweringError } from '../lower/lower.js';
import { initializationMethods } from '../analysis/reach.js';
import { checksOf, checkSpec, namesThreads, programContext, type Check, type ProgramContext } from './program-context.js';
import { lowerCheck, simulationProgram, type LoweredCheck } from './stages.js';
import type { SimSpec } from '../sim/simulate.js';
import { vcgen, type VC } from '../vc/vcgen.js';
import { candidateText, runVC, type RunResult } from '../query/run.js';
import { closure, syntacticallyTransitive, type Closure } from '../closure/closure.js';
import type { QueryLog, SolverBackend, SolverSession, Trace } from '../solver-host/types.js';
import { SolverFailure } from '../solver-host/types.js';
import type { SeqProgram } from '../sim/seq.js';
import type { Cmd } from '../il/il.js';
import { printProgram } from '../sim/print.js';
import type { CheckResult, VDiagnostic } from '../report/result.js';
import { accessesOf, dedupe, findings, loopInvariantsOf, uncheckedDiagnostics as uncheckedOf, unknownDiagnostic } from '../report/findings.js';

export type { CheckResult, VDiagnostic, VCode, UnknownReason } from '../report/result.js';
export { diagnosticText } from '../report/result.js';

/**
 * The driver: a program's checks (checking.md, Theorem 1), and the one
 * pipeline every check runs through — lowering, E(p) and I(p), E*, the
 * simulation-checking program, the verification condition, the solver, the
 * findings — for the CLI (`verifyProgram`) and the server's check workers
 * (`verifyCheck`) alike.
 */

export interface VerifyOptions {
    solver: SolverBackend;
    /** Limit per solver query (ms). */
    timeLimitMs?: number;
    /** Z3's resource limit per query (deterministic; none: time only). */
    resourceLimit?: number;
    /** Every query of a check, as SMT-LIB2 (for --dump-smt): a log per check name. */
    dumpQueries?: (check: string) => QueryLog;
    /** Debugging lines (timings, Houdini's progress). */
    trace?: Trace;
    /** Checks run in parallel (give the backend as many workers). Default 1. */
    concurrency?: number;
    /** Time a whole check may take (ms); default four query limits. */
    checkBudgetMs?: number;
    /** Where internal errors' details go (stack traces are never part of a diagnostic). */
    log?: (message: string) => void;
    /** Tests of the error paths only: an internal error in the programs with a file whose path contains this. */
    testFault?: string;
    /**
     * Loop-invariant candidates (texts) Houdini starts from, e.g. those the
     * previous run of the same check kept (the editor re-checks an edited
     * check): the verdict is the same as without (runVC), the time often less.
     */
    houdiniSeed?: readonly string[];
    /**
     * The candidates of the run the seed comes from, when the caller knows that
     * the check has only lost assumptions since (the inference dropped invariants
     * it had proposed, nothing else changed): if the check's candidates are among
     * them, Houdini from the seed keeps exactly what Houdini from all of them
     * would (it keeps a subset of the seed, which is what the run before kept
     * with more assumptions), so the seeded run's result stands even when it is
     * not "verified".
     */
    houdiniSeedCandidates?: readonly string[];
    /**
     * The check ends as soon as it knows which inferred annotations it refutes
     * (with those failures only: `CheckResult.refutedOnly`), when the caller
     * runs the inference again on a refutation (issue 15: the rest would be
     * thrown away). Without refutations the check runs as usual.
     */
    untilRefuted?: boolean;
}

export interface VerifyResult {
    checks: CheckResult[];
    diagnostics: VDiagnostic[];
}

/** The first line of an error's message. */
export function oneLine(e: unknown): string {
    return (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).split('\n')[0].slice(0, 300);
}

/** Verify one program (checking.md, Theorem 1): every check, in order. */
export async function verifyProgram(program: ProgramModel, options: VerifyOptions): Promise<VerifyResult> {
    let ctx: ProgramContext;
    try {
        const fault = options.testFault;
        if (fault && program.files.some(f => f.includes(fault))) throw new Error(`injected fault (${fault})`);
        ctx = programContext(program);
    } catch (e) {
        // the program-wide analyses failed: nothing of this program is checked, and it says so
        options.log?.(`internal error in the program of ${program.files[0] ?? '?'}: ${(e as Error)?.stack ?? e}`);
        const range: Range = program.threads[0]?.nameRange ?? { file: program.files[0] ?? '', startLine: 0, startChar: 0, endLine: 0, endChar: 0 };
        return { checks: [], diagnostics: [{ range, severity: 'error', code: 'unknown', related: [], message: `this program was not checked: internal error (${oneLine(e)}); please report it` }] };
    }
    const checks = checksOf(ctx);
    const diagnostics: VDiagnostic[] = uncheckedDiagnostics(ctx);
    const results = await inParallel(checks, options.concurrency ?? 1, u => runCheck(u, ctx, options));
    for (const r of results) append(diagnostics, r.diagnostics);
    return { checks: results, diagnostics: dedupe(diagnostics) };
}

/** map(items, f) with at most `limit` calls of f in flight; results in the order of items. */
export async function inParallel<A, B>(items: A[], limit: number, f: (a: A) => Promise<B>): Promise<B[]> {
    const out = new Array<B>(items.length);
    let next = 0;
    const worker = async () => {
        while (next < items.length) {
            const i = next++;
            out[i] = await f(items[i]);
        }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
    return out;
}

/** The specifications of every thread and procedure check of a program (no solver involved): for hover and tests. */
export function specifications(program: ProgramModel): Array<{ name: string; kind: 'thread' | 'abstraction'; env: Conjunct[]; inv: Invariant[]; tidConstraint: Term; vocab: Vocabulary; guards: SpecContext['guards']; spec: SpecContext }> {
    const ctx = programContext(program);
    return checksOf(ctx).filter(u => u.kind !== 'init').map(u => ({ name: u.name, kind: u.kind as 'thread' | 'abstraction', ...checkSpec(ctx, u), vocab: ctx.vocab, guards: ctx.spec.guards, spec: ctx.spec }));
}

/** Verify one check of a program (by its key, `CheckPlan.key`): what a check worker runs. */
export async function verifyCheck(ctx: ProgramContext, key: string, options: VerifyOptions): Promise<CheckResult | undefined> {
    const u = checksOf(ctx).find(x => x.key === key);
    return u ? runCheck(u, ctx, options) : undefined;
}

/** The infos about procedures no check covers (`unchecked`). */
export function uncheckedDiagnostics(ctx: ProgramContext): VDiagnostic[] {
    // (what the globals' initializers call runs in every thread's check, before the threads start)
    const inInit = ctx.program.threads.length > 0 ? initializationMethods(ctx.program) : new Set<string>();
    return uncheckedOf(ctx.vocab.allMethods() as MethodModel[], ctx.callers, inInit);
}

/** A blank result of a check (what it becomes is filled in as it runs). */
function blankResult(u: Check): CheckResult {
    return {
        key: u.key, name: u.name, kind: u.kind, range: u.range, status: 'verified', timeMs: 0, solverMs: 0, queries: 0, diagnostics: [],
        environment: [], invariant: [], inferredLoopInvariants: [], loopInvariants: [], accesses: [], envStar: '',
    };
}

/**
 * Stages 1-4 of one check: its lowered body, E(p) and I(p), E* (which may ask
 * the solver), and its simulation-checking program. Fills in the result's
 * E(p), I(p) and E* decision.
 */
async function simulate(u: Check, ctx: ProgramContext, options: VerifyOptions, timeLimitMs: number, base: CheckResult, log?: QueryLog): Promise<{ lowered: LoweredCheck; seq: SeqProgram }> {
    const { vocab, spec } = ctx;
    const lowered = lowerCheck(ctx, u);                                        // stage 1: atomic operations
    if (u.kind === 'init') {
        base.invariant = ctx.invariants.map(c => ({ text: c.text, origin: c.origin }));
        const seq = simulationProgram(lowered, { vocab, guards: spec.guards, elementGuards: spec.elementGuards, notOwned: spec.notOwned, env: [], star: [], inv: [], guarantee: [], tid: TID, tidConstraint: T.TRUE }, ctx.invariants);
        return { lowered, seq };
    }
    const { env, inv, tidConstraint } = checkSpec(ctx, u);                    // stage 3: E(p), I(p)
    base.environment = env.map(c => ({ text: c.text, origin: c.origin }));
    base.invariant = inv.map(c => ({ text: c.text, origin: c.origin }));
    const star = await closureOf(ctx, env, inv, tidConstraint, options, timeLimitMs, base, log);
    base.envStar = star.unknown ? `E* over-approximated by the built-in assumptions (solver: ${star.unknown})`
        : star.exact ? 'E is reflexive and transitive: E* = E'
            : `E* over-approximated: not transitive, without ${star.dropped.map(c => c.text).join('; ')}${star.derived.length > 0 ? `; with ${star.derived.map(c => c.text).join('; ')}` : ''}`;
    const simSpec: SimSpec = { vocab, guards: spec.guards, elementGuards: spec.elementGuards, notOwned: spec.notOwned, env, star: star.conjuncts, inv, guarantee: ctx.guarantee, tid: TID, tidConstraint };
    return { lowered, seq: simulationProgram(lowered, simSpec, inv) };           // stage 4: simulation-checking program
}

/**
 * The intermediate stages of one check (by key), as the pipeline computes them:
 * its lowered body (and the field initializers, for a thread), its E* decision
 * and its simulation-checking program. For the stage tests and debugging.
 */
export async function checkStages(ctx: ProgramContext, key: string, options: VerifyOptions): Promise<{ init?: Cmd[]; body: Cmd[]; envStar: string; seq: SeqProgram } | undefined> {
    const u = checksOf(ctx).find(x => x.key === key);
    if (!u) return undefined;
    const base = blankResult(u);
    const { lowered, seq } = await simulate(u, ctx, options, options.timeLimitMs ?? 10_000, base);
    return { init: lowered.init, body: lowered.body, envStar: base.envStar, seq };
}

/** One check through the pipeline (stages 1-8). */
async function runCheck(u: Check, ctx: ProgramContext, options: VerifyOptions): Promise<CheckResult> {
    const start = Date.now();
    const base = blankResult(u);
    const timeLimitMs = options.timeLimitMs ?? 10_000;
    const log = options.dumpQueries?.(u.name);
    const notDecided = (reason: CheckResult['unknown'] & object, why: string) => {
        base.status = 'unknown';
        base.unknown = reason;
        base.diagnostics.push(unknownDiagnostic(u, why));
    };
    let session: SolverSession | undefined;
    try {
        const { lowered, seq } = await simulate(u, ctx, options, timeLimitMs, base, log); // stages 1-4
        log?.(printProgram(seq).replace(/^/gm, '; '));
        const t0 = Date.now();
        const vc = vcgen(ctx.vocab, seq);                                      // stages 5-6: VC
        options.trace?.(`[vcgen] ${u.name}: ${Date.now() - t0} ms (since start ${Date.now() - start} ms)`);
        // the solver is taken only now: while another check uses it, this one prepares its VC
        session = timed(await options.solver.openSession({ timeLimitMs, resourceLimit: options.resourceLimit }), base);
        const deadline = start + (options.checkBudgetMs ?? 4 * timeLimitMs);
        let result: RunResult | undefined;
        const candidates = candidatesOf(vc);
        // Whether Houdini's outcome is that of a start from all candidates: only then may a later
        // run start from what it kept, with these candidates (houdiniSeedCandidates).
        let exact = true;
        if (options.houdiniSeed) {
            // From the invariants a previous run kept; not verified from them: again from all
            // candidates, in a fresh session (the same failures and values as a run without seed).
            result = await runVC(vc, session, log, deadline, options.trace, new Set(options.houdiniSeed));
            const before = options.houdiniSeedCandidates && new Set(options.houdiniSeedCandidates);
            const covered = before !== undefined && !result.houdiniGaveUp && candidates.every(t => before.has(t));
            if (result.status === 'verified' || (covered && result.status === 'failed')) {
                exact = covered; // (verified from a seed not known to be exact: the verdict stands, the kept set may be smaller)
            } else {
                base.queries += result.queries;
                options.trace?.(`[houdini] ${u.name}: not verified from the ${options.houdiniSeed.length} seeded candidates; again from all`);
                session.close();
                session = undefined;
                session = timed(await options.solver.openSession({ timeLimitMs, resourceLimit: options.resourceLimit }), base);
                result = undefined;
            }
        }
        result ??= await runVC(vc, session, log, deadline, options.trace, undefined, options.untilRefuted); // stage 7
        if (result.refutedOnly) base.refutedOnly = true;
        base.queries += result.queries;
        base.inferredLoopInvariants = [...result.inferred.values()].flat();
        if (exact && !result.houdiniGaveUp) base.candidates = candidates;
        base.diagnostics = findings(result.failures, ctx.program);           // stage 8
        base.loopInvariants = loopInvariantsOf(vc.obligations, result.live);
        base.accesses = accessesOf(lowered.body, base.diagnostics);
        // Z3 says "canceled" both when its time-out fires and when its resource limit is reached
        const outOfTime = /time/i.test(result.reason ?? '') || (/cancel/i.test(result.reason ?? '') && (options.resourceLimit === undefined || (result.unknownAfterMs ?? 0) >= 0.9 * timeLimitMs));
        const gaveUp = /cancel/i.test(result.reason ?? '') ? `its resource limit of ${options.resourceLimit} was reached` : result.reason ?? 'unknown';
        if (result.status === 'unknown' && result.failures.length > 0) {
            // The procedure already fails; the checks after its failures are undecided. It is shown
            // as failed (never verified) and re-checked once the reported failures are fixed.
            base.status = 'failed';
            base.undecided = result.reason ?? 'unknown';
        } else if (result.status === 'unknown') {
            notDecided({ reason: outOfTime ? 'timeout' : 'solver-unknown', detail: outOfTime ? result.reason ?? 'time-out' : gaveUp }, outOfTime
                ? `it ran out of time (limit ${timeLimitMs} ms per query; raise it with --time-limit or calvin.timeLimitMs)`
                : `the solver could not decide it (${gaveUp})`);
        } else {
            base.status = result.failures.length > 0 ? 'failed' : 'verified';
        }
    } catch (e) {
        if (e instanceof SolverFailure) {
            notDecided({ reason: e.kind === 'timeout' ? 'timeout' : e.kind === 'crash' ? 'solver-crash' : 'solver-error', detail: e.message }, e.kind === 'timeout'
                ? `it ran out of time (limit ${timeLimitMs} ms; raise it with --time-limit or calvin.timeLimitMs)`
                : e.kind === 'crash' ? `the solver crashed (${e.message}); it was restarted` : `the solver reported an error: ${e.message}`);
        } else if (e instanceof LoweringError) {
            base.status = 'error';
            base.unknown = { reason: 'unsupported', detail: e.message };
            base.diagnostics.push({ range: e.range ?? u.range, severity: 'error', code: 'unknown', related: [], message: `${u.name} was not checked: ${e.message}` });
        } else {
            // Nothing was checked: an error (never "verified"), with the cause in one line (the stack goes to the log).
            base.status = 'error';
            base.unknown = { reason: 'internal', detail: oneLine(e) };
            options.log?.(`internal error in ${u.name}: ${(e as Error)?.stack ?? e}`);
            base.diagnostics.push({ range: u.range, severity: 'error', code: 'unknown', related: [], message: `${u.name} was not checked: internal error (${oneLine(e)}); please report it` });
        }
    } finally {
        session?.close();
    }
    base.timeMs = Date.now() - start;
    return base;
}

/** The texts of a VC's loop-invariant candidates (what a Houdini seed names). */
function candidatesOf(vc: VC): string[] {
    return vc.obligations.filter(c => c.kind === 'candidate').map(candidateText);
}

/** A session that adds the time of its evals to the check's solver time. */
function timed(session: SolverSession, result: CheckResult): SolverSession {
    return {
        eval: async (text: string) => {
            const t0 = Date.now();
            try {
                return await session.eval(text);
            } finally {
                result.solverMs += Date.now() - t0;
            }
        },
        close: () => session.close(),
    };
}

/** Checks with the same E, I and thread ids share the E* decision (the check that computes it counts its queries). */
function closureOf(ctx: ProgramContext, env: Conjunct[], inv: Invariant[], tidConstraint: Term, options: VerifyOptions, timeLimitMs: number, result: CheckResult, log?: QueryLog): Promise<Closure> {
    // When no clause names a thread, E* is the same for every thread: one closure for all of them.
    if (!namesThreads(ctx, env, inv)) tidConstraint = T.cmp('>', TID, T.int(0));
    const key = `${T.key(tidConstraint)}|${env.map(c => `${c.origin}:${c.text}`).sort().join('|')}|${inv.map(c => c.text).sort().join('|')}`;
    let pending = ctx.closures.get(key);
    if (!pending) {
        pending = (async () => {
            if (syntacticallyTransitive(env)) return closure(ctx.spec, env, inv, tidConstraint, undefined as never, log, { trace: options.trace });
            const session = timed(await options.solver.openSession({ timeLimitMs, resourceLimit: options.resourceLimit }), result);
            try {
                const c = await closure(ctx.spec, env, inv, tidConstraint, session, log, { trace: options.trace });
                result.queries += c.queries;
                return c;
            } finally {
                session.close();
            }
        })();
        ctx.closures.set(key, pending);
    }
    return pending;
}

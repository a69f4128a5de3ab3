import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProgramModel, Range } from './model/program.js';
import type { Vocabulary } from './heap/vocabulary.js';
import * as T from './smt/term.js';
import type { Term } from './smt/term.js';
import { TID, type Conjunct, type Invariant, type SpecContext } from './spec/environment.js';
import { LoweringError } from './lower/lower.js';
import { lowerUnit, namesThreads, programContext, simulationProgram, unitSpec, unitsOf, type ProgramContext, type Unit } from './program-context.js';
import type { SimSpec } from './sim/simulate.js';
import { vcgen } from './vc/vcgen.js';
import { runVC, type Failure } from './solve/run.js';
import { closure, syntacticallyTransitive, type Closure } from './solve/closure.js';
import type { SolverBackend, SolverSession } from './solver/index.js';
import { SolverFailure } from './solver/index.js';
import type { SeqProgram } from './sim/seq.js';
import { printProgram } from './sim/print.js';
import type { CheckCode } from './il/il.js';
import { escapeControl } from './text.js';

export type VCode = CheckCode | 'unknown' | 'unchecked';

/** A finding of the verifier (pipeline stage 8), positioned in the source. */
export interface VDiagnostic {
    range: Range;
    severity: 'error' | 'warning' | 'info';
    code: VCode;
    message: string;
    related: Array<{ range: Range; message: string }>;
    /** The values that explain a failure (also in the message), and which environment step made it fail. */
    counterexample?: { values: Array<{ name: string; value: string }>; notes: string[] };
}

/** One unit of work: a thread's check, a procedure's abstraction check, or the initialization check. */
export interface UnitResult {
    /** Stable key of the check (CheckPlan.key). */
    key: string;
    name: string;
    kind: 'thread' | 'abstraction' | 'init';
    range: Range;
    status: 'verified' | 'failed' | 'unknown' | 'error';
    timeMs: number;
    /** Time spent waiting for the solver (ms). */
    solverMs: number;
    queries: number;
    diagnostics: VDiagnostic[];
    /** E(p) and I(p) with their origins, the inferred loop invariants, and the E* decision (for hover and --verbose). */
    environment: Array<{ text: string; origin: string }>;
    invariant: Array<{ text: string; origin: string }>;
    inferredLoopInvariants: string[];
    /** The inferred loop invariants by loop (the loop statement's range). */
    loopInvariants: Array<{ range: Range; texts: string[] }>;
    /** The thread's shared accesses and whether each is stable there (race-free), per this check. */
    accesses: Array<{ range: Range; text: string; write: boolean; sync: boolean; stable: boolean }>;
    envStar: string;
    /** A failed unit whose remaining checks the solver could not decide (why). */
    undecided?: string;
}

export interface VerifyOptions {
    solver: SolverBackend;
    /** Limit per solver query (ms). */
    timeLimitMs?: number;
    /** Write every query as SMT-LIB2 into this directory. */
    dumpSmtDir?: string;
    /** Checks run in parallel (give the backend as many workers). Default 1. */
    concurrency?: number;
    /** Time a whole check may take (ms); default four query limits. */
    checkBudgetMs?: number;
    /** Where internal errors' details go (stack traces are never part of a diagnostic). */
    log?: (message: string) => void;
    /** Tests of the error paths only: an internal error in the programs with a file whose path contains this. */
    testFault?: string;
}

export interface VerifyResult {
    units: UnitResult[];
    diagnostics: VDiagnostic[];
}

/** The first line of an error's message. */
export function oneLine(e: unknown): string {
    return (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).split('\n')[0].slice(0, 300);
}

/** Verify one program (checking.md, Theorem 1): every unit, in order. */
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
        return { units: [], diagnostics: [{ range, severity: 'error', code: 'unknown', related: [], message: `this program was not checked: internal error (${oneLine(e)}); please report it` }] };
    }
    const units = unitsOf(ctx);
    const diagnostics: VDiagnostic[] = uncheckedDiagnostics(ctx);
    const results = await inParallel(units, options.concurrency ?? 1, u => verifyUnit(u, ctx, options));
    for (const r of results) diagnostics.push(...r.diagnostics);
    return { units: results, diagnostics: dedupe(diagnostics) };
}

/** map(items, f) with at most `limit` calls of f in flight; results in the order of items. */
async function inParallel<A, B>(items: A[], limit: number, f: (a: A) => Promise<B>): Promise<B[]> {
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
    return unitsOf(ctx).filter(u => u.kind !== 'init').map(u => ({ name: u.name, kind: u.kind as 'thread' | 'abstraction', ...unitSpec(ctx, u), vocab: ctx.vocab, guards: ctx.spec.guards, spec: ctx.spec }));
}

/** Verify one check of a program (by its key, `CheckPlan.key`): what a check worker runs. */
export async function verifyCheck(ctx: ProgramContext, key: string, options: VerifyOptions): Promise<UnitResult | undefined> {
    const u = unitsOf(ctx).find(x => x.key === key);
    return u ? verifyUnit(u, ctx, options) : undefined;
}

/** The infos about procedures no check covers (`unchecked`). */
export function uncheckedDiagnostics(ctx: ProgramContext): VDiagnostic[] {
    const out: VDiagnostic[] = [];
    for (const m of ctx.vocab.allMethods()) {
        if (!m.abstraction && !ctx.callers.has(m.id)) {
            out.push({
                range: m.nameRange, severity: 'info', code: 'unchecked', related: [],
                message: `'${m.name}' is not checked: no thread reaches it and it has no abstraction (call it from a thread, e.g. 'thread Client[*] { ... }', or give it an abstraction)`,
            });
        }
    }
    return out;
}

async function verifyUnit(u: Unit, ctx: ProgramContext, options: VerifyOptions): Promise<UnitResult> {
    const start = Date.now();
    const { vocab, spec } = ctx;
    const base: UnitResult = {
        key: u.key, name: u.name, kind: u.kind, range: u.range, status: 'verified', timeMs: 0, solverMs: 0, queries: 0, diagnostics: [],
        environment: [], invariant: [], inferredLoopInvariants: [], loopInvariants: [], accesses: [], envStar: '',
    };
    const timeLimitMs = options.timeLimitMs ?? 10_000;
    const log = options.dumpSmtDir ? smtLogger(options.dumpSmtDir, u.name) : undefined;
    let session: SolverSession | undefined;
    try {
        let seq: SeqProgram;
        const lowered = lowerUnit(ctx, u);
        if (u.kind === 'init') {
            seq = simulationProgram(lowered, { vocab, guards: spec.guards, elementGuards: spec.elementGuards, notOwned: spec.notOwned, env: [], star: [], inv: [], guarantee: [], tid: TID, tidConstraint: T.TRUE }, ctx.invariants);
            base.invariant = ctx.invariants.map(c => ({ text: c.text, origin: c.origin }));
        } else {
            const { env, inv, tidConstraint } = unitSpec(ctx, u);
            base.environment = env.map(c => ({ text: c.text, origin: c.origin }));
            base.invariant = inv.map(c => ({ text: c.text, origin: c.origin }));
            const star = await closureOf(ctx, env, inv, tidConstraint, options, timeLimitMs, base, log);
            base.envStar = star.unknown ? `E* over-approximated by the built-in assumptions (solver: ${star.unknown})`
                : star.exact ? 'E is reflexive and transitive: E* = E'
                    : `E* over-approximated: not transitive, without ${star.dropped.map(c => c.text).join('; ')}${star.derived.length > 0 ? `; with ${star.derived.map(c => c.text).join('; ')}` : ''}`;
            const simSpec: SimSpec = { vocab, guards: spec.guards, elementGuards: spec.elementGuards, notOwned: spec.notOwned, env, star: star.conjuncts, inv, guarantee: ctx.guarantee, tid: TID, tidConstraint };
            seq = simulationProgram(lowered, simSpec, inv);
        }
        log?.(printProgram(seq).replace(/^/gm, '; '));
        const t0 = Date.now();
        const vc = vcgen(vocab, seq);
        if (process.env.CALVIN_DEBUG) console.error(`[vcgen] ${u.name}: ${Date.now() - t0} ms (since start ${Date.now() - start} ms)`);
        // the solver is taken only now: while another check uses it, this one prepares its VC
        session = timed(await options.solver.openSession({ timeLimitMs }), base);
        const result = await runVC(vc, session, log, start + (options.checkBudgetMs ?? 4 * timeLimitMs));
        base.queries += result.queries;
        base.inferredLoopInvariants = [...result.inferred.values()].flat();
        base.diagnostics = findings(result.failures, ctx.program);
        base.loopInvariants = loopInvariantsOf(vc.checks, result.live);
        base.accesses = accessesOf(lowered, base.diagnostics);
        if (result.status === 'unknown' && result.failures.length > 0) {
            // The procedure already fails; the checks after its failures are undecided. It is shown
            // as failed (never verified) and re-checked once the reported failures are fixed.
            base.status = 'failed';
            base.undecided = result.reason ?? 'unknown';
        } else if (result.status === 'unknown') {
            base.status = 'unknown';
            const why = /time|cancel/i.test(result.reason ?? '')
                ? `it ran out of time (limit ${timeLimitMs} ms per query; raise it with --time-limit or calvin.timeLimitMs)`
                : `the solver could not decide it (${result.reason ?? 'unknown'})`;
            base.diagnostics.push(unknownDiagnostic(u, why));
        } else {
            base.status = result.failures.length > 0 ? 'failed' : 'verified';
        }
    } catch (e) {
        if (e instanceof SolverFailure) {
            base.status = 'unknown';
            base.diagnostics.push(unknownDiagnostic(u, e.kind === 'timeout'
                ? `it ran out of time (limit ${timeLimitMs} ms; raise it with --time-limit or calvin.timeLimitMs)`
                : e.kind === 'crash' ? `the solver crashed (${e.message}); it was restarted` : `the solver reported an error: ${e.message}`));
        } else if (e instanceof LoweringError) {
            base.status = 'error';
            base.diagnostics.push({ range: e.range ?? u.range, severity: 'error', code: 'unknown', related: [], message: `${u.name} was not checked: ${e.message}` });
        } else {
            // Nothing was checked: an error (never "verified"), with the cause in one line (the stack goes to the log).
            base.status = 'error';
            options.log?.(`internal error in ${u.name}: ${(e as Error)?.stack ?? e}`);
            base.diagnostics.push({ range: u.range, severity: 'error', code: 'unknown', related: [], message: `${u.name} was not checked: internal error (${oneLine(e)}); please report it` });
        }
    } finally {
        session?.close();
    }
    base.timeMs = Date.now() - start;
    return base;
}

/** A session that adds the time of its evals to the unit's solver time. */
function timed(session: SolverSession, unit: UnitResult): SolverSession {
    return {
        eval: async (text: string) => {
            const t0 = Date.now();
            try {
                return await session.eval(text);
            } finally {
                unit.solverMs += Date.now() - t0;
            }
        },
        close: () => session.close(),
    };
}

/** Units with the same E, I and thread ids share the E* decision (the unit that computes it counts its queries). */
function closureOf(ctx: ProgramContext, env: Conjunct[], inv: Invariant[], tidConstraint: Term, options: VerifyOptions, timeLimitMs: number, unit: UnitResult, log?: (t: string) => void): Promise<Closure> {
    // When no clause names a thread, E* is the same for every thread: one closure for all of them.
    if (!namesThreads(ctx, env, inv)) tidConstraint = T.cmp('>', TID, T.int(0));
    const key = `${T.key(tidConstraint)}|${env.map(c => `${c.origin}:${c.text}`).sort().join('|')}|${inv.map(c => c.text).sort().join('|')}`;
    let pending = ctx.closures.get(key);
    if (!pending) {
        pending = (async () => {
            if (syntacticallyTransitive(env)) return closure(ctx.spec, env, inv, tidConstraint, undefined as never, log);
            const session = timed(await options.solver.openSession({ timeLimitMs }), unit);
            try {
                const c = await closure(ctx.spec, env, inv, tidConstraint, session, log);
                unit.queries += c.queries;
                return c;
            } finally {
                session.close();
            }
        })();
        ctx.closures.set(key, pending);
    }
    return pending;
}

function unknownDiagnostic(u: Unit, why: string): VDiagnostic {
    const what = u.kind === 'thread' ? `thread ${u.name}` : u.kind === 'init' ? 'the initialization check' : `the abstraction check of ${u.name}`;
    return { range: u.range, severity: 'warning', code: 'unknown', related: [], message: `${what} is not verified: ${why}` };
}

/** The candidates Houdini kept, grouped by loop. */
function loopInvariantsOf(checks: import('./sim/seq.js').Check[], live: number[]): UnitResult['loopInvariants'] {
    const out: UnitResult['loopInvariants'] = [];
    for (const id of live) {
        const c = checks[id];
        if (!c || c.kind !== 'candidate') continue;
        const text = c.info.message.replace(/^candidate loop invariant /, '');
        const loop = out.find(l => sameRange(l.range, c.info.range));
        if (loop) loop.texts.push(text);
        else out.push({ range: c.info.range, texts: [text] });
    }
    for (const l of out) l.texts = withoutImplied(l.texts);
    return out;
}

/**
 * For display: one text per fact (`0 <= i` and `i >= 0` are one), without the
 * ones another implies (`i <= n` next to `i < n`; `v >= 0` next to `v == 1`).
 */
function withoutImplied(texts: string[]): string[] {
    const FLIP: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==', '!=': '!=' };
    const cmp = /^([\w.]+) (==|>=|<=|>|<|!=) ([\w.]+|-?\d+)$/;
    const parse = (t: string) => {
        const m = cmp.exec(t);
        if (!m) return undefined;
        // the constant (or the second name in alphabetical order) on the right
        const swap = /^-?\d+$/.test(m[1]) || (!/^-?\d+$/.test(m[3]) && m[1] > m[3]);
        return swap ? { l: m[3], op: FLIP[m[2]], r: m[1] } : { l: m[1], op: m[2], r: m[3] };
    };
    const seen = new Set<string>();
    const facts: Array<{ text: string; f?: { l: string; op: string; r: string } }> = [];
    for (const text of texts) {
        const f = parse(text);
        const key = f ? `${f.l} ${f.op} ${f.r}` : text;
        if (seen.has(key)) continue;
        seen.add(key);
        facts.push({ text, f });
    }
    const has = (l: string, op: string, r: string) => seen.has(`${l} ${op} ${r}`);
    const fixed = new Map<string, bigint>();
    for (const { f } of facts) if (f && f.op === '==' && /^-?\d+$/.test(f.r)) fixed.set(f.l, BigInt(f.r));
    return facts.filter(({ f }) => {
        if (!f || f.op === '==') return true;
        if (f.op === '<=' && (has(f.l, '<', f.r) || has(f.l, '==', f.r))) return false;
        if (f.op === '>=' && (has(f.l, '>', f.r) || has(f.l, '==', f.r))) return false;
        if (fixed.has(f.l) && /^-?\d+$/.test(f.r)) {
            const v = fixed.get(f.l)!, c = BigInt(f.r);
            const holds = { '>=': v >= c, '<=': v <= c, '>': v > c, '<': v < c, '!=': v !== c }[f.op as '>=' | '<=' | '>' | '<' | '!='];
            if (holds) return false;
        }
        return true;
    }).map(x => x.text);
}

/** The shared accesses of a lowered check, each stable unless a race was reported at it. */
function accessesOf(lowered: import('./program-context.js').LoweredUnit, diagnostics: VDiagnostic[]): UnitResult['accesses'] {
    const out: UnitResult['accesses'] = [];
    const racy = diagnostics.filter(d => d.code === 'race');
    const walk = (cmds: import('./il/il.js').Cmd[]) => {
        for (const c of cmds) {
            if (c.k === 'op') {
                for (const a of c.op.accesses) {
                    if (a.loc.kind === 'all' || a.loc.kind === 'holder' || out.some(x => sameRange(x.range, a.range) && x.write === a.write)) continue;
                    out.push({ range: a.range, text: a.text, write: a.write, sync: a.sync, stable: !racy.some(d => sameRange(d.range, a.range)) });
                }
            } else if (c.k === 'if') { walk(c.then); walk(c.else); } else if (c.k === 'loop' || c.k === 'scope') walk(c.body);
        }
    };
    walk(lowered.body);
    return out;
}

/** Failures → diagnostics, with the counterexample values and the call chain. */
function findings(failures: Failure[], program: ProgramModel): VDiagnostic[] {
    const out: VDiagnostic[] = [];
    // a monitor's holder is a thread: shown by name
    const threadName = new Map(program.threads.filter(t => t.id !== undefined).map(t => [String(t.id), t.name]));
    const named = (name: string, value: string) => name.endsWith('.holder') || name === 'tid'
        ? (value === '0' ? '0 (free)' : threadName.has(value) ? `${value} (${threadName.get(value)})` : value)
        : value;
    // A racy access is reported once, as race (checking.md): an env or invariant failure of
    // the same step is a consequence of the race and is not repeated.
    const racyOps = new Set(failures.filter(f => f.check.info.code === 'race' && f.check.op !== undefined).map(f => f.check.op));
    for (const failure of failures) {
        const f = { ...failure, values: failure.values.map(([n, v]): [string, string] => [n, named(n, v)]) };
        const info = f.check.info;
        if ((info.code === 'env' || info.code === 'invariant') && racyOps.has(f.check.op)) continue;
        const parts = [f.values.map(([n, v]) => `${n} = ${v}`).join(', '), ...f.notes].filter(x => x !== '');
        const values = (parts.length > 0 ? ` [${parts.join('; ')}]` : '') + missingStepHint(info, f.values);
        const related = [...(info.related ? [info.related] : [])];
        for (const frame of [...info.chain].reverse()) related.push({ range: frame.range, message: `called here (${frame.method.split('.').pop()})` });
        const counterexample = f.values.length + f.notes.length > 0 ? { values: f.values.map(([name, value]) => ({ name, value })), notes: f.notes } : undefined;
        out.push({ range: info.range, severity: 'error', code: info.code, message: escapeControl(info.message + values), related, ...(counterexample ? { counterexample } : {}) });
    }
    return out;
}

/**
 * For a method that may return before step K of its abstraction happened: if a
 * statement performs step K without changing shared state (a read, a write of
 * the value already there), only `witness step K` tells the checker so.
 */
function missingStepHint(info: import('./il/il.js').CheckInfo, values: Array<[string, string]>): string {
    const done = Number(values.find(([n]) => n === 'steps done')?.[1]);
    const steps = info.missingStep?.steps;
    if (!steps || !Number.isInteger(done) || done < 0 || done >= steps.length) return '';
    const k = done + 1;
    const step = steps[k - 1];
    // a step that changes nothing can only be a statement that reads: the checker counts reads as stutters
    const hint = step.changesNothing ? `; if a statement that only reads performs it, mark it with '//@ witness step ${k};'` : '';
    return `. On this path step ${k} ('${step.text}') never happened${hint}`;
}

/** One diagnostic per (range, code): the same line may be reached through several call chains or threads. */
function dedupe(ds: VDiagnostic[]): VDiagnostic[] {
    const seen = new Map<string, VDiagnostic>();
    for (const d of ds) {
        const r = d.range;
        const key = `${r.file}:${r.startLine}:${r.startChar}:${r.endLine}:${r.endChar}:${d.code}`;
        const prev = seen.get(key);
        if (!prev) seen.set(key, d);
        else {
            for (const rel of d.related) if (!prev.related.some(p => p.message === rel.message && sameRange(p.range, rel.range))) prev.related.push(rel);
        }
    }
    return [...seen.values()];
}

function sameRange(a: Range, b: Range): boolean {
    return a.file === b.file && a.startLine === b.startLine && a.startChar === b.startChar && a.endLine === b.endLine && a.endChar === b.endChar;
}

function smtLogger(dir: string, unit: string): (text: string) => void {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${unit.replace(/[^\w.-]/g, '_')}.smt2`);
    fs.writeFileSync(file, `; Calvin verification queries for ${unit}\n`);
    return text => fs.appendFileSync(file, text);
}

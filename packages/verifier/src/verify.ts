import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MethodModel, ProgramModel, Range, ThreadModel } from './model/program.js';
import { sortOfType, Vocabulary } from './heap/vocabulary.js';
import * as T from './smt/term.js';
import type { Term } from './smt/term.js';
import { callersOf, methodReach, threadReach } from './analysis/reach.js';
import { environmentOf, inferGuards, invariantOf, type Conjunct, type SpecContext } from './spec/environment.js';
import { Lowerer, LoweringError } from './lower/lower.js';
import { Simulator, type SimSpec } from './sim/simulate.js';
import { vcgen } from './vc/vcgen.js';
import { runVC, type Failure } from './solve/run.js';
import { closure, type Closure } from './solve/closure.js';
import type { SolverBackend } from './solver/index.js';
import { SolverFailure } from './solver/index.js';
import type { SeqProgram } from './vc/seq.js';
import type { CheckCode } from './il/il.js';

export type VCode = CheckCode | 'unknown' | 'unchecked';

/** A finding of the verifier (pipeline stage 8), positioned in the source. */
export interface VDiagnostic {
    range: Range;
    severity: 'error' | 'warning' | 'info';
    code: VCode;
    message: string;
    related: Array<{ range: Range; message: string }>;
}

/** One unit of work: a thread's check, a procedure's abstraction check, or the initialization check. */
export interface UnitResult {
    name: string;
    kind: 'thread' | 'abstraction' | 'init';
    range: Range;
    status: 'verified' | 'failed' | 'unknown' | 'error';
    timeMs: number;
    queries: number;
    diagnostics: VDiagnostic[];
    /** E(p) and I(p) with their origins, the inferred loop invariants, and the E* decision (for hover and --verbose). */
    environment: Array<{ text: string; origin: string }>;
    invariant: Array<{ text: string; origin: string }>;
    inferredLoopInvariants: string[];
    envStar: string;
    /** A failed unit whose remaining checks the solver could not decide (why). */
    undecided?: string;
}

export interface VerifyOptions {
    solver: SolverBackend;
    /** Hard limit per solver query (ms). */
    timeLimitMs?: number;
    /** Write every query as SMT-LIB2 into this directory. */
    dumpSmtDir?: string;
    /** Checks run in parallel (give the backend as many workers). Default 1. */
    concurrency?: number;
}

export interface VerifyResult {
    units: UnitResult[];
    diagnostics: VDiagnostic[];
}

interface Unit {
    name: string;
    kind: UnitResult['kind'];
    range: Range;
    thread?: ThreadModel;
    method?: MethodModel;
}

/** Verify one program (checking.md, Theorem 1): every unit, in order. */
export async function verifyProgram(program: ProgramModel, options: VerifyOptions): Promise<VerifyResult> {
    const vocab = new Vocabulary(program);
    const spec: SpecContext = { vocab, guards: inferGuards(program, vocab) };
    const callers = callersOf(program);
    const units: Unit[] = [];
    const diagnostics: VDiagnostic[] = [];
    if (program.invariants.length > 0 || program.classes.some(c => c.invariants.length > 0)) {
        units.push({ name: 'initialization', kind: 'init', range: program.invariants[0]?.range ?? program.classes.find(c => c.invariants.length > 0)!.invariants[0].range });
    }
    for (const m of vocab.allMethods()) {
        if (m.abstraction) units.push({ name: m.id, kind: 'abstraction', range: m.nameRange, method: m });
        else if (!callers.has(m.id)) {
            diagnostics.push({
                range: m.nameRange, severity: 'info', code: 'unchecked', related: [],
                message: `'${m.name}' is not checked: no thread reaches it and it has no abstraction (call it from a thread, e.g. 'thread Client[*] { ... }', or give it an abstraction)`,
            });
        }
    }
    for (const t of program.threads) units.push({ name: t.name, kind: 'thread', range: t.nameRange, thread: t });
    const closures = new Map<string, Promise<Closure>>();
    const results = await inParallel(units, options.concurrency ?? 1, u => verifyUnit(u, program, vocab, spec, callers, options, closures));
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

const TID = T.v('tid', 'Int');

function tidConstraintOf(vocab: Vocabulary, threads: ThreadModel[] | undefined): Term {
    const k = vocab.singleThreads;
    if (!threads || threads.length === 0) return T.cmp('>', TID, T.int(0));
    return T.or(...threads.map(t => t.id !== undefined ? T.eq(TID, T.int(t.id)) : T.cmp('>', TID, T.int(k))));
}

async function verifyUnit(u: Unit, program: ProgramModel, vocab: Vocabulary, spec: SpecContext, callers: Map<string, ThreadModel[]>, options: VerifyOptions, closures: Map<string, Promise<Closure>>): Promise<UnitResult> {
    const start = Date.now();
    const base: UnitResult = {
        name: u.name, kind: u.kind, range: u.range, status: 'verified', timeMs: 0, queries: 0, diagnostics: [],
        environment: [], invariant: [], inferredLoopInvariants: [], envStar: '',
    };
    const timeLimitMs = options.timeLimitMs ?? 10_000;
    const log = options.dumpSmtDir ? smtLogger(options.dumpSmtDir, u.name) : undefined;
    try {
        let seq: SeqProgram;
        let env: Conjunct[] = [], inv: Conjunct[] = [];
        if (u.kind === 'init') {
            seq = initProgram(program, vocab, spec);
        } else {
            const reach = u.thread ? threadReach(program, u.thread) : methodReach(program, u.method!);
            const topLevel = u.thread !== undefined || u.method!.owner === undefined;
            env = environmentOf(spec, reach, topLevel);
            inv = invariantOf(spec, reach, topLevel);
            base.environment = env.map(c => ({ text: c.text, origin: c.origin }));
            base.invariant = inv.map(c => ({ text: c.text, origin: c.origin }));
            const tidConstraint = u.thread
                ? (u.thread.id !== undefined ? T.eq(TID, T.int(u.thread.id)) : T.cmp('>', TID, T.int(vocab.singleThreads)))
                : tidConstraintOf(vocab, callers.get(u.method!.id));
            const key = `${T.toSmt(tidConstraint)}|${env.map(c => T.toSmt(c.build(n => T.v('a~' + n, vocab.sortOfVar(n)), n => T.v('b~' + n, vocab.sortOfVar(n)), TID))).join('|')}|${inv.map(c => c.text).join('|')}`;
            // Units with the same E, I and thread ids share the E* decision.
            let pending = closures.get(key);
            if (!pending) {
                pending = (async () => {
                    const session = await options.solver.openSession({ timeLimitMs });
                    try {
                        return await closure(vocab, env, inv, spec.guards, TID, tidConstraint, session, log);
                    } finally {
                        session.close();
                    }
                })();
                closures.set(key, pending);
            }
            const star = await pending;
            base.envStar = star.unknown ? `E* over-approximated by the built-in assumptions (solver: ${star.unknown})`
                : star.exact ? 'E is reflexive and transitive: E* = E'
                    : `E* over-approximated: not transitive, replaced by derived conjuncts: ${star.dropped.map(c => c.text).join('; ')}`;
            const simSpec: SimSpec = { vocab, env, envStar: star.conjuncts, inv, guards: spec.guards, tid: TID, tidConstraint };
            seq = u.thread ? threadProgram(u.thread, vocab, simSpec) : methodProgram(u.method!, vocab, simSpec);
        }
        const vc = vcgen(seq);
        const result = await runVC(vc, () => options.solver.openSession({ timeLimitMs }), log, timeLimitMs);
        base.queries = result.queries;
        base.inferredLoopInvariants = [...result.inferred.values()].flat();
        base.diagnostics = findings(result.failures);
        if (result.status === 'unknown' && result.failures.length > 0) {
            // The procedure already fails; the checks after its failures are undecided. It is shown
            // as failed (never verified) and re-checked once the reported failures are fixed.
            base.status = 'failed';
            base.undecided = result.reason ?? 'unknown';
        } else if (result.status === 'unknown') {
            base.status = 'unknown';
            base.diagnostics.push(unknownDiagnostic(u, `the solver could not decide it (${result.reason ?? 'unknown'})`));
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
            base.diagnostics.push({ range: e.range ?? u.range, severity: 'warning', code: 'unknown', related: [], message: `${u.name} was not checked: ${e.message}` });
        } else {
            base.status = 'error';
            base.diagnostics.push({ range: u.range, severity: 'warning', code: 'unknown', related: [], message: `${u.name} was not checked: internal error: ${(e as Error)?.message ?? e}` });
        }
    }
    base.timeMs = Date.now() - start;
    return base;
}

function unknownDiagnostic(u: Unit, why: string): VDiagnostic {
    const what = u.kind === 'thread' ? `thread ${u.name}` : u.kind === 'init' ? 'the initialization check' : `the abstraction check of ${u.name}`;
    return { range: u.range, severity: 'warning', code: 'unknown', related: [], message: `${what} is not verified: ${why}` };
}

function threadProgram(t: ThreadModel, vocab: Vocabulary, spec: SimSpec): SeqProgram {
    const init = new Lowerer(vocab, { kind: 'init', tid: T.int(0) });
    const initCmds = init.lowerInit();
    const lower = new Lowerer(vocab, { kind: 'thread', tid: spec.tid });
    const body = lower.lowerThread(t.body);
    const locals = new Map([...init.declaredLocals, ...lower.declaredLocals]);
    return new Simulator(spec, locals).thread(t, initCmds, body);
}

function methodProgram(m: MethodModel, vocab: Vocabulary, spec: SimSpec): SeqProgram {
    const lower = new Lowerer(vocab, { kind: 'method', tid: spec.tid });
    const params = m.params.map(p => lower.fresh(p.id, sortOfType(p.type)));
    const thisName = m.isStatic ? undefined : lower.fresh('this', 'Ref');
    const thisTerm = thisName ? T.v(thisName, 'Ref') : undefined;
    const resultVar = m.returnType.kind === 'void' ? undefined : lower.fresh('result', sortOfType(m.returnType));
    const body = lower.lowerMethodBody(m, thisTerm, params, resultVar);
    const scope = body[0];
    if (scope.k !== 'scope') throw new Error('lowered method body must be a scope');
    return new Simulator(spec, lower.declaredLocals).abstraction({ method: m, thisTerm, params, resultVar, exitLabel: scope.label }, body);
}

/** Condition 3: Init satisfies every invariant (reported at the invariant clause). */
function initProgram(program: ProgramModel, vocab: Vocabulary, spec: SpecContext): SeqProgram {
    const everything = { methods: new Set<string>(), fields: new Set(vocab.fields.keys()), writes: new Set<string>(), classes: new Set(program.classes.map(c => c.name)) };
    const inv = invariantOf(spec, everything, true);
    const init = new Lowerer(vocab, { kind: 'init', tid: T.int(0) });
    const cmds = init.lowerInit();
    const sim = new Simulator({ vocab, env: [], envStar: [], inv: [], guards: spec.guards, tid: TID, tidConstraint: T.TRUE }, init.declaredLocals);
    return sim.initCheck(cmds, inv);
}

/** Failures → diagnostics, with the counterexample values and the call chain. */
function findings(failures: Failure[]): VDiagnostic[] {
    const out: VDiagnostic[] = [];
    // A racy access is reported once, as race (checking.md): an env or invariant failure of
    // the same step is a consequence of the race and is not repeated.
    const racyOps = new Set(failures.filter(f => f.check.info.code === 'race' && f.check.op !== undefined).map(f => f.check.op));
    for (const f of failures) {
        const info = f.check.info;
        if ((info.code === 'env' || info.code === 'invariant') && racyOps.has(f.check.op)) continue;
        const values = f.values.length > 0 ? ` [${f.values.map(([n, v]) => `${n} = ${v}`).join(', ')}]` : '';
        const related = [...(info.related ? [info.related] : [])];
        for (const frame of [...info.chain].reverse()) related.push({ range: frame.range, message: `called here (${frame.method.split('.').pop()})` });
        out.push({ range: info.range, severity: 'error', code: info.code, message: info.message + values + (f.unconfirmed ? ' (possible: the solver could not confirm this counterexample, which involves quantifiers)' : ''), related });
    }
    return out;
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

import type { ProgramModel } from '../model/program.js';
import type { VDiagnostic } from '../report/result.js';
import type { SolverBackend, SolverSession } from '../solver-host/types.js';
import { SolverFailure } from '../solver-host/types.js';
import { LoweringError } from '../lower/lower.js';
import type { Vocabulary } from '../heap/vocabulary.js';
import { evalTerm } from './eval.js';
import { boundedProgram, type BoundedProgram } from './program.js';
import { Machine, type InitRun } from './machine.js';
import { SymProgram, type SymEvent } from './symbolic.js';
import * as T from '../smt/term.js';
import { Encoder, parseModel } from './encode.js';
import { addCandidates, everyFailure, goalOf, type Candidate, type Goal } from './targets.js';
import { replay, type Schedule } from './replay.js';
import { actionOf, noSource, Namer, stepOf, type SourceReader } from './format.js';
import { tooWeak } from './reasons.js';
import { initWitness } from './initializers.js';
import { DEFAULT_BOUNDS, sameRange, WitnessUnsupported, type WitnessBounds, type WitnessResult, type WitnessStep } from './types.js';

export interface WitnessOptions {
    solver: SolverBackend;
    /** Limit of the search's solver query (ms); the checker's default. */
    timeLimitMs?: number;
    bounds?: Partial<WitnessBounds>;
    /** Source text of the files (default: read from disk). */
    source?: SourceReader;
    /** Where a witness that does not replay is reported (a bug of the search). */
    log?: (message: string) => void;
    /** Every query, as SMT-LIB2 (debugging). */
    dumpQuery?: (text: string) => void;
    /** Debugging: a trace that does not replay is logged with the values the model gave its reads. */
    debug?: boolean;
    /**
     * Called between the search's phases (building the bounded program, its
     * symbolic form, the query): a check worker takes its messages there, and
     * a search that was cancelled meanwhile stops (the call throws).
     */
    checkpoint?: () => Promise<void>;
    /** Each stage's bounds, size, answer and time (CALVIN_DEBUG). */
    trace?: (line: string) => void;
    /**
     * When the searches must be over (Date.now()): a budget the caller shares among the searches of
     * one program (the CLI: a search is optional, the check's verdict is not). A stage gets the time
     * left (its solver's share with it), and none starts without any.
     */
    deadline?: number;
    /** The budget the deadline ends (ms; for the messages). */
    budgetMs?: number;
}

/** The least time (ms) worth a stage of its own before the deadline. */
const MIN_STAGE_MS = 250;
/**
 * A session of time limit L may take about 1.3 L: a native z3's share first, then Z3 in
 * WebAssembly with all of it (solver-host/fallback.ts).
 */
const FALLBACK_FACTOR = 1.3;

/**
 * Loop bounds tried after the default one when a loop was cut: it grows by
 * the default bound (3, 6, 9) up to this, for a program of at most
 * DEEPEN_MAX_EVENTS steps within the default bounds, and all those larger
 * searches together take at most DEEPEN_MS. A loop over a 4-element array
 * needs 5 passes; the search's cost grows fast with the bound (a 2-thread
 * spin-lock program took 0.25 s with 9 and 1.6 s with 12; the 80 steps of
 * examples/time_varying_wrong_lock ran out of the budget at 6, for nothing).
 * (A size, not a time: the same program gets the same witness everywhere.)
 */
const MAX_DEEPENED_LOOPS = 9;
const DEEPEN_MAX_EVENTS = 64;
const DEEPEN_MS = 1000;

/** The time limit (ms) of the quick stage (one loop iteration, one copy). */
const QUICK_STAGE_MS = 2000;

/** Rounds and time (ms) spent asking the solver for a shorter trace once one is found. */
const SHRINK_ROUNDS = 8;
const SHRINK_MS = 800;

const CODES = new Set(['race', 'assert', 'null', 'bounds', 'div-zero', 'invariant', 'env', 'abstraction', 'loop-invariant']);

/**
 * The witness search of one program (issue 14): for an error diagnostic of
 * the modular checker, a concrete interleaving of the real program (all its
 * threads, real method bodies, real initial values) that reaches the failure,
 * found by Z3 within the bounds and replayed on the concrete interpreter; or
 * "not confirmed" with the bounds and the annotation the check relied on.
 */
export class WitnessSearch {
    readonly bounds: WitnessBounds;
    private readonly prepared = new Map<string, { bp: BoundedProgram; init: InitRun }>();

    /** The loop bound grows where loops were cut, unless the caller chose it. */
    private readonly deepenLoops: boolean;

    constructor(readonly program: ProgramModel, private readonly options: WitnessOptions) {
        this.bounds = { ...DEFAULT_BOUNDS, ...(options.bounds ?? {}) };
        this.deepenLoops = options.bounds?.loops === undefined;
    }

    private prepare(bounds: WitnessBounds = this.bounds): { bp: BoundedProgram; init: InitRun } {
        const key = JSON.stringify(bounds);
        let p = this.prepared.get(key);
        if (!p) {
            const bp = boundedProgram(this.program, bounds);
            p = { bp, init: Machine.initial(bp) };
            this.prepared.set(key, p);
        }
        return p;
    }

    /**
     * The bounds tried in turn: one copy of each replicated thread first (most
     * bugs need no more, and the trace is shorter), then the full bounds. A
     * witness within smaller bounds is one within the full bounds.
     */
    private stages(): WitnessBounds[] {
        const replicated = this.program.threads.some(t => t.count !== undefined);
        return replicated && this.bounds.copies > 1 ? [{ ...this.bounds, copies: 1 }, this.bounds] : [this.bounds];
    }

    /**
     * Before the stages, when loops may run more than once: one iteration and one copy, with a
     * short limit and no fallback. Most races need no second iteration, and the unrolled program
     * is the smaller by far (a users' program: 143 events, a witness in 0.8 s, where the default
     * bounds ran out of time after 18 s).
     */
    private quickStage(): WitnessBounds | undefined {
        return this.bounds.loops > 1 ? { ...this.bounds, loops: 1, copies: 1 } : undefined;
    }

    /** A witness for a diagnostic of this program. */
    async find(d: VDiagnostic): Promise<WitnessResult> {
        const t0 = Date.now();
        const notConfirmed = (reason: string): WitnessResult => ({ status: 'not-confirmed', bounds: this.bounds, reason, timeMs: Date.now() - t0 });
        if (d.severity !== 'error' || !CODES.has(d.code)) return notConfirmed(`no witness is searched for '${d.code}' diagnostics`);
        try {
            const first = this.prepare();
            if (d.code === 'invariant' && /initial state/.test(d.message)) return this.initial(d, first.bp, first.init, t0);
            const goal = goalOf(d, first.bp.ctx.vocab);
            // a failure in the field initializers: their one run decides
            const inInit = initWitness(goal, first.bp, first.init, this.options.source ?? noSource);
            if (inInit) return { status: 'confirmed', steps: inInit.steps, bounds: this.bounds, summary: inInit.summary, timeMs: Date.now() - t0 };
            const aborted = first.init.aborted;
            if (aborted) return notConfirmed(`${boundsText(this.bounds)}: the field initializers fail before any thread starts (${aborted.failed!.message}, line ${aborted.failed!.range.startLine + 1})`);
            let result: WitnessResult | undefined;
            const quick = this.quickStage();
            // (no loop ran past its one iteration, and the answer was no: more iterations with one copy add nothing)
            let oneCopyDone = false;
            if (quick) {
                try {
                    const found = await this.stage(goal, d, t0, quick, QUICK_STAGE_MS);
                    if (found.result.status === 'confirmed') return { ...found.result, bounds: this.bounds };
                    oneCopyDone = !found.loopCut && !found.undecided;
                } catch (e) {
                    // (the optional stage's failure leaves the search to the others; a cancellation goes on up)
                    if (!(e instanceof SolverFailure)) throw e;
                }
            }
            // (deepened from the first stage small enough: one copy of each replicated thread often is
            // when the full bounds are not, as when a set-up loop runs longer than the bound)
            let deepenFrom: WitnessResult | undefined;
            for (const bounds of this.stages()) {
                if (oneCopyDone && bounds.copies === 1 && this.stages().length > 1) continue;
                const found = await this.stage(goal, d, t0, bounds);
                result = found.result;
                if (!deepenFrom && found.loopCut && found.events <= DEEPEN_MAX_EVENTS) deepenFrom = found.result;
                if (result.status === 'confirmed') return { ...result, bounds: this.bounds };
            }
            if (!deepenFrom || !this.deepenLoops) return result!;
            const deeper = await this.deepen(goal, d, t0, deepenFrom);
            // (not confirmed with fewer copies: the full bounds' answer stands)
            return deeper.status === 'confirmed' || deepenFrom === result ? deeper : result!;
        } catch (e) {
            if (e instanceof WitnessUnsupported || e instanceof LoweringError) return notConfirmed(`the witness search does not handle this program: ${e.message}`);
            if (e instanceof SolverFailure) return notConfirmed(e.kind !== 'timeout' ? `the solver failed: ${e.message}` : this.options.deadline !== undefined && Date.now() >= this.options.deadline - MIN_STAGE_MS ? `the witness searches of this program used up their time (${this.budgetText()})` : `the search ran out of time (${this.options.timeLimitMs ?? 10_000} ms)`);
            this.options.log?.(`witness search: internal error: ${(e as Error)?.stack ?? e}`);
            return notConfirmed(`internal error of the witness search (${(e as Error)?.message ?? e}); please report it`);
        }
    }

    /** One search within the bounds: its result, whether a loop was cut at the bound, the program's steps. */
    private async stage(goal: Goal, d: VDiagnostic, t0: number, bounds: WitnessBounds, limitMs?: number): Promise<{ result: WitnessResult; loopCut: boolean; events: number; undecided: boolean }> {
        await this.options.checkpoint?.();
        const { bp, init } = this.prepare(bounds);
        await this.options.checkpoint?.();
        const sp = new SymProgram(bp, init.heap);
        await this.options.checkpoint?.();
        // (only the result, as data: the search's candidate stays here)
        const { candidate: _candidate, undecided, ...result } = await this.search(goal, sp, bp, init, t0, d, bounds, limitMs);
        void _candidate;
        return { result, loopCut: sp.loopCut, events: sp.events.length, undecided: undecided === true };
    }

    /**
     * A loop was cut at the default bound: the search goes on with a larger
     * loop bound while loops are still cut, up to MAX_DEEPENED_LOOPS and within
     * its time budget. A larger program than the search handles, or a query it does
     * not decide in the time left, leaves the answer of the smaller bounds.
     */
    private async deepen(goal: Goal, d: VDiagnostic, t0: number, result: WitnessResult): Promise<WitnessResult> {
        const until = Date.now() + DEEPEN_MS;
        let bounds = result.bounds;
        while (bounds.loops + this.bounds.loops <= MAX_DEEPENED_LOOPS) {
            const left = Math.min(until - Date.now(), this.options.timeLimitMs ?? 10_000);
            if (left < 100) break;
            const next = { ...bounds, loops: bounds.loops + this.bounds.loops };
            let found: Awaited<ReturnType<WitnessSearch['stage']>>;
            try {
                found = await this.stage(goal, d, t0, next, left);
            } catch (e) {
                // (a failure of the optional search leaves the answer of the smaller bounds; a cancellation goes on up)
                if (e instanceof WitnessUnsupported || e instanceof SolverFailure) break;
                throw e;
            }
            if (found.undecided) break;
            if (found.result.status === 'confirmed') return found.result;
            result = found.result;
            bounds = next;
            if (!found.loopCut) break;
        }
        return result;
    }

    /** Search for goals (synthetic ones: tests ask for failures anywhere); the witness reaches one of them. */
    async searchGoals(goals: (vocab: Vocabulary) => Goal[]): Promise<WitnessResult & { candidate?: Candidate }> {
        const t0 = Date.now();
        const { bp, init } = this.prepare();
        const gs = goals(bp.ctx.vocab);
        const inInit = this.initFailure(gs, bp, init);
        if (inInit) return { status: 'confirmed', steps: inInit.steps, bounds: this.bounds, summary: inInit.summary, timeMs: Date.now() - t0 };
        if (init.aborted) return { status: 'not-confirmed', bounds: this.bounds, reason: `${boundsText(this.bounds)}: the field initializers fail before any thread starts`, timeMs: Date.now() - t0 };
        const sp = new SymProgram(bp, init.heap);
        return this.search(gs, sp, bp, init, t0);
    }

    /** A failure of the goals inside the field initializers (goals that need no symbolic program). */
    private initFailure(gs: Goal[], bp: BoundedProgram, init: InitRun): { steps: WitnessStep[]; summary: string } | undefined {
        for (const g of gs) {
            const w = initWitness(g, bp, init, this.options.source ?? noSource);
            if (w) return w;
        }
        return undefined;
    }

    /** Search for any failure of the program (of every diagnostic code, anywhere). */
    searchAnyFailure(): Promise<WitnessResult & { candidate?: Candidate }> {
        return this.searchGoals(everyFailure);
    }

    private async search(goal: Goal | Goal[], sp: SymProgram, bp: BoundedProgram, init: InitRun, t0: number, d?: VDiagnostic, bounds: WitnessBounds = this.bounds, limitMs?: number): Promise<WitnessResult & { candidate?: Candidate; undecided?: boolean }> {
        const enc = new Encoder(sp, bounds.switches);
        const cands = (Array.isArray(goal) ? goal : [goal]).flatMap(g => addCandidates(g, sp, enc));
        await this.options.checkpoint?.();
        const none = (why: string): WitnessResult => ({ status: 'not-confirmed', bounds, reason: why, timeMs: Date.now() - t0 });
        if (cands.length === 0) {
            const guardOnly = !Array.isArray(goal) && goal.raceKinds?.length === 1 && goal.raceKinds[0] === 'writable';
            const why = d?.code !== 'race' ? 'no thread reaches the failure'
                : guardOnly ? 'no thread reaches the write while a writable_if it must satisfy applies'
                    : 'no other thread accesses the location so that the accesses conflict';
            // (the search may not see the access at all when a loop before it runs longer than the bound)
            const cut = sp.loopCut ? ` (where a loop ran longer than ${bounds.loops} iterations, the search stopped it)` : '';
            return none(`${boundsText(bounds)}: ${why}${cut}${d ? tooWeak(d, bp) : ''}`);
        }
        const tq = Date.now();
        const script = await enc.script(this.options.checkpoint);
        await this.options.checkpoint?.();
        const traced = (answer: string) => this.options.trace?.(`[witness] line ${(d?.range.startLine ?? -1) + 1}, ${bounds.loops}/${bounds.switches}/${bounds.copies}: ${sp.events.length} events, ${cands.length} candidates, ${script.length} chars: ${answer} in ${Date.now() - tq} ms`);
        this.options.dumpQuery?.(script);
        // (the larger loop bounds are optional: native z3's `unknown` there ends the search, no fallback)
        const left = this.options.deadline === undefined ? Infinity : this.options.deadline - Date.now();
        if (left < MIN_STAGE_MS) return { ...none(`not searched: the witness searches of this program used up their time (${this.budgetText()})`), undecided: true };
        const session: SolverSession = await this.options.solver.openSession(limitMs !== undefined ? { timeLimitMs: Math.min(limitMs, left), fallback: false } : { timeLimitMs: Math.min(this.options.timeLimitMs ?? 10_000, Math.floor(left / FALLBACK_FACTOR)) });
        let model: Map<string, bigint | boolean>;
        try {
            const answer = lastLine(await session.eval(script));
            traced(answer);
            if (answer === 'unsat') return none(`${boundsText(bounds)}${d ? tooWeak(d, bp) : ''}`);
            if (answer !== 'sat') return { ...none(`the search could not decide within its time limit (solver: ${answer}${Math.floor(left / FALLBACK_FACTOR) < (this.options.timeLimitMs ?? 10_000) ? `; the witness searches of this program have ${this.budgetText()} in all` : ''}); ${boundsText(bounds)}`), undecided: true };
            const names = [...enc.modelNames(), ...(this.options.debug ? [...sp.decls.keys()] : [])];
            const getModel = async () => {
                const m = new Map<string, bigint | boolean>();
                for (let i = 0; i < names.length; i += 400) {
                    const out = await session.eval(`(get-value (${names.slice(i, i + 400).join(' ')}))\n`);
                    for (const [k, v] of parseModel(out)) m.set(k, v);
                }
                return m;
            };
            model = await getModel();
            // shorter traces read better: ask for fewer steps a few times, within a small budget
            const shrinkUntil = Date.now() + SHRINK_MS;
            for (let round = 0; round < SHRINK_ROUNDS && Date.now() < shrinkUntil; round++) {
                const taken = sp.events.filter(e => model.get(`x${e.id}`) === true).length;
                if (taken <= 1) break;
                const count = `(+ ${sp.events.map(e => `(ite x${e.id} 1 0)`).join(' ')})`;
                const again = lastLine(await session.eval(`(assert (<= ${count} ${taken - 1}))\n(check-sat)\n`));
                if (again !== 'sat') break;
                model = await getModel();
            }
        } finally {
            session.close();
        }
        const chosen = Number(model.get('sel~which') ?? -1);
        const cand = cands[chosen];
        if (!cand) return this.bug(none, 'no candidate is chosen in the model');
        const schedule = scheduleOf(sp, model, cand, bounds.switches);
        const source = this.options.source ?? noSource;
        const r = replay(bp, init, schedule, cand, source);
        if (!r.ok) {
            if (this.options.debug) {
                for (const e of schedule.events) {
                    const p = e.point;
                    const reads = sp.reads.filter(x => x.at?.event === e).map(x => `${x.map}[${x.keys.map(k => T.toSmt(k)).join(',')}]@${x.at!.phase}=${model.get(x.name)}`);
                    this.options.log?.(`  ${e.thread.name} #${e.idx} ${p.k === 'op' ? `${p.op.label} line ${p.op.range.startLine + 1}` : p.k} ${reads.join(' ')}`);
                }
            }
            return this.bug(none, r.why);
        }
        return { status: 'confirmed', steps: r.steps, bounds, summary: r.summary, timeMs: Date.now() - t0, candidate: cand };
    }

    private budgetText(): string {
        return this.options.budgetMs !== undefined ? `${Math.round(this.options.budgetMs / 1000)} s` : 'their budget';
    }

    private bug(none: (why: string) => WitnessResult, why: string): WitnessResult {
        this.options.log?.(`witness search: a trace that does not replay (${why})`);
        return none(`the search found a trace that does not replay to the failure (${why}); this is a bug of the witness search`);
    }

    /** An invariant the initial store breaks: the field initializers are the witness. */
    private initial(d: VDiagnostic, bp: BoundedProgram, init: InitRun, t0: number): WitnessResult {
        const inv = bp.ctx.invariants.find(i => sameRange(i.clause.range, d.range));
        const timeMs = () => Date.now() - t0;
        if (!inv) return { status: 'not-confirmed', bounds: this.bounds, reason: 'the invariant is not found', timeMs: timeMs() };
        const holds = evalTerm(inv.term, { locals: new Map(), heap: () => init.heap, bound: new Map([['tid', 0n]]) });
        if (holds !== false) return { status: 'not-confirmed', bounds: this.bounds, reason: `not confirmed: the field initializers' one run leaves '${inv.text}' true, so the failure is the proof's (a loop the initializers run may need a loop_invariant that says what it establishes)`, timeMs: timeMs() };
        const source = this.options.source ?? noSource;
        const namer = new Namer(bp.ctx.vocab, init.heap);
        const steps = init.steps.map(s => stepOf('init', s.point.k === 'op' ? s.point.op.range : inv.clause.range, actionOf(s, namer, source, init.heap), namer.values(s.accesses, init.heap)));
        steps.push(stepOf('init', inv.clause.range, `invariant ${inv.text}`, '', true));
        return { status: 'confirmed', steps, bounds: this.bounds, summary: `the field initializers leave '${inv.text}' false`, timeMs: timeMs() };
    }
}

/** Witnesses for the error diagnostics of one program, in order (one search each). */
export async function findWitnesses(program: ProgramModel, diagnostics: VDiagnostic[], options: WitnessOptions): Promise<WitnessResult[]> {
    const search = new WitnessSearch(program, options);
    const out: WitnessResult[] = [];
    for (const d of diagnostics) out.push(await search.find(d));
    return out;
}

export function boundsText(b: WitnessBounds): string {
    return `not confirmed within the bounds (${b.loops} loop iteration${b.loops === 1 ? '' : 's'}, ${b.switches} context switch${b.switches === 1 ? '' : 'es'}, ${b.copies} cop${b.copies === 1 ? 'y' : 'ies'} of each replicated thread)`;
}

function lastLine(text: string): string {
    const lines = text.trim().split('\n');
    return lines[lines.length - 1].trim();
}

/** The trace of a model: the taken events in order, up to the failure; each thread's choices. */
function scheduleOf(sp: SymProgram, model: Map<string, bigint | boolean>, cand: Candidate, switches: number): Schedule {
    const val = (name: string) => model.get(name);
    const taken = sp.events.filter(e => val(`x${e.id}`) === true);
    // the order of the taken events: (segment, number); the segment from the thread's boundaries
    const seg = (e: SymEvent) => {
        let k = 0;
        for (let j = 1; j <= switches; j++) if (Number(val(`b${e.thread.index}_${j}`) ?? 0) <= e.idx) k++;
        return k;
    };
    const ts = (e: SymEvent) => seg(e) * 1_000_000 + e.idx;
    taken.sort((a, b) => ts(a) - ts(b));
    // (a race's two accesses are adjacent, in either order: the trace ends before the first)
    const end = cand.kind === 'race' ? Math.min(ts(cand.event), ts(cand.other)) : ts(cand.event);
    const upTo = cand.kind === 'race' || cand.kind === 'writable'
        ? taken.filter(e => ts(e) < end)
        : taken.filter(e => ts(e) <= end);
    if (cand.kind === 'writable') upTo.push(cand.event);
    const nondet: boolean[][] = sp.bp.threads.map(() => []);
    for (const h of sp.havocs) {
        const g = h.guard.t === 'bool' ? h.guard.value : val((h.guard as { name: string }).name);
        if (g !== true) continue;
        nondet[h.thread].push(val(h.name) === true);
    }
    return { events: upTo, nondet };
}

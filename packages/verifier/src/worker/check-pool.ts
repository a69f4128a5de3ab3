// The host side of the check workers (check-worker.ts): a fixed number of
// workers, a priority queue of checks, cancellation, a hard time limit per
// check, and recovery from crashes. A check that cannot finish ends as an
// `unknown` result, never as verified.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ProgramModel, Range } from '../model/program.js';
import type { CheckResult, UnknownReason } from '../driver/verify.js';
import type { CheckOptions, CheckWorkerData, CheckWorkerToHost, HostToCheckWorker, WitnessRequest } from './check-protocol.js';
import type { WitnessResult } from '../witness/types.js';
import { DEFAULT_BOUNDS } from '../witness/types.js';

/** The solver the workers run their checks on (default: Z3 in WebAssembly inside each worker). */
export interface CheckPoolSolver {
    kind: 'z3-wasm' | 'z3-native';
    z3Path?: string;
    /** The native z3's version, when known (a worker asks `z3 --version` itself otherwise). */
    z3Version?: string;
}

export interface CheckJob {
    /** The program (by version: a worker receives each version once). */
    version: string;
    model: ProgramModel;
    /** CheckPlan.key */
    key: string;
    name: string;
    kind: CheckResult['kind'];
    range: Range;
    options: CheckOptions;
    /** Lower runs first. */
    priority: number;
    /** Called when a worker starts it. */
    onStart?: () => void;
    /** A witness search for a diagnostic of the program, instead of the check (issue 14). */
    witness?: WitnessRequest;
    /**
     * Background work (a witness search): it yields its worker to any other job that
     * would wait for one: stopped, queued again and started over later.
     */
    background?: boolean;
}

export type JobOutcome = { kind: 'result'; result: CheckResult } | { kind: 'witness'; witness: WitnessResult } | { kind: 'cancelled' };

interface Queued {
    id: number;
    job: CheckJob;
    resolve(o: JobOutcome): void;
    seq: number;
}

/** Time a worker gets to answer a cancellation before it is terminated. */
const CANCEL_GRACE_MS = 1000;
/**
 * Time a background job (preempted or cancelled) gets to stop at its next query or
 * checkpoint before its worker is terminated: longer than a check's, because a witness
 * search has long stretches without either (building its query, a query of Z3 in
 * WebAssembly), and a new worker costs about as much.
 */
const BACKGROUND_GRACE_MS = 3000;
/**
 * Background jobs start only this long after the last other job was submitted or
 * ended: while the user types, a search started between two checks would only be
 * preempted by the next one (and take a core from it meanwhile).
 */
const BACKGROUND_AFTER_MS = 1000;
/** Time past a check's budget before its worker is terminated. */
const HARD_GRACE_MS = 2000;
const START_TIMEOUT_MS = 60_000;

class Slot {
    worker: Worker | undefined;
    ready: Promise<void> | undefined;
    programs = new Set<string>();
    running: (Queued & { timers: NodeJS.Timeout[]; cancelled: boolean; started: number; preempted?: boolean }) | undefined;
    expectedExit = false;
    lastError = '';
    /** Starts that failed in a row (a worker that cannot start is not restarted for ever). */
    failedStarts = 0;
}

export class CheckPool {
    private readonly slots: Slot[];
    private readonly queue: Queued[] = [];
    private nextId = 1;
    private seq = 0;
    private disposed = false;
    /** When a job that is not background was last submitted or ended. */
    private lastForeground = 0;
    private backgroundTimer: NodeJS.Timeout | undefined;

    /** What the last worker that started reported: its solver and version, e.g. "z3-native 4.8.12", "z3-wasm 5.1.0 (patched glue)". */
    solverInfo: string | undefined;

    constructor(private readonly script: string, workers: number, private readonly solver: CheckPoolSolver = { kind: 'z3-wasm' }) {
        this.target = Math.max(1, workers);
        this.slots = Array.from({ length: this.target }, () => new Slot());
        for (const s of this.slots) this.start(s);
    }

    get size(): number {
        return this.slots.length;
    }

    /** Run this many workers from now on (busy ones stop after their check). */
    resize(workers: number): void {
        this.target = Math.max(1, Math.floor(workers));
        while (this.slots.length < this.target) {
            const slot = new Slot();
            this.slots.push(slot);
            this.start(slot);
        }
        this.retire();
        this.pump();
    }

    private target = 0;

    /** Stop idle workers beyond the target. */
    private retire(): void {
        for (let i = this.slots.length - 1; i >= 0 && this.slots.length > this.target; i--) {
            const slot = this.slots[i];
            if (slot.running) continue;
            this.slots.splice(i, 1);
            slot.expectedExit = true;
            void slot.worker?.terminate().catch(() => undefined);
            slot.worker = undefined;
        }
    }

    /** Queue a check; the promise settles with its result, or `cancelled`. */
    submit(job: CheckJob): { id: number; done: Promise<JobOutcome> } {
        const id = this.nextId++;
        const done = new Promise<JobOutcome>(resolve => {
            if (this.disposed) { resolve({ kind: 'cancelled' }); return; }
            this.queue.push({ id, job, resolve, seq: this.seq++ });
        });
        if (!job.background) this.lastForeground = Date.now();
        this.pump();
        return { id, done };
    }

    /** Cancel a queued or running check (its promise settles with `cancelled`). */
    cancel(id: number): void {
        const i = this.queue.findIndex(q => q.id === id);
        if (i >= 0) {
            const [q] = this.queue.splice(i, 1);
            q.resolve({ kind: 'cancelled' });
            return;
        }
        const slot = this.slots.find(s => s.running?.id === id);
        if (!slot?.running || slot.running.cancelled) return;
        slot.running.cancelled = true;
        this.stop(slot, slot.running.job.background ? BACKGROUND_GRACE_MS : CANCEL_GRACE_MS);
    }

    /** Ask the worker to stop its job; one that does not answer within `graceMs` is terminated (and replaced). */
    private stop(slot: Slot, graceMs: number): void {
        const id = slot.running!.id;
        this.post(slot, { type: 'cancel', id });
        slot.running!.timers.push(setTimeout(() => {
            if (slot.running?.id === id) this.restart(slot, { kind: 'cancelled' });
        }, graceMs));
    }

    /** Change the priority of a queued check. */
    reprioritize(id: number, priority: number): void {
        const q = this.queue.find(x => x.id === id);
        if (q) q.job.priority = priority;
    }

    /** Ids of the checks queued or running. */
    get active(): number[] {
        return [...this.queue.map(q => q.id), ...this.slots.flatMap(s => (s.running ? [s.running.id] : []))];
    }

    /** Tests only: make the worker running this check crash or hang. */
    debug(id: number, what: 'crash' | 'hang'): void {
        const slot = this.slots.find(s => s.running?.id === id);
        if (slot) this.post(slot, { type: 'debug', what });
    }

    async dispose(): Promise<void> {
        this.disposed = true;
        clearTimeout(this.backgroundTimer);
        for (const q of this.queue.splice(0)) q.resolve({ kind: 'cancelled' });
        await Promise.all(this.slots.map(async s => {
            if (s.running) this.settle(s, { kind: 'cancelled' });
            s.expectedExit = true;
            await s.worker?.terminate().catch(() => undefined);
            s.worker = undefined;
        }));
    }

    // ------------------------------------------------------------ scheduling

    private pump(): void {
        if (this.disposed) return;
        for (const slot of this.slots) {
            const dead = !slot.worker && (slot.failedStarts >= 3 || !fs.existsSync(this.script));
            if (slot.running || (!slot.worker && !dead) || this.queue.length === 0) continue;
            this.queue.sort((a, b) => Number(!!a.job.background) - Number(!!b.job.background) || a.job.priority - b.job.priority || a.seq - b.seq);
            if (this.queue[0].job.background && !this.backgroundMayStart()) break;
            const q = this.queue.shift()!;
            void this.assign(slot, q);
        }
        this.preempt();
    }

    /** Whether a background job may start now; if not, the pool looks again when it may. */
    private backgroundMayStart(): boolean {
        const wait = this.lastForeground + BACKGROUND_AFTER_MS - Date.now();
        if (wait <= 0) return true;
        if (!this.backgroundTimer) {
            this.backgroundTimer = setTimeout(() => { this.backgroundTimer = undefined; this.pump(); }, wait);
        }
        return false;
    }

    /**
     * Jobs that wait while background jobs run: as many background jobs stop
     * (their workers take the cancellation; a synchronous query ends with the
     * worker after the grace period) and go back to the queue (settle).
     */
    private preempt(): void {
        let waiting = this.queue.filter(q => !q.job.background).length;
        if (waiting === 0) return;
        waiting -= this.slots.filter(s => s.running?.preempted && !s.running.cancelled).length;
        for (const slot of this.slots) {
            if (waiting <= 0) return;
            const r = slot.running;
            if (!r || !r.job.background || r.cancelled || r.preempted) continue;
            r.preempted = true;
            waiting--;
            this.stop(slot, BACKGROUND_GRACE_MS);
        }
    }

    private async assign(slot: Slot, q: Queued): Promise<void> {
        slot.running = { ...q, timers: [], cancelled: false, started: Date.now() };
        try {
            await slot.ready;
        } catch (e) {
            this.settle(slot, unfinished(q.job, `the solver could not start (${(e as Error).message})`, 0, 'unknown', 'solver-error'));
            return;
        }
        if (slot.running?.id !== q.id) return;
        // cancelled while the worker was starting: it never sees the check (and is not restarted)
        if (slot.running.cancelled || slot.running.preempted) { this.settle(slot, { kind: 'cancelled' }); return; }
        const { job } = q;
        if (!slot.programs.has(job.version)) {
            this.post(slot, { type: 'program', version: job.version, model: job.model });
            slot.programs.add(job.version);
            if (slot.programs.size > 4) slot.programs.delete(slot.programs.values().next().value!);
        }
        this.post(slot, { type: 'check', id: q.id, version: job.version, key: job.key, options: job.options, ...(job.witness ? { witness: job.witness } : {}) });
        // (after the check is posted: what onStart submits may preempt it, and the worker must see it first)
        job.onStart?.();
        slot.running.timers.push(setTimeout(() => {
            if (slot.running?.id !== q.id) return;
            const ms = Date.now() - slot.running.started;
            this.restart(slot, unfinished(job, `it ran out of time (limit ${job.options.checkBudgetMs} ms per check; raise it with calvin.timeLimitMs)`, ms, 'unknown', 'timeout'));
        }, job.options.checkBudgetMs + HARD_GRACE_MS));
    }

    private settle(slot: Slot, outcome: JobOutcome): void {
        const r = slot.running;
        if (!r) return;
        slot.running = undefined;
        for (const t of r.timers) clearTimeout(t);
        if (!r.job.background) this.lastForeground = Date.now();
        if (r.preempted && !r.cancelled && outcome.kind === 'cancelled' && !this.disposed) {
            // a background job that yielded its worker: queued again, to start over
            this.queue.push({ id: r.id, job: r.job, resolve: r.resolve, seq: r.seq });
        } else r.resolve(r.cancelled && (outcome.kind === 'witness' || (outcome.kind === 'result' && outcome.result.status !== 'verified' && outcome.result.status !== 'failed')) ? { kind: 'cancelled' } : outcome);
        if (this.slots.length > this.target) this.retire();
        // the next check starts once the owner has seen this outcome (its reactions, on the
        // promise, may cancel or reorder what is queued: a refutation plans a program again)
        setImmediate(() => this.pump());
    }

    // ------------------------------------------------------------ workers

    private post(slot: Slot, m: HostToCheckWorker): void {
        slot.worker?.postMessage(m);
    }

    private start(slot: Slot): void {
        if (this.disposed) return;
        slot.expectedExit = false;
        slot.programs.clear();
        slot.lastError = '';
        if (!fs.existsSync(this.script)) {
            slot.ready = Promise.reject(new Error(`check worker script not found: ${this.script} (run \`npm run build\`)`));
            slot.ready.catch(() => undefined);
            slot.worker = undefined;
            return;
        }
        const workerData: CheckWorkerData = { kind: 'calvin-check-worker', solver: this.solver.kind, z3Path: this.solver.z3Path, z3Version: this.solver.z3Version };
        const worker = new Worker(this.script, { execArgv: [], stdout: true, stderr: true, name: 'calvin-check', workerData });
        slot.worker = worker;
        worker.stdout.on('data', () => undefined);
        worker.stderr.on('data', (chunk: Buffer) => { slot.lastError = (slot.lastError + chunk.toString('utf8')).slice(-2000); });
        let started = false;
        slot.ready = new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('the check worker did not start in time')), START_TIMEOUT_MS);
            worker.on('message', (m: CheckWorkerToHost) => {
                switch (m.type) {
                    case 'ready': this.solverInfo = `${m.solver} ${m.z3Version}${m.glue ? ` (${m.glue} glue)` : ''}`; clearTimeout(timer); slot.failedStarts = 0; started = true; resolve(); this.pump(); return;
                    case 'fatal': slot.lastError = m.message; return;
                    case 'result': if (slot.running?.id === m.id) this.settle(slot, { kind: 'result', result: m.result }); return;
                    case 'witness': if (slot.running?.id === m.id) this.settle(slot, { kind: 'witness', witness: m.witness }); return;
                    case 'cancelled': if (slot.running?.id === m.id) this.settle(slot, { kind: 'cancelled' }); return;
                    case 'failure':
                        if (slot.running?.id === m.id) {
                            const job = slot.running.job;
                            this.settle(slot, unfinished(job, m.kind === 'crash' ? `the solver crashed (${m.message}); it was restarted` : `internal error: ${m.message}`, Date.now() - slot.running.started, m.kind === 'crash' ? 'unknown' : 'error', m.kind === 'crash' ? 'solver-crash' : 'internal'));
                        }
                        return;
                }
            });
            worker.on('error', e => { slot.lastError = e instanceof Error ? `${e.name}: ${e.message}` : String(e); });
            worker.on('exit', code => {
                clearTimeout(timer);
                if (slot.worker !== worker) return;
                slot.worker = undefined;
                if (slot.expectedExit || this.disposed) return;
                reject(new Error(`the check worker exited (code ${code}): ${slot.lastError}`));
                if (slot.running) {
                    const job = slot.running.job;
                    this.settle(slot, unfinished(job, `the solver crashed (exit code ${code}${slot.lastError ? `: ${slot.lastError.trim().split('\n').pop()}` : ''}); it was restarted`, Date.now() - slot.running.started, 'unknown', 'solver-crash'));
                }
                if (!started && ++slot.failedStarts >= 3) return; // it cannot start: checks get 'could not start'
                this.start(slot);
            });
        });
        slot.ready.catch(() => undefined);
    }

    /** Terminate a worker that is stuck (or must stop now), settle its check, and start a new one. */
    private restart(slot: Slot, outcome: JobOutcome): void {
        slot.expectedExit = true;
        const w = slot.worker;
        slot.worker = undefined;
        void w?.terminate().catch(() => undefined);
        this.settle(slot, outcome);
        if (this.slots.includes(slot)) this.start(slot); // unless it was retired meanwhile
        this.pump();
    }
}

/** A job that did not finish: a check is unknown (never verified); a witness search is not confirmed, and says why. */
function unfinished(job: CheckJob, why: string, ms: number, status: CheckResult['status'] = 'unknown', reason: UnknownReason = 'solver-error'): JobOutcome {
    if (job.witness) return { kind: 'witness', witness: { status: 'not-confirmed', bounds: { ...DEFAULT_BOUNDS, ...job.witness.bounds }, reason: `the witness search did not finish: ${why}`, timeMs: ms } };
    return { kind: 'result', result: failed(job, why, ms, status, reason) };
}

/** A check that did not finish: unknown (or error), with a warning at its name and why (`unknown`), never verified. */
function failed(job: CheckJob, why: string, ms: number, status: CheckResult['status'], reason: UnknownReason): CheckResult {
    const what = job.kind === 'thread' ? `thread ${job.name}` : job.kind === 'init' ? 'the initialization check' : `the abstraction check of ${job.name}`;
    return {
        key: job.key, name: job.name, kind: job.kind, range: job.range, status, unknown: { reason, detail: why }, timeMs: ms, solverMs: 0, queries: 0,
        diagnostics: [{ range: job.range, severity: 'warning', code: 'unknown', related: [], message: `${what} is not verified: ${why}` }],
        environment: [], invariant: [], inferredLoopInvariants: [], loopInvariants: [], accesses: [], envStar: '',
    };
}

/** Where the bundles put the worker: check-worker.cjs next to the running bundle. */
export function defaultCheckWorkerScript(): string {
    return path.join(typeof __dirname === 'string' ? __dirname : '.', 'check-worker.cjs');
}

// The z3-wasm backend: each engine is a worker_threads Worker running
// z3-worker.cjs (one long-lived Z3 context). A crashed or runaway worker is
// terminated and replaced; this module never loads z3-solver itself.
import * as fs from 'node:fs';
import { clearLiveTimeout, setLiveTimeout } from './live-timer.js';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { HARD_LIMIT_GRACE_MS, settleWithin, TERMINATE_WAIT_MS, timerDelay, type Engine } from './pool.js';
import type { HostToWorker, WorkerStartData, WorkerToHost } from './protocol.js';
import { SolverFailure } from './types.js';

/** Longest time a worker may take to load Z3 (and run its warm-up query). */
const START_TIMEOUT_MS = 60_000;

/** Where the bundles put the worker: z3-worker.cjs next to the running bundle. */
export function defaultWorkerScript(): string {
    if (typeof __dirname === 'string') return path.join(__dirname, 'z3-worker.cjs');
    throw new SolverFailure('error',
        'z3-wasm: no default worker script outside the bundles; pass BackendOptions.workerScript (e.g. packages/cli/out/z3-worker.cjs after `npm run build`)');
}

interface Pending {
    id: number;
    resolve(output: string): void;
    reject(e: SolverFailure): void;
    timers: NodeJS.Timeout[];
}

/** One spawned worker; a restart makes a new one, so stale events are easy to ignore. */
interface Instance {
    worker: Worker;
    ready: Promise<void>;
    alive: boolean;
    started: boolean;
    /** Why the worker ended, for the failure message (uncaught error, fatal message, stderr). */
    lastError?: string;
    stderrTail: string;
    /** Set when we terminate the worker ourselves: its exit is not a crash. */
    expectedExit: boolean;
}

export class WasmEngine implements Engine {
    private instance: Instance | undefined;
    private pending: Pending | undefined;
    private nextId = 1;
    private disposed = false;

    constructor(private readonly script: string, private readonly prewarm: boolean, private readonly label: string) { }

    ready(): Promise<void> {
        if (this.disposed) return Promise.reject(new SolverFailure('error', 'z3-wasm: the backend was disposed'));
        if (!this.instance || !this.instance.alive) this.instance = this.spawn();
        return this.instance.ready;
    }

    async eval(text: string, timeLimitMs: number): Promise<string> {
        return this.run(id => ({ type: 'eval', id, text }), timeLimitMs);
    }

    async debug(what: 'crash' | 'hang', timeLimitMs: number): Promise<string> {
        return this.run(id => (what === 'crash' ? { type: 'debug-crash', id } : { type: 'debug-hang', id }), timeLimitMs);
    }

    async dispose(): Promise<void> {
        this.disposed = true;
        const inst = this.instance;
        this.instance = undefined;
        this.fail(new SolverFailure('error', 'z3-wasm: the backend was disposed'));
        if (inst?.alive) {
            inst.expectedExit = true;
            inst.alive = false;
            inst.worker.ref();
            await settleWithin(inst.worker.terminate(), TERMINATE_WAIT_MS);
        }
    }

    private async run(makeMessage: (id: number) => HostToWorker, timeLimitMs: number): Promise<string> {
        await this.ready();
        const inst = this.instance;
        if (!inst?.alive) throw new SolverFailure('crash', 'z3-wasm: the worker died before the eval started');
        if (this.pending) throw new SolverFailure('error', 'z3-wasm: one eval at a time per worker');
        const id = this.nextId++;
        return new Promise<string>((resolve, reject) => {
            const pending: Pending = { id, resolve, reject, timers: [] };
            this.pending = pending;
            // Soft: Z3's own :timeout. Hard: terminate the worker (its eval is synchronous:
            // nothing reaches it before the eval ends).
            pending.timers.push(setTimeout(() => {
                this.fail(new SolverFailure('timeout', `z3-wasm: no answer within ${timeLimitMs} ms + ${HARD_LIMIT_GRACE_MS} ms grace; the worker was restarted`));
                this.restart(inst);
            }, timerDelay(timeLimitMs + HARD_LIMIT_GRACE_MS)));
            inst.worker.ref();
            inst.worker.postMessage(makeMessage(id));
        });
    }

    /** Rejects the eval in flight, if any. */
    private fail(failure: SolverFailure): void {
        const p = this.pending;
        if (!p) return;
        this.pending = undefined;
        for (const t of p.timers) clearTimeout(t);
        this.instance?.worker.unref();
        p.reject(failure);
    }

    private settle(inst: Instance, m: WorkerToHost): void {
        const p = this.pending;
        if (m.type === 'ready' || m.type === 'fatal' || !p || p.id !== m.id) return;
        this.pending = undefined;
        for (const t of p.timers) clearTimeout(t);
        inst.worker.unref();
        if (m.type === 'result') {
            p.resolve(m.output);
        } else {
            p.reject(new SolverFailure(m.kind, `z3-wasm: ${m.message}`));
        }
    }

    /** Terminates the worker (it is stuck or broken) and starts a new one unless disposed. */
    private restart(inst: Instance, respawn = true): void {
        if (inst.alive) {
            inst.alive = false;
            inst.expectedExit = true;
            void inst.worker.terminate().catch(() => undefined);
        }
        if (this.instance === inst) this.instance = undefined;
        if (respawn && !this.disposed) {
            // Eagerly, so that the next session does not pay the restart (~0.5 s).
            this.ready().catch(() => undefined);
        }
    }

    private spawn(): Instance {
        const workerData: WorkerStartData = { kind: 'calvin-z3-worker', prewarm: this.prewarm };
        if (!fs.existsSync(this.script)) {
            const missing = Promise.reject(new SolverFailure('error', `z3-wasm: worker script not found: ${this.script} (run \`npm run build\`)`));
            missing.catch(() => undefined);
            return { worker: undefined as never, ready: missing, alive: false, started: false, stderrTail: '', expectedExit: true };
        }
        const worker = new Worker(this.script, {
            workerData,
            // No tsx/polyfill loaders in the worker or in Z3's pthreads (they inherit execArgv).
            execArgv: [],
            // Keep the worker's output off our stdout (an LSP server talks over stdio).
            stdout: true,
            stderr: true,
            name: `calvin-z3 ${this.label}`,
        });
        const inst: Instance = { worker, ready: undefined as never, alive: true, started: false, stderrTail: '', expectedExit: false };
        worker.stdout.on('data', () => undefined);
        worker.stderr.on('data', (chunk: Buffer) => {
            inst.stderrTail = (inst.stderrTail + chunk.toString('utf8')).slice(-2000);
        });
        inst.ready = new Promise<void>((resolve, reject) => {
            const startTimer = setLiveTimeout(() => {
                reject(new SolverFailure('error', `z3-wasm: the worker did not start within ${START_TIMEOUT_MS} ms`));
                this.restart(inst, false);
            }, START_TIMEOUT_MS);
            worker.on('message', (m: WorkerToHost) => {
                if (m.type === 'ready') {
                    inst.started = true;
                    clearLiveTimeout(startTimer);
                    // A worker being terminated stays referenced until its exit: its 'ready' can
                    // arrive after dispose() (the main thread was busy), and an unref here let
                    // the event loop empty while dispose() waited for the exit.
                    if (!this.pending && inst.alive) worker.unref();
                    resolve();
                } else if (m.type === 'fatal') {
                    inst.lastError = m.message;
                } else {
                    this.settle(inst, m);
                }
            });
            worker.on('error', e => {
                inst.lastError = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
            });
            worker.on('exit', code => {
                clearLiveTimeout(startTimer);
                const wasAlive = inst.alive;
                inst.alive = false;
                if (this.instance === inst) this.instance = undefined;
                // A start that never finished settles in every case (disposed or terminated while starting too).
                if (!inst.started) reject(new SolverFailure('error', inst.expectedExit ? 'z3-wasm: the worker was stopped while it started' : `z3-wasm: the worker exited during start (code ${code})`));
                if (inst.expectedExit) return;
                const why = [inst.lastError, inst.stderrTail.trim()].filter(Boolean).join('; ') || 'no message';
                if (!inst.started) {
                    reject(new SolverFailure('error', `z3-wasm: the worker exited during start (code ${code}): ${why}`));
                    return;
                }
                this.fail(new SolverFailure('crash', `z3-wasm: the worker died (exit code ${code}): ${why}`));
                if (wasAlive && !this.disposed) this.ready().catch(() => undefined);
            });
        });
        inst.ready.catch(() => undefined);
        return inst;
    }
}

export function createWasmEngines(count: number, prewarm: boolean, workerScript: string | undefined): Engine[] {
    const script = workerScript ?? defaultWorkerScript();
    return Array.from({ length: count }, (_, i) => new WasmEngine(script, prewarm, `#${i + 1}`));
}

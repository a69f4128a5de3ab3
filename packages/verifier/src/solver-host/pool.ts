// The part shared by both backends: a fixed set of solver instances ("engines"),
// a FIFO queue of sessions waiting for one, and the session object itself.
import { SolverFailure, type DebuggableSession, type SessionOptions, type SolverBackend } from './types.js';

/** Time an eval may run past its session's limit before it is interrupted / killed. */
export const HARD_LIMIT_GRACE_MS = 1000;

/** One solver instance: a worker thread with a Z3 context, or a z3 process. */
export interface Engine {
    /**
     * Resolves when the engine can take an eval, starting (or restarting) it if
     * needed. Rejects with SolverFailure('error') when it cannot start.
     */
    ready(): Promise<void>;
    /**
     * Evaluates SMT-LIB text. Rejects with SolverFailure: 'timeout' when the eval
     * ran past timeLimitMs + HARD_LIMIT_GRACE_MS, 'crash' when the solver died,
     * 'error' otherwise. After 'timeout' and 'crash' the engine recovers on its own
     * (restart); the solver state is lost.
     */
    eval(text: string, timeLimitMs: number): Promise<string>;
    /** Tests only: simulate a crash or a hang, as an eval. */
    debug(what: 'crash' | 'hang', timeLimitMs: number): Promise<string>;
    dispose(): Promise<void>;
}

/** Longest wait for a stopped solver's exit in dispose(); past it, dispose settles anyway. */
export const TERMINATE_WAIT_MS = 2_000;

/**
 * Waits for `promise` (its outcome ignored) at most `ms`, on a referenced timer:
 * the wait keeps Node's event loop alive and always ends.
 */
export function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
    return new Promise<void>(resolve => {
        const timer = setTimeout(resolve, ms);
        promise.then(() => undefined, () => undefined).then(() => {
            clearTimeout(timer);
            resolve();
        });
    });
}

/** A setTimeout delay (longer ones would fire at once). */
export function timerDelay(ms: number): number {
    return Math.min(Math.max(0, ms), 0x7fffffff);
}

/** Sent before a session's first commands: a fresh state with Z3's own (soft) timeout. */
export function sessionPrelude(timeLimitMs: number, resourceLimit?: number): string {
    const rlimit = resourceLimit !== undefined && resourceLimit > 0 ? `(set-option :rlimit ${Math.min(Number.MAX_SAFE_INTEGER, Math.round(resourceLimit))})\n` : '';
    return `(reset)\n(set-option :produce-models true)\n(set-option :timeout ${Math.min(0x7fffffff, Math.max(1, Math.round(timeLimitMs)))})\n${rlimit}`;
}

interface Waiter {
    resolve(engine: Engine): void;
    reject(e: unknown): void;
}

export class EnginePool implements SolverBackend {
    private readonly free: Engine[];
    private readonly waiters: Waiter[] = [];
    private disposed = false;

    constructor(readonly name: string, private readonly engines: Engine[], prewarm: boolean) {
        this.free = [...engines];
        if (prewarm) {
            // Start every engine now; a failure shows up again in openSession.
            for (const e of engines) e.ready().catch(() => undefined);
        }
    }

    async openSession(options: SessionOptions): Promise<DebuggableSession> {
        const limit = options?.timeLimitMs;
        if (typeof limit !== 'number' || !Number.isFinite(limit) || limit <= 0) {
            throw new SolverFailure('error', `timeLimitMs must be a positive number (got ${String(limit)})`);
        }
        const engine = await this.acquire();
        try {
            await engine.ready();
        } catch (e) {
            this.release(engine);
            throw e instanceof SolverFailure ? e : new SolverFailure('error', String(e));
        }
        if (this.disposed) throw new SolverFailure('error', `the ${this.name} backend was disposed`);
        return new PooledSession(this, engine, limit, options.resourceLimit);
    }

    async dispose(): Promise<void> {
        if (this.disposed) return;
        this.disposed = true;
        for (const w of this.waiters.splice(0)) w.reject(new SolverFailure('error', `the ${this.name} backend was disposed`));
        await Promise.all(this.engines.map(e => e.dispose().catch(() => undefined)));
    }

    private acquire(): Promise<Engine> {
        if (this.disposed) return Promise.reject(new SolverFailure('error', `the ${this.name} backend was disposed`));
        const engine = this.waiters.length === 0 ? this.free.shift() : undefined;
        if (engine) return Promise.resolve(engine);
        return new Promise<Engine>((resolve, reject) => this.waiters.push({ resolve, reject }));
    }

    /** @internal Hands the engine to the longest-waiting session, or marks it free. */
    release(engine: Engine): void {
        if (this.disposed) return;
        const waiter = this.waiters.shift();
        if (waiter) waiter.resolve(engine);
        else this.free.push(engine);
    }
}

class PooledSession implements DebuggableSession {
    /** Evals run one after another, in call order. */
    private chain: Promise<unknown> = Promise.resolve();
    private first = true;
    private closed = false;
    private deadBecause: SolverFailure | undefined;

    constructor(private readonly pool: EnginePool, private readonly engine: Engine, private readonly timeLimitMs: number, private readonly resourceLimit?: number) { }

    eval(commands: string): Promise<string> {
        if (typeof commands !== 'string') return Promise.reject(new SolverFailure('error', 'eval expects SMT-LIB text'));
        return this.enqueue(() => {
            const text = this.first ? sessionPrelude(this.timeLimitMs, this.resourceLimit) + commands : commands;
            this.first = false;
            return this.engine.eval(text, this.timeLimitMs);
        });
    }

    debug(what: 'crash' | 'hang'): Promise<string> {
        return this.enqueue(() => this.engine.debug(what, this.timeLimitMs));
    }

    close(): void {
        if (this.closed) return;
        this.closed = true;
        // Release once the eval in flight (if any) has settled; its time is bounded by the hard limit.
        void this.chain.then(() => this.pool.release(this.engine));
    }

    private enqueue(run: () => Promise<string>): Promise<string> {
        const step = async (): Promise<string> => {
            if (this.closed) throw new SolverFailure('error', 'the solver session is closed');
            if (this.deadBecause) {
                throw new SolverFailure('error', `the solver session is unusable after an earlier ${this.deadBecause.kind}: ${this.deadBecause.message}`);
            }
            try {
                return await run();
            } catch (e) {
                const failure = e instanceof SolverFailure ? e : new SolverFailure('error', e instanceof Error ? e.message : String(e));
                if (failure.kind !== 'error') this.deadBecause = failure;
                throw failure;
            }
        };
        const result = this.chain.then(step, step);
        this.chain = result.catch(() => undefined);
        return result;
    }
}

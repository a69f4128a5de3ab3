// The scheduler: when checks are planned (a quiet period after the last
// edit), and where they run (the check pool's workers, by priority), with
// cancellation. No LSP and no program state: the service tells it what to
// plan and what to run.
import type { CheckJob, JobOutcome } from '@calvin/verifier';

/** What the scheduler needs of a check pool (packages/verifier/src/worker/check-pool.ts). */
export interface JobPool {
    submit(job: CheckJob): { id: number; done: Promise<JobOutcome> };
    cancel(id: number): void;
    reprioritize(id: number, priority: number): void;
    resize(workers: number): void;
    dispose(): Promise<void> | void;
    readonly active: readonly unknown[];
}

export interface SchedulerOptions {
    /** Quiet period after the last edit before planning (ms). */
    debounceMs: number;
    /** Plans a batch of documents (one at a time: a plan waits for the previous one). */
    plan(uris: string[]): Promise<void>;
    /** Makes the pool when the first check runs. */
    makePool(): JobPool;
    onError(e: unknown): void;
    /** The clock (ms; tests pass a mocked one). */
    now?: () => number;
}

export class CheckScheduler {
    /** Documents waiting to be planned. */
    readonly queued = new Set<string>();
    /** Documents taken from the queue whose plan has not been made yet (the service removes each when it plans it). */
    readonly planning = new Set<string>();
    private timer: ReturnType<typeof setTimeout> | undefined;
    private running: Promise<void> = Promise.resolve();
    private pool: JobPool | undefined;
    /** When the user last edited a document. */
    private lastEdit = -Infinity;

    constructor(private readonly options: SchedulerOptions) { }

    /** A quiet period is running: documents will be planned soon. */
    get waiting(): boolean {
        return this.timer !== undefined;
    }

    /** Checks submitted and not finished. */
    get active(): number {
        return this.pool?.active.length ?? 0;
    }

    /**
     * The user edited a document: nothing is planned until a quiet period
     * after it (a burst of keystrokes is planned once, after the last one).
     */
    edited(): void {
        this.lastEdit = this.now();
        if (this.timer) this.arm();
    }

    /**
     * Plan these documents once the quiet period after the last edit is over:
     * at once when it already is (the workspace's first build, a save, a
     * file changed on disk: issue 15, no wait at start-up), else when it ends.
     */
    schedule(uris: string[]): void {
        for (const uri of uris) this.queued.add(uri);
        if (this.queued.size === 0) return;
        this.arm();
    }

    private arm(): void {
        if (this.timer) clearTimeout(this.timer);
        const delay = Math.max(0, this.lastEdit + this.options.debounceMs - this.now());
        this.timer = setTimeout(() => {
            this.timer = undefined;
            const batch = [...this.queued];
            this.queued.clear();
            for (const u of batch) this.planning.add(u);
            this.running = this.running.then(() => this.options.plan(batch)).catch(e => this.options.onError(e))
                .finally(() => { for (const u of batch) this.planning.delete(u); });
        }, delay);
    }

    private now(): number {
        return (this.options.now ?? performance.now.bind(performance))();
    }

    /** Forget a document (deleted). */
    forget(uri: string): void {
        this.queued.delete(uri);
        this.planning.delete(uri);
    }

    /** Run a check on the pool; `done` settles when it finished or was cancelled. */
    submit(job: CheckJob): { id: number; done: Promise<JobOutcome> } {
        this.pool ??= this.options.makePool();
        return this.pool.submit(job);
    }

    cancel(ids: number[]): void {
        for (const id of ids) this.pool?.cancel(id);
    }

    reprioritize(id: number, priority: number): void {
        this.pool?.reprioritize(id, priority);
    }

    resize(workers: number): void {
        this.pool?.resize(workers);
    }

    /** Start the pool (its workers and their solvers) now, before the first check (issue 15). */
    warm(): void {
        this.pool ??= this.options.makePool();
    }

    /** Another solver: the pool's workers stop (their checks are cancelled) and new ones start. */
    replacePool(): void {
        const old = this.pool;
        this.pool = undefined;
        if (old) {
            void Promise.resolve(old.dispose()).catch(e => this.options.onError(e));
            this.warm();
        }
    }

    async dispose(): Promise<void> {
        if (this.timer) clearTimeout(this.timer);
        this.timer = undefined;
        await this.pool?.dispose();
    }
}

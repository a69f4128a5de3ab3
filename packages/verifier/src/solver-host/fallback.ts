// A native z3 with Z3 in WebAssembly behind it, for the queries it gives up on.
//
// Debian's z3 4.8.12 (what `--solver auto` finds on these machines) loops in
// model-based quantifier instantiation on some queries that Z3 in WebAssembly
// (a later release) answers in milliseconds: an environment clause with a
// quantifier over array elements was enough (a check that the WebAssembly
// build finishes in 1 s ran out of its 10 s natively). A session on the native
// backend therefore moves to the fallback backend when native z3 answers
// `unknown` to a query, runs out of time or crashes: the fallback session gets
// the session's state again (every command so far but the queries) and the
// query, and takes every later command of the session. A verdict never rests on
// the native answer it replaces; the fallback's own `unknown` stays `unknown`.
//
// The native z3 has a part of the session's time limit (PRIMARY_SHARE, at least
// a second): the fallback then has all of it. A query that native z3 would
// have answered late is answered by the fallback (or not: `unknown`); one it
// would never answer costs 30 % of the limit more than before instead of being
// `unknown` after all of it.
import { stateCommands } from './smt-text.js';
import { SolverFailure, type SessionOptions, type SolverBackend, type SolverSession } from './types.js';

/** The primary's part of a session's time limit. */
export const PRIMARY_SHARE = 0.3;

/** The time limit of the primary's session. */
export function primaryTimeLimit(timeLimitMs: number): number {
    return Math.min(timeLimitMs, Math.max(1000, Math.round(timeLimitMs * PRIMARY_SHARE)));
}

/** An answer `unknown` to one of the eval's queries (answers are lines of their own). */
export function gaveUp(output: string): boolean {
    return /^unknown\r?$/m.test(output);
}

export class FallbackBackend implements SolverBackend {
    readonly name: string;
    private fallback: Promise<SolverBackend> | undefined;

    /**
     * @param makeFallback starts the fallback backend, the first time a session needs it
     * @param onFallback told of each session that moves (why, and what the query was about)
     */
    constructor(private readonly primary: SolverBackend, private readonly makeFallback: () => SolverBackend | Promise<SolverBackend>, private readonly onFallback?: (why: string) => void) {
        this.name = primary.name;
    }

    async openSession(options: SessionOptions): Promise<SolverSession> {
        if (options.fallback === false) return this.primary.openSession(options);
        const session = await this.primary.openSession({ ...options, timeLimitMs: primaryTimeLimit(options.timeLimitMs) });
        return new FallbackSession(session, () => this.fallbackBackend().then(b => b.openSession(options)), this.onFallback);
    }

    async dispose(): Promise<void> {
        const fallback = this.fallback;
        this.fallback = undefined;
        await Promise.all([this.primary.dispose(), fallback?.then(b => b.dispose(), () => undefined)]);
    }

    private fallbackBackend(): Promise<SolverBackend> {
        if (!this.fallback) {
            const started = Promise.resolve().then(() => this.makeFallback());
            // (a fallback that could not start is tried again by the next session that needs it)
            started.catch(() => { if (this.fallback === started) this.fallback = undefined; });
            this.fallback = started;
        }
        return this.fallback;
    }
}

class FallbackSession implements SolverSession {
    /** What the session was told so far (while on the primary). */
    private readonly history: string[] = [];
    private moved: SolverSession | undefined;
    private closed = false;
    private chain: Promise<unknown> = Promise.resolve();

    constructor(private readonly primary: SolverSession, private readonly openFallback: () => Promise<SolverSession>, private readonly onFallback?: (why: string) => void) { }

    eval(commands: string): Promise<string> {
        const step = () => this.step(commands);
        const result = this.chain.then(step, step);
        this.chain = result.catch(() => undefined);
        return result;
    }

    close(): void {
        if (this.closed) return;
        this.closed = true;
        this.primary.close();
        this.moved?.close();
    }

    private async step(commands: string): Promise<string> {
        if (this.closed) throw new SolverFailure('error', 'the solver session is closed');
        if (this.moved) return this.moved.eval(commands);
        let why: string;
        try {
            const out = await this.primary.eval(commands);
            if (!gaveUp(out)) {
                this.history.push(commands);
                return out;
            }
            why = 'it answered unknown';
        } catch (e) {
            // ('error': a closed or unusable session, bad input: the fallback would say the same)
            if (!(e instanceof SolverFailure) || e.kind === 'error') throw e;
            why = e.kind === 'timeout' ? 'it ran out of time' : `it crashed (${e.message})`;
        }
        this.primary.close();
        this.onFallback?.(why);
        const moved = await this.openFallback();
        if (this.closed) {
            moved.close();
            throw new SolverFailure('error', 'the solver session is closed');
        }
        this.moved = moved;
        const state = stateCommands(this.history.join('\n'));
        this.history.length = 0;
        if (state.trim() !== '') await moved.eval(state);
        return moved.eval(commands);
    }
}

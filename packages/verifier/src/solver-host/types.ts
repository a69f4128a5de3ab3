// Public types of the solver host (re-exported by backend.ts and index.ts).
// Kept in their own module so that the backends can import them without an
// import cycle through backend.ts.

/**
 * Why an eval failed:
 * - 'timeout': the eval exceeded its hard time limit; the solver was interrupted or killed.
 * - 'crash': the solver died (wasm abort, "memory access out of bounds", worker/process exit).
 * - 'error': anything else (solver cannot start, session closed/unusable, Z3 API exception).
 * After 'timeout' or 'crash' the session is dead: its later evals reject with 'error'.
 */
export type SolverFailureKind = 'timeout' | 'crash' | 'error';

/** Receives every SMT-LIB text sent to the solver (for --dump-smt). */
export type QueryLog = (text: string) => void;

/** Receives debugging lines (timings, Houdini's progress). */
export type Trace = (line: string) => void;

/**
 * A session's limits: wall-clock time per query, and optionally Z3's resource
 * limit (`rlimit`, deterministic: the same query gives up at the same point on
 * any machine; Z3 answers `unknown`, "max. resource limit exceeded").
 */
export interface SessionOptions {
    timeLimitMs: number;
    resourceLimit?: number;
    /**
     * A query native z3 gives up on goes to Z3 in WebAssembly (fallback.ts),
     * unless this is false: an optional query whose `unknown` costs nothing
     * (the witness search's larger loop bounds) keeps to its time.
     */
    fallback?: boolean;
}

export class SolverFailure extends Error {
    constructor(readonly kind: SolverFailureKind, message: string) {
        super(message);
        this.name = 'SolverFailure';
    }
}

export interface SolverSession {
    /** Evaluate SMT-LIB2 commands in this session's solver state; resolves with everything the solver printed (e.g. "sat\n((x 1))\n"). Rejects with SolverFailure. */
    eval(commands: string): Promise<string>;
    /** Release the solver for the next session (its state is discarded). */
    close(): void;
}

export interface SolverBackend {
    readonly name: string; // 'z3-wasm' | 'z3-native'
    /** A fresh solver state (no earlier declarations/assertions). Waits in a FIFO queue for a free solver. */
    openSession(options: SessionOptions): Promise<SolverSession>;
    /** Stop all workers/processes. */
    dispose(): Promise<void>;
}

export interface BackendOptions {
    /** Number of solver instances (worker threads or processes). Default 1. */
    workers?: number;
    /** Start the instances at once and run a tiny query on each, so that the first real query is warm. Default true. */
    prewarm?: boolean;
    /** z3-native only: the z3 executable (default: `z3` on PATH). */
    z3Path?: string;
    /** z3-wasm only: the worker script (default: z3-worker.cjs next to the running bundle). */
    workerScript?: string;
    /**
     * z3-native only: a session whose query native z3 gives up on (unknown, time-out,
     * crash) moves to Z3 in WebAssembly, started when first needed (solver-host/fallback.ts).
     */
    fallback?: boolean;
    /** Told each time a session moves to the fallback, and why. */
    onFallback?: (why: string) => void;
}

/** For tests only: the sessions of both backends can simulate a solver crash or hang. */
export interface DebuggableSession extends SolverSession {
    /**
     * 'crash': the solver dies like a wasm abort (worker: uncaught RuntimeError; native: SIGSEGV).
     * 'hang': the solver stops responding (worker: a busy loop that never yields; native: SIGSTOP).
     * Behaves like an eval: rejects with 'crash', resp. 'timeout' after the session's hard limit.
     */
    debug(what: 'crash' | 'hang'): Promise<string>;
}

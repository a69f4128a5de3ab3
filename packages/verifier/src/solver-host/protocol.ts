// Messages between the host (wasm-backend.ts) and a z3 worker (z3-worker.ts).
// Type-only module: the worker bundle must not pull in host code.

export interface WorkerStartData {
    kind: 'calvin-z3-worker';
    /** Run a tiny query before reporting ready. */
    prewarm: boolean;
}

export type HostToWorker =
    | { type: 'eval'; id: number; text: string }
    /** Tests only: die like a wasm crash. */
    | { type: 'debug-crash'; id: number }
    /** Tests only: a busy loop that never yields. */
    | { type: 'debug-hang'; id: number };

export type WorkerToHost =
    /** glue: which Emscripten glue runs Z3; threads: Z3's threads started ahead (z3-direct.ts). */
    | { type: 'ready'; z3Version: string; initMs: number; prewarmMs: number; glue: 'patched' | 'stock'; threads: number }
    | { type: 'result'; id: number; output: string }
    /** 'crash': the wasm instance is unusable and the worker exits right after this message. */
    | { type: 'failure'; id: number; kind: 'crash' | 'error'; message: string }
    /** The worker could not start (it exits right after this message). */
    | { type: 'fatal'; message: string };

// The solver host: SMT-LIB sessions on a pool of Z3 instances, either Z3 compiled
// to WebAssembly (z3-solver, in worker threads) or a native `z3` executable.
import { findNativeZ3 } from './find-z3.js';
import { createNativeEngines } from './native-backend.js';
import { FallbackBackend } from './fallback.js';
import { EnginePool } from './pool.js';
import { SolverFailure, type BackendOptions, type SolverBackend } from './types.js';
import { createWasmEngines } from './wasm-backend.js';

export { SolverFailure } from './types.js';
export type { BackendOptions, DebuggableSession, SolverBackend, SolverFailureKind, SolverSession } from './types.js';

export type BackendKind = 'z3-wasm' | 'z3-native';

/**
 * A pool of `options.workers` (default 1) solver instances. Sessions wait in a
 * FIFO queue for a free instance. Throws SolverFailure('error') for
 * 'z3-native' when no z3 executable is on PATH (see nativeZ3Available).
 */
export function createBackend(kind: BackendKind, options: BackendOptions = {}): SolverBackend {
    const workers = options.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1) throw new SolverFailure('error', `workers must be a positive integer (got ${workers})`);
    const prewarm = options.prewarm ?? true;
    switch (kind) {
        case 'z3-wasm':
            return new EnginePool(kind, createWasmEngines(workers, prewarm, options.workerScript), prewarm);
        case 'z3-native': {
            const native = new EnginePool(kind, createNativeEngines(workers, prewarm, options.z3Path), prewarm);
            if (!options.fallback) return native;
            // (one instance: the fallback takes the few queries native z3 gives up on)
            return new FallbackBackend(native, () => createBackend('z3-wasm', { workers: 1, workerScript: options.workerScript }), options.onFallback);
        }
        default:
            throw new SolverFailure('error', `unknown solver backend: ${String(kind)}`);
    }
}

/** Whether a `z3` executable is on PATH (needed by the 'z3-native' backend). */
export function nativeZ3Available(): boolean {
    return findNativeZ3() !== undefined;
}

// Public API of the solver host.
export { createBackend, nativeZ3Available, SolverFailure } from './backend.js';
export type { BackendKind, BackendOptions, DebuggableSession, SolverBackend, SolverFailureKind, SolverSession } from './backend.js';
export type { QueryLog, Trace } from './types.js';
export { NO_NATIVE_Z3 } from './native-backend.js';
export { defaultWorkerScript } from './wasm-backend.js';
export { HARD_LIMIT_GRACE_MS } from './pool.js';
export { awaitPrefetchedZ3Version, MIN_NATIVE_VERSION, nativeZ3Version, resolveSolver, SOLVER_CHOICES } from './choose.js';
export type { ResolvedSolver, SolverChoice } from './choose.js';

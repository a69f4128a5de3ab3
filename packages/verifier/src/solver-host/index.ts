// Public API of the solver host.
export { createBackend, nativeZ3Available, SolverFailure } from './backend.js';
export type { BackendKind, BackendOptions, DebuggableSession, SolverBackend, SolverFailureKind, SolverSession } from './backend.js';
export type { QueryLog, Trace } from './types.js';
export { NO_NATIVE_Z3 } from './native-backend.js';
export { defaultWorkerScript } from './wasm-backend.js';
export { HARD_LIMIT_GRACE_MS } from './pool.js';

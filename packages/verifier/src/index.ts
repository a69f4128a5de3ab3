export * from './model/program.js';
export * from './verify.js';
export * from './solver/index.js';
export { Vocabulary } from './heap/vocabulary.js';
export { planChecks, CHECKER_VERSION, type CheckPlan, type PlanOptions } from './incremental/plan.js';
export { ResultCache, type CacheOptions } from './incremental/cache.js';
export { encodeResult, decodeResult, type StoredResult } from './incremental/result-codec.js';
export { CheckPool, defaultCheckWorkerScript, type CheckJob, type JobOutcome } from './worker/check-pool.js';
export { programContext, unitsOf, unitSpec, type ProgramContext, type Unit } from './program-context.js';

// The witness search (issue 14): for an error of the modular checker, a
// concrete interleaving of the real program that reaches the failure, or a
// statement that none exists within the bounds.
//
//   program.ts    the real program within the bounds: every thread (copies of
//                 replicated ones), real method bodies (lower.ts option
//                 `inlineBodies`), the field initializers
//   machine.ts    the concrete interpreter of the atomic operations (the
//                 ground truth: every witness is replayed on it)
//   symbolic.ts   the threads unrolled into events over SMT constants
//   encode.ts     the interleavings: context-bounded segments, reads-from
//   targets.ts    what a witness must reach, per diagnostic code
//   replay.ts     replaying a model's trace; format.ts / show.ts: the trace
//   search.ts     the search (Z3 through the solver host, with its time limits)
//
// Use: `new WitnessSearch(program, { solver, bounds?, timeLimitMs?, source? })`
// then `await search.find(diagnostic)` for each error diagnostic of that
// program (a `VDiagnostic` from verifyProgram/verifyCheck); or
// `findWitnesses(program, diagnostics, options)`. Show the result with
// `witnessText` (CLI text, under the diagnostic), `witnessJson` (the `witness`
// member of a JSON diagnostic) and `witnessCodeFlows` (SARIF `codeFlows`).
export { WitnessSearch, findWitnesses, boundsText, type WitnessOptions } from './search.js';
export { DEFAULT_BOUNDS, type WitnessBounds, type WitnessResult, type WitnessStep } from './types.js';
export { witnessText, witnessJson, witnessCodeFlows, type SarifCodeFlow } from './show.js';
export type { Goal } from './targets.js';

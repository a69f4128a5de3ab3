// The witness search (issue 14): a concrete interleaving of the real program
// for a diagnostic of the modular checker, found with Z3 within bounds and
// replayed on a concrete interpreter. Wired into the CLI and the server by
// their own code; this is the stage's public API.
export { WitnessSearch, findWitnesses, boundsText, type WitnessOptions } from './search.js';
export { DEFAULT_BOUNDS, type WitnessBounds, type WitnessResult, type WitnessStep } from './types.js';
export { witnessText, witnessJson } from './show.js';
export type { Goal } from './targets.js';

import type { Range } from '../model/program.js';

/**
 * The bounds of the witness search (issue 14): the real program is explored
 * only up to them, so "not confirmed" always means "not within these bounds".
 */
export interface WitnessBounds {
    /** Iterations of each loop (a thread still looping after them stops there). */
    loops: number;
    /** Context switches (the execution is at most switches + 1 runs of one thread each). */
    switches: number;
    /** Copies of each replicated thread (`T[*]`; `T[n]` gets min(n, copies)). */
    copies: number;
    /** Nested inlined calls (recursion is cut deeper than this). */
    inlineDepth: number;
}

export const DEFAULT_BOUNDS: WitnessBounds = { loops: 3, switches: 3, copies: 2, inlineDepth: 8 };

/** One step of a witness: an atomic operation of a real thread. */
export interface WitnessStep {
    /** The thread instance (`T1`, `Worker[2]`; `init` for the field initializers). */
    thread: string;
    file: string;
    /** 1-based, as the CLI's positions. */
    line: number;
    column: number;
    /** The source text of the operation (`x = 0`). */
    action: string;
    /** What it read and wrote (`x: 1 → 0`, `m: 0`). */
    values: string;
    /** The step at which the failure happens (the last step, or the two pending accesses of a race). */
    failing?: boolean;
}

export type WitnessResult =
    | { status: 'confirmed'; steps: WitnessStep[]; bounds: WitnessBounds; summary: string; timeMs: number }
    | { status: 'not-confirmed'; bounds: WitnessBounds; reason: string; timeMs: number };

/**
 * Failed checks that stop a thread (an exception in Java): a witness passes
 * none of them before its failure. The others (a callee's `requires`, the
 * invariants a callee assumes) are obligations of the modular check, not
 * events of the real program: a thread goes on past them.
 */
export const FATAL_CODES: ReadonlySet<string> = new Set(['assert', 'null', 'bounds', 'div-zero']);

/** Why a search ended without a witness, besides "none within the bounds". */
export class WitnessUnsupported extends Error { }

export function sameRange(a: Range, b: Range): boolean {
    return a.file === b.file && a.startLine === b.startLine && a.startChar === b.startChar && a.endLine === b.endLine && a.endChar === b.endChar;
}

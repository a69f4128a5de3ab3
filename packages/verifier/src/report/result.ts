import type { Range } from '../model/program.js';
import type { CheckCode, InferredRef } from '../il/il.js';

// What the verifier returns (pipeline stage 8): findings positioned in the
// source, with their counterexamples as data; `diagnosticText` writes the text
// a user reads (the CLI and the server both use it).

export type VCode = CheckCode | 'unknown' | 'unchecked';

/** A finding of the verifier (pipeline stage 8), positioned in the source. */
export interface VDiagnostic {
    range: Range;
    severity: 'error' | 'warning' | 'info';
    code: VCode;
    message: string;
    related: Array<{ range: Range; message: string }>;
    /**
     * The values that explain a failure, what other threads' steps changed, and
     * a hint; `diagnosticText` adds them to the message.
     */
    counterexample?: { values: Array<{ name: string; value: string }>; notes: string[]; hint?: string };
    /** The failure refutes an inferred annotation (never shown: the inference weakens it and the checks run again). */
    inferred?: InferredRef;
}

/**
 * A diagnostic as a user reads it: the message, then the counterexample in
 * brackets, then the hint. With a confirmed witness, no brackets: the
 * counterexample is the modular check's (other threads' steps are arbitrary
 * environment steps there), and its values would contradict the witness's,
 * which are the real program's and are shown with it.
 */
export function diagnosticText(d: VDiagnostic, witnessConfirmed = false): string {
    const c = d.counterexample;
    if (!c) return d.message;
    if (witnessConfirmed) return `${d.message}${c.hint ?? ''}`;
    const parts = [c.values.map(v => `${v.name} = ${v.value}`).join(', '), ...c.notes].filter(x => x !== '');
    return `${d.message}${parts.length > 0 ? ` [${parts.join('; ')}]` : ''}${c.hint ?? ''}`;
}

/** One unit of work: a thread's check, a procedure's abstraction check, or the initialization check. */
export interface CheckResult {
    /** Stable key of the check (CheckPlan.key). */
    key: string;
    name: string;
    kind: 'thread' | 'abstraction' | 'init';
    range: Range;
    status: 'verified' | 'failed' | 'unknown' | 'error';
    timeMs: number;
    /** Time spent waiting for the solver (ms). */
    solverMs: number;
    queries: number;
    diagnostics: VDiagnostic[];
    /** E(p) and I(p) with their origins, the inferred loop invariants, and the E* decision (for hover and --verbose). */
    environment: Array<{ text: string; origin: string }>;
    invariant: Array<{ text: string; origin: string }>;
    inferredLoopInvariants: string[];
    /** The inferred loop invariants by loop (the loop statement's range). */
    loopInvariants: Array<{ range: Range; texts: string[] }>;
    /**
     * Every loop-invariant candidate of the check (texts), when what Houdini kept is what it keeps
     * from all of them (not after it gave up, nor from a seed that was not known to be exact): a
     * later run that has only lost assumptions may start from what this one kept
     * (`VerifyOptions.houdiniSeed` and `houdiniSeedCandidates`).
     */
    candidates?: string[];
    /** The thread's shared accesses and whether each is stable there (race-free), per this check. */
    accesses: Array<{ range: Range; text: string; write: boolean; sync: boolean; stable: boolean }>;
    envStar: string;
    /**
     * The check stopped at the refutations of inferred annotations (`VerifyOptions.untilRefuted`):
     * its diagnostics are those refutations, nothing else was looked at. Never shown nor cached:
     * the inference runs again without what they refute.
     */
    refutedOnly?: boolean;
    /** A failed unit whose remaining checks the solver could not decide (why). */
    undecided?: string;
    /** Why a check is `unknown` (not decided) or `error` (not run): for the code lens and the CLI. */
    unknown?: { reason: UnknownReason; detail: string };
}

/**
 * Why a check was not decided: it ran out of time; the solver crashed, reported
 * an error, or answered unknown; the program uses something the checker
 * cannot handle; or an internal error.
 */
export type UnknownReason = 'timeout' | 'solver-crash' | 'solver-error' | 'solver-unknown' | 'unsupported' | 'internal';



// Messages between the host (check-pool.ts) and a check worker (check-worker.ts).
// Type-only module: the worker bundle must not pull in host code.
import type { ProgramModel } from '../model/program.js';
import type { CheckResult, VDiagnostic } from '../driver/verify.js';
import type { WitnessBounds, WitnessResult } from '../witness/types.js';

/** A witness search (issue 14) instead of a check: an interleaving of the real program that reaches this diagnostic. */
export interface WitnessRequest {
    diagnostic: VDiagnostic;
    bounds?: Partial<WitnessBounds>;
    /** The source text of the program's files (by Range.file), for the steps' actions. */
    sources: Record<string, string>;
}

export interface CheckOptions {
    /** Limit per solver query (ms). */
    timeLimitMs: number;
    /** Time the whole check may take (ms). */
    checkBudgetMs: number;
    /** Z3's resource limit per query (none: time only). */
    resourceLimit?: number;
    /** Loop-invariant candidates to start Houdini from (VerifyOptions.houdiniSeed). */
    houdiniSeed?: string[];
    /** End at the refutations of inferred annotations (VerifyOptions.untilRefuted). */
    untilRefuted?: boolean;
}

/** What a check worker runs its checks on (its workerData). */
export interface CheckWorkerData {
    kind: 'calvin-check-worker';
    /** A native z3 process (at z3Path), or Z3 in WebAssembly in the worker itself. */
    solver: 'z3-wasm' | 'z3-native';
    z3Path?: string;
    /** Its version, as the host found it (no `z3 --version` per worker). */
    z3Version?: string;
}

export type HostToCheckWorker =
    /** A program the next checks refer to (kept by version). */
    | { type: 'program'; version: string; model: ProgramModel }
    | { type: 'check'; id: number; version: string; key: string; options: CheckOptions; witness?: WitnessRequest }
    /** Stop the check in flight (its solver query is interrupted). */
    | { type: 'cancel'; id: number }
    /** Tests only: die like a wasm crash, or hang. */
    | { type: 'debug'; what: 'crash' | 'hang' };

export type CheckWorkerToHost =
    | { type: 'ready'; initMs: number; z3Version: string; solver: 'z3-wasm' | 'z3-native'; glue?: 'patched' | 'stock'; threads?: number }
    | { type: 'result'; id: number; result: CheckResult }
    | { type: 'witness'; id: number; witness: WitnessResult }
    | { type: 'cancelled'; id: number }
    /** The check could not run ('crash': the worker exits right after). */
    | { type: 'failure'; id: number; kind: 'crash' | 'error'; message: string }
    | { type: 'fatal'; message: string };

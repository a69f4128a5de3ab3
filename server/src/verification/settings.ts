import * as os from 'node:os';

export type VerifyOn = 'change' | 'save' | 'never';

export interface VerificationSettings {
    verifyOn: VerifyOn;
    /** Time a check may take (ms). */
    timeLimitMs: number;
    /** Check workers (0: the cores available). */
    maxWorkers: number;
    /** Keep results on disk in `.calvin-cache/` of the workspace. */
    diskCache: boolean;
    /** Z3's resource limit per query (0: none, time only). */
    resourceLimit: number;
    /** Infer the protection (writable_if, environment) and invariants the program leaves out. */
    infer: boolean;
    /** Search a concrete interleaving for each error, in the background (issue 14). */
    witness: boolean;
    /** The solver backend: a native z3 when there is one (auto), Z3 in WebAssembly, or native only. */
    solver: 'auto' | 'wasm' | 'native';
    /** The native z3 executable ('' : z3 on PATH). */
    z3Path: string;
}

export const DEFAULT_SETTINGS: VerificationSettings = { verifyOn: 'change', timeLimitMs: 10_000, maxWorkers: 0, diskCache: true, resourceLimit: 0, infer: true, witness: true, solver: 'auto', z3Path: '' };

/** Bounds of the time limit per check (ms). */
export const MIN_TIME_LIMIT_MS = 100;
export const MAX_TIME_LIMIT_MS = 600_000;

/** The most check workers the server starts: the machine's cores. */
export function maxWorkerLimit(): number {
    return Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
}

/**
 * The settings an editor sent, validated: a missing value keeps the current
 * one; a value of the wrong kind is replaced by the default and a number out
 * of range is clamped, each reported through `warn` (no setting can make the
 * server start thousands of workers or wait forever).
 */
export function validateSettings(raw: unknown, current: VerificationSettings, warn: (message: string) => void): VerificationSettings {
    const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const out = { ...current };
    const bad = (name: string, value: unknown, used: unknown) => warn(`calvin.${name}: ${JSON.stringify(value)?.slice(0, 80) ?? String(value)} is not a valid value; using ${JSON.stringify(used)}`);
    if (o.verifyOn !== undefined) {
        if (o.verifyOn === 'change' || o.verifyOn === 'save' || o.verifyOn === 'never') out.verifyOn = o.verifyOn;
        else { out.verifyOn = DEFAULT_SETTINGS.verifyOn; bad('verifyOn', o.verifyOn, out.verifyOn); }
    }
    if (o.timeLimitMs !== undefined) {
        const v = o.timeLimitMs;
        if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) { out.timeLimitMs = DEFAULT_SETTINGS.timeLimitMs; bad('timeLimitMs', v, out.timeLimitMs); } else {
            out.timeLimitMs = clampTimeLimit(v);
            if (out.timeLimitMs !== v) warn(`calvin.timeLimitMs: ${v} is out of range (${MIN_TIME_LIMIT_MS}..${MAX_TIME_LIMIT_MS}); using ${out.timeLimitMs}`);
        }
    }
    if (o.maxWorkers !== undefined) {
        const v = o.maxWorkers;
        const limit = maxWorkerLimit();
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) { out.maxWorkers = DEFAULT_SETTINGS.maxWorkers; bad('maxWorkers', v, out.maxWorkers); } else {
            out.maxWorkers = Math.min(Math.floor(v), limit);
            if (out.maxWorkers !== v) warn(`calvin.maxWorkers: ${v} is out of range (0 for automatic, or 1..${limit}, the cores of this machine); using ${out.maxWorkers}`);
        }
    }
    if (o.resourceLimit !== undefined) {
        const v = o.resourceLimit;
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) { out.resourceLimit = DEFAULT_SETTINGS.resourceLimit; bad('resourceLimit', v, out.resourceLimit); } else out.resourceLimit = Math.min(Math.floor(v), Number.MAX_SAFE_INTEGER);
    }
    if (o.diskCache !== undefined) {
        if (typeof o.diskCache === 'boolean') out.diskCache = o.diskCache;
        else { out.diskCache = DEFAULT_SETTINGS.diskCache; bad('diskCache', o.diskCache, out.diskCache); }
    }
    if (o.cache === false) out.diskCache = false;
    if (o.witness !== undefined) {
        if (typeof o.witness === 'boolean') out.witness = o.witness;
        else { out.witness = DEFAULT_SETTINGS.witness; bad('witness', o.witness, out.witness); }
    }
    if (o.infer !== undefined) {
        if (typeof o.infer === 'boolean') out.infer = o.infer;
        else { out.infer = DEFAULT_SETTINGS.infer; bad('infer', o.infer, out.infer); }
    }
    // issue 15: the solver backend
    if (o.solver !== undefined) {
        const v = o.solver === 'z3-wasm' ? 'wasm' : o.solver === 'z3-native' ? 'native' : o.solver;
        if (v === 'auto' || v === 'wasm' || v === 'native') out.solver = v;
        else { out.solver = DEFAULT_SETTINGS.solver; bad('solver', o.solver, out.solver); }
    }
    if (o.z3Path !== undefined && o.z3Path !== null) {
        if (typeof o.z3Path === 'string' && o.z3Path.length < 4096) out.z3Path = o.z3Path.trim();
        else { out.z3Path = DEFAULT_SETTINGS.z3Path; bad('z3Path', o.z3Path, out.z3Path); }
    }
    return out;
}

/** A time limit within bounds (requests from the editor included). */
export function clampTimeLimit(ms: number): number {
    return Math.min(MAX_TIME_LIMIT_MS, Math.max(MIN_TIME_LIMIT_MS, Math.round(ms)));
}

import type { Range } from '../model/program.js';
import type { CheckResult } from '../driver/verify.js';
import type { CheckPlan } from './plan.js';

/**
 * A check's result as stored in the cache: every range in it (diagnostics,
 * related information, loop invariants, accesses) is an index into the range
 * table of the plan it was computed for (plan.ts), so that it can be shown in
 * any program whose plan has the same fingerprint, at that program's positions.
 * A range not in the table (none should be) is kept as it is.
 */
export type StoredRange = number | Range;

/** A value with every Range replaced by a StoredRange. */
type Stored<T> = T extends Range ? StoredRange : T extends Array<infer E> ? Array<Stored<E>> : T extends object ? { [K in keyof T]: Stored<T[K]> } : T;

export type StoredResult = Stored<Omit<CheckResult, 'range'>> & { fingerprint: string };

function isRange(x: unknown): x is Range {
    const r = x as Record<string, unknown>;
    return typeof r === 'object' && r !== null && typeof r.file === 'string' && typeof r.startLine === 'number' && typeof r.endChar === 'number';
}

function sameRange(a: Range, b: Range): boolean {
    return a.file === b.file && a.startLine === b.startLine && a.startChar === b.startChar && a.endLine === b.endLine && a.endChar === b.endChar;
}

/** A copy of x with f applied to every range in it. */
function mapRanges(x: unknown, f: (r: Range) => unknown): unknown {
    if (isRange(x)) return f(x);
    if (Array.isArray(x)) return x.map(e => mapRanges(e, f));
    if (x !== null && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, mapRanges(v, f)]));
    return x;
}

export function encodeResult(result: CheckResult, plan: CheckPlan): StoredResult {
    const { range: _range, ...rest } = result;
    void _range;
    const index = (r: Range): StoredRange => {
        const i = plan.ranges.findIndex(x => sameRange(x, r));
        return i >= 0 ? i : r;
    };
    return { ...(mapRanges(rest, index) as Stored<Omit<CheckResult, 'range'>>), fingerprint: plan.fingerprint };
}

/** Where each range field of a stored result is (a number there is an index, not a count). */
const RANGE_KEYS = new Set(['range']);

/** The stored result at the positions of `plan` (which must have the same fingerprint). */
export function decodeResult(stored: StoredResult, plan: CheckPlan): CheckResult {
    const { fingerprint: _fp, ...rest } = stored;
    void _fp;
    const at = (r: StoredRange): Range => (typeof r === 'number' ? plan.ranges[r] ?? plan.range : r);
    const walk = (x: unknown): unknown => {
        if (isRange(x)) return x;
        if (Array.isArray(x)) return x.map(walk);
        if (x !== null && typeof x === 'object') {
            return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, RANGE_KEYS.has(k) && (typeof v === 'number' || isRange(v)) ? at(v as StoredRange) : walk(v)]));
        }
        return x;
    };
    return { ...(walk(rest) as Omit<CheckResult, 'range'>), range: plan.range };
}

const CODES = new Set(['race', 'assert', 'null', 'bounds', 'div-zero', 'invariant', 'env', 'abstraction', 'loop-invariant', 'unknown', 'unchecked']);
const SEVERITIES = new Set(['error', 'warning', 'info']);

/**
 * Whether a stored result (from the disk cache: it may come from anywhere)
 * can be shown for a plan: every range is an index into the plan's range
 * table, every diagnostic has a known code and severity. Otherwise it is a
 * miss and the check runs again.
 */
export function storedResultFits(stored: StoredResult, plan: CheckPlan): boolean {
    let ok = true;
    const walk = (x: unknown): void => {
        if (!ok) return;
        if (Array.isArray(x)) { x.forEach(walk); return; }
        if (x === null || typeof x !== 'object') return;
        for (const [k, v] of Object.entries(x)) {
            if (RANGE_KEYS.has(k)) {
                if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= plan.ranges.length) { ok = false; return; }
            } else walk(v);
        }
    };
    walk(stored);
    return ok && stored.diagnostics.every(d => CODES.has(String(d.code)) && SEVERITIES.has(String(d.severity)));
}

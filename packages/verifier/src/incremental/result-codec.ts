import type { Range } from '../model/program.js';
import type { UnitResult, VDiagnostic } from '../verify.js';
import type { CheckPlan } from './plan.js';

/**
 * A check's result as stored in the cache: its ranges are indices into the
 * range table of the plan it was computed for (plan.ts), so that it can be
 * shown in any program whose plan has the same fingerprint, at that program's
 * positions.
 */
export type StoredRange = number | Range;

export interface StoredDiagnostic extends Omit<VDiagnostic, 'range' | 'related'> {
    range: StoredRange;
    related: Array<{ range: StoredRange; message: string }>;
}

export interface StoredResult extends Omit<UnitResult, 'range' | 'diagnostics'> {
    fingerprint: string;
    diagnostics: StoredDiagnostic[];
}

function sameRange(a: Range, b: Range): boolean {
    return a.file === b.file && a.startLine === b.startLine && a.startChar === b.startChar && a.endLine === b.endLine && a.endChar === b.endChar;
}

export function encodeResult(result: UnitResult, plan: CheckPlan): StoredResult {
    const index = (r: Range): StoredRange => {
        const i = plan.ranges.findIndex(x => sameRange(x, r));
        return i >= 0 ? i : r;
    };
    const { range: _range, diagnostics, ...rest } = result;
    void _range;
    return {
        ...rest,
        fingerprint: plan.fingerprint,
        diagnostics: diagnostics.map(d => ({ ...d, range: index(d.range), related: d.related.map(r => ({ ...r, range: index(r.range) })) })),
    };
}

/** The stored result at the positions of `plan` (which must have the same fingerprint). */
export function decodeResult(stored: StoredResult, plan: CheckPlan): UnitResult {
    const at = (r: StoredRange): Range => (typeof r === 'number' ? plan.ranges[r] ?? plan.range : r);
    const { fingerprint: _fp, diagnostics, ...rest } = stored;
    void _fp;
    return {
        ...rest,
        range: plan.range,
        diagnostics: diagnostics.map(d => ({ ...d, range: at(d.range), related: d.related.map(r => ({ ...r, range: at(r.range) })) })),
    };
}

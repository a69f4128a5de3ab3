import type { WitnessResult } from './types.js';

/** The last part of a path or URI. */
function baseName(file: string): string {
    return decodeURIComponent(file.split(/[\\/]/).pop() ?? file);
}

/**
 * The witness under a diagnostic, as the CLI's text output shows it: numbered
 * steps `3. T2  simple_lock_unlocked.calvin:30  x = 0  (x: 1 → 0)`, or why
 * none was confirmed.
 */
export function witnessText(w: WitnessResult, indent = '    '): string {
    if (w.status !== 'confirmed') return `${indent}witness: ${w.reason}`;
    const rows = w.steps.map((s, i) => ({ n: `${i + 1}.`, thread: s.thread, at: `${baseName(s.file)}:${s.line}`, action: s.action, values: s.values, failing: s.failing }));
    const width = (f: (r: typeof rows[number]) => string) => Math.max(0, ...rows.map(r => f(r).length));
    const [wn, wt, wa, wc] = [width(r => r.n), width(r => r.thread), width(r => r.at), width(r => r.action)];
    const lines = rows.map(r => `${indent}  ${r.n.padStart(wn)} ${r.thread.padEnd(wt)}  ${r.at.padEnd(wa)}  ${r.action.padEnd(wc)}${r.values ? `  (${r.values})` : ''}${r.failing ? '  <-' : ''}`.trimEnd());
    return [`${indent}witness: ${w.summary}`, ...lines].join('\n');
}

/** The `witness` member of a JSON diagnostic (issue 14). */
export function witnessJson(w: WitnessResult): { status: 'confirmed' | 'not-confirmed'; bounds: WitnessResult['bounds']; summary?: string; reason?: string; steps: Array<{ thread: string; file: string; line: number; column: number; action: string; values: string; failing?: boolean }> } {
    return w.status === 'confirmed'
        ? { status: w.status, bounds: w.bounds, summary: w.summary, steps: w.steps }
        : { status: w.status, bounds: w.bounds, reason: w.reason, steps: [] };
}

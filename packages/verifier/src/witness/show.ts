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

/** SARIF 2.1.0 `codeFlow` (§3.36): one `threadFlow` per thread (§3.37), each location with its global `executionOrder` (§3.38.13). */
export interface SarifCodeFlow {
    message: { text: string };
    threadFlows: Array<{
        id: string;
        message: { text: string };
        locations: Array<{
            location: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number; startColumn: number } }; message: { text: string } };
            executionOrder: number;
            importance: 'essential' | 'important';
        }>;
    }>;
}

/**
 * The `codeFlows` of a SARIF result for a confirmed witness (none otherwise),
 * so that code-scanning viewers can step through the interleaving. `uriOf`
 * turns a step's file into the artifact URI the log uses.
 */
export function witnessCodeFlows(w: WitnessResult, uriOf: (file: string) => string = f => f): SarifCodeFlow[] {
    if (w.status !== 'confirmed') return [];
    const flows = new Map<string, SarifCodeFlow['threadFlows'][number]>();
    w.steps.forEach((s, i) => {
        let flow = flows.get(s.thread);
        if (!flow) flows.set(s.thread, flow = { id: s.thread, message: { text: `thread ${s.thread}` }, locations: [] });
        flow.locations.push({
            location: {
                physicalLocation: { artifactLocation: { uri: uriOf(s.file) }, region: { startLine: s.line, startColumn: s.column } },
                message: { text: s.values ? `${s.action} (${s.values})` : s.action },
            },
            executionOrder: i + 1,
            importance: s.failing ? 'essential' : 'important',
        });
    });
    return [{ message: { text: w.summary }, threadFlows: [...flows.values()] }];
}

// The verification gutter (as in Dafny's VS Code extension): for each line of
// a checked thread or method, whether it is verified, failed here, being
// checked, or not checked (stale, undecided, or not run). Driven by
// `calvin/checkStatus` (each check's extent and state, `pending`) and the
// document's diagnostics. Pure: no `vscode` here, so that it is tested
// without VS Code (test/client).

export type GutterState = 'verified' | 'failed' | 'checking' | 'notChecked';

interface Position { line: number; character: number }
interface Range { start: Position; end: Position }

export interface GutterCheck {
    state: 'stale' | 'queued' | 'running' | 'verified' | 'failed' | 'unknown' | 'error';
    range: Range;
    extent?: Range;
}

export interface GutterDiagnostic {
    range: Range;
    /** 1 error, 2 warning, 3 information, 4 hint (LSP). */
    severity?: number;
    source?: string;
}

/** Which state wins on a line several checks (or a diagnostic) cover. */
const RANK: Record<GutterState, number> = { failed: 4, checking: 3, notChecked: 2, verified: 1 };

function ofCheck(state: GutterCheck['state'], pending: boolean): GutterState {
    if (state === 'queued' || state === 'running' || (pending && state === 'stale')) return 'checking';
    if (state === 'verified' || state === 'failed') return 'verified'; // (a failed check's lines are verified but where it failed)
    return 'notChecked';
}

/**
 * The gutter state of each line (0-based) of a document: the lines of each
 * check's extent (its name's line for a check without one) take the check's
 * state; a line with a Calvin error on it is "failed here".
 */
export function gutterLines(checks: GutterCheck[], diagnostics: GutterDiagnostic[], pending = false): Map<number, GutterState> {
    const out = new Map<number, GutterState>();
    const put = (line: number, s: GutterState) => {
        const old = out.get(line);
        if (!old || RANK[s] > RANK[old]) out.set(line, s);
    };
    for (const c of checks) {
        const r = c.extent ?? c.range;
        const s = ofCheck(c.state, pending);
        for (let l = r.start.line; l <= r.end.line; l++) put(l, s);
    }
    for (const d of diagnostics) {
        if ((d.severity ?? 1) !== 1 || (d.source !== undefined && d.source !== 'calvin')) continue;
        for (let l = d.range.start.line; l <= d.range.end.line; l++) put(l, 'failed');
    }
    return out;
}

/** Consecutive lines in the same state, as ranges of lines (for one decoration per state). */
export function gutterRuns(lines: Map<number, GutterState>): Record<GutterState, Array<[number, number]>> {
    const out: Record<GutterState, Array<[number, number]>> = { verified: [], failed: [], checking: [], notChecked: [] };
    const sorted = [...lines].sort((a, b) => a[0] - b[0]);
    for (const [line, s] of sorted) {
        const runs = out[s];
        const last = runs[runs.length - 1];
        if (last && last[1] === line - 1) last[1] = line;
        else runs.push([line, line]);
    }
    return out;
}

/** The gutter icons: a thin bar in the state's colour (a cross where it failed), as SVG. */
export function gutterIconSvg(s: GutterState): string {
    const colour = { verified: '#3fb950', failed: '#f85149', checking: '#d29922', notChecked: '#8b949e' }[s];
    const mark = s === 'failed'
        ? `<path d="M3 5 L11 13 M11 5 L3 13" stroke="${colour}" stroke-width="2"/>`
        : s === 'checking' ? `<rect x="5" y="0" width="3" height="18" fill="${colour}" opacity="0.6"/>`
            : s === 'notChecked' ? `<rect x="5" y="0" width="3" height="18" fill="none" stroke="${colour}" stroke-dasharray="2 2"/>`
                : `<rect x="5" y="0" width="3" height="18" fill="${colour}"/>`;
    return `<svg xmlns="http://www.w3.org/2000/svg" width="14" height="18" viewBox="0 0 14 18">${mark}</svg>`;
}

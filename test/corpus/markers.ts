// @expect / @allow markers (checking.md, "Expected-diagnostic markers").

export interface Markers {
    expect: Set<string>;
    allow: Set<string>;
}

export interface Reported {
    line: number;
    code: string;
    severity: 'error' | 'warning' | 'info';
    message: string;
}

const MARK = /@(expect|allow)\s+([^@\n]*)/g;

/** `line:code` pairs, 1-based lines, from trailing `// @expect CODE...` and `// @allow CODE...` comments. */
export function markersOf(text: string): Markers {
    const expect = new Set<string>();
    const allow = new Set<string>();
    text.split('\n').forEach((line, i) => {
        const comment = line.indexOf('//');
        if (comment < 0) return;
        // Several groups may share one comment: `// @expect race @allow env invariant`.
        for (const m of line.slice(comment).matchAll(MARK)) {
            for (const code of m[2].split(/\s+/).filter(Boolean)) (m[1] === 'expect' ? expect : allow).add(`${i + 1}:${code}`);
        }
    });
    return { expect, allow };
}

/** Errors and warnings against the markers, both ways; infos are not compared. */
export function compareWithMarkers(markers: Markers, reported: Reported[]): { exact: boolean; missed: string[]; extra: string[]; summary: string } {
    const got = new Map<string, Reported>();
    for (const d of reported) if (d.severity !== 'info') got.set(`${d.line}:${d.code}`, d);
    const missed = [...markers.expect].filter(k => !got.has(k));
    const extra = [...got.keys()].filter(k => !markers.expect.has(k) && !markers.allow.has(k));
    const summary = [
        missed.length > 0 ? `missed ${missed.join(', ')}` : '',
        extra.length > 0 ? `false alarms: ${extra.map(k => `${k} (${got.get(k)!.message})`).join('; ')}` : '',
    ].filter(Boolean).join('; ') || 'exact';
    return { exact: missed.length === 0 && extra.length === 0, missed, extra, summary };
}

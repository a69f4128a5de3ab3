// Source lines named in a text that is shown in more than one file: an
// inferred annotation's origin ("inferred from the writes at lines 3 and 8")
// is made once per program and shown at the field, at every thread whose E(p)
// and I(p) include it, in diagnostics and by `calvin infer`, each in its own
// file. The text keeps its lines as a marker (`linesRef`), and whoever shows
// it writes them for the file it is shown in (`placeLines`): "lines 3 and 8"
// there, "b.calvin:3 and b.calvin:8" for the lines of another file.
import type { Range } from '../model/program.js';

const OPEN = '\u27e6';
const CLOSE = '\u27e7';
const MARKER = /\u27e6(\{"list":"(?:and|comma)","refs":\[.*?\]\})\u27e7/g;

/**
 * The lines of these ranges (each once, in this order) as a marker that
 * `placeLines` writes as "line 3", "lines 3 and 8" (`list` 'and') or
 * "lines 3, 8" ('comma').
 */
export function linesRef(ranges: ReadonlyArray<Pick<Range, 'file' | 'startLine'>>, list: 'and' | 'comma' = 'and'): string {
    const refs: Array<[string, number]> = [];
    for (const r of ranges) if (!refs.some(([f, l]) => f === r.file && l === r.startLine + 1)) refs.push([r.file, r.startLine + 1]);
    return `${OPEN}${JSON.stringify({ list, refs })}${CLOSE}`;
}

/** How many distinct lines a `linesRef` of these ranges names (for "write" or "writes"). */
export function lineCount(ranges: ReadonlyArray<Pick<Range, 'file' | 'startLine'>>): number {
    return new Set(ranges.map(r => `${r.file}\n${r.startLine}`)).size;
}

/**
 * A text with its line markers written for the file `file` (a URI) it is
 * shown in: its own lines as "line 3" / "lines 3 and 8", another file's as
 * "b.calvin:3" (its base name). Without `file`, the file of the first line
 * named is taken as the text's own.
 */
export function placeLines(text: string, file?: string): string {
    if (!text.includes(OPEN)) return text;
    return text.replace(MARKER, (whole, json: string) => {
        let v: { list: 'and' | 'comma'; refs: Array<[string, number]> };
        try { v = JSON.parse(json); } catch { return whole; }
        if (v.refs.length === 0) return whole;
        const home = file ?? v.refs[0][0];
        const own = v.refs.filter(([f]) => f === home).map(([, l]) => String(l));
        const other = v.refs.filter(([f]) => f !== home).map(([f, l]) => `${baseName(f)}:${l}`);
        const items = [...own, ...other];
        const word = own.length === 0 ? '' : own.length === 1 ? 'line ' : 'lines ';
        const joined = v.list === 'comma' || items.length === 1 ? items.join(', ') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
        return `${word}${joined}`;
    });
}

/** The last segment of a URI or path, decoded ("b.calvin"). */
function baseName(file: string): string {
    const last = file.split(/[\\/]/).pop() || file;
    try { return decodeURIComponent(last); } catch { return last; }
}

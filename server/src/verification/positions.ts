// Keeping a check's diagnostics on the right lines while the user edits
// elsewhere: an edit is the one region where the old and the new text differ;
// positions after it move with it, positions inside it go to its start.
import type { Position, Range } from 'vscode-languageserver';

/** The region an edit replaced: [start, oldEnd) of the old text became [start, newEnd) of the new. */
export interface TextEdit {
    start: Position;
    oldEnd: Position;
    newEnd: Position;
}

function positionAt(text: string, offset: number): Position {
    let line = 0;
    let last = 0;
    for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
        line++;
        last = i + 1;
    }
    return { line, character: offset - last };
}

/** The edit from `before` to `after` (common prefix and suffix), or undefined when they are equal. */
export function diff(before: string, after: string): TextEdit | undefined {
    if (before === after) return undefined;
    let p = 0;
    const max = Math.min(before.length, after.length);
    while (p < max && before.charCodeAt(p) === after.charCodeAt(p)) p++;
    let s = 0;
    while (s < max - p && before.charCodeAt(before.length - 1 - s) === after.charCodeAt(after.length - 1 - s)) s++;
    return { start: positionAt(before, p), oldEnd: positionAt(before, before.length - s), newEnd: positionAt(after, after.length - s) };
}

function compare(a: Position, b: Position): number {
    return a.line - b.line || a.character - b.character;
}

/** Where a position of the old text is in the new one. */
export function movePosition(p: Position, e: TextEdit): Position {
    if (compare(p, e.start) <= 0) return p;
    if (compare(p, e.oldEnd) < 0) return e.start;
    if (p.line === e.oldEnd.line) return { line: e.newEnd.line, character: e.newEnd.character + (p.character - e.oldEnd.character) };
    return { line: p.line + (e.newEnd.line - e.oldEnd.line), character: p.character };
}

export function moveRange(r: Range, e: TextEdit): Range {
    return { start: movePosition(r.start, e), end: movePosition(r.end, e) };
}

/** Whether an edit touches a range (the edit starts inside it or spans it). */
export function touches(r: Range, e: TextEdit): boolean {
    return compare(e.start, r.end) <= 0 && compare(e.oldEnd, r.start) >= 0;
}

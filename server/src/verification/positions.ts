// Keeping a check's diagnostics on the right lines while the user edits
// elsewhere: an edit is the one region where the old and the new text differ;
// positions after it move with it, positions inside it go to its start. A
// range keeps its own extent: an edit inside it never stretches it over the
// inserted text (text inserted at its start pushes it along).
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

/** Where a position after (or at) the end of an edit is in the new text. */
function shift(p: Position, e: TextEdit): Position {
    if (p.line === e.oldEnd.line) return { line: e.newEnd.line, character: e.newEnd.character + (p.character - e.oldEnd.character) };
    return { line: p.line + (e.newEnd.line - e.oldEnd.line), character: p.character };
}

/**
 * Where a range of the old text is in the new one, with its own extent: an
 * edit before it (or ending at its start: text inserted there) moves it
 * whole, an edit after it leaves it, and an edit inside it keeps its start
 * and its length (same number of lines; on one line, same number of
 * characters) rather than stretching it over the new text.
 */
export function moveRange(r: Range, e: TextEdit): Range {
    if (compare(e.oldEnd, r.start) <= 0 && compare(e.start, r.start) <= 0) {
        // (an empty range at an insertion point stays before the inserted text unless the edit starts before it)
        if (compare(e.start, e.oldEnd) === 0 && compare(r.start, r.end) === 0 && compare(e.start, r.start) === 0) return r;
        return { start: shift(r.start, e), end: shift(r.end, e) };
    }
    if (compare(e.start, r.end) >= 0) return r;
    const start = movePosition(r.start, e);
    const lines = r.end.line - r.start.line;
    const end = lines === 0
        ? { line: start.line, character: start.character + (r.end.character - r.start.character) }
        : { line: start.line + lines, character: r.end.character };
    return { start, end };
}

/** A region of code (a thread's or method's extent): it grows and shrinks with the edits inside it. */
export function moveExtent(r: Range, e: TextEdit): Range {
    return { start: movePosition(r.start, e), end: movePosition(r.end, e) };
}

/** Whether an edit touches a range (the edit starts inside it or spans it). */
export function touches(r: Range, e: TextEdit): boolean {
    return compare(e.start, r.end) <= 0 && compare(e.oldEnd, r.start) >= 0;
}

/** Whether an edit removed or replaced all the text of a range (a diagnostic there is about code that is gone). */
export function removes(r: Range, e: TextEdit): boolean {
    return compare(e.start, e.oldEnd) < 0 && compare(e.start, r.start) <= 0 && compare(e.oldEnd, r.end) >= 0;
}

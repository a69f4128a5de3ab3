import type { InferredAnnotation } from './infer.js';

/** A text edit: replace [start, end) (0-based line/character) with `text`. */
export interface TextInsert {
    line: number;
    character: number;
    text: string;
}

/**
 * Where and how to write an inferred annotation into its file: on its own
 * line directly above the declaration it belongs to, with the declaration's
 * indentation; when something else stands before the declaration on its line
 * (`class C { int x; }`), the declaration moves to a new line after it.
 */
export function annotationInsert(lines: string[], a: InferredAnnotation): TextInsert {
    const line = a.before.startLine;
    const col = a.before.startChar;
    const src = lines[line] ?? '';
    const before = src.slice(0, col);
    const clause = `//@ ${a.kind} ${a.text};`;
    if (before.trim() === '') return { line, character: col, text: `${clause}\n${before}` };
    // a ghost field declared in an annotation (`//@ ghost int owner = 0;`): above that comment
    const ghost = /^(\s*)(?:\/\/@|\/\*@)\s*(?:ghost\s+)?$/.exec(before);
    if (ghost) return { line, character: ghost[1].length, text: `${clause}\n${ghost[1]}` };
    const indent = (/^\s*/.exec(src)?.[0] ?? '') + '  ';
    return { line, character: col, text: `\n${indent}${clause}\n${indent}` };
}

/** A file's text with the inferred annotations of that file inserted. */
export function withAnnotations(text: string, annotations: InferredAnnotation[]): string {
    const lines = text.split('\n');
    const inserts = annotations.map(a => annotationInsert(lines, a))
        .sort((x, y) => y.line - x.line || y.character - x.character);
    for (const ins of inserts) {
        const l = lines[ins.line] ?? '';
        const merged = l.slice(0, ins.character) + ins.text + l.slice(ins.character);
        lines.splice(ins.line, 1, ...merged.split('\n'));
    }
    return lines.join('\n');
}

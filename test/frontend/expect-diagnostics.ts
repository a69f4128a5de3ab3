// Helpers for the front-end validation tests: exact comparison of the
// diagnostics of a program with an expected list, and ranges computed from
// the program text so that every expected position is visible in the test.
import assert from 'node:assert/strict';
import { diagnosticsOf, frontEnd, type Diag } from '../util/frontend.js';

/** A 1-based range, end exclusive (as LSP, and as test/util/frontend.ts reports them). */
export interface Range {
    line: number;
    column: number;
    endLine: number;
    endColumn: number;
}

/** An expected diagnostic. The end of the range is compared only when given. */
export interface Expected {
    line: number;
    column: number;
    endLine?: number;
    endColumn?: number;
    /** The diagnostic code (a pattern only where the right code is open, e.g. in a defect report). */
    code: string | RegExp;
    /** A substring of the message, or a pattern it must match. */
    message: RegExp | string;
    /** Defaults to 1 (error): every front-end rule reports errors. */
    severity?: number;
}

function positionOf(text: string, offset: number): { line: number; column: number } {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - (before.lastIndexOf('\n') + 1) + 1;
    return { line, column };
}

function occurrences(haystack: string, needle: string): number[] {
    const result: number[] = [];
    for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) result.push(i);
    return result;
}

/**
 * The range of `needle` in `text`. The needle must occur exactly once, unless
 * `nth` (1-based) picks an occurrence; with `in`, the needle is searched only
 * inside the (unique) text `in`, e.g. `at(src, 'x', { in: 'int y = x;' })`.
 */
export function at(text: string, needle: string, opts: { in?: string; nth?: number } = {}): Range {
    let base = 0;
    let scope = text;
    if (opts.in !== undefined) {
        const ctx = occurrences(text, opts.in);
        if (ctx.length !== 1) throw new Error(`test bug: context ${JSON.stringify(opts.in)} occurs ${ctx.length} times in the program`);
        base = ctx[0];
        scope = opts.in;
    }
    const found = occurrences(scope, needle);
    if (opts.nth === undefined && found.length !== 1) {
        throw new Error(`test bug: ${JSON.stringify(needle)} occurs ${found.length} times${opts.in ? ` in ${JSON.stringify(opts.in)}` : ''}; give 'in' or 'nth'`);
    }
    const offset = found[(opts.nth ?? 1) - 1];
    if (offset === undefined) throw new Error(`test bug: occurrence ${opts.nth} of ${JSON.stringify(needle)} not found`);
    const start = positionOf(text, base + offset);
    const end = positionOf(text, base + offset + needle.length);
    return { line: start.line, column: start.column, endLine: end.line, endColumn: end.column };
}

/** An expected error at the range of `needle` (see `at`). */
export function err(text: string, needle: string, code: string, message: RegExp | string, opts: { in?: string; nth?: number } = {}): Expected {
    return { ...at(text, needle, opts), code, message };
}

function matches(d: Diag, e: Expected): boolean {
    return d.line === e.line && d.column === e.column
        && (e.endLine === undefined || d.endLine === e.endLine)
        && (e.endColumn === undefined || d.endColumn === e.endColumn)
        && (typeof e.code === 'string' ? d.code === e.code : e.code.test(d.code))
        && d.severity === (e.severity ?? 1)
        && (typeof e.message === 'string' ? d.message.includes(e.message) : e.message.test(d.message));
}

function showDiag(d: Diag): string {
    return `${d.line}:${d.column}-${d.endLine}:${d.endColumn} [${d.code}] (severity ${d.severity}) ${d.message}`;
}

function showExpected(e: Expected): string {
    const end = e.endLine !== undefined ? `-${e.endLine}:${e.endColumn ?? '?'}` : '';
    return `${e.line}:${e.column}${end} [${e.code}] ${e.message}`;
}

function numbered(text: string): string {
    return text.split('\n').map((l, i) => `${String(i + 1).padStart(3)}| ${l}`).join('\n');
}

/** Compare both ways: every expected diagnostic is reported, and nothing else is. */
export function compareDiagnostics(actual: Diag[], expected: Expected[], text: string, what = 'the program'): void {
    const remaining = [...actual];
    const missing: Expected[] = [];
    for (const e of expected) {
        const i = remaining.findIndex(d => matches(d, e));
        if (i < 0) missing.push(e);
        else remaining.splice(i, 1);
    }
    if (missing.length === 0 && remaining.length === 0) return;
    assert.fail([
        `Diagnostics of ${what} differ from the expected ones.`,
        numbered(text),
        'missing (expected, not reported):',
        ...(missing.length ? missing.map(e => '  ' + showExpected(e)) : ['  (none)']),
        'unexpected (reported, not expected):',
        ...(remaining.length ? remaining.map(d => '  ' + showDiag(d)) : ['  (none)']),
        'all reported:',
        ...(actual.length ? actual.map(d => '  ' + showDiag(d)) : ['  (none)']),
    ].join('\n'));
}

/** The diagnostics of a one-file program are exactly `expected`. */
export async function expectDiagnostics(text: string, expected: Expected[]): Promise<void> {
    compareDiagnostics(await diagnosticsOf(text), expected, text);
}

/** A program that must produce no diagnostic at all. */
export async function expectClean(text: string): Promise<void> {
    await expectDiagnostics(text, []);
}

/** Several files as one workspace: the diagnostics of each file are exactly the expected ones. */
export async function expectWorkspaceDiagnostics(files: Record<string, string>, expected: Record<string, Expected[]>): Promise<void> {
    const result = await frontEnd(files);
    for (const name of Object.keys(files)) {
        compareDiagnostics(result[name], expected[name] ?? [], files[name], name);
    }
}

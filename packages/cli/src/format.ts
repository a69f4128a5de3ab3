import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { escapeControl, witnessCodeFlows } from '@calvin/verifier';
import type { CheckReport, CliDiagnostic } from './diagnostic.js';

export type Format = 'text' | 'json' | 'sarif';

/** `file:line:col: severity [code] message`, like compilers. */
export function formatText(report: CheckReport): string {
    const lines: string[] = [];
    for (const d of report.diagnostics) {
        lines.push(`${printable(d.file)}:${d.line}:${d.column}: ${d.severity} [${d.code}] ${oneLine(d.message)}`);
        for (const r of d.related ?? []) lines.push(`  ${printable(r.file)}:${r.line}:${r.column}: note: ${oneLine(r.message)}`);
        if (d.witness) lines.push(...witnessLines(d.witness));
    }
    for (const c of report.checks ?? []) {
        lines.push(printable(`check ${c.kind} ${c.name} (${c.file}): ${c.status} in ${c.timeMs} ms, ${c.queries} quer${c.queries === 1 ? 'y' : 'ies'}${c.envStar ? `; ${c.envStar}` : ''}`));
    }
    const errors = report.diagnostics.filter(d => d.severity === 'error').length;
    const warnings = report.diagnostics.filter(d => d.severity === 'warning').length;
    lines.push(`${report.files} file${report.files === 1 ? '' : 's'}, ${report.procedures} procedure${report.procedures === 1 ? '' : 's'}: ` +
        `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'} (${report.timeMs} ms)`);
    return lines.join('\n') + '\n';
}

/** The interleaving under its diagnostic: numbered steps, thread, file:line, the operation and its values (issue 14). */
function witnessLines(w: NonNullable<CliDiagnostic['witness']>): string[] {
    if (w.status !== 'confirmed') return [`  witness: ${oneLine(w.reason ?? 'not confirmed')}`];
    const rows = w.steps.map((s, i) => ({ n: `${i + 1}.`, thread: s.thread, at: `${path.basename(s.file)}:${s.line}`, action: oneLine(s.action), values: s.values ? `(${oneLine(s.values)})` : '', failing: s.failing }));
    const width = (f: (r: typeof rows[number]) => string) => Math.max(0, ...rows.map(r => f(r).length));
    const [wn, wt, wa, wc] = [width(r => r.n), width(r => r.thread), width(r => r.at), width(r => r.action)];
    return [
        `  witness: ${oneLine(w.summary ?? 'confirmed')}`,
        ...rows.map(r => printable(`    ${r.n.padStart(wn)} ${r.thread.padEnd(wt)}  ${r.at.padEnd(wa)}  ${r.action.padEnd(wc)}  ${r.values}${r.failing ? '  <-' : ''}`.trimEnd())),
    ];
}

/** One diagnostic, one line: line breaks in a message become spaces (other controls are escaped). */
function oneLine(message: string): string {
    return printable(message.replace(/\s*[\r\n]+\s*/g, ' '));
}

/**
 * Text for a terminal: file names and messages hold what the user's files and
 * paths hold, whose control and bidi characters (ESC, BEL, U+202E) are shown
 * escaped, never sent raw.
 */
export function printable(text: string): string {
    return escapeControl(text);
}

/** A warning or error line on stderr, `calvin: ...`, with user text escaped. */
export function warn(message: string): void {
    process.stderr.write(`calvin: ${printable(message)}\n`);
}

/**
 * A file name as a SARIF artifact URI (a URI reference): a relative path
 * with each segment percent-encoded (`a b#1.calvin` → `a%20b%231.calvin`),
 * an absolute path as a file: URI.
 */
export function artifactUri(file: string): string {
    if (path.isAbsolute(file)) return pathToFileURL(file).href;
    return file.split(path.sep === '\\' ? /[\\/]/ : '/').map(segment => encodeURIComponent(segment)).join('/');
}

export function formatJson(report: CheckReport): string {
    return JSON.stringify(report, null, 2) + '\n';
}

/** Rule descriptions for SARIF (checking.md, "Diagnostics"). */
const RULES: Record<string, string> = {
    syntax: 'The file does not parse.',
    name: 'Unresolved or duplicate name.',
    type: 'Ill-typed expression or statement, misplaced annotation, or a rule of the language broken.',
    race: 'A read or write that can race with another thread.',
    assert: 'An assertion may fail.',
    null: 'Possible null dereference.',
    bounds: 'Possible array index out of bounds.',
    'div-zero': 'Possible division or remainder by zero.',
    invariant: 'An atomic step may break an invariant.',
    env: "An atomic step may violate another thread's environment assumption.",
    abstraction: 'A procedure is not simulated by its abstraction.',
    'loop-invariant': 'A loop invariant may fail on entry or not be preserved.',
    unknown: 'The solver could not decide a check.',
    unchecked: 'Code that no thread reaches and that has no abstraction.',
};

/** SARIF 2.1.0, one run, one result per diagnostic. */
export function formatSarif(report: CheckReport, version: string): string {
    const used = [...new Set(report.diagnostics.map(d => d.code))].sort();
    const sarif = {
        $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
        version: '2.1.0',
        runs: [{
            tool: {
                driver: {
                    name: 'calvin',
                    version,
                    informationUri: 'https://example.invalid/calvin',
                    rules: used.map(id => ({ id, shortDescription: { text: RULES[id] ?? id } })),
                },
            },
            results: report.diagnostics.map(d => ({
                ruleId: d.code,
                ruleIndex: used.indexOf(d.code),
                level: d.severity === 'info' ? 'note' : d.severity,
                message: { text: d.message },
                locations: [{
                    physicalLocation: {
                        artifactLocation: { uri: artifactUri(d.file) },
                        region: { startLine: d.line, startColumn: d.column, endLine: d.endLine, endColumn: d.endColumn },
                    },
                }],
                ...(d.witness && d.witness.status === 'confirmed' ? { codeFlows: codeFlowsOf(d.witness) } : {}),
                ...(d.related ? {
                    relatedLocations: d.related.map((r, id) => ({
                        id,
                        message: { text: r.message },
                        physicalLocation: { artifactLocation: { uri: artifactUri(r.file) }, region: { startLine: r.line, startColumn: r.column } },
                    })),
                } : {}),
            })),
        }],
    };
    return JSON.stringify(sarif, null, 2) + '\n';
}

/** SARIF 2.1.0 `codeFlows` of a confirmed witness (§3.36-3.38), with the log's artifact URIs. */
function codeFlowsOf(w: NonNullable<CliDiagnostic['witness']>): unknown[] {
    return witnessCodeFlows({ status: 'confirmed', steps: w.steps, bounds: w.bounds, summary: w.summary ?? 'a concrete interleaving that reaches the failure', timeMs: 0 }, artifactUri);
}

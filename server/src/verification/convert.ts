// LSP conversion of the verifier's results: ranges, diagnostics (with their
// counterexamples as data), and diagnostics moved with an edit.
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import { diagnosticText, type CheckPlan, type CheckResult, type VDiagnostic, type WitnessResult } from '@calvin/verifier';
import { moveRange, type TextEdit } from './positions.js';

/** A verification diagnostic as shown in a document. */
export interface Shown {
    uri: string;
    diagnostic: Diagnostic;
}

type ModelRange = { startLine: number; startChar: number; endLine: number; endChar: number };
type LspRange = { start: { line: number; character: number }; end: { line: number; character: number } };

const SEVERITY = { error: DiagnosticSeverity.Error, warning: DiagnosticSeverity.Warning, info: DiagnosticSeverity.Information } as const;

export function lspRange(r: ModelRange): LspRange {
    return { start: { line: r.startLine, character: r.startChar }, end: { line: r.endLine, character: r.endChar } };
}

export function fromLsp(file: string, r: LspRange): ModelRange & { file: string } {
    return { file, startLine: r.start.line, startChar: r.start.character, endLine: r.end.line, endChar: r.end.character };
}

export function within(r: ModelRange, p: { line: number; character: number }): boolean {
    const after = p.line > r.startLine || (p.line === r.startLine && p.character >= r.startChar);
    const before = p.line < r.endLine || (p.line === r.endLine && p.character <= r.endChar);
    return after && before;
}

export function lspContains(r: LspRange, p: { line: number; character: number }): boolean {
    return within(fromLsp('', r), p);
}

/** Whether an edit position is inside the thread or method a check is about. */
export function planContains(plan: CheckPlan, p: { line: number; character: number }): boolean {
    return plan.extent !== undefined && within(plan.extent, p);
}

/** What a verification diagnostic's `data` carries besides `check`: the finding without its counterexample, and the counterexample. */
interface CounterexampleData {
    message: string;
    counterexample: NonNullable<VDiagnostic['counterexample']>;
}

/** A verifier diagnostic for LSP: the text a user reads, and the counterexample as data (hover, code actions). */
export function toLsp(d: VDiagnostic): Diagnostic {
    const data: CounterexampleData | undefined = d.counterexample ? { message: d.message, counterexample: d.counterexample } : undefined;
    return {
        range: lspRange(d.range), severity: SEVERITY[d.severity], source: 'calvin', code: d.code, message: diagnosticText(d),
        ...(data ? { data } : {}),
        relatedInformation: d.related.length > 0 ? d.related.map(r => ({ location: { uri: r.range.file, range: lspRange(r.range) }, message: r.message })) : undefined,
    };
}

/** The key of a verifier diagnostic within its check (its witness is kept under it). */
export function findingKey(d: VDiagnostic): string {
    const r = d.range;
    return `${r.file}:${r.startLine}:${r.startChar}:${r.endLine}:${r.endChar}:${d.code}`;
}

/** Related locations shown for a witness: its steps (at most this many, the failing ones kept). */
const MAX_WITNESS_STEPS = 40;

/**
 * A check's diagnostics as shown; `data.check` names the check (code actions
 * re-run it); with its witness (issue 14), `data.witness` and the steps as
 * related information (any LSP editor lists them), or why none was found.
 */
export function shownOf(result: CheckResult, witnesses?: Map<string, WitnessResult | 'pending'>): Shown[] {
    // (a refuted inferred annotation is not the program's failure: the inference weakens it and plans again)
    return result.diagnostics.filter(d => !d.inferred).map(d => {
        const lsp = toLsp(d);
        const w = witnesses?.get(findingKey(d));
        const data = { ...(lsp.data as object | undefined), check: result.key, ...(w && w !== 'pending' ? { witness: w } : {}), ...(w === 'pending' ? { witnessPending: true } : {}) };
        const related = [...(lsp.relatedInformation ?? [])];
        if (w && w !== 'pending') {
            if (w.status === 'confirmed') {
                const steps = w.steps.length > MAX_WITNESS_STEPS ? w.steps.filter((s, i) => s.failing || i >= w.steps.length - MAX_WITNESS_STEPS) : w.steps;
                steps.forEach(s => related.push({
                    location: { uri: s.file, range: { start: { line: s.line - 1, character: s.column - 1 }, end: { line: s.line - 1, character: s.column - 1 } } },
                    message: `witness ${w.steps.indexOf(s) + 1}. ${s.thread}: ${s.action}${s.values ? ` (${s.values})` : ''}${s.failing ? ' <- here' : ''}`,
                }));
            } else {
                related.push({ location: { uri: d.range.file, range: lspRange(d.range) }, message: `witness: ${w.reason}` });
            }
        }
        const message = w && w !== 'pending' && w.status === 'confirmed' ? diagnosticText(d, true) : lsp.message;
        return { uri: d.range.file, diagnostic: { ...lsp, message, relatedInformation: related.length > 0 ? related : undefined, data } };
    });
}

/** A diagnostic (shown in `at`) after an edit of the document `edited`: its range and its related locations there move. */
export function moveDiagnostic(d: Diagnostic, at: string, edited: string, e: TextEdit): Diagnostic {
    const related = d.relatedInformation?.map(r => r.location.uri === edited ? { ...r, location: { ...r.location, range: moveRange(r.location.range, e) } } : r);
    return { ...d, range: at === edited ? moveRange(d.range, e) : d.range, relatedInformation: related };
}

/** The counterexample of a verification diagnostic (from its data): the finding and its hint, then one value per line. */
export function counterexampleText(d: Diagnostic): string {
    const data = d.data as Partial<CounterexampleData> | undefined;
    const c = data?.counterexample;
    // without data (not a failure of the verifier) the message is all there is
    const head = c && typeof data?.message === 'string' ? `${data.message}${c.hint ?? ''}` : String(d.message);
    if (!c || c.values.length + c.notes.length === 0) return `${head}\n(no counterexample values)`;
    return [head, ...c.values.map(v => `  ${v.name} = ${v.value}`), ...c.notes.map(n => `  ${n}`)].join('\n');
}

// "Show interleaving" (issue 14): a diagnostic's witness as a Markdown
// document — the steps as a table, each with a link to its line — and the
// steps' values for an editor to show inline (VS Code decorates the lines).
import type { WitnessResult } from '@calvin/verifier';

function cell(text: string): string {
    return text.replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');
}

function baseName(uri: string): string {
    return decodeURIComponent(uri.split('/').pop() ?? uri);
}

export function witnessDocument(w: WitnessResult, message: string, uri: string): { markdown: string; steps: Array<{ uri: string; line: number; text: string }> } {
    const out: string[] = [`# Interleaving: ${cell(message)}`, ''];
    if (w.status !== 'confirmed') {
        out.push(`No interleaving was found: ${cell(w.reason)}.`);
        return { markdown: out.join('\n'), steps: [] };
    }
    out.push(`${cell(w.summary)} — a real execution of the program (every thread, real method bodies, real initial values), replayed before it was shown.`, '');
    out.push(`Bounds: ${w.bounds.loops} loop iterations, ${w.bounds.switches} context switches, ${w.bounds.copies} copies of each replicated thread.`, '');
    out.push('| # | thread | where | step | values |', '|---|---|---|---|---|');
    w.steps.forEach((s, i) => {
        const link = `[${cell(baseName(s.file))}:${s.line}](${s.file}#L${s.line})`;
        out.push(`| ${i + 1}${s.failing ? ' ⟵' : ''} | ${cell(s.thread)} | ${link} | \`${cell(s.action)}\` | ${cell(s.values)} |`);
    });
    void uri;
    return {
        markdown: out.join('\n'),
        steps: w.steps.map((s, i) => ({ uri: s.file, line: s.line - 1, text: `${i + 1}. ${s.thread}${s.values ? `: ${s.values}` : ''}` })),
    };
}

// Hover contents from the verifier (issue 4): what a thread or procedure
// assumes (E(p)), must keep (I(p)) and guarantees; the abstraction inlined at
// a call; a field's protection and, at an access, whether the last check found
// it stable; a loop's inferred invariants; a failure's counterexample.
// Markdown, with Calvin code in fenced blocks.
import type { Diagnostic } from 'vscode-languageserver';
import type { Range, SpecDescription, SpecItem, CheckResult } from '@calvin/verifier';
import { lensTitle } from './lsp-features.js';
import type { TrackedCheck } from './service.js';

export function fence(lines: string[]): string {
    return '```calvin\n' + lines.join('\n') + '\n```';
}

/** "line 5" in the same file, "lock.calvin:5" in another. */
function where(r: Range | undefined, uri: string): string {
    if (!r) return '';
    const file = r.file === uri ? '' : `${r.file.split('/').pop()}:`;
    return file ? ` (${file}${r.startLine + 1})` : ` (line ${r.startLine + 1})`;
}

/** Conjuncts as Calvin lines, each after a comment saying where it comes from. */
function itemLines(items: SpecItem[], uri: string): string[] {
    const out: string[] = [];
    for (const i of items) {
        const every = i.forEvery ? `; for every ${i.forEvery} object (this)` : '';
        if (i.prose) { out.push(`// ${i.origin}: ${i.text}`); continue; }
        out.push(`// ${i.origin}${where(i.range, uri)}${every}`);
        out.push(`${i.text.replace(/\s*\n\s*/g, ' ')};`);
    }
    return out;
}

export function specMarkdown(d: SpecDescription, uri: string): string[] {
    const out: string[] = [];
    const who = d.kind === 'thread' ? `thread ${d.name}` : d.name;
    out.push(`**E(${d.name})**, the environment assumption: every step of another thread satisfies${d.environment.length === 0 ? ' nothing in particular (no clause or protection applies)' : ':'}`);
    if (d.environment.length > 0) out.push(fence(itemLines(d.environment, uri)));
    if (d.invariant.length > 0) out.push(`**I(${d.name})**, the invariant every step of ${who} must preserve:`, fence(itemLines(d.invariant, uri)));
    if (d.guarantee.length > 0) out.push(`**Guarantee** to the other threads: each step of ${who} satisfies`, fence(itemLines(d.guarantee, uri)));
    const ids = `checked for \`${d.threads}\``;
    if (d.kind === 'thread') out.push(`*Thread ${ids}.*`);
    else if (d.callers.length > 0) out.push(`*Called by ${d.callers.join(', ')}; ${ids}.*`);
    return out;
}

/** The state of the checks covering a declaration. */
export function checkLines(checks: TrackedCheck[], verifyOn: string): string[] {
    return checks.map(c => `Check ${c.plan.name}: ${lensTitle(c, verifyOn)}`);
}

/** The inferred invariants of the loop at `loop` (its statement's range), per check whose body contains it. */
export function loopMarkdown(loop: Range, checks: TrackedCheck[]): string[] {
    const out: string[] = [];
    const at = (r: Range) => r.file === loop.file && r.startLine === loop.startLine && r.startChar === loop.startChar;
    for (const c of checks) {
        if (!c.plan.ranges.some(at)) continue;
        const r = c.result;
        if (!r || !c.current) { out.push(`**Loop invariants** in check ${c.plan.name}: not inferred yet (the check has not run on this text).`); continue; }
        const texts = r.loopInvariants.find(l => at(l.range))?.texts ?? [];
        out.push(texts.length === 0
            ? `**Loop invariants** inferred in check ${c.plan.name}: none (beyond the \`loop_invariant\` annotations).`
            : `**Loop invariants** inferred in check ${c.plan.name}:\n\n${fence(texts.map(t => `loop_invariant ${t};`))}`);
    }
    return out;
}

/** At an access: whether the last run of each check that reaches it found it stable. */
export function accessMarkdown(uri: string, position: { line: number; character: number }, checks: TrackedCheck[]): string[] {
    const out: string[] = [];
    for (const c of checks) {
        const r: CheckResult | undefined = c.result;
        if (!r || !c.current) continue;
        const hits = r.accesses.filter(a => a.range.file === uri && inside(a.range, position));
        if (hits.length === 0) continue;
        const smallest = Math.min(...hits.map(a => size(a.range)));
        for (const a of hits.filter(x => size(x.range) === smallest)) {
            const kind = a.write ? 'write' : 'read';
            const verdict = a.sync ? 'a synchronization access (volatile): exempt from the stability check'
                : a.stable ? 'stable here: no other thread may change it at this point' : 'not stable here: another thread may change it (race)';
            out.push(`*${kind} of \`${a.text}\`* in check ${c.plan.name}: ${verdict}.`);
        }
    }
    return out;
}

/** A verification diagnostic's counterexample as a table. */
export function counterexampleMarkdown(d: Diagnostic): string | undefined {
    const cex = (d.data as { counterexample?: { values: Array<{ name: string; value: string }>; notes: string[] } } | undefined)?.counterexample;
    if (!cex) return undefined;
    const out = [`**Counterexample** (${String(d.code)}):`];
    if (cex.values.length > 0) {
        out.push(['| variable | value |', '|---|---|', ...cex.values.map(v => `| \`${v.name}\` | \`${v.value}\` |`)].join('\n'));
    }
    for (const n of cex.notes) out.push(`- ${n}`);
    return out.join('\n\n');
}

function inside(r: Range, p: { line: number; character: number }): boolean {
    const after = p.line > r.startLine || (p.line === r.startLine && p.character >= r.startChar);
    const before = p.line < r.endLine || (p.line === r.endLine && p.character <= r.endChar);
    return after && before;
}

function size(r: Range): number {
    return (r.endLine - r.startLine) * 10_000 + (r.endChar - r.startChar);
}

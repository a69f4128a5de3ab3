// "Show the environment step" (issue 12): a failure's counterexample as a
// Markdown document — the values the failing check reads (before and after
// the step, when it has both), the other threads' step that changed what it
// read (which threads may take it, and the conjuncts of E that allowed it),
// and what E lets other threads do to each location the check reads.
import type { Diagnostic } from 'vscode-languageserver';
import { describeField, describeMethod, describeThread, placeLines, type ProgramContext, type SpecDescription, type SpecItem } from '@calvin/verifier';
import { where } from './hover-markdown.js';

interface Counterexample {
    values: Array<{ name: string; value: string }>;
    notes: string[];
    hint?: string;
}

/** The check a diagnostic came from, described (E(p), I(p)), when it is a thread's or a method's. */
function describeCheck(ctx: ProgramContext | undefined, key: string | undefined): SpecDescription | undefined {
    if (!ctx || !key) return undefined;
    if (key.startsWith('thread:')) {
        const t = ctx.program.threads.find(x => x.name === key.slice('thread:'.length));
        return t ? describeThread(ctx, t) : undefined;
    }
    if (key.startsWith('abstraction:')) {
        const m = ctx.vocab.allMethods().find(x => x.id === key.slice('abstraction:'.length));
        return m ? describeMethod(ctx, m) : undefined;
    }
    return undefined;
}

/** `m before` and `m` → the location `m`; `elementData[]` → `elementData`. */
function locationName(name: string): string {
    return name.replace(/ before$/, '').replace(/\[\]$/, '');
}

/** The field id a name of the counterexample denotes (`m` → `Mutex.m`, `c.held` → `Lock.held`), if one matches. */
function fieldIdOf(ctx: ProgramContext | undefined, name: string): string | undefined {
    if (!ctx) return undefined;
    const last = locationName(name).split('.').pop()!;
    const ids = [...ctx.vocab.fields.keys()];
    return ids.find(id => id === locationName(name)) ?? ids.find(id => id.split('.').pop() === last);
}

function cell(text: string): string {
    return '`' + text.replace(/`/g, "'").replace(/\|/g, '\\|') + '`';
}

function oneLine(text: string): string {
    return text.replace(/\s*\n\s*/g, ' ');
}

/** A conjunct and its origin; where it is written: "(line 5)" in `uri`, "(lock.calvin:5)" in another file. */
function conjunctLine(i: SpecItem, uri: string): string {
    return `- \`${oneLine(i.text)}\` — ${placeLines(i.origin, uri)}${where(i.range, uri)}`;
}

/** The Markdown document of a diagnostic's environment step (a diagnostic of the document `uri`). */
export function environmentStepMarkdown(d: Diagnostic, ctx: ProgramContext | undefined, uri: string): string {
    const data = d.data as { counterexample?: Counterexample; check?: string } | undefined;
    const c = data?.counterexample;
    const head = String(d.message).replace(/\s*\[[^\]]*\][^\]]*$/, '');
    const spec = describeCheck(ctx, data?.check);
    const out: string[] = [`### ${head}`, `*${String(d.code)} at line ${d.range.start.line + 1}${spec ? `, in the check of ${spec.kind === 'thread' ? `thread ${spec.name}` : spec.name} (\`${spec.threads}\`)` : ''}*`];
    if (!c || c.values.length + c.notes.length === 0) {
        out.push('No counterexample values: the solver gave none for this failure.');
        return out.join('\n\n');
    }
    // the values, one row per location: before and after the step when the check shows both
    const rows = new Map<string, { before?: string; now?: string }>();
    for (const v of c.values) {
        const loc = v.name.endsWith(' before') ? v.name.slice(0, -' before'.length) : v.name;
        const row = rows.get(loc) ?? {};
        if (v.name.endsWith(' before')) row.before = v.value; else row.now = v.value;
        rows.set(loc, row);
    }
    const withBefore = [...rows.values()].some(r => r.before !== undefined);
    out.push('**Values the failing check reads**' + (withBefore ? ' (before and after the step):' : ':'));
    out.push((withBefore ? ['| location | before | after |', '|---|---|---|'] : ['| location | value |', '|---|---|'])
        .concat([...rows].map(([name, r]) => withBefore
            ? `| ${cell(name)} | ${r.before !== undefined ? cell(r.before) : ''} | ${r.now !== undefined ? cell(r.now) : ''} |`
            : `| ${cell(name)} | ${cell(r.now ?? '')} |`)).join('\n'));
    // the other threads' step
    const changed = c.notes.map(n => /^another thread changed (.+?) from (.+?) to (.+?) just before it was read/.exec(n)).filter((m): m is RegExpExecArray => m !== null);
    const others = c.notes.filter(n => !/^another thread changed /.test(n));
    if (changed.length > 0) {
        out.push(`**The environment step**: another thread's step${spec ? `, allowed by E(${spec.name}),` : ''} changed what the check read:`);
        for (const [, name, from, to] of changed) {
            const id = fieldIdOf(ctx, name);
            const writers = ctx && id ? describeField(ctx, id).writers : [];
            const who = writers.length > 0 ? `written by ${writers.join(', ')}` : 'its writers are not known here';
            const allowed = spec ? spec.environment.filter(i => i.location === id && !i.prose) : [];
            out.push([`- \`${name}\` from \`${from}\` to \`${to}\` (${who})`,
                ...(allowed.length > 0
                    ? [`  - the conjuncts of E(${spec!.name}) on \`${name}\` let that step happen:`, ...allowed.map(i => '  ' + conjunctLine(i, uri))]
                    : [`  - E${spec ? `(${spec.name})` : ''} has no conjunct on \`${name}\`: any other thread may change it at any time`]),
            ].join('\n'));
        }
    }
    for (const n of others) out.push(`- ${n}`);
    // what E says about each location the check reads
    if (spec) {
        const seen = new Set<string>();
        const lines: string[] = [];
        for (const name of rows.keys()) {
            const id = fieldIdOf(ctx, name);
            if (!id || seen.has(id)) continue;
            seen.add(id);
            const items = spec.environment.filter(i => i.location === id && !i.prose);
            lines.push(items.length > 0 ? [`- \`${name}\`:`, ...items.map(i => '  ' + conjunctLine(i, uri))].join('\n')
                : `- \`${name}\`: nothing — another thread may change it at any time`);
        }
        if (lines.length > 0) out.push(`**What E(${spec.name}) lets the other threads do** to these locations:`, lines.join('\n'));
    }
    if (c.hint) out.push(c.hint.replace(/^\.\s*/, ''));
    return out.join('\n\n');
}

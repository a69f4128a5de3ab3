// Hover contents from the verifier (issue 4): what a thread or procedure
// assumes (E(p)), must keep (I(p)) and guarantees; the abstraction inlined at
// a call; a field's protection and, at an access, whether the last check found
// it stable; a loop's inferred invariants; a failure's counterexample.
// Markdown, with Calvin code in fenced blocks.
import type { Diagnostic } from 'vscode-languageserver';
import type { Range, SpecDescription, SpecItem, CheckResult } from '@calvin/verifier';
import { placeLines } from '@calvin/verifier';
import { lensTitle } from './lsp-features.js';
import type { TrackedCheck } from './service.js';

export function fence(lines: string[]): string {
    return '```calvin\n' + lines.join('\n') + '\n```';
}

/** "line 5" in the same file, "lock.calvin:5" in another. */
export function where(r: Range | undefined, uri: string): string {
    if (!r) return '';
    const file = r.file === uri ? '' : `${r.file.split('/').pop()}:`;
    return file ? ` (${file}${r.startLine + 1})` : ` (line ${r.startLine + 1})`;
}

/** "environment of the program (line 24)", "writable_if of x (lock.calvin:3)". */
function originText(i: SpecItem, uri: string): string {
    const every = i.forEvery ? `, for every ${i.forEvery} object (this)` : '';
    return `${placeLines(i.origin, uri)}${where(i.range, uri)}${every}`;
}

/** One conjunct per line with its origin after it. */
function itemLines(items: SpecItem[], uri: string): string[] {
    return items.map(i => i.prose ? `// ${placeLines(i.origin, uri)}: ${i.text}` : `${oneLine(i.text)};  // ${originText(i, uri)}`);
}

/** Conjuncts grouped by the location they constrain (a `// x` line before each group), the origin after each. */
function groupedLines(items: SpecItem[], uri: string): string[] {
    const groups = new Map<string, SpecItem[]>();
    for (const i of items) {
        const k = i.prose ? '\u0001' : i.location ?? '\u0000';
        groups.set(k, [...(groups.get(k) ?? []), i]);
    }
    const out: string[] = [];
    for (const [k, list] of groups) {
        if (k === '\u0000') out.push('// several locations');
        else if (k === '\u0001') out.push('// built-in rules');
        else out.push(`// ${displayLocation(k)}`);
        out.push(...itemLines(list, uri));
    }
    return out;
}

/** `Vector.elementData[*]` as "the elements of Vector.elementData's arrays". */
function displayLocation(l: string): string {
    return l.endsWith('[*]') ? `the elements of ${l.slice(0, -3)}'s arrays` : l;
}

function oneLine(text: string): string {
    return text.replace(/\s*\n\s*/g, ' ');
}

export function specMarkdown(d: SpecDescription, uri: string): string[] {
    const out: string[] = [];
    const who = d.kind === 'thread' ? `thread ${d.name}` : d.name;
    const env = d.environment.filter(i => !i.prose);
    out.push(env.length === 0
        ? `**E(${d.name})**: nothing constrains another thread's steps (no clause or protection applies).`
        : `**E(${d.name})**, what another thread's step may do:\n${fence(groupedLines(env, uri))}`);
    if (d.absent.length > 0) out.push(d.absent.map(a => `- *${displayLocation(a.location)}: ${a.reason}* (E(${a.other}) has \`${oneLine(a.text)}\`)`).join('\n'));
    if (d.invariant.length > 0) {
        const shown = withoutImplied(d.invariant);
        const implied = d.invariant.length - shown.length;
        const more = implied > 0 ? [`// and ${implied} fact${implied === 1 ? '' : 's'} implied by these`] : [];
        out.push(`**I(${d.name})**, kept by every step of ${who}:\n${fence([...itemLines(shown, uri), ...more])}`);
    }
    // the guarantee: E's clauses for every other thread, I, and the guards of what it writes; said in words when it repeats them
    const restated = (g: SpecItem) => g.origin.startsWith('preserves the ')
        || (g.origin.endsWith(', for every other thread j') && env.some(e => e.text.replace(/\btid\b/g, 'j') === g.text));
    const extra = d.guarantee.filter(g => !restated(g));
    const keeps = d.invariant.length > 0 ? ` keeps I(${d.name}),` : '';
    const envClauses = d.guarantee.some(g => g.origin.endsWith(', for every other thread j') && restated(g));
    const head = `**Guarantee**: each step of ${who}${keeps}${envClauses ? ' satisfies the environment clauses above for every other thread j (tid := j),' : ''} writes a field only under its protection`;
    out.push(extra.length > 0 ? `${head}, and satisfies:\n${fence(itemLines(extra, uri))}` : `${head}.`);
    return out;
}

/** `n > 0` as the term `n` and the integers it may be, [1, ∞); under `A ==> ...`, with `A`'s text. */
interface Bound { term: string; lo?: number; hi?: number; when?: string }

const SIMPLE_TERM = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;
const FLIP: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==' };

/** A simple integer bound (`n > 0`, `0 <= c.count`, `x == 3`), possibly under one `==>`; else undefined. */
function boundOf(text: string): Bound | undefined {
    const t = oneLine(text).trim();
    const parts = t.split(' ==> ');
    if (parts.length > 2) return undefined;
    const fact = parts[parts.length - 1].trim();
    const m = /^(.+?)\s*(<=|>=|==|<|>)\s*(.+)$/.exec(fact);
    if (!m) return undefined;
    let [, left, op, right] = m;
    left = left.trim(); right = right.trim();
    if (/^-?\d+$/.test(left) && SIMPLE_TERM.test(right)) [left, op, right] = [right, FLIP[op], left];
    if (!SIMPLE_TERM.test(left) || !/^-?\d+$/.test(right) || !Number.isSafeInteger(Number(right))) return undefined;
    const k = Number(right);
    const b: Bound = { term: left, when: parts.length === 2 ? parts[0].trim() : undefined };
    if (op === '>' || op === '>=' || op === '==') b.lo = op === '>' ? k + 1 : k;
    if (op === '<' || op === '<=' || op === '==') b.hi = op === '<' ? k - 1 : k;
    return b;
}

/** Whether the fact `y` implies `x` syntactically: the same term, a narrower range, under no condition or the same one. */
function implies(y: Bound, x: Bound): boolean {
    if (y.term !== x.term || (y.when !== undefined && y.when !== x.when)) return false;
    return (x.lo === undefined || (y.lo !== undefined && y.lo >= x.lo)) && (x.hi === undefined || (y.hi !== undefined && y.hi <= x.hi));
}

/**
 * The facts of a listing without those another one implies: the same text
 * twice, or a simple integer bound implied by another on the same term
 * (`0 <= n` beside `0 < n`, `A ==> n >= 0` beside `n > 0`). Of two equivalent
 * ones the first stays; a written clause is never left out for an inferred one.
 */
export function withoutImplied(items: SpecItem[]): SpecItem[] {
    const inferred = (i: SpecItem) => i.origin.startsWith('inferred ');
    const facts = items.map(i => ({ item: i, text: oneLine(i.text).trim(), bound: i.prose ? undefined : boundOf(i.text) }));
    const impliedBy = (y: typeof facts[number], x: typeof facts[number]) => y.text === x.text || (y.bound !== undefined && x.bound !== undefined && implies(y.bound, x.bound));
    return facts.filter((x, i) => !facts.some((y, j) => j !== i && !y.item.prose && !x.item.prose && impliedBy(y, x)
        && (!impliedBy(x, y) || j < i) && (inferred(x.item) || !inferred(y.item)))).map(f => f.item);
}

/** The state of the checks covering a declaration. */
export function checkLines(checks: TrackedCheck[], verifyOn: string, threads?: string): string[] {
    return checks.map(c => `Check ${c.plan.name}${threads ? ` (for \`${threads}\`)` : ''}: ${lensTitle(c, verifyOn)}`);
}

/** The inferred invariants of the loop at `loop` (its statement's range), per check whose body contains it. */
export function loopMarkdown(loop: Range, checks: TrackedCheck[]): string[] {
    const out: string[] = [];
    const at = (r: Range) => r.file === loop.file && r.startLine === loop.startLine && r.startChar === loop.startChar;
    for (const c of checks) {
        if (!c.plan.ranges.some(at)) continue;
        const r = c.result;
        if (!r || !c.current) { out.push(`**Loop invariants** in check ${c.plan.name}: not inferred yet (the check has not run on this text).`); continue; }
        // (the witness `pc` of an abstraction check and other internal names mean nothing to the reader)
        const texts = (r.loopInvariants.find(l => at(l.range))?.texts ?? []).filter(t => !/\bpc\b|[!$]/.test(t));
        out.push(texts.length === 0
            ? `**Loop invariants** inferred in check ${c.plan.name}: none (beyond the \`loop_invariant\` annotations).`
            : `**Loop invariants** inferred in check ${c.plan.name}:\n\n${fence(texts.map(t => `loop_invariant ${t};`))}`);
    }
    return out;
}

/**
 * At an access: whether the last run of each check that reaches it found it
 * stable. `synchronized`: why an access the checks exempt from the stability
 * check is exempt (a volatile field, ghost state, `atomic`, `cas`), from the
 * source at the access.
 */
export function accessMarkdown(uri: string, position: { line: number; character: number }, checks: TrackedCheck[], synchronized = 'a synchronization access'): string[] {
    const out: string[] = [];
    for (const c of checks) {
        const r: CheckResult | undefined = c.result;
        if (!r || !c.current) continue;
        const hits = r.accesses.filter(a => a.range.file === uri && inside(a.range, position));
        if (hits.length === 0) continue;
        const smallest = Math.min(...hits.map(a => size(a.range)));
        for (const a of hits.filter(x => size(x.range) === smallest)) {
            const kind = a.write ? 'write' : 'read';
            // the diagnostic at the access says it: the hover says the same
            const race = r.diagnostics.find(d => d.code === 'race' && sameRange(d.range, a.range) && d.message.startsWith(`${kind} of `));
            const other = r.diagnostics.find(d => d.code === 'race' && sameRange(d.range, a.range));
            const verdict = a.sync ? `${synchronized}: exempt from the stability check`
                : race ? (/violates its writable_if/.test(race.message) ? race.message.replace(/^\w+ of \S+ /, '').replace(/\s*\[.*$/, '') : 'not stable here: another thread may change it (race)')
                    : a.stable || !other ? 'stable here: no other thread may change it at this point' : `see the ${other.message.split(' ')[0]} at this access`;
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

function sameRange(a: Range, b: Range): boolean {
    return a.file === b.file && a.startLine === b.startLine && a.startChar === b.startChar && a.endLine === b.endLine && a.endChar === b.endChar;
}

function size(r: Range): number {
    return (r.endLine - r.startLine) * 10_000 + (r.endChar - r.startChar);
}

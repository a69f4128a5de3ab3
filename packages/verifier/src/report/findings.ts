import type { ProgramModel, Range } from '../model/program.js';
import type { Obligation } from '../sim/seq.js';
import type { CheckInfo, Cmd } from '../il/il.js';
import type { Failure } from '../query/run.js';
import type { MethodModel, ThreadModel } from '../model/program.js';
import { escapeControl } from './text.js';
import { placeLines } from './lines.js';
import type { CheckResult, VDiagnostic } from './result.js';

// Pipeline stage 8: the solver's failures become diagnostics (with their
// counterexamples as data), and the rest of a check's result is put in the
// shape the editor shows (inferred loop invariants, accesses).

/** The infos about procedures no check covers (`unchecked`). */
export function uncheckedDiagnostics(methods: MethodModel[], callers: Map<string, ThreadModel[]>, checkedElsewhere: Set<string> = new Set()): VDiagnostic[] {
    const out: VDiagnostic[] = [];
    for (const m of methods) {
        if (!m.abstraction && !callers.has(m.id) && !checkedElsewhere.has(m.id)) {
            out.push({
                range: m.nameRange, severity: 'info', code: 'unchecked', related: [],
                message: `'${m.name}' is not checked: no thread reaches it and it has no abstraction (call it from a thread, e.g. 'thread Client[*] { ... }', or give it an abstraction)`,
            });
        }
    }
    return out;
}

export function unknownDiagnostic(u: { kind: CheckResult['kind']; name: string; range: Range }, why: string): VDiagnostic {
    const what = u.kind === 'thread' ? `thread ${u.name}` : u.kind === 'init' ? 'the initialization check' : `the abstraction check of ${u.name}`;
    return { range: u.range, severity: 'warning', code: 'unknown', related: [], message: `${what} is not verified: ${why}` };
}

/** The candidates Houdini kept, grouped by loop. */
export function loopInvariantsOf(obligations: Obligation[], live: number[]): CheckResult['loopInvariants'] {
    const out: CheckResult['loopInvariants'] = [];
    for (const id of live) {
        const c = obligations[id];
        if (!c || c.kind !== 'candidate') continue;
        const text = c.info.message.replace(/^candidate loop invariant /, '');
        const loop = out.find(l => sameRange(l.range, c.info.range));
        if (loop) loop.texts.push(text);
        else out.push({ range: c.info.range, texts: [text] });
    }
    for (const l of out) l.texts = withoutImplied(l.texts);
    return out;
}

/**
 * For display: one text per fact (`0 <= i` and `i >= 0` are one), without the
 * ones another implies (`i <= n` next to `i < n`; `v >= 0` next to `v == 1`).
 */
export function withoutImplied(texts: string[]): string[] {
    const FLIP: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==', '!=': '!=' };
    const cmp = /^([\w.]+) (==|>=|<=|>|<|!=) ([\w.]+|-?\d+)$/;
    const parse = (t: string) => {
        const m = cmp.exec(t);
        if (!m) return undefined;
        // the constant (or the second name in alphabetical order) on the right
        const swap = /^-?\d+$/.test(m[1]) || (!/^-?\d+$/.test(m[3]) && m[1] > m[3]);
        return swap ? { l: m[3], op: FLIP[m[2]], r: m[1] } : { l: m[1], op: m[2], r: m[3] };
    };
    const seen = new Set<string>();
    const facts: Array<{ text: string; f?: { l: string; op: string; r: string } }> = [];
    for (const text of texts) {
        const f = parse(text);
        const key = f ? `${f.l} ${f.op} ${f.r}` : text;
        if (seen.has(key)) continue;
        seen.add(key);
        facts.push({ text, f });
    }
    const has = (l: string, op: string, r: string) => seen.has(`${l} ${op} ${r}`);
    const fixed = new Map<string, bigint>();
    for (const { f } of facts) if (f && f.op === '==' && /^-?\d+$/.test(f.r)) fixed.set(f.l, BigInt(f.r));
    return facts.filter(({ f }) => {
        if (!f || f.op === '==') return true;
        if (f.op === '<=' && (has(f.l, '<', f.r) || has(f.l, '==', f.r))) return false;
        if (f.op === '>=' && (has(f.l, '>', f.r) || has(f.l, '==', f.r))) return false;
        if (fixed.has(f.l) && /^-?\d+$/.test(f.r)) {
            const v = fixed.get(f.l)!, c = BigInt(f.r);
            const holds = { '>=': v >= c, '<=': v <= c, '>': v > c, '<': v < c, '!=': v !== c }[f.op as '>=' | '<=' | '>' | '<' | '!='];
            if (holds) return false;
        }
        return true;
    }).map(x => x.text);
}

/** The shared accesses of a lowered check, each stable unless a race was reported at it. */
export function accessesOf(body: Cmd[], diagnostics: VDiagnostic[]): CheckResult['accesses'] {
    const out: CheckResult['accesses'] = [];
    const racy = diagnostics.filter(d => d.code === 'race');
    const walk = (cmds: Cmd[]) => {
        for (const c of cmds) {
            if (c.k === 'op') {
                for (const a of c.op.accesses) {
                    if (a.loc.kind === 'all' || a.loc.kind === 'holder' || out.some(x => sameRange(x.range, a.range) && x.write === a.write)) continue;
                    out.push({ range: a.range, text: a.text, write: a.write, sync: a.sync, stable: !racy.some(d => sameRange(d.range, a.range)) });
                }
            } else if (c.k === 'if') { walk(c.then); walk(c.else); } else if (c.k === 'loop' || c.k === 'scope') walk(c.body);
        }
    };
    walk(body);
    return out;
}

/** The note of each call of a failure's call chain (`called here (m)`). */
const CALLED_HERE = 'called here (';

/** Failures → diagnostics, with the counterexample values and the call chain. */
export function findings(failures: Failure[], program: ProgramModel): VDiagnostic[] {
    const out: VDiagnostic[] = [];
    // a monitor's holder is a thread: shown by name
    const threadName = new Map(program.threads.filter(t => t.id !== undefined).map(t => [String(t.id), t.name]));
    const named = (name: string, value: string) => name.endsWith('.holder') || name === 'tid'
        ? (value === '0' ? '0 (free)' : threadName.has(value) ? `${value} (${threadName.get(value)})` : value)
        : value;
    // A racy access is reported once, as race (checking.md): an env or invariant failure of
    // the same step is a consequence of the race and is not repeated.
    const racyOps = new Set(failures.filter(f => f.obligation.info.code === 'race' && !f.obligation.info.inferred && f.obligation.op !== undefined).map(f => f.obligation.op));
    for (const failure of failures) {
        const f = { ...failure, values: failure.values.map(([n, v]): [string, string] => [n, named(n, v)]) };
        const info = f.obligation.info;
        // (never a refutation of an inferred clause: it is not shown, and the inference must drop the clause)
        if ((info.code === 'env' || info.code === 'invariant') && !info.inferred && racyOps.has(f.obligation.op)) continue;
        // (an inferred annotation's origin names lines: written for the diagnostic's file)
        const related = [...(info.related ? [info.related] : []), ...(info.also ?? [])].map(r => ({ ...r, message: placeLines(r.message, info.range.file) }));
        for (const frame of [...info.chain].reverse()) related.push({ range: frame.range, message: `${CALLED_HERE}${frame.method.split('.').pop()})` });
        // the reads another thread's step changed just before (their notes name no line: the location moves with the text)
        for (const c of info.changes ?? []) {
            if (f.notes.some(n => n.startsWith(`another thread changed ${c.name} from `))) related.push({ range: c.range, message: `${c.name} read here, just after another thread changed it` });
        }
        const hint = missingStepHint(info, f.values);
        const counterexample = f.values.length + f.notes.length > 0 || hint
            ? { values: f.values.map(([name, value]) => ({ name, value: escapeControl(value) })), notes: f.notes.map(escapeControl), ...(hint ? { hint: escapeControl(hint) } : {}) }
            : undefined;
        out.push({ range: info.range, severity: 'error', code: info.code, message: escapeControl(oneLine(placeLines(info.message, info.range.file))), related, ...(counterexample ? { counterexample } : {}), ...(info.inferred ? { inferred: info.inferred } : {}) });
    }
    return out;
}

/** A message quoting a multi-line clause, on one line (line breaks and the indentation after them become one space). */
export function oneLine(text: string): string {
    return text.replace(/[ \t]*(?:\r\n|[\n\r\u2028\u2029])\s*/g, ' ');
}

/**
 * For a method that may return before step K of its abstraction happened: if a
 * statement performs step K without changing shared state (a read, a write of
 * the value already there), only `witness step K` tells the checker so.
 */
function missingStepHint(info: CheckInfo, values: Array<[string, string]>): string {
    const done = Number(values.find(([n]) => n === 'steps done')?.[1]);
    const steps = info.missingStep?.steps;
    if (!steps || !Number.isInteger(done) || done < 0 || done >= steps.length) return '';
    const k = done + 1;
    const step = steps[k - 1];
    // a step that changes nothing can only be a statement that reads: the checker counts reads as stutters
    const hint = step.changesNothing ? `; if a statement that only reads performs it, mark it with '//@ witness step ${k};'` : '';
    return `. On this path step ${k} ('${step.text}') never happened${hint}`;
}

/** One diagnostic per (range, code): the same line may be reached through several call chains or threads. */
export function dedupe(ds: VDiagnostic[]): VDiagnostic[] {
    const seen = new Map<string, VDiagnostic>();
    for (const d of ds) {
        const r = d.range;
        const inf = d.inferred ? `:${d.inferred.kind}/${d.inferred.field}/${d.inferred.site ?? ''}/${d.inferred.atom ?? ''}` : '';
        const key = `${r.file}:${r.startLine}:${r.startChar}:${r.endLine}:${r.endChar}:${d.code}${inf}`;
        const prev = seen.get(key);
        if (!prev) seen.set(key, d);
        else {
            alsoBreaks(prev, d);
            // Another call chain to the same line: its outermost call, marked as such (its inner calls
            // in between would read as one chain with the first), and its other notes.
            const calls = d.related.filter(r => r.message.startsWith(CALLED_HERE));
            const outer = calls[calls.length - 1];
            const add = (rel: VDiagnostic['related'][number]) => {
                if (!prev.related.some(p => p.message === rel.message && sameRange(p.range, rel.range))) prev.related.push(rel);
            };
            for (const rel of d.related) if (!calls.includes(rel)) add(rel);
            if (outer && !prev.related.some(p => sameRange(p.range, outer.range))) add({ range: outer.range, message: `also reached through this call (${outer.message.slice(CALLED_HERE.length)}` });
        }
    }
    return [...seen.values()];
}

/**
 * One step that breaks two invariants (or two clauses of the environment) is
 * one diagnostic: its message names each ("may break the invariant 'a' and
 * the invariant 'b'"), since its counterexample and its witness may be about
 * either.
 */
function alsoBreaks(prev: VDiagnostic, d: VDiagnostic): void {
    if (d.code !== 'invariant' && d.code !== 'env') return;
    // (a message is its text alone here: the counterexample's values are apart, in `values`)
    const clause = /(the invariant|environment assumption) ('.*')$/s.exec(d.message);
    if (!clause || prev.message.includes(clause[2])) return;
    prev.message = `${prev.message} and ${clause[1] === 'the invariant' ? clause[0] : `the ${clause[0]}`}`;
}

function sameRange(a: Range, b: Range): boolean {
    return a.file === b.file && a.startLine === b.startLine && a.startChar === b.startChar && a.endLine === b.endLine && a.endChar === b.endChar;
}


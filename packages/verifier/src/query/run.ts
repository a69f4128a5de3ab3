import type { QueryLog, SolverSession, Trace } from '../solver-host/types.js';
import { SolverFailure } from '../solver-host/types.js';
import { toSmt } from '../smt/term.js';
import type { Obligation } from '../sim/seq.js';
import type { VC } from '../vc/vcgen.js';

/** An obligation that fails, with the values that explain it. */
export interface Failure {
    obligation: Obligation;
    /** Name → value in the failing state. */
    values: Array<[string, string]>;
    /** What other threads did (their steps that changed what the obligation read). */
    notes: string[];
}

export interface RunResult {
    status: 'verified' | 'failed' | 'unknown';
    failures: Failure[];
    /** Loop invariants Houdini kept (loop label → texts). */
    inferred: Map<string, string[]>;
    /** The candidate obligations (ids) Houdini kept. */
    live: number[];
    queries: number;
    /** Why the solver could not decide (unknown). */
    reason?: string;
    /** How long the query that could not be decided took (ms). */
    unknownAfterMs?: number;
    /** Houdini could not finish (the solver did not decide a round): no loop invariant was kept. */
    houdiniGaveUp?: boolean;
    /**
     * Only the failures of inferred annotations' obligations (`untilRefuted`):
     * every one that fails, the program's own obligations not looked at.
     */
    refutedOnly?: boolean;
}


/**
 * Runs a VC (pipeline stage 7, solver side) in one incremental solver
 * session: the VC is sent once, then every query is a `check-sat-assuming`
 * over the obligations' enable literals. Houdini first: candidate loop
 * invariants that a model falsifies are dropped until the rest is inductive
 * (program obligations assumed meanwhile); then the program's obligations:
 * after each failure the failing ones are assumed and the query repeated, so
 * one VC reports every failing obligation (Boogie-style).
 *
 * `seed`: only these candidates (texts), e.g. those a previous run of the
 * same check kept: their inductive part is found in a round or two instead of
 * one round per refutation. It is a subset of what Houdini keeps from all
 * candidates, so a check verified from it is verified from all of them; a
 * check that is not must be run again without seed (runCheck does, in a fresh
 * session, so that its failures are those of a run without seed).
 */
export async function runVC(vc: VC, session: SolverSession, log?: QueryLog, deadline = Infinity, trace?: Trace, seed?: ReadonlySet<string>, untilRefuted = false): Promise<RunResult> {
    const raw = async (text: string) => {
        log?.(text);
        const t0 = Date.now();
        const out = await session.eval(text);
        trace?.(`[solver] ${Date.now() - t0} ms for ${text.length} chars: ${text.slice(0, 40).replace(/\n/g, ' ')}`);
        return out;
    };
    const send = async (text: string) => noError(await raw(text));
    log?.(vc.obligations.map(c => `; obligation ${c.id} (${c.kind}, ${c.info.code}): ${c.info.message.replace(/\n/g, ' ')}`).join('\n') + '\n');
    await send(vc.script);
    const candidates = vc.obligations.filter(c => c.kind === 'candidate');
    return attempt(vc, new Set(candidates.filter(c => !seed || seed.has(candidateText(c))).map(c => c.id)), { send, raw }, deadline, trace, untilRefuted);
}

/** The output, unless the solver reported an error in it. */
function noError(out: string): string {
    const err = /\(error "([^"]*)"\)/.exec(out);
    if (err) throw new SolverFailure('error', `solver error: ${err[1]}`);
    return out;
}

/** Printed between a check-sat's answer and the values asked with it (askFailing). */
const VALUES_MARK = 'calvin-values';
/** Its line in the output (a z3 on Windows ends lines with \r\n). */
const VALUES_LINE = /(?:^|\n)calvin-values\r?\n/;
/** Error literals asked for in one get-value at most. */
const VALUES_CHUNK = 2000;

/** A loop-invariant candidate's text (what a Houdini seed names). */
export function candidateText(c: Obligation): string {
    return c.info.message.replace(/^candidate loop invariant /, '');
}

/** The obligations of a VC by id (made once per VC: every query asks for some of their error literals). */
const obligationsById = new WeakMap<VC, Map<number, Obligation>>();

/** The error literals of the obligations `relevant` selects. */
function errorNames(vc: VC, relevant: (c: Obligation) => boolean): string[] {
    let byId = obligationsById.get(vc);
    if (!byId) obligationsById.set(vc, byId = new Map(vc.obligations.map(c => [c.id, c])));
    const names: string[] = [];
    for (const [name, e] of vc.errors) if (relevant(byId.get(e.obligation)!)) names.push(name);
    return names;
}

/**
 * Houdini from the `live` candidates, then the program's obligations, on a session that has the VC.
 *
 * `untilRefuted` (issue 15): the obligations of inferred annotations are checked
 * along with Houdini's candidates (and, once one fails among the program's
 * obligations, only they are); when some fail, the run ends with those
 * failures only (`refutedOnly`, no values), and the inference runs again
 * without what they refute: the rest of the run would be thrown away. They
 * are exactly the inferred obligations a full run reports: a failure in a
 * model that assumes more candidates at the loop heads is one with fewer too
 * (a path to an assertion only assumes them, and every obligation before it
 * whether checked or not), and each phase ends on a query in which none of
 * the others fails. Without such failures the run is the usual one.
 */
async function attempt(vc: VC, live: Set<number>, io: { send: (text: string) => Promise<string>; raw: (text: string) => Promise<string> }, deadline: number, trace?: Trace, untilRefuted = false): Promise<RunResult> {
    const { send } = io;
    const disabled = new Set<number>();
    let queries = 0;
    let houdiniGaveUp = false;
    const failures: Failure[] = [];
    const inferredObligation = (c: Obligation) => c.kind !== 'candidate' && c.info.inferred !== undefined;
    /** The inferred annotations' obligations are checked in Houdini's queries (untilRefuted). */
    let checkInferred = untilRefuted && vc.obligations.some(inferredObligation);
    /** After an inferred obligation failed (untilRefuted): only those are checked. */
    let onlyInferred = false;
    const inHoudini = (c: Obligation) => c.kind === 'candidate' ? live.has(c.id) : checkInferred && inferredObligation(c) && !disabled.has(c.id);
    const inObligations = (c: Obligation) => c.kind !== 'candidate' && !disabled.has(c.id) && (!onlyInferred || inferredObligation(c));
    const literals = (phase: 'houdini' | 'obligations') => vc.obligations.map(c => {
        const en = vc.enable.get(c.id)!;
        const on = c.kind === 'candidate' ? live.has(c.id) : phase === 'houdini' ? inHoudini(c) : inObligations(c);
        return on ? en : `(not ${en})`;
    }).join(' ');
    let lastMs = 0;
    const ask = async (phase: 'houdini' | 'obligations'): Promise<string> => {
        if (Date.now() > deadline) return 'unknown (out of time)';
        queries++;
        const t0 = Date.now();
        const answer = lastLine(await send(`(check-sat-assuming (${literals(phase)}))\n`));
        lastMs = Date.now() - t0;
        return answer;
    };
    /**
     * The query and, in the same eval, the values of the relevant error literals: one round trip
     * per Houdini step or failure instead of two (the values are read only when the answer is
     * sat; after unsat the solver says that no model is available, which is ignored).
     */
    const askFailing = async (phase: 'houdini' | 'obligations', relevant: (c: Obligation) => boolean): Promise<{ answer: string; failing?: number[] }> => {
        const names = errorNames(vc, relevant);
        if (names.length === 0 || names.length > VALUES_CHUNK) {
            const answer = await ask(phase);
            return answer === 'sat' ? { answer, failing: await failingObligations(vc, send, relevant) } : { answer };
        }
        if (Date.now() > deadline) return { answer: 'unknown (out of time)' };
        queries++;
        const t0 = Date.now();
        const out = await io.raw(`(check-sat-assuming (${literals(phase)}))\n(echo "${VALUES_MARK}")\n(get-value (${names.join(' ')}))\n`);
        lastMs = Date.now() - t0;
        const mark = VALUES_LINE.exec(out);
        if (!mark) throw new SolverFailure('error', `solver error: no answer to check-sat-assuming (${out.slice(0, 200)})`);
        const answer = lastLine(noError(out.slice(0, mark.index)));
        if (answer !== 'sat') return { answer };
        const values = parseValueList(noError(out.slice(mark.index + mark[0].length)));
        const failing = new Set<number>();
        names.forEach((name, i) => { if (values[i] === 'true') failing.add(vc.errors.get(name)!.obligation); });
        return { answer, failing: [...failing] };
    };
    const unknown = async (answer: string): Promise<RunResult> => ({
        status: 'unknown', failures: [...failures].sort((a, b) => a.obligation.id - b.obligation.id), inferred: inferred(vc, live), live: [...live], queries, reason: await reason(send, answer), unknownAfterMs: lastMs,
    });

    // Houdini (with the inferred annotations' obligations, untilRefuted)
    const refuted: Failure[] = [];
    const refute = (id: number) => {
        disabled.add(id);
        refuted.push({ obligation: vc.obligations.find(c => c.id === id)!, values: [], notes: [] });
    };
    if (live.size > 0) {
        for (;;) {
            const { answer, failing = [] } = await askFailing('houdini', inHoudini);
            if (answer === 'unsat') break;
            if (answer !== 'sat' && checkInferred) {
                // not decided with the inferred obligations: Houdini alone, as a full run (which checks them after)
                checkInferred = false;
                refuted.length = 0;
                disabled.clear();
                continue;
            }
            if (answer !== 'sat') {
                trace?.(`[houdini] gave up: ${answer}`);
                // Houdini could not finish: no inferred invariant is trusted.
                live.clear();
                houdiniGaveUp = true;
                break;
            }
            if (failing.length === 0) return { ...(await unknown('the counterexample names no failing obligation')), reason: 'internal: a model without a failing obligation' };
            const dropped = failing.filter(id => live.delete(id));
            for (const id of failing) if (!dropped.includes(id)) refute(id);
            if (dropped.length > 0) trace?.(`[houdini] dropped ${dropped.length}, ${live.size} left: ${dropped.slice(0, 4).map(id => vc.obligations[id].info.message).join(' | ')}`);
        }
    }
    // The program's obligations (untilRefuted: once an inferred one fails, only those)
    if (refuted.length === 0) {
        for (;;) {
            const { answer, failing = [] } = await askFailing('obligations', inObligations);
            if (answer === 'unsat') break;
            if (answer !== 'sat' && onlyInferred) break;
            if (answer !== 'sat') return unknown(answer);
            if (failing.length === 0) return { ...(await unknown('the counterexample names no failing obligation')), reason: 'internal: a model without a failing obligation' };
            const inferredFailing = untilRefuted ? failing.filter(id => inferredObligation(vc.obligations.find(c => c.id === id)!)) : [];
            if (inferredFailing.length > 0) onlyInferred = true;
            if (onlyInferred) {
                inferredFailing.forEach(refute);
                continue;
            }
            for (const id of failing) {
                disabled.add(id);
                const obligation = vc.obligations.find(c => c.id === id)!;
                failures.push({ obligation, ...(await explain(vc, id, send)) });
            }
        }
    }
    if (refuted.length > 0) {
        trace?.(`[houdini] ${refuted.length} inferred annotation obligation(s) fail: the run ends with them`);
        refuted.sort((a, b) => a.obligation.id - b.obligation.id);
        return { status: 'failed', failures: refuted, inferred: inferred(vc, live), live: [...live], queries, refutedOnly: true, ...(houdiniGaveUp ? { houdiniGaveUp } : {}) };
    }
    // in the obligations' order, not the order the models showed them in: which of two failures at
    // one place is reported must not depend on the solver's models (nor on its build: wasm or native)
    failures.sort((a, b) => a.obligation.id - b.obligation.id);
    return { status: failures.length > 0 ? 'failed' : 'verified', failures, inferred: inferred(vc, live), live: [...live], queries, ...(houdiniGaveUp ? { houdiniGaveUp } : {}) };
}

function lastLine(out: string): string {
    const lines = out.trim().split('\n');
    return lines[lines.length - 1].trim();
}

async function reason(send: (t: string) => Promise<string>, answer: string): Promise<string> {
    if (answer.startsWith('unknown (')) return answer.slice(9, -1);
    try {
        const r = await send('(get-info :reason-unknown)\n');
        const m = /:reason-unknown\s+"?([^")]*)/.exec(r);
        return m ? m[1] : answer;
    } catch {
        return answer;
    }
}

function inferred(vc: VC, live: Set<number>): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const c of vc.obligations) {
        if (c.kind !== 'candidate' || !live.has(c.id) || !c.loop) continue;
        const list = out.get(c.loop) ?? [];
        list.push(candidateText(c));
        out.set(c.loop, list);
    }
    return out;
}

/** The obligations (ids) whose error literal is true in the model. */
async function failingObligations(vc: VC, send: (t: string) => Promise<string>, relevant: (c: Obligation) => boolean): Promise<number[]> {
    const names = errorNames(vc, relevant);
    const found = new Set<number>();
    for (let k = 0; k < names.length; k += VALUES_CHUNK) {
        const chunk = names.slice(k, k + VALUES_CHUNK);
        const values = parseValueList(await send(`(get-value (${chunk.join(' ')}))\n`));
        chunk.forEach((name, i) => { if (values[i] === 'true') found.add(vc.errors.get(name)!.obligation); });
    }
    return [...found];
}

/** Values of the terms a failing obligation names, in the failing state, and the other threads' steps that changed what it read. */
async function explain(vc: VC, id: number, send: (t: string) => Promise<string>): Promise<{ values: Array<[string, string]>; notes: string[] }> {
    const none = { values: [], notes: [] };
    // the first error literal of the obligation that is true: its state
    const errs = [...vc.errors.entries()].filter(([, e]) => e.obligation === id);
    let info = errs[0]?.[1];
    if (errs.length > 1) {
        const v = parseValueList(await send(`(get-value (${errs.map(e => e[0]).join(' ')}))\n`));
        info = errs.find((_, i) => v[i] === 'true')?.[1] ?? info;
    }
    if (!info || (info.show.length === 0 && info.changes.length === 0)) return none;
    const terms = [...info.show.map(([, t]) => t), ...info.changes.flatMap(c => [c.before, c.after])].map(toSmt);
    let values: string[];
    try {
        // (null's value last: a reference is shown as null or not null)
        const raw = parseValueList(await send(`(get-value (${terms.join(' ')} null))\n`));
        const nullValue = raw.pop();
        values = raw.map(v => (v === nullValue ? 'null' : prettyValue(v)));
    } catch {
        return none;
    }
    // Object identities mean nothing to the reader; null does, and so does "not null" for a field
    // whose value a condition reads (`writable_if inst == null`), unless its own fields are shown.
    const names = info.show.map(([name]) => name);
    const receiver = (name: string) => names.some(n => n.startsWith(`${name}.`) || n.startsWith(`${name}[`));
    const shown = info.show.map(([name], i): [string, string] => [name, values[i] ?? '?'])
        .flatMap(([name, v]): Array<[string, string]> => !v.startsWith('object #') ? [[name, v]]
            : /^[\w.]+\.\w+$/.test(name) && !receiver(name) ? [[name, 'not null']] : []);
    const notes: string[] = [];
    info.changes.forEach((c, i) => {
        const before = values[info!.show.length + 2 * i], after = values[info!.show.length + 2 * i + 1];
        if (before !== undefined && after !== undefined && before !== after && !before.startsWith('object #') && !after.startsWith('object #')) {
            notes.push(`another thread changed ${c.name} from ${before} to ${after} just before it was read`);
        }
    });
    return { values: shown, notes };
}

/** Parse `((expr value) ...)` from get-value: the values, in order, as text. */
export function parseValueList(text: string): string[] {
    const out: string[] = [];
    let i = text.indexOf('(');
    if (i < 0) return out;
    i++;
    const n = text.length;
    const readSexp = (): string => {
        while (i < n && /\s/.test(text[i])) i++;
        const start = i;
        if (text[i] === '(') {
            let depth = 0;
            do {
                if (text[i] === '(') depth++;
                else if (text[i] === ')') depth--;
                else if (text[i] === '|') { i = text.indexOf('|', i + 1); }
                i++;
            } while (i < n && depth > 0);
        } else if (text[i] === '|') {
            i = text.indexOf('|', i + 1) + 1;
        } else {
            while (i < n && !/[\s()]/.test(text[i])) i++;
        }
        return text.slice(start, i);
    };
    for (;;) {
        while (i < n && /\s/.test(text[i])) i++;
        if (i >= n || text[i] === ')') break;
        if (text[i] !== '(') break;
        i++;
        const name = readSexp();
        const value = readSexp();
        while (i < n && text[i] !== ')') i++;
        i++;
        void name;
        out.push(value);
    }
    return out;
}

function prettyValue(v: string): string {
    const neg = /^\(- (\d+)\)$/.exec(v);
    if (neg) return `-${neg[1]}`;
    const ref = /Ref!val!(\d+)/.exec(v);
    if (ref) return `object #${ref[1]}`;
    return v;
}

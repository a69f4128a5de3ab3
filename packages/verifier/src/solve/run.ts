import type { SolverSession } from '../solver/index.js';
import { SolverFailure } from '../solver/index.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import type { Check } from '../vc/seq.js';
import type { VC } from '../vc/vcgen.js';

/** A check that fails, with the values that explain it. */
export interface Failure {
    check: Check;
    /** Name → value in the failing state. */
    values: Array<[string, string]>;
    /** From a model Z3 could not confirm (`unknown` because of quantifiers), as Boogie reports them. */
    unconfirmed?: boolean;
}

export interface RunResult {
    status: 'verified' | 'failed' | 'unknown';
    failures: Failure[];
    /** Loop invariants Houdini kept (loop label → texts). */
    inferred: Map<string, string[]>;
    queries: number;
    /** Why the solver could not decide (unknown). */
    reason?: string;
}

/** Hook to keep every query (for --dump-smt). */
export type QueryLog = (text: string) => void;

/**
 * Z3 without the array extensionality axiom. Our VCs compare whole maps only
 * positively (definitions of λ-built environment steps, joins, frames assumed),
 * so dropping the axiom keeps every unsat answer sound and every model real
 * (arrays can be quotiented by pointwise equality); checks whose condition
 * compares maps are reported as unconfirmed (see `comparesMaps`). Measured:
 * a monitor-protected counter's failing assertion went from a 10 s time-out
 * to 55 ms.
 */
const NON_EXTENSIONAL = '(set-option :smt.array.extensional false)\n';
// `smt.*` options are global parameters of Z3: always set them explicitly.
const EXTENSIONAL = '(set-option :smt.array.extensional true)\n';

/**
 * Runs a VC (pipeline stage 7, solver side): Houdini first (candidates that
 * fail are dropped until the rest is inductive), then the program's checks:
 * after each failure the failing check is disabled (assumed) and the query
 * repeated, so one VC reports every failing check (Boogie-style).
 */
/**
 * Each query starts from a fresh solver state: Z3's incremental mode (after a
 * first check) lacks preprocessing that quantified VCs need, and was measured
 * to time out where a fresh solve takes 0.1–0.5 s.
 */
export function freshQuery(script: string, softTimeoutMs: number, assumptions: string, extensional = false): string {
    return `(reset)\n(set-option :produce-models true)\n${extensional ? EXTENSIONAL : NON_EXTENSIONAL}(set-option :timeout ${Math.max(1, Math.round(softTimeoutMs))})\n${script}(assert (and ${assumptions} true))\n(check-sat)\n`;
}

export async function runVC(vc: VC, open: () => Promise<SolverSession>, log?: QueryLog, softTimeoutMs = 10_000): Promise<RunResult> {
    let session = await open();
    try {
        return await runWith(vc, () => session, async () => { session.close(); session = await open(); }, log, softTimeoutMs);
    } finally {
        session.close();
    }
}

async function runWith(vc: VC, current: () => SolverSession, reopen: () => Promise<void>, log: QueryLog | undefined, softTimeoutMs: number): Promise<RunResult> {
    const send = async (text: string) => {
        log?.(text);
        const out = await current().eval(text);
        const err = /\(error "([^"]*)"\)/.exec(out);
        if (err) throw new SolverFailure('error', `solver error: ${err[1]}`);
        return out;
    };
    log?.(vc.checks.map(c => `; check ${c.id} (${c.kind}, ${c.info.code}): ${c.info.message.replace(/\n/g, ' ')}`).join('\n') + '\n');
    const candidates = vc.checks.filter(c => c.kind === 'candidate');
    const live = new Set(candidates.map(c => c.id));
    const disabled = new Set<number>();
    let queries = 0;
    const failures: Failure[] = [];

    const literals = (phase: 'houdini' | 'checks') => vc.checks.map(c => {
        const en = vc.enable.get(c.id)!;
        const on = c.kind === 'candidate' ? live.has(c.id) : phase === 'checks' && !disabled.has(c.id);
        return on ? en : `(not ${en})`;
    }).join(' ');

    // The full VC first, with part of the time; when Z3 cannot decide it, the ground VC
    // (vc/ground.ts) from then on: its unsat still proves, and Z3 finds its models fast.
    let ground = false;
    // A whole check gets a budget of a few time limits: Houdini on a hard VC can take one
    // query per dropped candidate.
    const deadline = Date.now() + 4 * softTimeoutMs;
    const fullTimeoutMs = Math.min(softTimeoutMs, Math.max(2000, Math.round(softTimeoutMs / 3)));
    for (const phase of ['houdini', 'checks'] as const) {
        for (let extensional = false; ;) {
            if (Date.now() > deadline) {
                return { status: 'unknown', failures, inferred: inferred(vc, live), queries, reason: `out of time: ${queries} queries in ${Math.round(4 * softTimeoutMs / 1000)} s` };
            }
            queries++;
            const text = freshQuery(ground ? vc.groundScript : vc.script, ground ? Math.round(softTimeoutMs * 0.9) : fullTimeoutMs, literals(phase), extensional);
            let answer: string;
            try {
                answer = (await send(text)).trim().split('\n').pop()!.trim();
            } catch (e) {
                // The full VC hit the hard limit (Z3's own time-out is not always honoured):
                // a new solver, and the ground VC.
                if (ground || !(e instanceof SolverFailure) || e.kind !== 'timeout') throw e;
                await reopen();
                answer = 'unknown';
            }
            if (process.env.CALVIN_DEBUG) console.error(`[${phase}] ${ground ? 'ground ' : ''}${extensional ? 'extensional ' : ''}answer ${answer}`);
            if (answer.startsWith('unsat')) break;
            if (!answer.startsWith('sat') && !ground) {
                ground = true;
                extensional = false;
                continue;
            }
            let unconfirmed = false;
            if (!answer.startsWith('sat') && !extensional && /incomplete/.test(await reason(send, answer))) {
                // Z3's completeness depends on the array theory's options: ask again with extensionality.
                extensional = true;
                continue;
            }
            if (!answer.startsWith('sat')) {
                // `unknown` with incomplete quantifiers still comes with a candidate model: like
                // Boogie, report the checks it falsifies (never "verified"); time-outs stay unknown.
                const why = await reason(send, answer);
                if (!/quantifiers/.test(why)) return { status: 'unknown', failures, inferred: inferred(vc, live), queries, reason: why };
                unconfirmed = true;
            }
            let failing: Failure[];
            try {
                failing = await findFailing(vc, send, live, disabled, phase, extensional);
            } catch (e) {
                // Z3 may give no model with `unknown` ("model is not available").
                if (unconfirmed && e instanceof SolverFailure && e.kind === 'error') failing = [];
                else throw e;
            }
            if (unconfirmed && failing.length === 0) {
                return { status: 'unknown', failures, inferred: inferred(vc, live), queries, reason: 'incomplete quantifiers' };
            }
            if (failing.length === 0) {
                return { status: 'unknown', failures, inferred: inferred(vc, live), queries, reason: 'could not locate the failing check in the counterexample' };
            }
            // A model without extensionality that falsifies a comparison of whole maps may be
            // spurious: ask again, with extensionality, before reporting anything.
            if (!extensional && !unconfirmed && (vc.needsExtensionality || failing.some(f => f.unconfirmed))) {
                extensional = true;
                continue;
            }
            extensional = false;
            for (const f of failing) {
                if (process.env.CALVIN_DEBUG) console.error(`[${phase}] failing ${f.check.kind} #${f.check.id}: ${f.check.info.message}`);
                if (f.check.kind === 'candidate') live.delete(f.check.id);
                else {
                    disabled.add(f.check.id);
                    failures.push(unconfirmed ? { ...f, unconfirmed } : f);
                }
            }
        }
    }
    return { status: failures.length > 0 ? 'failed' : 'verified', failures, inferred: inferred(vc, live), queries };
}

async function reason(send: (t: string) => Promise<string>, answer: string): Promise<string> {
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
    for (const c of vc.checks) {
        if (c.kind !== 'candidate' || !live.has(c.id) || !c.loop) continue;
        const list = out.get(c.loop) ?? [];
        list.push(c.info.message.replace(/^candidate loop invariant /, ''));
        out.set(c.loop, list);
    }
    return out;
}

/** Parse `((name value) ...)` from get-value. Values are kept as text. */
export function parseValues(text: string): Map<string, string> {
    const out = new Map<string, string>();
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
        out.set(name, value);
    }
    return out;
}

/**
 * The failing checks of a model: every `err!k` that is true is a reached,
 * failing assertion (the VC's implications make the model a real execution).
 */
async function findFailing(vc: VC, send: (t: string) => Promise<string>, live: Set<number>, disabled: Set<number>, phase: 'houdini' | 'checks', extensional: boolean): Promise<Failure[]> {
    const names = [...vc.errors.keys()];
    const values = new Map<string, string>();
    for (let k = 0; k < names.length; k += 4000) {
        const chunk = names.slice(k, k + 4000);
        for (const [key, val] of parseValues(await send(`(get-value (${chunk.join(' ')}))\n`))) values.set(key, val);
    }
    const checkById = new Map(vc.checks.map(c => [c.id, c]));
    const enabled = (id: number) => {
        const c = checkById.get(id)!;
        return c.kind === 'candidate' ? live.has(id) : phase === 'checks' && !disabled.has(id);
    };
    const found = new Map<number, Failure>();
    for (const [err, { check, sigma, comparesMaps }] of vc.errors) {
        if (values.get(err) !== 'true' || found.has(check) || !enabled(check)) continue;
        const c = checkById.get(check)!;
        const failure: Failure = { check: c, values: c.kind === 'candidate' ? [] : await explain(c, sigma, send) };
        found.set(check, comparesMaps && !extensional ? { ...failure, unconfirmed: true } : failure);
    }
    return [...found.values()];
}

/** Values of the terms a failing check names, in the failing state. */
async function explain(check: Check, sigma: Map<string, Term>, send: (t: string) => Promise<string>): Promise<Array<[string, string]>> {
    const show = check.info.show ?? [];
    if (show.length === 0) return [];
    const terms = show.map(([name, t]) => [name, T.toSmt(T.substitute(t, sigma))] as const);
    try {
        const values = parseValues(await send(`(get-value (${terms.map(t => t[1]).join(' ')}))\n`));
        return terms.map(([name, smt]) => [name, prettyValue(values.get(smt) ?? [...values.values()][terms.findIndex(t => t[1] === smt)] ?? '?')]);
    } catch {
        return [];
    }
}

function prettyValue(v: string): string {
    const neg = /^\(- (\d+)\)$/.exec(v);
    if (neg) return `-${neg[1]}`;
    const ref = /Ref!val!(\d+)/.exec(v);
    if (ref) return `object #${ref[1]}`;
    return v;
}

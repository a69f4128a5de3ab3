import { append } from '../smt/append.js';
import { createHash } from 'node:crypto';
import type { FieldModel, MethodModel, ProgramModel, Range } from '../model/program.js';
import { checkSpec, checksOf, programContext, type Check, type ProgramContext } from '../driver/program-context.js';
import { lowerCheck, lowerInit } from '../driver/stages.js';
import { LoweringError } from '../lower/lower.js';
import type { Access, Cmd } from '../il/il.js';

/**
 * Incremental checking (issue 4): every check of a program gets a
 * *fingerprint*, a hash of everything its verification condition depends on —
 * its lowered body with the abstractions and bodies it inlines, the field
 * initializers (for a thread), E(p), I(p), the guarantee's clauses, the guards
 * involved, the thread ids, the checker version and the solver options — and
 * of nothing else: not the source positions. A whitespace or comment edit
 * leaves every fingerprint as it was; a result cached under a fingerprint is
 * valid for any program with that fingerprint.
 *
 * Positions are collected instead into a *range table* in a canonical order:
 * a cached result stores the ranges of its diagnostics as indices into the
 * table of the program it was computed for, and is shown in another program
 * with the same fingerprint at that program's ranges (result-codec.ts).
 */

/** Changes whenever the checker could give another answer for the same input. */
export const CHECKER_VERSION = 'calvin-verifier 0.1.0 / vc 3';

export interface CheckPlan {
    /** Stable within a program: `init`, `abstraction:C.m`, `thread:T`. */
    key: string;
    name: string;
    kind: 'thread' | 'abstraction' | 'init';
    /** The name of the thread or method (where its status is shown). */
    range: Range;
    /** The whole thread or method declaration (where an edit makes this check the one being edited). */
    extent?: Range;
    fingerprint: string;
    /** Every source range its results may mention, in canonical order. */
    ranges: Range[];
    /** Methods without abstraction whose bodies the check inlines (it covers them). */
    inlines: string[];
    /**
     * Whether its body writes shared state (a field, a global, an array element; not a
     * monitor): a check that does not cannot refute an inferred annotation (the server runs
     * such checks after those that may).
     */
    writes: boolean;
    /** The check could not be prepared (reported when it runs). */
    error?: string;
}

export interface PlanOptions {
    timeLimitMs: number;
    resourceLimit?: number;
    solver?: string;
}

/** The checks of a program (or of its context, made once) with their fingerprints; cheap (no solver), so it runs after every edit. */
export function planChecks(program: ProgramModel | ProgramContext, options: PlanOptions): CheckPlan[] {
    const ctx = 'vocab' in program ? program : programContext(program);
    return checksOf(ctx).map(u => planCheck(ctx, u, options));
}

export function planCheck(ctx: ProgramContext, u: Check, options: PlanOptions): CheckPlan {
    const ranges: Range[] = [u.range];
    const parts: string[] = [CHECKER_VERSION, JSON.stringify(options), u.key, u.thread ? `${u.thread.id ?? ''}/${u.thread.count ?? ''}` : ''];
    const add = (c: Canonical) => { parts.push(c.text); append(ranges, c.ranges); };
    const inlines = new Set<string>();
    let writes = true;
    let error: string | undefined;
    try {
        // before the body, as lowerCheck would: type ids are numbered in order of first use
        const init = u.kind !== 'init' && u.thread ? initPart(ctx) : undefined;
        const lowered = lowerCheck(ctx, u, false);
        writes = collectInlined(lowered.body, inlines);
        const shared = programParts(ctx);
        add(shared.fields);
        add(shared.threads);
        if (u.kind === 'init') {
            parts.push(canonical(ctx.invariants.map(i => ({ text: i.text, range: i.clause.range, term: i.term })), ranges));
        } else {
            const { env, inv, tidConstraint } = checkSpec(ctx, u);
            parts.push(canonical(tidConstraint, ranges));
            parts.push(env.map(c => canonicalOnce(c, () => ({ kind: c.kind, origin: c.origin, text: c.text, frames: c.frames, residual: c.residual, relation: c.relation, builtin: c.builtin, range: c.clause?.range }), ranges)).join(';'));
            parts.push(inv.map(i => canonicalOnce(i, () => ({ text: i.text, range: i.clause.range, term: i.term }), ranges)).join(';'));
            add(shared.guarantee);
        }
        if (init) add(init);
        parts.push(canonical(lowered.body, ranges));
        if (u.method?.abstraction) parts.push(canonical(u.method.abstraction, ranges));
        parts.push(canonical(u.method?.endRange, ranges));
    } catch (e) {
        error = e instanceof LoweringError ? e.message : `internal error: ${(e as Error)?.message ?? e}`;
        parts.push(`error:${error}`);
    }
    const fingerprint = hash(positionFree(parts.join('\n')));
    const extent = u.thread?.range ?? u.method?.range;
    return { key: u.key, name: u.name, kind: u.kind, range: u.range, extent, fingerprint, ranges, inlines: [...inlines], writes, error };
}

interface Canonical {
    text: string;
    ranges: Range[];
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** Names of program variables carry their position (`i@12:5`): not part of the fingerprint. */
const positionFree = (text: string) => text.replace(/@\d+:\d+/g, '@');

/**
 * A part shared by many checks, as large as the program: its text in a
 * fingerprint is its hash, computed once (hashing it once per check would be
 * quadratic in the size of the program).
 */
function sharedPart(value: unknown): Canonical {
    const ranges: Range[] = [];
    return { text: hash(positionFree(canonical(value, ranges))), ranges };
}

/**
 * The parts of every check's input that are the same for the whole program,
 * made canonical once per program context (each check gets their text and
 * their ranges, in the same order as if it had walked them itself).
 */
const programPartsOf = new WeakMap<ProgramContext, { fields: Canonical; threads: Canonical; guarantee: Canonical }>();

function programParts(ctx: ProgramContext): { fields: Canonical; threads: Canonical; guarantee: Canonical } {
    let parts = programPartsOf.get(ctx);
    if (!parts) {
        parts = {
            // The program's fields: their types, modifiers and guards (heap facts, inferred guards).
            fields: sharedPart([...[...ctx.vocab.fields.values()].map(f => fieldSummary(f, ctx)), ctx.program.unprotected ?? []]),
            threads: sharedPart(ctx.program.threads.map(t => `${t.name}/${t.id ?? ''}/${t.count ?? ''}`)),
            guarantee: sharedPart(ctx.guarantee.map(c => ({ text: c.text, relation: c.relation, range: c.clause?.range }))),
        };
        programPartsOf.set(ctx, parts);
    }
    return parts;
}

/**
 * The field initializers a thread check runs first: the same for every thread
 * and as large as the program, so made canonical once per program context, not
 * once per thread (that was quadratic in the number of globals and threads).
 */
const initPartOf = new WeakMap<ProgramContext, Canonical>();

function initPart(ctx: ProgramContext): Canonical {
    let part = initPartOf.get(ctx);
    if (!part) {
        part = sharedPart(lowerInit(ctx).cmds);
        initPartOf.set(ctx, part);
    }
    return part;
}

function fieldSummary(f: FieldModel, ctx: ProgramContext) {
    const g = ctx.spec.guards.get(f.id);
    return {
        id: f.id, type: f.type, static: f.isStatic, volatile: f.isVolatile, final: f.isFinal, ghost: f.isGhost,
        init: f.init ? f.init.kind : undefined,
        guard: g ? (g.inferred ? `inferred ${g.inferred.text}` : g.clauses.map(c => ({ text: c.text, range: c.range, inferred: c.inferred?.sites.map(s => ({ range: s.range, threads: s.threads, atoms: s.atoms.map(a => a.key) })) }))) : undefined,
    };
}

function isRange(x: object): x is Range {
    const r = x as Record<string, unknown>;
    return typeof r.file === 'string' && typeof r.startLine === 'number' && typeof r.endChar === 'number';
}

/**
 * A position-free text of a value: ranges are replaced by `#` and appended to
 * `ranges` in the order met; fields and methods referenced from the IL are
 * named, not expanded (their content is elsewhere in the input).
 */
/**
 * The hash of the canonical text of a part shared by many checks (a conjunct
 * of E, an invariant), made once: a program of n threads has n checks whose E
 * and I may each have n parts.
 */
function canonicalOnce(key: object, view: () => unknown, ranges: Range[]): string {
    let c = canonicalOf.get(key);
    if (!c) {
        const own: Range[] = [];
        c = { text: hash(positionFree(canonical(view(), own))), ranges: own };
        canonicalOf.set(key, c);
    }
    append(ranges, c.ranges);
    return c.text;
}

const canonicalOf = new WeakMap<object, Canonical>();

function canonical(value: unknown, ranges: Range[]): string {
    const out: string[] = [];
    const path = new Set<object>();
    const walk = (x: unknown): void => {
        if (x === null || x === undefined) { out.push('_'); return; }
        if (typeof x !== 'object') { out.push(typeof x === 'bigint' ? `${x}n` : JSON.stringify(x)); return; }
        if (path.has(x)) { out.push('^'); return; }
        if (isRange(x)) { ranges.push(x); out.push('#'); return; }
        if (Array.isArray(x)) {
            path.add(x);
            out.push('[');
            for (const e of x) { walk(e); out.push(','); }
            out.push(']');
            path.delete(x);
            return;
        }
        const o = x as Record<string, unknown>;
        if (isFieldModel(o)) { out.push(`F:${o.id as string}`); return; }
        if (isMethodModel(o)) { out.push(`M:${o.id as string}`); return; }
        path.add(x);
        out.push('{');
        for (const k of Object.keys(o)) {
            out.push(k, ':');
            walk(o[k]);
            out.push(';');
        }
        out.push('}');
        path.delete(x);
    };
    walk(value);
    return out.join('');
}

function isFieldModel(o: Record<string, unknown>): o is FieldModel & Record<string, unknown> {
    return typeof o.id === 'string' && 'writableIf' in o && 'isVolatile' in o;
}

function isMethodModel(o: Record<string, unknown>): o is MethodModel & Record<string, unknown> {
    return typeof o.id === 'string' && 'params' in o && 'body' in o && 'returnType' in o;
}

/** The methods without abstraction whose bodies a lowered check contains (their calls' chains). */
/** The methods a lowered body inlines (into `out`); whether it writes shared state other than monitors. */
function collectInlined(cmds: Cmd[], out: Set<string>): boolean {
    const seen = new Set<object>();
    let writes = false;
    const walk = (x: unknown): void => {
        if (x === null || typeof x !== 'object' || seen.has(x)) return;
        seen.add(x);
        if (Array.isArray(x)) { x.forEach(walk); return; }
        const o = x as Record<string, unknown>;
        if (Array.isArray(o.chain)) for (const f of o.chain as Array<{ method: string }>) out.add(f.method);
        if (Array.isArray(o.accesses)) writes ||= (o.accesses as Access[]).some(a => a.write && a.loc.kind !== 'holder');
        for (const v of Object.values(o)) if (typeof v === 'object') walk(v);
    };
    walk(cmds);
    return writes;
}

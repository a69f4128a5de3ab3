import type { Expr, FieldModel, MethodModel, Range, ThreadModel } from '../model/program.js';
import { abstractionActions, frameField } from '../model/program.js';
import { methodReach, threadReach } from '../analysis/reach.js';
import { checkSpec, type Check, type ProgramContext } from './program-context.js';
import { calvinText } from '../smt/calvin-text.js';
import { clausesText, type Conjunct } from '../spec/environment.js';
import { visit } from '../model/visit.js';

/**
 * What a thread or procedure assumes and guarantees (language.md §6), in words
 * a user can read and paste back into an annotation: the hover of the editor
 * and `calvin explain`-style output. No solver involved.
 */

export interface SpecItem {
    /** Calvin text (or, when `prose`, a sentence). */
    text: string;
    /** Where it comes from: which clause of which class, which field's writable_if. */
    origin: string;
    /** The annotation it comes from, when there is one. */
    range?: Range;
    /** A built-in rule, said in words rather than as an expression. */
    prose?: boolean;
    /** It holds for every object of this class (`this` is that object). */
    forEvery?: string;
    /** The location it constrains (a field id such as `x` or `Mutex.m`, `Vector.elementData[*]` for elements; undefined: several, or none). */
    location?: string;
}

/** A conjunct another check of the program assumes and this one does not, and why. */
export interface AbsentItem {
    /** The other check's name (a thread). */
    other: string;
    location: string;
    text: string;
    /** Why this check does not assume it ("not accessed by Flipper"). */
    reason: string;
}

export interface SpecDescription {
    name: string;
    /** `inlined`: a method without abstraction, checked in its callers. */
    kind: 'thread' | 'abstraction' | 'inlined';
    /** The thread ids the check is for, as Calvin text (`tid == 1`, `tid > 2`). */
    threads: string;
    /** The threads whose checks reach it (for methods). */
    callers: string[];
    environment: SpecItem[];
    invariant: SpecItem[];
    /** What each of its steps must satisfy towards the other threads (`j`: any other thread). */
    guarantee: SpecItem[];
    /** Conjuncts of E left out because they hold whatever the other threads do (an inferred protection every other thread has). */
    tautologies: SpecItem[];
    /** For a thread: conjuncts other threads' E has and its own does not, with why. */
    absent: AbsentItem[];
}

/** E(p), I(p) and the guarantee of a thread. */
export function describeThread(ctx: ProgramContext, t: ThreadModel): SpecDescription {
    const d = describe(ctx, { key: `thread:${t.name}`, name: t.name, kind: 'thread', range: t.nameRange, thread: t }, threadReach(ctx.program, t).writes);
    // what another thread assumes and this one does not: said once per location
    const mine = new Set([...d.environment, ...d.tautologies].map(i => i.text));
    const fields = threadReach(ctx.program, t).fields;
    const said = new Set<string>();
    for (const other of ctx.program.threads) {
        if (other === t) continue;
        const o = describe(ctx, { key: `thread:${other.name}`, name: other.name, kind: 'thread', range: other.nameRange, thread: other }, threadReach(ctx.program, other).writes);
        for (const i of o.environment) {
            if (mine.has(i.text) || !i.location || said.has(i.location)) continue;
            said.add(i.location);
            const field = i.location.replace(/\[\*\]$/, '');
            const reason = fields.has(field) ? `not involved in ${t.name}'s check` : `not accessed by ${t.name}`;
            d.absent.push({ other: other.name, location: i.location, text: i.text, reason });
        }
    }
    return d;
}

/** E(p), I(p) and the guarantee of a method or procedure (with or without abstraction). */
export function describeMethod(ctx: ProgramContext, m: MethodModel): SpecDescription {
    const writes = new Set(methodReach(ctx.program, m).writes);
    for (const a of abstractionActions(m)) for (const e of a.frame) { const f = frameField(e); if (f) writes.add(f); }
    const d = describe(ctx, { key: `abstraction:${m.id}`, name: m.id, kind: 'abstraction', range: m.nameRange, method: m }, writes);
    return { ...d, kind: m.abstraction ? 'abstraction' : 'inlined' };
}

function describe(ctx: ProgramContext, u: Check, writes: Set<string>): SpecDescription {
    const { env, inv, tidConstraint } = checkSpec(ctx, u);
    const ids = possibleIds(ctx, u);
    const environment: SpecItem[] = [];
    const tautologies: SpecItem[] = [];
    for (const c of env) {
        const cls = c.field ? (c.field.isStatic ? undefined : c.field.owner) : c.clause && aboutObjects(c.clause.expr) ? c.className : undefined;
        const item: SpecItem = {
            text: c.text, origin: c.origin, range: c.clause?.range ?? (c.kind === 'writable' || c.kind === 'final' ? c.field?.range : undefined),
            prose: c.kind === 'builtin', forEvery: c.kind === 'builtin' ? undefined : cls, location: locationOf(ctx, c),
        };
        // an inferred protection that every other thread has says nothing about this check's environment
        const g = c.kind === 'writable' && c.field ? (c.elements ? ctx.spec.elementGuards.get(c.field.id) : ctx.spec.guards.get(c.field.id)) : undefined;
        if (g?.inferred && coversOthers(ctx, ids, g.inferred.writers)) tautologies.push(item);
        else environment.push(item);
    }
    const invariant: SpecItem[] = inv.map(i => ({ text: i.text, origin: i.origin, range: i.clause.range, forEvery: aboutObjects(i.clause.expr) ? i.className : undefined }));
    const writtenMaps = new Set([...writes].map(f => ctx.vocab.varOfField(f)));
    const guarantee: SpecItem[] = [];
    const push = (i: SpecItem) => { if (!guarantee.some(g => g.text === i.text && g.origin === i.origin)) guarantee.push(i); };
    for (const c of ctx.guarantee) {
        if (![...c.maps].some(m => writtenMaps.has(m))) continue;
        push({ text: c.text.replace(/\btid\b/g, 'j'), origin: `${c.origin}, for every other thread j`, range: c.clause?.range, forEvery: c.clause && aboutObjects(c.clause.expr) ? c.className : undefined });
    }
    for (const f of writes) {
        const field = ctx.vocab.fields.get(f);
        const g = ctx.spec.guards.get(f);
        if (!field || !g) continue;
        // an inferred protection lists every thread that writes: true of each of this check's steps
        if (g.inferred && ids !== undefined && ids.every(i => g.inferred!.writers.includes(i))) continue;
        const text = g.inferred ? g.inferred.text : clausesText(g.clauses);
        push({ text, origin: `writes ${fieldName(field)} only when this holds (${g.inferred ? 'inferred protection' : 'its writable_if'})`, range: g.clauses[0]?.range, forEvery: field.isStatic ? undefined : field.owner, location: f });
    }
    for (const i of inv) if ([...i.maps].some(m => writtenMaps.has(m))) push({ text: i.text, origin: `preserves the ${i.origin}`, range: i.clause.range, forEvery: aboutObjects(i.clause.expr) ? i.className : undefined });
    const callers = u.method ? (ctx.callers.get(u.method.id) ?? []).map(t => t.name) : [];
    return { name: u.name, kind: u.kind === 'thread' ? 'thread' : 'abstraction', threads: calvinText(tidConstraint), callers, environment, invariant, guarantee, tautologies, absent: [] };
}

/** The ids a check's `tid` may have (undefined: a replicated thread may be it, or any thread). */
function possibleIds(ctx: ProgramContext, u: Check): number[] | undefined {
    const threads = u.thread ? [u.thread] : (ctx.callers.get(u.method!.id) ?? []);
    if (threads.length === 0 || threads.some(t => t.id === undefined)) return undefined;
    return threads.map(t => t.id!);
}

/**
 * Whether every thread other than the checked one writes the location (so
 * `f' != f ==> (\exists j; j != tid; j == W1 || ...)` always holds): no
 * replicated thread exists, and for each id the check may have, every other
 * single thread is a writer.
 */
function coversOthers(ctx: ProgramContext, ids: number[] | undefined, writers: number[]): boolean {
    if (ids === undefined || ctx.program.threads.some(t => t.id === undefined)) return false;
    const singles = ctx.program.threads.map(t => t.id!);
    return ids.every(me => singles.every(o => o === me || writers.includes(o)));
}

/** The location a conjunct of E constrains: its field, or the one location its frames keep. */
function locationOf(ctx: ProgramContext, c: Conjunct): string | undefined {
    if (c.field) return c.elements ? `${c.field.id}[*]` : c.field.id;
    const fields = new Set<string>();
    for (const f of c.frames) {
        const v = ctx.vocab.vars.get(f.map);
        if (v?.field) fields.add(v.field.id);
        else if (v) return undefined;
    }
    if (fields.size === 1) return [...fields][0];
    // a clause without frames: the one field it mentions primed
    const primed = new Set<string>();
    if (c.clause) visit(c.clause.expr, x => { if ((x.kind === 'global' || x.kind === 'field') && x.primed) primed.add(x.field); });
    return primed.size === 1 ? [...primed][0] : undefined;
}

/** A class clause that mentions `this` or an instance field holds for every object of the class. */
function aboutObjects(e: Expr): boolean {
    let found = false;
    visit(e, x => { if (x.kind === 'this' || x.kind === 'field' || x.kind === 'holder') found = true; });
    return found;
}

function fieldName(f: FieldModel): string {
    return f.owner ? `${f.owner}.${f.name}` : f.name;
}

/** A field's protection and the environment clauses that constrain it (hover on a field). */
export function describeField(ctx: ProgramContext, fieldId: string): { guard?: SpecItem; inferred: boolean; clauses: SpecItem[]; writers: string[] } {
    const f = ctx.vocab.fields.get(fieldId);
    if (!f) return { inferred: false, clauses: [], writers: [] };
    const g = ctx.spec.guards.get(fieldId);
    const inferredClause = g?.clauses[0]?.inferred;
    const guard = g ? {
        text: g.inferred ? g.inferred.text : clausesText(g.clauses),
        origin: g.inferred ? 'inferred from the threads that write it' : inferredClause ? inferredClause.origin : 'writable_if',
        range: inferredClause ? undefined : g.clauses[0]?.range,
    } : undefined;
    const map = ctx.vocab.varOfField(fieldId);
    const clauses = ctx.guarantee.filter(c => c.maps.has(map)).map(c => ({ text: c.text, origin: c.origin, range: c.clause?.range, forEvery: c.clause && aboutObjects(c.clause.expr) ? c.className : undefined }));
    const writers = ctx.program.threads.filter(t => threadReach(ctx.program, t).writes.has(fieldId)).map(t => t.name);
    return { guard, inferred: g?.inferred !== undefined || inferredClause !== undefined, clauses, writers };
}

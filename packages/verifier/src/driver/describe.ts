import type { Expr, FieldModel, MethodModel, Range, ThreadModel } from '../model/program.js';
import { frameField } from '../model/program.js';
import { methodReach, threadReach } from '../analysis/reach.js';
import { checkSpec, type Check, type ProgramContext } from './program-context.js';
import { calvinText } from '../smt/calvin-text.js';
import { clausesText } from '../spec/environment.js';
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
}

/** E(p), I(p) and the guarantee of a thread. */
export function describeThread(ctx: ProgramContext, t: ThreadModel): SpecDescription {
    return describe(ctx, { key: `thread:${t.name}`, name: t.name, kind: 'thread', range: t.nameRange, thread: t }, threadReach(ctx.program, t).writes);
}

/** E(p), I(p) and the guarantee of a method or procedure (with or without abstraction). */
export function describeMethod(ctx: ProgramContext, m: MethodModel): SpecDescription {
    const writes = new Set(methodReach(ctx.program, m).writes);
    for (const a of [...(m.abstraction?.steps ?? []), ...(m.abstraction?.stutter ? [m.abstraction.stutter] : [])]) for (const e of a.frame) { const f = frameField(e); if (f) writes.add(f); }
    const d = describe(ctx, { key: `abstraction:${m.id}`, name: m.id, kind: 'abstraction', range: m.nameRange, method: m }, writes);
    return { ...d, kind: m.abstraction ? 'abstraction' : 'inlined' };
}

function describe(ctx: ProgramContext, u: Check, writes: Set<string>): SpecDescription {
    const { env, inv, tidConstraint } = checkSpec(ctx, u);
    const environment: SpecItem[] = env.map(c => {
        const cls = c.field ? (c.field.isStatic ? undefined : c.field.owner) : c.clause && aboutObjects(c.clause.expr) ? c.className : undefined;
        return {
            text: c.text, origin: c.origin, range: c.clause?.range ?? (c.kind === 'writable' || c.kind === 'final' ? c.field?.range : undefined),
            prose: c.kind === 'builtin', forEvery: c.kind === 'builtin' ? undefined : cls,
        };
    });
    const invariant: SpecItem[] = inv.map(i => ({ text: i.text, origin: i.origin, range: i.clause.range, forEvery: aboutObjects(i.clause.expr) ? i.className : undefined }));
    const writtenMaps = new Set([...writes].map(f => ctx.vocab.varOfField(f)));
    const guarantee: SpecItem[] = [];
    for (const c of ctx.guarantee) {
        if (![...c.maps].some(m => writtenMaps.has(m))) continue;
        guarantee.push({ text: c.text.replace(/\btid\b/g, 'j'), origin: `${c.origin}, for every other thread j`, range: c.clause?.range, forEvery: c.clause && aboutObjects(c.clause.expr) ? c.className : undefined });
    }
    for (const f of writes) {
        const field = ctx.vocab.fields.get(f);
        const g = ctx.spec.guards.get(f);
        if (!field || !g) continue;
        const text = g.inferred ? g.inferred.text : clausesText(g.clauses);
        guarantee.push({ text, origin: `writes ${fieldName(field)} only when this holds (${g.inferred ? 'inferred protection' : 'its writable_if'})`, range: g.clauses[0]?.range, forEvery: field.isStatic ? undefined : field.owner });
    }
    for (const i of inv) if ([...i.maps].some(m => writtenMaps.has(m))) guarantee.push({ text: i.text, origin: `preserves the ${i.origin}`, range: i.clause.range, forEvery: aboutObjects(i.clause.expr) ? i.className : undefined });
    const callers = u.method ? (ctx.callers.get(u.method.id) ?? []).map(t => t.name) : [];
    return { name: u.name, kind: u.kind === 'thread' ? 'thread' : 'abstraction', threads: calvinText(tidConstraint), callers, environment, invariant, guarantee };
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
    const guard = g ? { text: g.inferred ? g.inferred.text : clausesText(g.clauses), origin: g.inferred ? 'inferred from the threads that write it' : 'writable_if', range: g.clauses[0]?.range } : undefined;
    const map = ctx.vocab.varOfField(fieldId);
    const clauses = ctx.guarantee.filter(c => c.maps.has(map)).map(c => ({ text: c.text, origin: c.origin, range: c.clause?.range, forEvery: c.clause && aboutObjects(c.clause.expr) ? c.className : undefined }));
    const writers = ctx.program.threads.filter(t => threadReach(ctx.program, t).writes.has(fieldId)).map(t => t.name);
    return { guard, inferred: g?.inferred !== undefined, clauses, writers };
}

import type { Clause, Expr, FieldModel, ProgramModel, Range } from '../model/program.js';
import { arrayOwnership } from '../analysis/arrays.js';
import { callersOf, fieldWriters, initializationWrites } from '../analysis/reach.js';
import {
    atomExpr, atomKey, atomPath, atomText, constKey, disjunctKey, pathExpr, pathField, pathText, type Const, guardExpr, guardText, simplify, type Atom, type Disjunct, type Namer, type Path,
} from './atoms.js';
import { annotationCond, elementKind, FactAnalysis, siteKey, type AssertionSite, type WriteModel, type WriteSite } from './facts.js';
import { assertionCandidates } from './invariants.js';
import { lineCount, linesRef } from '../report/lines.js';

/**
 * Inferred protection (issue 13; TAR's havoc maps as `writable_if` guards):
 * for every shared field the user left without `writable_if` and without an
 * `environment` clause about it, the states in which each thread writes it,
 * from the facts the thread knows at its writes (facts.ts). Start from "no
 * other thread writes anything", analyse every thread, make each field's guard
 * the disjunction of what its writers know, and repeat until the guards stop
 * changing.
 *
 * The result is ordinary annotations, marked as inferred: the checker then
 * verifies the program with them like any other (inference proposes, the
 * checker disposes). A guard the checker refutes at a write (an atom that does
 * not hold there) comes back as `excluded`, and the inference runs again
 * without it.
 */

/** A field's inferred guard, with the writes it comes from. */
export interface InferredGuard {
    field: FieldModel;
    disjuncts: Disjunct[];
    text: string;
    /** The writes (and array element writes) the guard was inferred from. */
    sites: WriteSite[];
}

/** An inferred annotation, as the user would write it. */
export interface InferredAnnotation {
    kind: 'writable_if' | 'environment' | 'invariant';
    /** The field it protects (or is about). */
    field: string;
    text: string;
    /** Where it would be written: directly above the field's declaration. */
    before: Range;
    /** Why: "inferred from the writes at lines 12 and 20, all holding lk". */
    origin: string;
}

export interface InferOptions {
    /** Atoms the checker refuted at a write: site key → atom keys. */
    excluded?: Map<string, Set<string>>;
    /** Fields whose inferred guard the checker refuted where no single atom could be blamed: not inferred. */
    disabled?: Set<string>;
}

export interface Inference {
    /** The program with the inferred annotations added (its clauses carry `inferred`). */
    program: ProgramModel;
    guards: Map<string, InferredGuard>;
    annotations: InferredAnnotation[];
    /** Fields written by threads that no guard could protect (their writes, for race messages and hover). */
    unprotected: Map<string, WriteSite[]>;
    /** Iterations of the fixpoint. */
    rounds: number;
}

const MAX_ROUNDS = 12;

export function inferAnnotations(program: ProgramModel, options: InferOptions = {}): Inference {
    const fields = new Map<string, FieldModel>();
    for (const g of program.globals) fields.set(g.id, g);
    for (const c of program.classes) for (const f of c.fields) fields.set(f.id, f);
    const ownership = arrayOwnership(program);
    const writers = fieldWriters(program);
    const initWrites = initializationWrites(program);
    const stable = new Set<string>();
    for (const f of fields.values()) {
        const w = writers.get(f.id);
        if (f.isFinal || ((!w || (!w.any && w.ids.size === 0)) && !initWrites.has(f.id))) stable.add(f.id);
    }
    // what the user wrote: guards, and environment clauses' frames
    const kept = environmentFrames(program);
    const userGuard = new Map<string, Disjunct[] | 'any'>();
    for (const f of fields.values()) if (f.writableIf.length > 0) userGuard.set(f.id, userDisjuncts(f.writableIf));
    // (an array-typed field that owns its arrays is a candidate even when it is itself never
    // written: its guard protects the elements, language.md §6)
    const candidates = [...fields.values()].filter(f =>
        f.writableIf.length === 0 && (!stable.has(f.id) || ownership.owners.has(f.id)) && !kept.mentioned.has(f.id) && !options.disabled?.has(f.id));
    const inferred = new Map<string, Disjunct[] | 'any'>(candidates.map(f => [f.id, []]));
    const threadsAlways = new Set<string>();
    const callers = callersOf(program);

    let sites = new Map<string, WriteSite>();
    let sharedElements = new Set<string>();
    let assertions: AssertionSite[] = [];
    let monotone = new Map<string, Const>();
    let rounds = 0;
    for (; rounds < MAX_ROUNDS; rounds++) {
        const frames = new Map(kept.frames);
        for (const [id, c] of monotone) frames.set(id, [...(frames.get(id) ?? []), [{ k: 'eq', loc: selfPath(fields.get(id)!), c }]]);
        const model: WriteModel = {
            guard: id => {
                if (stable.has(id)) return undefined;
                return userGuard.get(id) ?? inferred.get(id) ?? 'any';
            },
            keptWhen: id => frames.get(id) ?? [],
        };
        const fa = new FactAnalysis(program, model, options.excluded, ownership.owners);
        fa.run(callers);
        sharedElements = fa.sharedElementWrites;
        assertions = fa.assertions;
        const before = [...monotone.keys()].join(',');
        monotone = monotoneFields(candidates, fa.sites, fa.tested, options.disabled);
        sites = relevant(fa.sites, fa.tested);
        let changed = false;
        const byField = sitesByField(sites);
        for (const f of candidates) {
            const next = guardOf(f.id, byField.get(f.id) ?? [], threadsAlways);
            const before = inferred.get(f.id)!;
            if (keyOf(next) !== keyOf(before)) { inferred.set(f.id, next); changed = true; }
        }
        if (!changed && before === [...monotone.keys()].join(',')) break;
    }

    const namer = (cls: string | undefined): Namer => ({
        field: id => fields.get(id),
        threadName: id => program.threads.find(t => t.id === id)?.name ?? String(id),
        thisClass: cls,
    });
    const guards = new Map<string, InferredGuard>();
    const unprotected = new Map<string, WriteSite[]>();
    const annotations: InferredAnnotation[] = [];
    const clauses = new Map<string, Clause>();
    const byField = sitesByField(sites);
    for (const f of candidates) {
        const g = inferred.get(f.id)!;
        const fieldSites = [...(byField.get(f.id) ?? [])].sort(byPosition);
        if (g === 'any') {
            if (fieldSites.length > 0) unprotected.set(f.id, fieldSites);
            continue;
        }
        // written only while its object is private to the writer (or never): no thread writes it once
        // shared (a field that keeps its value needs no guard; the arrays it owns do, for their elements)
        if (fieldSites.length === 0 && ((stable.has(f.id) && !ownership.owners.has(f.id)) || f.isStatic || !f.owner)) continue;
        const n = namer(f.isStatic ? undefined : f.owner);
        const text = guardText(g, n);
        const origin = fieldSites.length > 0 ? originText(fieldSites, n) : 'inferred: it is only written while its object is private to the writing thread (before it is shared)';
        guards.set(f.id, { field: f, disjuncts: g, text, sites: fieldSites });
        annotations.push({ kind: 'writable_if', field: f.id, text, before: f.range, origin });
        clauses.set(f.id, {
            expr: guardExpr(g, n, f.nameRange), range: f.nameRange, text,
            inferred: {
                kind: 'writable_if', field: f.id, origin,
                // what each write must satisfy: its own disjunct, one atom at a time (a refuted atom is blamed on its own)
                sites: fieldSites.map(s => ({
                    range: s.range,
                    threads: s.threads,
                    held: siteText(s, n, program),
                    atoms: s.atoms.map(a => ({ key: atomKey(a), text: atomText(a, n), expr: atomExpr(a, n, s.range) })),
                })),
            },
        });
    }
    // Fields only ever set to one value, that no guard protects: once they hold it, they keep it.
    const envClauses: Array<{ owner?: string; clause: Clause }> = [];
    for (const [id, c] of monotone) {
        if (guards.has(id)) continue;
        const f = fields.get(id)!;
        const n = namer(f.isStatic ? undefined : f.owner);
        const self = selfPath(f);
        const cond: Atom = { k: 'eq', loc: self, c };
        const written = (unprotected.get(id) ?? []).map(s => s.range);
        const origin = `inferred: every write of ${f.name}${written.length > 0 ? ` (${linesRef(written, 'comma')})` : ''} stores ${constKey(c)}`;
        const loc = pathExpr(self, n, f.nameRange);
        const primed = { ...loc, primed: true } as Expr;
        const expr: Expr = { kind: 'binary', op: '==>', left: atomExpr(cond, n, f.nameRange), right: { kind: 'binary', op: '==', left: primed, right: loc, type: { kind: 'boolean' }, range: f.nameRange }, type: { kind: 'boolean' }, range: f.nameRange };
        const self_ = pathText(self, n);
        const text = `${atomText(cond, n)} ==> ${self_}' == ${self_}`;
        annotations.push({ kind: 'environment', field: id, text, before: f.range, origin });
        envClauses.push({ owner: f.owner, clause: { expr, range: f.nameRange, text, inferred: { kind: 'environment', field: id, origin, sites: [] } } });
    }
    // Lock variables: every write stores the writer's own id or a constant that is no thread's id
    // (0): another thread never makes it this thread's id.
    for (const f of candidates) {
        const fieldSites = (byField.get(f.id) ?? []).filter(x => !x.elements);
        if (f.type.kind !== 'int' || fieldSites.length === 0 || options.disabled?.has(`env:idv:${f.id}`)) continue;
        if (!fieldSites.some(x => x.value === 'tid') || !fieldSites.every(x => x.value === 'tid' || (typeof x.value === 'object' && x.value.k === 'int' && x.value.v <= 0n))) continue;
        const n = namer(f.isStatic ? undefined : f.owner);
        const self = selfPath(f);
        const loc = pathExpr(self, n, f.nameRange);
        const primed = { ...loc, primed: true } as Expr;
        const tid: Expr = { kind: 'tid', type: { kind: 'int' }, range: f.nameRange };
        const ne = (x: Expr): Expr => ({ kind: 'binary', op: '!=', left: x, right: tid, type: { kind: 'boolean' }, range: f.nameRange });
        const expr: Expr = { kind: 'binary', op: '==>', left: ne(loc), right: ne(primed), type: { kind: 'boolean' }, range: f.nameRange };
        const t = pathText(self, n);
        const text = `${t} != tid ==> ${t}' != tid`;
        const origin = `inferred: every write of ${f.name} stores the writing thread's id or 0, so no other thread makes it this thread's id`;
        annotations.push({ kind: 'environment', field: f.id, text, before: f.range, origin });
        envClauses.push({ owner: f.owner, clause: { expr, range: f.nameRange, text, inferred: { kind: 'environment', field: `idv:${f.id}`, origin, sites: [] } } });
    }
    // Counters: every write adds a non-negative constant to the value the writer read: the other
    // threads never decrease it (a guess the checks confirm: a write racing with another is refuted)
    for (const f of candidates) {
        const fieldSites = (byField.get(f.id) ?? []).filter(x => !x.elements);
        if (f.type.kind !== 'int' || fieldSites.length === 0 || !fieldSites.every(x => x.increment) || options.disabled?.has(`env:inc:${f.id}`)) continue;
        const n = namer(f.isStatic ? undefined : f.owner);
        const self = selfPath(f);
        const loc = pathExpr(self, n, f.nameRange);
        const primed = { ...loc, primed: true } as Expr;
        const expr: Expr = { kind: 'binary', op: '<=', left: loc, right: primed, type: { kind: 'boolean' }, range: f.nameRange };
        const t = pathText(self, n);
        const text = `${t} <= ${t}'`;
        const origin = `inferred: every write of ${f.name} (${linesRef(fieldSites.map(x => x.range), 'comma')}) adds a non-negative constant to the value read`;
        annotations.push({ kind: 'environment', field: f.id, text, before: f.range, origin });
        envClauses.push({ owner: f.owner, clause: { expr, range: f.nameRange, text, inferred: { kind: 'environment', field: `inc:${f.id}`, origin, sites: [] } } });
    }
    // invariants (and monotone counters) from the assertions, for the checker to prove or refute
    const invClauses: Array<{ owner?: string; clause: Clause }> = [];
    const candidates_ = assertionCandidates(assertions, fields, namer, options.disabled);
    const keys = new Set(candidates_.map(c => c.key));
    for (const c of candidates_) {
        const clause: Clause = { expr: c.expr, range: c.range, text: c.text, inferred: { kind: c.kind, field: c.key, origin: c.origin, sites: [] } };
        if (c.kind === 'environment') envClauses.push({ owner: c.owner, clause });
        else invClauses.push({ owner: c.owner, clause });
        // a conditional one is not shown when the unconditional one holds (it adds nothing)
        if (c.implies && keys.has(c.implies)) continue;
        const f = fields.get(c.fields[0]);
        if (f) annotations.push({ kind: c.kind, field: f.id, text: c.text, before: f.range, origin: c.origin });
    }
    // Element types whose arrays are written only while private to the writer (no element write of
    // a shared array is seen): the elements of a published array of that type never change. The
    // checks confirm it at every element write (a refutation drops the type).
    for (const st of sites.values()) {
        const t = st.elements ? fields.get(st.field)?.type : undefined;
        if (t?.kind === 'array') sharedElements.add(elementKind(t.element));
    }
    const privateElements = (['Int', 'Bool', 'Ref'] as const).filter(k => !sharedElements.has(k) && !options.disabled?.has(`env:elems:${k}`));
    const out = { ...withClauses(program, clauses, envClauses, invClauses), privateElements };
    const unprotectedFields = [...unprotected].map(([field, ss]) => ({ field, sites: ss.map(x => ({ range: x.range, held: siteText(x, namer(fields.get(field)?.isStatic ? undefined : fields.get(field)?.owner), program) })) }));
    return { program: unprotectedFields.length > 0 ? { ...out, unprotected: unprotectedFields } : out, guards, annotations, unprotected, rounds: rounds + 1 };
}

/** A field as a path from `this` (instance fields) or itself (globals, static fields). */
function selfPath(f: FieldModel): Path {
    return f.isStatic || !f.owner ? { base: { k: 'global', field: f.id }, fields: [] } : { base: { k: 'this' }, fields: [f.id] };
}

/**
 * Fields the code tests whose every write stores the same constant: candidates
 * for `f == c ==> f' == f` (a stop flag that is only ever set).
 */
function monotoneFields(candidates: FieldModel[], sites: Map<string, WriteSite>, tested: Set<string>, disabled?: Set<string>): Map<string, Const> {
    const out = new Map<string, Const>();
    const byField = sitesByField(sites);
    for (const f of candidates) {
        if (!tested.has(f.id) || disabled?.has(`env:${f.id}`)) continue;
        const values = (byField.get(f.id) ?? []).filter(s => !s.elements).map(s => s.value);
        if (values.length === 0 || values.some(v => v === undefined || v === 'tid')) continue;
        const keys = new Set(values.map(v => constKey(v as Const)));
        if (keys.size === 1) out.set(f.id, values[0] as Const);
    }
    return out;
}

function sitesByField(sites: Map<string, WriteSite>): Map<string, WriteSite[]> {
    const out = new Map<string, WriteSite[]>();
    for (const s of sites.values()) {
        const list = out.get(s.field);
        if (list) list.push(s); else out.set(s.field, [s]);
    }
    return out;
}

/** A field's guard from its writes: per distinct set of facts, the threads that write knowing them. */
function guardOf(field: string, all: WriteSite[], threadsAlways: Set<string>): Disjunct[] | 'any' {
    const byAtoms = new Map<string, Disjunct>();
    for (const s of all) {
        if (s.field !== field) continue;
        const k = s.atoms.map(atomKey).sort().join('&');
        const d = byAtoms.get(k);
        if (!d) byAtoms.set(k, { threads: s.threads ? [...s.threads] : undefined, atoms: s.atoms });
        else d.threads = d.threads && s.threads ? [...new Set([...d.threads, ...s.threads])].sort((a, b) => a - b) : undefined;
    }
    // A disjunct several threads satisfy with the same facts: naming them adds nothing for the
    // other threads (only a disjunct of one thread can exclude it), so they are not named.
    let ds = [...byAtoms.values()].map(d => d.threads && d.threads.length > 1 && d.atoms.length > 0 ? { atoms: d.atoms } : d);
    if (ds.length === 0) return [];
    // Each thread's own lock or monitor identifies it: the threads need not be named (once a
    // write without one is seen, the threads stay named, so that the fixpoint only weakens).
    const owned = (d: Disjunct) => d.atoms.some(a => a.k === 'eqTid' || a.k === 'held');
    if (!threadsAlways.has(field) && ds.every(owned)) ds = ds.map(d => ({ atoms: d.atoms }));
    else threadsAlways.add(field);
    ds = simplify(ds);
    if (ds.some(d => !d.threads && d.atoms.length === 0)) return 'any';
    return ds.sort((a, b) => disjunctKey(a).localeCompare(disjunctKey(b)));
}

/** The sites with only the facts about ownership (a lock, a monitor) and about fields the code tests. */
function relevant(sites: Map<string, WriteSite>, tested: Set<string>): Map<string, WriteSite> {
    const out = new Map<string, WriteSite>();
    for (const [k, s] of sites) {
        out.set(k, { ...s, atoms: s.atoms.filter(a => a.k === 'held' || a.k === 'eqTid' || tested.has(pathField(atomPath(a)) ?? '')) });
    }
    return out;
}

function keyOf(g: Disjunct[] | 'any'): string {
    return g === 'any' ? 'any' : g.map(disjunctKey).join('|');
}

function byPosition(a: WriteSite, b: WriteSite): number {
    return a.range.file.localeCompare(b.range.file) || a.range.startLine - b.range.startLine || a.range.startChar - b.range.startChar;
}

/** "inferred from the writes at lines 12 and 20, all holding lk" */
function originText(sites: WriteSite[], n: Namer): string {
    const ranges = sites.map(s => s.range);
    const at = `the write${lineCount(ranges) === 1 ? '' : 's'} at ${linesRef(ranges)}`;
    const common = sites.map(s => new Set(s.atoms.map(atomKey))).reduce((x, y) => new Set([...x].filter(k => y.has(k))));
    const shared = sites[0].atoms.filter(a => common.has(atomKey(a)));
    const what = shared.length > 0 ? `, ${sites.length > 1 ? 'all ' : ''}${heldText(shared, n)}` : '';
    return `inferred from ${at}${what}`;
}

/** "holding lk, when flag == 0" */
export function heldText(atoms: Atom[], n: Namer): string {
    const holding = atoms.filter(a => a.k === 'held' || a.k === 'eqTid').map(a => a.k === 'held' ? `the monitor of ${pathName(a.obj, n)}` : pathName((a as { loc: Path }).loc, n));
    const when = atoms.filter(a => a.k === 'eq' || a.k === 'ne').map(a => atomText(a, n));
    const parts: string[] = [];
    if (holding.length > 0) parts.push(`holding ${holding.join(' and ')}`);
    if (when.length > 0) parts.push(`when ${when.join(' && ')}`);
    return parts.length > 0 ? parts.join(', ') : 'holding nothing';
}

/** "by T1, holding Mutex.m" */
function siteText(s: WriteSite, n: Namer, program: ProgramModel): string {
    const who = s.threads ? s.threads.map(id => program.threads.find(t => t.id === id)?.name ?? String(id)).join(' or ') : undefined;
    const held = heldText(s.atoms, n);
    // a write inside `atomic` excludes the other threads' atomic blocks, not their plain accesses
    const how = !s.atomic ? held : s.atoms.length === 0 ? 'inside atomic' : `${held}, inside atomic`;
    return `${who ? `by ${who}, ` : ''}${how}`;
}

function pathName(p: Path, n: Namer): string {
    return atomText({ k: 'held', obj: p }, n).replace(/\.holder == tid$/, '');
}

/** The program with inferred guards as the fields' `writable_if` clauses, and inferred `environment` clauses. */
function withClauses(program: ProgramModel, clauses: Map<string, Clause>, env: Array<{ owner?: string; clause: Clause }>, inv: Array<{ owner?: string; clause: Clause }>): ProgramModel {
    if (clauses.size === 0 && env.length === 0 && inv.length === 0) return program;
    const field = (f: FieldModel): FieldModel => {
        const c = clauses.get(f.id);
        return c ? { ...f, writableIf: [c] } : f;
    };
    return {
        ...program,
        globals: program.globals.map(field),
        environments: [...program.environments, ...env.filter(e => !e.owner).map(e => e.clause)],
        invariants: [...program.invariants, ...inv.filter(e => !e.owner).map(e => e.clause)],
        classes: program.classes.map(c => ({
            ...c, fields: c.fields.map(field),
            environments: [...c.environments, ...env.filter(e => e.owner === c.name).map(e => e.clause)],
            invariants: [...c.invariants, ...inv.filter(e => e.owner === c.name).map(e => e.clause)],
        })),
    };
}

// ------------------------------------------------------------------ what the user wrote

/** A written `writable_if` as disjuncts of atoms, or 'any' when it has another shape. */
export function userDisjuncts(clauses: Clause[]): Disjunct[] | 'any' {
    let ds: Disjunct[] = [{ atoms: [] }];
    for (const c of clauses) {
        const part = toDisjuncts(c.expr);
        if (!part) return 'any';
        const next: Disjunct[] = [];
        for (const a of ds) for (const b of part) next.push(conjoin(a, b));
        ds = next;
    }
    return ds.filter(d => !(d.threads && d.threads.length === 0));
}

function conjoin(a: Disjunct, b: Disjunct): Disjunct {
    const threads = a.threads && b.threads ? a.threads.filter(t => b.threads!.includes(t)) : a.threads ?? b.threads;
    return { threads, atoms: [...a.atoms, ...b.atoms] };
}

const thisPath = (e: Expr): Path | undefined => {
    if (e.kind === 'this') return { base: { k: 'this' }, fields: [] };
    if (e.kind === 'global') return { base: { k: 'global', field: e.field }, fields: [] };
    if (e.kind === 'field') {
        const r = thisPath(e.receiver);
        return r ? { base: r.base, fields: [...r.fields, e.field] } : undefined;
    }
    return undefined;
};

function toDisjuncts(e: Expr): Disjunct[] | undefined {
    if (e.kind === 'binary' && e.op === '||') {
        const l = toDisjuncts(e.left), r = toDisjuncts(e.right);
        return l && r ? [...l, ...r] : undefined;
    }
    if (e.kind === 'binary' && e.op === '&&') {
        const l = toDisjuncts(e.left), r = toDisjuncts(e.right);
        if (!l || !r) return undefined;
        const out: Disjunct[] = [];
        for (const a of l) for (const b of r) out.push(conjoin(a, b));
        return out;
    }
    if (e.kind === 'cond') {
        const c = annotationCond(e.cond, thisPath);
        const t = toDisjuncts(e.then), f = toDisjuncts(e.else);
        if (!t || !f || c.t.length === 0 || c.f.length === 0) return undefined;
        return [...t.map(d => ({ ...d, atoms: [...c.t, ...d.atoms] })), ...f.map(d => ({ ...d, atoms: [...c.f, ...d.atoms] }))];
    }
    if (e.kind === 'binary' && e.op === '==') {
        const id = e.left.kind === 'tid' && e.right.kind === 'threadId' ? e.right.id : e.right.kind === 'tid' && e.left.kind === 'threadId' ? e.left.id : undefined;
        if (id !== undefined) return [{ threads: [id], atoms: [] }];
    }
    if (e.kind === 'bool' && e.value) return [{ atoms: [] }];
    if (e.kind === 'bool' && !e.value) return [];
    const c = annotationCond(e, thisPath);
    return c.t.length > 0 ? [{ atoms: c.t }] : undefined;
}

/**
 * The written `environment` clauses of the form `A ==> f' == f` (conjunctions
 * of them): per field, the conditions under which other threads leave it
 * unchanged; and every field some clause says something about.
 */
function environmentFrames(program: ProgramModel): { frames: Map<string, Atom[][]>; mentioned: Set<string> } {
    const frames = new Map<string, Atom[][]>();
    const mentioned = new Set<string>();
    const clauses = [...program.environments, ...program.classes.flatMap(c => c.environments)];
    const visit = (e: Expr) => {
        if ((e.kind === 'global' || e.kind === 'field') && e.primed) mentioned.add(e.field);
        for (const x of Object.values(e)) if (x && typeof x === 'object' && 'kind' in x && 'range' in x) visit(x as Expr);
    };
    for (const c of clauses) {
        visit(c.expr);
        const parts: Expr[] = [];
        const split = (x: Expr) => { if (x.kind === 'binary' && x.op === '&&') { split(x.left); split(x.right); } else parts.push(x); };
        split(c.expr);
        for (const p of parts) {
            const cond = p.kind === 'binary' && p.op === '==>' ? p.left : undefined;
            const body = cond ? (p as Extract<Expr, { kind: 'binary' }>).right : p;
            const target = unchangedField(body);
            if (!target) continue;
            const atoms = cond ? annotationCond(cond, thisPath).t : [];
            if (cond && atoms.length === 0) continue;
            const list = frames.get(target) ?? [];
            list.push(atoms);
            frames.set(target, list);
        }
    }
    return { frames, mentioned };
}

/** `f' == f` (either order) for a global or a field of `this`: f. */
function unchangedField(e: Expr): string | undefined {
    if (e.kind !== 'binary' || e.op !== '==') return undefined;
    const [a, b] = [e.left, e.right];
    const same = (p: Expr, q: Expr) => (p.kind === 'global' && q.kind === 'global' && p.primed && !q.primed && p.field === q.field)
        || (p.kind === 'field' && q.kind === 'field' && p.primed && !q.primed && p.field === q.field && p.receiver.kind === 'this' && q.receiver.kind === 'this');
    if (same(a, b)) return (a as { field: string }).field;
    if (same(b, a)) return (b as { field: string }).field;
    return undefined;
}

export { siteKey };

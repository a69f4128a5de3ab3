import { abstractionActions, type Expr, type MethodModel, type ProgramModel, type Range, type ThreadModel } from '../model/program.js';
import { visit } from '../model/visit.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import { callersOf, fieldWriters, initializationWrites, methodReach, threadReach, type Reach } from '../analysis/reach.js';
import { arrayOwnership, elementWriters } from '../analysis/arrays.js';
import { elemsVar, OWNER, sortOfType, Vocabulary } from '../heap/vocabulary.js';
import {
    allEnvironmentClauses, allInvariants, environmentOf, inferElementGuards, inferGuards, mapsOfExpr, TID, type Conjunct, type Invariant, type SpecContext,
} from '../spec/environment.js';
import type { Closure } from '../closure/closure.js';

// A program's checks (checking.md, Theorem 1), what they share (the program
// context), and what each check assumes: E(p), I(p) and its thread ids.

export interface Check {
    /** Stable key of the check: `init`, `abstraction:C.m`, `thread:T`. */
    key: string;
    name: string;
    kind: 'thread' | 'abstraction' | 'init';
    range: Range;
    thread?: ThreadModel;
    method?: MethodModel;
}

/** Everything the checks of one program share. */
export interface ProgramContext {
    program: ProgramModel;
    vocab: Vocabulary;
    spec: SpecContext;
    callers: Map<string, ThreadModel[]>;
    invariants: Invariant[];
    guarantee: Conjunct[];
    closures: Map<string, Promise<Closure>>;
}

export function programContext(program: ProgramModel): ProgramContext {
    const vocab = new Vocabulary(program);
    const writers = fieldWriters(program);
    // Fields that keep their initializer's value: final, or written neither by a thread nor by
    // what the globals' initializers call.
    const initWrites = initializationWrites(program);
    for (const f of vocab.fields.values()) {
        const w = writers.get(f.id);
        if (f.isFinal || ((!w || (!w.any && w.ids.size === 0)) && !initWrites.has(f.id))) vocab.stableFields.add(f.id);
    }
    // Elements of a sort no thread writes, or only one single-instance thread: stable (for it).
    const elements = elementWriters(program, sortOfType);
    for (const v of vocab.allVars()) {
        const w = elements.get(v.sort);
        if (v.kind === 'elems' && !w?.any && (w?.ids.size ?? 0) <= 1) vocab.elementWriters.set(v.name, [...w?.ids ?? []]);
    }
    // Elements of a sort threads write only while their array is private (inferred): unchanged once published.
    if (vocab.has(OWNER)) for (const k of program.privateElements ?? []) if (vocab.has(elemsVar(k))) vocab.privateElements.add(elemsVar(k));
    const ownership = arrayOwnership(program);
    const spec: SpecContext = {
        vocab, guards: inferGuards(program, vocab, writers),
        elementGuards: inferElementGuards(program, vocab, ownership), notOwned: ownership.notOwned,
    };
    return { program, vocab, spec, callers: callersOf(program), invariants: allInvariants(vocab), guarantee: allEnvironmentClauses(vocab), closures: new Map() };
}

/** The checks of a program (Theorem 1): initialization, each procedure with an abstraction, each thread. */
export function checksOf(ctx: ProgramContext): Check[] {
    const checks: Check[] = [];
    if (ctx.invariants.length > 0) checks.push({ key: 'init', name: 'initialization', kind: 'init', range: ctx.invariants[0].clause.range });
    for (const m of ctx.vocab.allMethods()) if (m.abstraction) checks.push({ key: `abstraction:${m.id}`, name: m.id, kind: 'abstraction', range: m.nameRange, method: m });
    for (const t of ctx.program.threads) checks.push({ key: `thread:${t.name}`, name: t.name, kind: 'thread', range: t.nameRange, thread: t });
    return checks;
}

function tidConstraintOf(vocab: Vocabulary, threads: ThreadModel[] | undefined): Term {
    const k = vocab.singleThreads;
    if (!threads || threads.length === 0) return T.cmp('>', TID, T.int(0));
    return T.or(...threads.map(t => t.id !== undefined ? T.eq(TID, T.int(t.id)) : T.cmp('>', TID, T.int(k))));
}

/**
 * What E(p) is made of (language.md §6): the classes p involves (and the top
 * level), and the fields whose protection it includes. Besides what p
 * accesses, the fields and classes that its clauses, its invariants and the
 * guards of those fields mention: their protection is what makes the
 * assumptions about the accessed fields hold over time. (Any such addition is
 * sound: every thread's steps are checked against every clause and guard.)
 */
export function involved(ctx: ProgramContext, reach: Reach, inv: Invariant[], topLevel: boolean, method?: MethodModel): { fields: Set<string>; classes: Set<string>; topLevel: boolean } {
    const { vocab, spec } = ctx;
    const fields = new Set(reach.fields);
    const classes = new Set(reach.classes);
    let top = topLevel;
    for (const i of inv) for (const f of fieldsOfExpr(i.clause.expr)) fields.add(f);
    // What the method's abstraction says of a field (`requires aw == tid`) holds over time only
    // by that field's protection, even where the body never reads it.
    const abs = method?.abstraction;
    if (abs) for (const c of [...abs.requires, ...abs.ensures, ...abstractionActions(method!)]) for (const f of fieldsOfExpr(c.expr)) fields.add(f);
    for (let changed = true; changed;) {
        changed = false;
        const add = (f: string) => { if (!fields.has(f)) { fields.add(f); changed = true; } };
        for (const fid of [...fields]) {
            const owner = vocab.fields.get(fid)?.owner;
            if (owner === undefined) { if (!top) { top = true; changed = true; } }
            else if (!classes.has(owner)) { classes.add(owner); changed = true; }
            for (const w of spec.guards.get(fid)?.clauses ?? []) for (const f of fieldsOfExpr(w.expr)) add(f);
        }
        const clauses = [
            ...(top ? vocab.program.environments : []),
            ...vocab.program.classes.filter(c => classes.has(c.name)).flatMap(c => c.environments),
        ];
        for (const c of clauses) for (const f of fieldsOfExpr(c.expr)) add(f);
    }
    return { fields, classes, topLevel: top };
}

function fieldsOfExpr(e: Expr): string[] {
    const out: string[] = [];
    visit(e, x => { if (x.kind === 'global' || x.kind === 'field') out.push(x.field); });
    return out;
}

/**
 * I(p) (language.md §6): the invariants of the classes p involves, and the
 * top-level ones for a thread or top-level procedure. A thread also takes
 * every invariant about a field it accesses: the threads' checks are where
 * each write is finally checked against every invariant it could break.
 */
export function invariantsFor(ctx: ProgramContext, reach: Reach, fields: Set<string>, thread: boolean, topLevel: boolean): Invariant[] {
    const maps = new Set([...fields].map(f => ctx.vocab.varOfField(f)));
    return ctx.invariants.filter(i => {
        if (i.className === undefined ? topLevel : reach.classes.has(i.className)) return true;
        return thread && [...mapsOfExpr(i.clause.expr, ctx.vocab)].some(m => maps.has(m));
    });
}

/** E(p), I(p) and the thread ids of a thread or procedure check. */
export function checkSpec(ctx: ProgramContext, u: Check): { env: Conjunct[]; inv: Invariant[]; tidConstraint: Term } {
    const reach = u.thread ? threadReach(ctx.program, u.thread) : methodReach(ctx.program, u.method!);
    const topLevel = u.thread !== undefined || reach.topLevel;
    const inv = invariantsFor(ctx, reach, new Set(reach.fields), u.thread !== undefined, topLevel);
    const inv_ = involved(ctx, reach, inv, topLevel, u.method);
    const env = environmentOf(ctx.spec, inv_.classes, inv_.topLevel, inv_.fields);
    const tidConstraint = u.thread
        ? (u.thread.id !== undefined ? T.eq(TID, T.int(u.thread.id)) : T.cmp('>', TID, T.int(ctx.vocab.singleThreads)))
        : tidConstraintOf(ctx.vocab, ctx.callers.get(u.method!.id));
    return { env, inv, tidConstraint };
}

/** Whether E or I depends on which thread is checked: a clause or guard names a thread, or a guard is inferred from the threads that write. */
export function namesThreads(ctx: ProgramContext, env: Conjunct[], inv: Invariant[]): boolean {
    const names = (e: Expr) => {
        let found = false;
        visit(e, x => { if (x.kind === 'threadId') found = true; });
        return found;
    };
    for (const c of env) {
        if (c.clause && names(c.clause.expr)) return true;
        const g = c.field ? ctx.spec.guards.get(c.field.id) : undefined;
        if (g?.inferred && g.inferred.writers.length > 0) return true;
        if (g && g.clauses.some(w => names(w.expr))) return true;
    }
    return inv.some(i => names(i.clause.expr));
}

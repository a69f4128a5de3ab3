import { ALLOC, HOLDER, OWNER, allocated, holderOf, lengthOf, ownerOf, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import { calvinText } from '../smt/calvin-text.js';
import type { Term } from '../smt/term.js';
import type { Cmd, LocalDecl, OpCmd } from '../il/il.js';
import type { Range } from '../model/program.js';
import { guardTerm, type Guard } from '../spec/environment.js';

export interface CandidateInput {
    vocab: Vocabulary;
    body: Cmd[];
    locals: Map<string, LocalDecl>;
    /** Locals assigned in the loop (havocked at its head). */
    modifiedLocals: Set<string>;
    /** State variables havocked at the head (the others follow the environment from the entry state). */
    havocked: Set<string>;
    /** State variables havocked at the head at some keys only (the owners of objects a loop that publishes may publish). */
    partlyHavocked?: Set<string>;
    /** The state at loop entry, for "unchanged since the loop began". */
    entryState: string;
    /** Locals with a value at loop entry. */
    definedLocals: Set<string>;
    /** The loop statement (its block's locals are out of scope after it). */
    range?: Range;
    tid: Term;
    guards: Map<string, Guard>;
    pc?: { name: string; steps: number };
    userInvariants: Term[];
    /** What follows the loop: the terms its assertions compare with something live at the head make candidates too. */
    after?: Cmd[];
}

export interface Candidate {
    cond: Term;
    text: string;
}

const MAX_CANDIDATES = 400;
/** Boolean variables of a loop, and facts about each, that get candidates of the form `b ==> fact`. */
const MAX_FLAGS = 3;
const MAX_FLAG_FACTS = 12;
const MAX_BOOL_ATOMS = 2;
/** Terms taken from the assertions after a loop, at most. */
const MAX_AFTER_ATOMS = 4;

/**
 * Houdini candidates for a loop (pipeline stage 5): comparisons found in the
 * loop's conditions and checks, each int variable against the constants and
 * the other int terms in scope, non-null references, `pc == k`, what holds
 * while a boolean variable of the loop is true or false (`done ==> pc == 2`,
 * `!got ==> m != tid`) or what it equals, monitor and
 * privacy facts of the objects in scope, `writable_if` guards at the objects
 * the loop touches, and "unchanged since the loop began" for havocked shared
 * locations. Only candidates over something the loop head changes are made
 * (the rest is kept anyway). Houdini keeps the ones that are inductive.
 */
export function loopCandidates(input: CandidateInput): Candidate[] {
    const { vocab } = input;
    const isLocal = (name: string) => input.locals.has(name);
    const changes = (t: Term): boolean => {
        for (const name of T.freeVars(t)) if (input.modifiedLocals.has(name) || name === input.pc?.name) return true;
        for (const r of T.readsOf(t)) if (r.state === undefined && (input.havocked.has(r.map) || input.partlyHavocked?.has(r.map))) return true;
        return false;
    };
    // Usable in a candidate: tid, pc, reads in the current state, and the locals that hold a value at
    // the head: those defined before the loop that it does not change, and the program's variables it
    // changes (temporaries the loop assigns are dead at its head).
    // (A local the body always assigns before it reads it, and before it leaves the loop, is dead at
    // the head too: no candidate about it can matter, and each costs Houdini a round. Issue 15.)
    const exposed = upwardExposed(input.body, input.range, input.definedLocals);
    const live = (name: string) => input.modifiedLocals.has(name) ? isSourceVariable(name) && exposed.has(name) : input.definedLocals.has(name);
    const usable = (t: Term): boolean => {
        for (const name of T.freeVars(t)) {
            if (name === 'tid' || name === 'null' || name === input.pc?.name) continue;
            if (!isLocal(name) || !live(name)) return false;
        }
        return T.readsOf(t).every(r => r.state === undefined);
    };
    const intAtoms = new Map<string, Term>();
    const refAtoms = new Map<string, Term>();
    const comparisons = new Map<string, Term>();
    const constants = new Set<bigint>([0n, 1n]);
    const stateAtoms = new Map<string, Extract<Term, { t: 'read' }>>();
    // Boolean locations the loop stores to, or that an assertion after it reads (`l.w = true;
    // ok = true;` in a retry loop, then `assert l.w;`): facts its flags may record (`ok ==> l.w`).
    // Then, with the room left, those it reads: a polling loop records what it saw (`ready =
    // p.isDone();` until ready, then the data that `done` protects: `ready ==> p.done`).
    const boolAtoms = new Map<string, Term>();
    const boolReads: Term[] = [];
    // Int locations the loop stores the thread's id to (`got = cas(lk, 0, tid)`): `lk == tid` is a
    // fact its flags may record (`got ==> lk == tid`).
    const claims = new Map<string, Term>();
    // (a store's object is often a temporary that read it from a shared location: that location)
    const defs = new Map<string, Term>();
    /** A field or global read, its keys' temporaries replaced by the locations they read, if usable. */
    const sharedRead = (t: Term): Term | undefined => {
        if (t.t !== 'read') return undefined;
        const r = T.read(t.map, t.keys.map(k => (k.t === 'var' && defs.get(k.name)) || k), t.sort);
        const sv = vocab.vars.get(t.map);
        return usable(r) && sv && (sv.kind === 'field' || sv.kind === 'global') ? r : undefined;
    };
    const addBool = (t: Term) => {
        const r = boolAtoms.size < MAX_BOOL_ATOMS ? sharedRead(t) : undefined;
        if (r) boolAtoms.set(T.key(r), r);
    };
    const addClaim = (t: Term) => {
        const r = claims.size < MAX_BOOL_ATOMS ? sharedRead(t) : undefined;
        if (r) claims.set(T.key(r), T.eq(r, input.tid));
    };

    const addAtom = (t: Term) => {
        if (!usable(t)) return;
        const sort = T.sortOf(t);
        if (sort === 'Int') intAtoms.set(T.key(t), t);
        else if (sort === 'Ref') refAtoms.set(T.key(t), t);
    };
    const visitTerm = (t: Term) => {
        switch (t.t) {
            case 'int': if (t.value >= -16n && t.value <= 1024n) constants.add(t.value); return;
            case 'var': if (isLocal(t.name)) addAtom(t); return;
            case 'read': {
                t.keys.forEach(visitTerm);
                const sv = vocab.vars.get(t.map);
                if (!sv || sv.kind === 'alloc' || sv.kind === 'owner' || sv.kind === 'linked') return;
                addAtom(t);
                if (usable(t)) stateAtoms.set(T.key(t), t);
                if (t.sort === 'Bool') boolReads.push(t);
                return;
            }
            case 'app': {
                if (t.fn === 'len') addAtom(t);
                if (['<', '<=', '>', '>=', '='].includes(t.fn) && t.args.every(a => T.sortOf(a) !== 'Bool') && usable(t)) comparisons.set(T.key(t), t);
                t.args.forEach(visitTerm);
                return;
            }
            default: return;
        }
    };
    const visitOp = (cmds: OpCmd[]) => {
        for (const c of cmds) {
            if (c.k === 'assume' || c.k === 'assert') visitTerm(c.cond);
            else if (c.k === 'local') {
                visitTerm(T.v(c.var, input.locals.get(c.var)?.sort ?? 'Int'));
                visitTerm(c.value);
                if (c.value.t === 'read' && usable(c.value)) defs.set(c.var, c.value);
            }
            else if (c.k === 'store') {
                c.keys.forEach(visitTerm);
                visitTerm(c.value);
                if (T.sortOf(c.value) === 'Bool') addBool(T.read(c.map, c.keys, 'Bool'));
                if (T.sameTerm(c.value, input.tid)) addClaim(T.read(c.map, c.keys, 'Int'));
            }
            else if (c.k === 'if') { visitTerm(c.cond); visitOp(c.then); visitOp(c.else); }
        }
    };
    const visitCmds = (cmds: Cmd[]) => {
        for (const c of cmds) {
            switch (c.k) {
                case 'op': visitOp(c.op.body); break;
                case 'local':
                    visitTerm(T.v(c.var, input.locals.get(c.var)?.sort ?? 'Int'));
                    visitTerm(c.value);
                    if (c.value.t === 'read' && usable(c.value)) defs.set(c.var, c.value);
                    break;
                case 'assumeLocal': case 'checkLocal': case 'checkState': case 'assumeState': visitTerm(c.cond); break;
                case 'if': visitTerm(c.cond); visitCmds(c.then); visitCmds(c.else); break;
                case 'loop': case 'scope': visitCmds(c.body); break;
                default: break;
            }
        }
    };
    visitCmds(input.body);
    for (const t of input.userInvariants) visitTerm(t);
    // An assertion after the loop often relates what the loop changes to what held before it
    // (`int seen = count; while (...) { ... } assert count >= seen;`, or through a local read after
    // the loop): the terms it reads that have a value at the head are compared with the loop's.
    // (No constants from there: each would make a candidate of every term.)
    let afterAtoms = 0;
    const fromAssertion = (t: Term) => {
        for (const a of [...T.freeVars(t)].filter(isLocal).map(n => T.v(n, input.locals.get(n)!.sort)).concat(T.readsOf(t).filter(r => r.state === undefined))) {
            const sort = T.sortOf(a);
            const atoms = sort === 'Int' ? intAtoms : sort === 'Ref' ? refAtoms : undefined;
            if (!atoms || atoms.has(T.key(a)) || afterAtoms >= MAX_AFTER_ATOMS || !usable(a)) continue;
            const sv = a.t === 'read' ? vocab.vars.get(a.map) : undefined;
            if (a.t === 'read' && (!sv || sv.kind === 'alloc' || sv.kind === 'owner' || sv.kind === 'linked')) continue;
            atoms.set(T.key(a), a);
            afterAtoms++;
        }
    };
    for (const cond of assertionsIn(input.after ?? [])) {
        fromAssertion(cond);
        for (const r of T.readsOf(cond)) if (r.state === undefined && r.sort === 'Bool') addBool(r);
    }
    boolReads.forEach(addBool);
    for (const name of input.modifiedLocals) {
        const d = input.locals.get(name);
        if (d && (d.sort === 'Int' || d.sort === 'Ref')) addAtom(T.v(name, d.sort));
    }
    for (const r of [...refAtoms.values()]) {
        const type = r.t === 'var' ? input.locals.get(r.name)?.type : r.t === 'read' ? vocab.vars.get(r.map)?.field?.type : undefined;
        if (type?.kind === 'array') addAtom(lengthOf(r));
    }

    const out = new Map<string, Candidate>();
    const add = (cond: Term, text?: string) => {
        if (cond.t === 'bool' || !changes(cond)) return;
        const k = T.key(cond);
        if (!out.has(k)) out.set(k, { cond, text: text ?? calvinText(cond) });
    };
    const pcAtoms: Array<{ cond: Term; text: string }> = [];
    if (input.pc) for (let k = 1; k <= input.pc.steps + 1; k++) pcAtoms.push({ cond: T.eq(T.v(input.pc.name, 'Int'), T.int(k)), text: `pc == ${k}` });
    for (const a of pcAtoms) add(a.cond, a.text);
    if (input.pc) {
        // pc never leaves 1..n+1 (a counterexample with another value would say nothing)
        add(T.cmp('>=', T.v(input.pc.name, 'Int'), T.int(1)), 'pc >= 1');
        add(T.cmp('<=', T.v(input.pc.name, 'Int'), T.int(input.pc.steps + 1)), `pc <= ${input.pc.steps + 1}`);
    }
    for (const c of comparisons.values()) {
        add(c);
        if (c.t === 'app' && c.fn === '=') add(T.not(c));
    }
    // A boolean variable the loop assigns often records what happened (`done = cas(...)`, `got =
    // tryLock()`): facts that hold while it is true, or false, or that it equals.
    for (const r of refAtoms.values()) {
        add(T.ne(r, T.NULL));
        if (!vocab.has(ALLOC)) continue;
        if (input.havocked.has(ALLOC)) add(allocated(r));
        if (input.havocked.has(OWNER)) {
            add(T.eq(ownerOf(r), T.int(0)));
            add(T.ne(ownerOf(r), input.tid));
        }
        // (still the thread's own: a loop that publishes may not have published it yet)
        if (input.havocked.has(OWNER) || input.partlyHavocked?.has(OWNER)) add(T.eq(ownerOf(r), input.tid));
        if (input.havocked.has(HOLDER)) {
            add(T.eq(holderOf(r), input.tid));
            add(T.ne(holderOf(r), input.tid));
        }
    }
    // Guards of the fields the loop touches, at the objects it touches them.
    for (const r of stateAtoms.values()) {
        const sv = vocab.vars.get(r.map);
        const g = sv?.field ? input.guards.get(sv.field.id) : undefined;
        if (g && !g.inferred) add(guardTerm(vocab, g, undefined, input.tid, sv?.kind === 'field' ? r.keys[0] : undefined));
    }
    // Unchanged since the loop began.
    for (const r of stateAtoms.values()) {
        if (!input.havocked.has(r.map)) continue;
        const keysAtEntry = r.keys.every(k => !changes(k));
        if (keysAtEntry) add(T.eq(r, T.read(r.map, r.keys, r.sort, input.entryState)));
    }
    const ints = [...intAtoms.values()];
    for (const a of ints) {
        for (const c of constants) {
            add(T.cmp('>=', a, T.int(c)));
            add(T.cmp('<=', a, T.int(c)));
        }
    }
    for (let i = 0; i < ints.length; i++) {
        for (let j = 0; j < ints.length; j++) {
            if (i === j) continue;
            add(T.cmp('<=', ints[i], ints[j]));
            add(T.cmp('<', ints[i], ints[j]));
            if (i < j) add(T.eq(ints[i], ints[j]));
        }
    }
    // A boolean variable the loop assigns often records what happened (`done = cas(...)`, `got =
    // tryLock()`): facts that hold while it is true, or false, or that it equals. (At most
    // MAX_FLAGS * MAX_FLAG_FACTS * 3 of them, kept apart from the limit on the others.)
    const flagged = new Map<string, Candidate>();
    const flags = [...input.modifiedLocals].filter(n => input.locals.get(n)?.sort === 'Bool' && isSourceVariable(n)).slice(0, MAX_FLAGS);
    // (and that an object is still the thread's own: `n` is private until the cas that sets `done`)
    const own = vocab.has(ALLOC) && (input.havocked.has(OWNER) || input.partlyHavocked?.has(OWNER)) ? [...refAtoms.values()].filter(r => r.t === 'var').slice(0, 2).map(r => T.eq(ownerOf(r), input.tid)) : [];
    const facts = [...pcAtoms.map(a => a.cond), ...own, ...[...boolAtoms.values()].flatMap(b => [b, T.not(b)]), ...claims.values(), ...[...comparisons.values()].flatMap(c => c.t === 'app' && c.fn === '=' ? [c, T.not(c)] : [c])].slice(0, MAX_FLAG_FACTS);
    for (const name of flags) {
        const b = T.v(name, 'Bool');
        for (const f of facts) {
            for (const cond of [T.implies(b, f), T.implies(T.not(b), f), ...(f.t !== 'app' || f.fn !== 'not' ? [T.iff(b, f)] : [])]) {
                const k = T.key(cond);
                if (cond.t !== 'bool' && !out.has(k) && !flagged.has(k)) flagged.set(k, { cond, text: calvinText(cond) });
            }
        }
    }
    return [...[...out.values()].slice(0, MAX_CANDIDATES - flagged.size), ...flagged.values()];
}

/** The conditions of the program's assertions (`assert`, `//@ assert`) among these commands. */
function assertionsIn(cmds: Cmd[]): Term[] {
    const out: Term[] = [];
    const ops = (list: OpCmd[]) => {
        for (const c of list) {
            if (c.k === 'assert' && c.check?.code === 'assert') out.push(c.cond);
            else if (c.k === 'if') { ops(c.then); ops(c.else); }
        }
    };
    const walk = (list: Cmd[]) => {
        for (const c of list) {
            switch (c.k) {
                case 'checkLocal': case 'checkState': if (c.check.code === 'assert') out.push(c.cond); break;
                case 'op': ops(c.op.body); break;
                case 'if': walk(c.then); walk(c.else); break;
                case 'loop': case 'scope': walk(c.body); break;
                default: break;
            }
        }
    };
    walk(cmds);
    return out;
}

/** A variable of the program (its id has the front end's `name@line:col`), not a temporary of the lowering. */
function isSourceVariable(name: string): boolean {
    return /@\d+:\d+~\d+$/.test(name);
}

/**
 * The locals whose value at the loop head may matter: read in the body before
 * the body assigns them on some path, or not yet assigned where the body may
 * leave the loop (read after it) — a conservative liveness: a nested loop or
 * scope assigns nothing for sure, every jump out of a nested construct counts
 * as leaving.
 */
function upwardExposed(body: Cmd[], range: Range | undefined, definedAtEntry: ReadonlySet<string>): Set<string> {
    const live = new Set<string>();
    const all = new Set<string>();
    const note = (t: Term, done: ReadonlySet<string>) => { for (const v of T.freeVars(t)) if (!done.has(v)) live.add(v); };
    // Leaving the loop, what may be read after it: the locals that had a value before it. A local
    // declared in the loop's block is out of scope after the loop; so are the parameters and locals
    // of the methods called in it (inlined there, under names of their own per call): neither has
    // a value at the loop's entry. (Before, an inlined parameter counted as read after the loop, so
    // every comparison of it made a candidate, each costing Houdini a round. Issue 15.)
    const leave = (done: ReadonlySet<string>) => { for (const v of all) if (!done.has(v) && !declaredIn(v, range) && definedAtEntry.has(v)) live.add(v); };
    const collect = (cmds: Array<Cmd | OpCmd>) => {
        for (const c of cmds) {
            if ('var' in c) all.add(c.var);
            if (c.k === 'havocLocal') for (const v of c.vars) all.add(v);
            if (c.k === 'op') collect(c.op.body);
            if (c.k === 'if') { collect(c.then); collect(c.else); }
            if (c.k === 'loop' || c.k === 'scope') collect(c.body);
        }
    };
    collect(body);
    const ops = (cmds: OpCmd[], done: Set<string>): Set<string> => {
        for (const c of cmds) {
            switch (c.k) {
                case 'local': note(c.value, done); done.add(c.var); break;
                case 'havocLocal': for (const v of c.vars) done.add(v); break;
                case 'assume': case 'assert': note(c.cond, done); break;
                case 'store': c.keys.forEach(k => note(k, done)); note(c.value, done); break;
                case 'update': note(c.value, done); break;
                case 'havocMap': note(c.where, done); break;
                case 'if': {
                    note(c.cond, done);
                    const a = ops(c.then, new Set(done)), b = ops(c.else, new Set(done));
                    done = new Set([...a].filter(v => b.has(v)));
                    break;
                }
            }
        }
        return done;
    };
    // Jumps to a construct inside the body land at its end: what is assigned there is what every
    // way of getting there assigned. Jumps to anything else leave the loop (or go to its head).
    const jumps = new Map<string, Array<Set<string>>>();
    const meet = (sets: Array<Set<string>>): Set<string> => new Set([...sets[0]].filter(v => sets.every(x => x.has(v))));
    // returns the locals assigned on every path that falls through (undefined: none does)
    const cmds = (list: Cmd[], done: Set<string>): Set<string> | undefined => {
        for (const c of list) {
            switch (c.k) {
                case 'op': done = ops(c.op.body, done); break;
                case 'local': note(c.value, done); done.add(c.var); break;
                case 'havocLocal': for (const v of c.vars) done.add(v); break;
                case 'assumeLocal': case 'checkLocal': case 'checkState': case 'assumeState': note(c.cond, done); break;
                case 'if': {
                    note(c.cond, done);
                    const ends = [cmds(c.then, new Set(done)), cmds(c.else, new Set(done))].filter((x): x is Set<string> => x !== undefined);
                    if (ends.length === 0) return undefined;
                    done = meet(ends);
                    break;
                }
                case 'loop': {
                    for (const inv of c.invariants) note(inv.cond, done);
                    jumps.set(c.label, []);
                    cmds(c.body, new Set(done));
                    const breaks = jumps.get(c.label)!;
                    jumps.delete(c.label);
                    if (breaks.length === 0) return undefined; // never left
                    done = meet(breaks.map(b => new Set([...b, ...done])));
                    break;
                }
                case 'scope': {
                    jumps.set(c.label, []);
                    const end = cmds(c.body, new Set(done));
                    const exits = jumps.get(c.label)!;
                    jumps.delete(c.label);
                    if (end) exits.push(end);
                    if (exits.length === 0) return undefined;
                    done = meet(exits.map(b => new Set([...b, ...done])));
                    break;
                }
                case 'break': case 'exit': {
                    const inner = jumps.get(c.label);
                    if (inner) inner.push(new Set(done));
                    else leave(done);
                    return undefined;
                }
                case 'continue':
                    // to the head of a loop in the body (nothing to note), or of this loop (nor here)
                    if (!jumps.has(c.label)) leave(done);
                    return undefined;
                case 'snapshot': break;
            }
        }
        return done;
    };
    cmds(body, new Set());
    return live;
}

/** Whether a source variable (`name@line:col~n`) is declared inside the range (without a range: no). */
function declaredIn(name: string, range: Range | undefined): boolean {
    const m = /@(\d+):(\d+)~\d+$/.exec(name);
    if (!m || !range) return false;
    const line = Number(m[1]) - 1, col = Number(m[2]) - 1;
    const after = line > range.startLine || (line === range.startLine && col >= range.startChar);
    const before = line < range.endLine || (line === range.endLine && col <= range.endChar);
    return after && before;
}

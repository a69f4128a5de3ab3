import type { Vocabulary } from '../heap/vocabulary.js';
import { LEN } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Sort, Term } from '../smt/term.js';
import type { Cmd, LocalDecl, OpCmd } from '../il/il.js';
import { guardTerm, type Guard } from '../spec/environment.js';

export interface CandidateInput {
    vocab: Vocabulary;
    body: Cmd[];
    /** Prefix of the state snapshot taken at loop entry. */
    entryPrefix: string;
    locals: Map<string, LocalDecl>;
    vars: Map<string, Sort>;
    /** The state variables this check uses. */
    stateNames: Set<string>;
    definedLocals: Set<string>;
    tid: Term;
    guards: Map<string, Guard>;
    pc?: { name: string; steps: number };
    userInvariants: Term[];
}

export interface Candidate {
    cond: Term;
    text: string;
}

const MAX_CANDIDATES = 700;

/**
 * Houdini candidates for a loop (pipeline stage 5): comparisons found in the
 * loop's conditions and checks, each int variable against the constants and
 * the other int terms in scope, non-null references, `pc == k`, `writable_if`
 * guards at the objects the loop touches, and "unchanged since the loop
 * began" for shared terms. Houdini keeps the ones that are inductive.
 */
export function loopCandidates(input: CandidateInput): Candidate[] {
    const { vocab } = input;
    const isState = (name: string) => input.stateNames.has(name);
    const isProgramLocal = (name: string) => name.startsWith('l~') && (name.includes('@') || name.includes('~result_'));
    const usable = (t: Term) => [...T.freeVars(t)].every(v => isState(v) || (input.vars.has(v) && v.startsWith('l~')) || v === 'tid' || v === input.pc?.name || v === 'null');
    const intAtoms = new Map<string, Term>();
    const refAtoms = new Map<string, Term>();
    const comparisons = new Map<string, Term>();
    const constants = new Set<bigint>([0n, 1n]);
    const stateAtoms = new Map<string, { term: Term; map: string; obj: Term }>();

    const addAtom = (t: Term) => {
        const sort = T.sortOf(t);
        if (!usable(t)) return;
        const key = T.toSmt(t);
        if (sort === 'Int') intAtoms.set(key, t);
        else if (sort === 'Ref') refAtoms.set(key, t);
    };
    const visitTerm = (t: Term) => {
        switch (t.t) {
            case 'int': if (t.value >= -16n && t.value <= 1024n) constants.add(t.value); return;
            case 'var':
                if (isProgramLocal(t.name) || (t.name.startsWith('l~') && t.sort === 'Ref')) addAtom(t);
                else if (isState(t.name) && typeof t.sort === 'string') addAtom(t);
                return;
            case 'app': {
                if (t.fn === 'select' && t.args[0].t === 'var' && isState(t.args[0].name) && typeof t.sort === 'string') {
                    addAtom(t);
                    if (usable(t)) stateAtoms.set(T.toSmt(t), { term: t, map: t.args[0].name, obj: t.args[1] });
                }
                if (t.fn === LEN) addAtom(t);
                if (['<', '<=', '>', '>=', '='].includes(t.fn) && usable(t) && t.args.every(a => typeof T.sortOf(a) === 'string')) comparisons.set(T.toSmt(t), t);
                t.args.forEach(visitTerm);
                return;
            }
            case 'quant': return;
            default: return;
        }
    };
    const visitOp = (cmds: OpCmd[]) => {
        for (const c of cmds) {
            if (c.k === 'assume' || c.k === 'assert') visitTerm(c.cond);
            else if (c.k === 'set') visitTerm(c.value);
            else if (c.k === 'if') { visitTerm(c.cond); visitOp(c.then); visitOp(c.else); }
        }
    };
    const visitCmds = (cmds: Cmd[]) => {
        for (const c of cmds) {
            switch (c.k) {
                case 'op': visitOp(c.op.body); break;
                case 'local': visitTerm(T.v(c.var, input.locals.get(c.var)?.sort ?? 'Int')); visitTerm(c.value); break;
                case 'assumeLocal': case 'checkLocal': case 'checkState': case 'assumeState': visitTerm(c.cond); break;
                case 'if': visitTerm(c.cond); visitCmds(c.then); visitCmds(c.else); break;
                case 'loop': case 'scope': visitCmds(c.body); break;
            }
        }
    };
    visitCmds(input.body);
    for (const t of input.userInvariants) visitTerm(t);
    for (const name of input.definedLocals) {
        if (!isProgramLocal(name)) continue;
        const sort = input.locals.get(name)?.sort;
        if (sort === 'Int' || sort === 'Ref') addAtom(T.v(name, sort));
    }
    // Lengths of the arrays in scope
    for (const r of [...refAtoms.values()]) addAtom(T.call(LEN, 'Int', r));

    // A candidate over variables the loop never changes is kept by the loop head anyway
    // (only modified variables are havocked there): skip it.
    const modified = assignedIn(input.body);
    const changes = (cond: Term) => [...T.freeVars(cond)].some(v => isState(v) || modified.has(v) || v === input.pc?.name || v.startsWith(input.entryPrefix));
    const out = new Map<string, Candidate>();
    const add = (cond: Term, text?: string) => {
        if (cond.t === 'bool') return;
        if (!changes(cond)) return;
        const key = T.toSmt(cond);
        if (!out.has(key)) out.set(key, { cond, text: text ?? key });
    };
    if (input.pc) for (let k = 1; k <= input.pc.steps + 1; k++) add(T.eq(T.v(input.pc.name, 'Int'), T.int(k)), `pc == ${k}`);
    for (const c of comparisons.values()) add(c);
    for (const r of refAtoms.values()) {
        add(T.ne(r, T.NULL));
        // allocation, privacy and monitor facts about the objects in scope
        const st = (n: string) => T.v(n, vocab.sortOfVar(n));
        if (!isState('alloc')) continue;
        add(T.select(st('alloc'), r));
        add(T.ne(T.select(st('owner'), r), input.tid));
        add(T.eq(T.select(st('owner'), r), T.int(0)));
        if (!isState('holder')) continue;
        add(T.eq(T.select(st('holder'), r), input.tid));
        add(T.ne(T.select(st('holder'), r), input.tid));
    }
    // Guards of the fields the loop touches, at the objects it touches them.
    for (const { map, obj } of stateAtoms.values()) {
        const sv = vocab.vars.get(map);
        const g = sv?.field ? input.guards.get(sv.field.id) : undefined;
        if (g && !g.inferred && sv?.kind === 'field') add(guardTerm(vocab, g, n => T.v(n, vocab.sortOfVar(n)), input.tid, obj));
    }
    // Unchanged since the loop began.
    for (const { term, map } of stateAtoms.values()) {
        add(T.eq(term, T.substitute(term, new Map([[map, T.v(input.entryPrefix + map, vocab.sortOfVar(map))]]))));
    }
    for (const sv of vocab.allVars()) {
        if (sv.kind === 'global' && isState(sv.name)) add(T.eq(T.v(sv.name, sv.sort), T.v(input.entryPrefix + sv.name, sv.sort)));
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
    return [...out.values()].slice(0, MAX_CANDIDATES);
}

/** Every variable a command list may assign (an over-approximation: any `var`/`vars` it names). */
function assignedIn(cmds: Cmd[]): Set<string> {
    const out = new Set<string>();
    const seen = new Set<object>();
    const walk = (x: unknown): void => {
        if (x === null || typeof x !== 'object' || seen.has(x)) return;
        seen.add(x);
        if (Array.isArray(x)) { x.forEach(walk); return; }
        const o = x as Record<string, unknown>;
        if (typeof o.k === 'string') {
            if (typeof o.var === 'string') out.add(o.var);
            if (Array.isArray(o.vars)) for (const v of o.vars) if (typeof v === 'string') out.add(v);
        }
        for (const [key, value] of Object.entries(o)) if (key !== 'range' && key !== 'cond' && key !== 'value') walk(value);
    };
    walk(cmds);
    return out;
}

import * as T from '../smt/term.js';
import type { Sort, Term } from '../smt/term.js';
import { sortToSmt, symbol, toSmt } from '../smt/term.js';
import type { Check, SCmd, SeqProgram } from './seq.js';

/**
 * Verification conditions (pipeline stage 6): the simulation-checking program
 * is cut at loops (invariants asserted on entry and after the body, assumed at
 * the head after the loop's targets are havocked), put in passive form
 * (every assignment a fresh incarnation; joins equate incarnations), and turned
 * into compact block equations `B_ok = wp(B, /\ succ_ok)` (Flanagan–Saxe, as in
 * Boogie), so the VC is linear in the program's size.
 *
 * Each assertion has an enable literal: a disabled program check is assumed
 * instead of asserted (so one query finds every failing check in turn), and a
 * Houdini candidate is dropped from both its assertions and its assumptions.
 */
export interface PStmt {
    kind: 'assume' | 'assert';
    /** Name of the Bool constant defined as the condition. */
    name: string;
    check?: number;
}

export interface Block {
    name: string;
    stmts: PStmt[];
    succ: string[];
}

export interface VC {
    /** Declarations and definitions, to send once. */
    script: string;
    blocks: Block[];
    entry: string;
    /** Enable literal per check id. */
    enable: Map<number, string>;
    checks: Check[];
    /** Passive value of a term at each assertion (for counterexamples): check id → incarnation map. */
    stateAt: Map<number, Map<string, Term>>;
    /** Condition constant → defining term (for debugging). */
    definitions: Map<string, Term>;
}

interface End { block: Block; sigma: Map<string, Term> }

export const PRELUDE = `(reset)
(set-option :produce-models true)
(declare-sort Ref 0)
(declare-const null Ref)
(declare-fun len (Ref) Int)
(declare-fun dtype (Ref) Int)
(assert (forall ((r Ref)) (! (>= (len r) 0) :pattern ((len r)))))
(define-fun jdiv ((a Int) (b Int)) Int (ite (= (>= a 0) (> b 0)) (div (abs a) (abs b)) (- (div (abs a) (abs b)))))
(define-fun jmod ((a Int) (b Int)) Int (- a (* b (jdiv a b))))
`;

export function vcgen(p: SeqProgram): VC {
    const g = new Generator(p);
    return g.run();
}

class Generator {
    private blocks: Block[] = [];
    private cur: Block | undefined;
    private sigma = new Map<string, Term>();
    private incarnation = new Map<string, number>();
    private decls = new Map<string, Sort>();
    private defs: string[] = [];
    private definitions = new Map<string, Term>();
    private condCount = 0;
    private labels = new Map<string, End[]>();
    private stateAt = new Map<number, Map<string, Term>>();

    constructor(private readonly p: SeqProgram) { }

    run(): VC {
        for (const [name, sort] of this.p.constants) this.decls.set(name, sort);
        for (const [name, sort] of this.p.vars) this.sigma.set(name, this.freshVar(name, sort));
        const entry = this.newBlock();
        this.cur = entry;
        this.gen(this.p.body);
        const enable = new Map<number, string>();
        for (const c of this.p.checks) enable.set(c.id, `en!${c.id}`);
        const lines: string[] = [PRELUDE];
        for (const [name, sort] of this.decls) lines.push(`(declare-const ${symbol(name)} ${sortToSmt(sort)})`);
        for (const e of enable.values()) lines.push(`(declare-const ${e} Bool)`);
        lines.push(...this.defs);
        // Block equations, last block first.
        const ok = (b: Block) => `${b.name}_ok`;
        for (const b of this.blocks) lines.push(`(declare-const ${ok(b)} Bool)`);
        const checkById = new Map(this.p.checks.map(c => [c.id, c]));
        for (let i = this.blocks.length - 1; i >= 0; i--) {
            const b = this.blocks[i];
            let q = b.succ.length === 0 ? 'true' : b.succ.length === 1 ? `${b.succ[0]}_ok` : `(and ${b.succ.map(s => `${s}_ok`).join(' ')})`;
            for (let j = b.stmts.length - 1; j >= 0; j--) {
                const s = b.stmts[j];
                if (s.kind === 'assume') q = `(=> ${s.name} ${q})`;
                else {
                    const en = enable.get(s.check!)!;
                    const check = checkById.get(s.check!)!;
                    if (check.kind === 'candidate') q = `(and (=> ${en} ${s.name}) (=> (=> ${en} ${s.name}) ${q}))`;
                    else if (check.assumeAfter === false) q = `(and (=> ${en} ${s.name}) ${q})`;
                    else q = `(and (=> ${en} ${s.name}) (=> ${s.name} ${q}))`;
                }
            }
            lines.push(`(assert (= ${ok(b)} ${q}))`);
        }
        lines.push(`(assert (not ${ok(entry)}))`);
        return { script: lines.join('\n') + '\n', blocks: this.blocks, entry: entry.name, enable, checks: this.p.checks, stateAt: this.stateAt, definitions: this.definitions };
    }

    private newBlock(): Block {
        const b: Block = { name: `B${this.blocks.length}`, stmts: [], succ: [] };
        this.blocks.push(b);
        return b;
    }

    private freshVar(name: string, sort: Sort): Term {
        const n = (this.incarnation.get(name) ?? -1) + 1;
        this.incarnation.set(name, n);
        const inc = `${name}@${n}`;
        this.decls.set(inc, sort);
        return T.v(inc, sort);
    }

    private sortOf(name: string): Sort {
        const s = this.p.vars.get(name);
        if (!s) throw new Error(`undeclared variable ${name} in the simulation program`);
        return s;
    }

    /** The current passive form of a term. */
    private now(t: Term): Term {
        return T.substitute(t, this.sigma);
    }

    private define(t: Term): string {
        const name = `c!${this.condCount++}`;
        this.defs.push(`(declare-const ${name} Bool)\n(assert (= ${name} ${toSmt(t)}))`);
        this.definitions.set(name, t);
        return name;
    }

    private block(): Block {
        if (!this.cur) this.cur = this.newBlock(); // unreachable code: a block nobody jumps to
        return this.cur;
    }

    private assume(t: Term): void {
        const c = this.now(t);
        if (c.t === 'bool' && c.value) return;
        this.block().stmts.push({ kind: 'assume', name: this.define(c) });
    }

    private assert(t: Term, check: number): void {
        const c = this.now(t);
        this.block().stmts.push({ kind: 'assert', name: this.define(c), check });
        this.stateAt.set(check, new Map(this.sigma));
    }

    private gen(cmds: SCmd[]): void {
        for (const c of cmds) this.cmd(c);
    }

    private cmd(c: SCmd): void {
        switch (c.k) {
            case 'assume': this.assume(c.cond); return;
            case 'assert': this.assert(c.cond, c.check); return;
            case 'assign': {
                const value = this.now(c.value);
                if (value.t === 'var' || value.t === 'int' || value.t === 'bool') {
                    this.sigma.set(c.var, value);
                    return;
                }
                const x = this.freshVar(c.var, this.sortOf(c.var));
                this.block().stmts.push({ kind: 'assume', name: this.define(T.eq(x, value)) });
                this.sigma.set(c.var, x);
                return;
            }
            case 'havoc':
                for (const v of c.vars) this.sigma.set(v, this.freshVar(v, this.sortOf(v)));
                return;
            case 'if': {
                const cond = this.now(c.cond);
                const start = this.block();
                const s0 = new Map(this.sigma);
                const ends: End[] = [];
                for (const [branch, guard] of [[c.then, cond], [c.else, T.not(cond)]] as const) {
                    const b = this.newBlock();
                    start.succ.push(b.name);
                    this.cur = b;
                    this.sigma = new Map(s0);
                    if (!(guard.t === 'bool' && guard.value)) b.stmts.push({ kind: 'assume', name: this.define(guard) });
                    this.gen(branch);
                    if (this.cur) ends.push({ block: this.cur, sigma: this.sigma });
                }
                this.merge(ends);
                return;
            }
            case 'scope': {
                this.labels.set(c.label, []);
                this.gen(c.body);
                const ends = this.labels.get(c.label)!;
                this.labels.delete(c.label);
                if (this.cur) ends.push({ block: this.cur, sigma: this.sigma });
                this.merge(ends);
                return;
            }
            case 'exit': case 'break': {
                const ends = this.labels.get(c.label);
                if (!ends) throw new Error(`jump to unknown label ${c.label}`);
                if (this.cur) ends.push({ block: this.cur, sigma: this.sigma });
                this.cur = undefined;
                return;
            }
            case 'loop': {
                for (const inv of c.invariants) if (!inv.assumeOnly) this.assert(inv.cond, inv.check);
                const targets = assigned(c.body);
                for (const t of targets) this.sigma.set(t, this.freshVar(t, this.sortOf(t)));
                const head = this.newBlock();
                this.block().succ.push(head.name);
                this.cur = head;
                for (const inv of c.invariants) {
                    this.assume(inv.candidate ? T.implies(T.v(`en!${inv.check}`, 'Bool'), inv.cond) : inv.cond);
                }
                this.labels.set(c.label, []);
                this.gen(c.body);
                if (this.cur) {
                    for (const inv of c.invariants) if (!inv.assumeOnly) this.assert(inv.cond, inv.check);
                    this.cur = undefined; // the back edge is cut
                }
                const ends = this.labels.get(c.label)!;
                this.labels.delete(c.label);
                this.merge(ends);
                return;
            }
        }
    }

    /** Join point: variables whose incarnations differ get a fresh one, equated at the end of each predecessor. */
    private merge(ends: End[]): void {
        if (ends.length === 0) {
            this.cur = undefined;
            return;
        }
        if (ends.length === 1) {
            const join = this.newBlock();
            ends[0].block.succ.push(join.name);
            this.cur = join;
            this.sigma = ends[0].sigma;
            return;
        }
        const join = this.newBlock();
        const merged = new Map<string, Term>();
        const names = new Set<string>();
        for (const e of ends) for (const k of e.sigma.keys()) names.add(k);
        for (const name of names) {
            const first = ends[0].sigma.get(name);
            const same = ends.every(e => {
                const t = e.sigma.get(name);
                return t === first || (t && first && toSmt(t) === toSmt(first));
            });
            if (same && first) {
                merged.set(name, first);
                continue;
            }
            if (!this.p.vars.has(name)) continue; // a variable local to one branch
            const x = this.freshVar(name, this.sortOf(name));
            merged.set(name, x);
            for (const e of ends) {
                const t = e.sigma.get(name);
                if (t) e.block.stmts.push({ kind: 'assume', name: this.define(T.eq(x, t)) });
            }
        }
        for (const e of ends) e.block.succ.push(join.name);
        this.cur = join;
        this.sigma = merged;
    }
}

/** Variables a command list may assign (loop targets). */
export function assigned(cmds: SCmd[], out = new Set<string>()): Set<string> {
    for (const c of cmds) {
        switch (c.k) {
            case 'assign': out.add(c.var); break;
            case 'havoc': c.vars.forEach(v => out.add(v)); break;
            case 'if': assigned(c.then, out); assigned(c.else, out); break;
            case 'loop': case 'scope': assigned(c.body, out); break;
        }
    }
    return out;
}

import * as T from '../smt/term.js';
import type { Sort, Term } from '../smt/term.js';
import { sortToSmt, symbol, toSmt } from '../smt/term.js';
import type { Check, SCmd, SeqProgram } from './seq.js';
import { grounding } from './ground.js';

/**
 * Verification conditions (pipeline stage 6): the simulation-checking program
 * is cut at loops (invariants asserted on entry and after the body, assumed at
 * the head after the loop's targets are havocked), put in passive form
 * (every assignment a fresh incarnation; joins equate incarnations), and turned
 * into a linear-size formula (the compact VCs of Flanagan–Saxe, in their
 * "reachability" form): `R_B` means block B is reached with every assumption on
 * the way satisfied, and `err!k` that assertion k is reached and fails. Every
 * definition is a one-way implication, so assumptions occur only positively and
 * asserted conditions only negatively: quantified assertions are skolemized,
 * never instantiated, and a model is a concrete failing execution.
 *
 * Each assertion has an enable literal: a disabled program check is assumed
 * instead of asserted (so repeated queries find every failing check), and a
 * Houdini candidate is dropped from both its assertions and its assumptions.
 */
export interface PStmt {
    kind: 'assume' | 'assert';
    /** The condition, in passive form. */
    cond: Term;
    check?: number;
    /** For assertions: the error variable `err!k`. */
    err?: string;
}

export interface Block {
    name: string;
    stmts: PStmt[];
    succ: string[];
}

export interface VC {
    /** Declarations and definitions, to send once. */
    script: string;
    /** The same VC with its heap quantifiers instantiated at ground references (vc/ground.ts). */
    groundScript: string;
    blocks: Block[];
    entry: string;
    /** Enable literal per check id. */
    enable: Map<number, string>;
    checks: Check[];
    /** Error variable → the check it reports and the passive state there (for counterexamples). */
    /** `comparesMaps`: the asserted condition equates whole maps (needs extensionality to refute). */
    errors: Map<string, { check: number; sigma: Map<string, Term>; comparesMaps: boolean }>;
    /**
     * Some assumption compares whole maps other than as a definition (`stutters = (a == b)`):
     * a model found without extensionality may then be spurious (solve/run.ts).
     */
    needsExtensionality: boolean;
}

interface End { block: Block; sigma: Map<string, Term> }

// No axiom `forall r. len r >= 0` (nor a define-fun for it): with either, Z3 4.15 answers
// `unknown (incomplete quantifiers)` where it finds a counterexample without them. Instead
// `len t >= 0` is asserted for every ground length term of the VC (lengthFacts).
export const PRELUDE = `(declare-sort Ref 0)
(declare-const null Ref)
(declare-fun len (Ref) Int)
(declare-fun dtype (Ref) Int)
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
    private skolems = 0;
    private labels = new Map<string, End[]>();
    private errors = new Map<string, { check: number; sigma: Map<string, Term>; comparesMaps: boolean }>();

    constructor(private readonly p: SeqProgram) { }

    run(): VC {
        for (const [name, sort] of this.p.constants) this.decls.set(name, sort);
        for (const [name, sort] of this.p.vars) this.sigma.set(name, this.freshVar(name, sort));
        const entry = this.newBlock();
        this.cur = entry;
        this.gen(this.p.body);
        const enable = new Map<number, string>();
        for (const c of this.p.checks) enable.set(c.id, `en!${c.id}`);
        const checkById = new Map(this.p.checks.map(c => [c.id, c]));
        const conds = this.blocks.flatMap(b => b.stmts.map(s => s.cond));
        const lengths = [...lengthTerms(conds)];
        const original = new Map<PStmt, PStmt>();
        const build = (text: (s: PStmt) => string, extraDecls: Map<string, Sort>): string => {
            const lines: string[] = [PRELUDE];
            for (const [name, sort] of [...this.decls, ...extraDecls]) lines.push(`(declare-const ${symbol(name)} ${sortToSmt(sort)})`);
            for (const e of enable.values()) lines.push(`(declare-const ${e} Bool)`);
            const preds = new Map<string, string[]>();
            for (const b of this.blocks) for (const s of b.succ) (preds.get(s) ?? preds.set(s, []).get(s)!).push(b.name);
            const out = new Map<string, string>();
            let points = 0;
            const errors: string[] = [];
            for (const b of this.blocks) {
                const reach = `R!${b.name}`;
                lines.push(`(declare-const ${reach} Bool)`);
                let point = reach;
                const next = (cond: string) => {
                    const p = `P!${points++}`;
                    lines.push(`(declare-const ${p} Bool)`, `(assert (=> ${p} (and ${point} ${cond})))`);
                    point = p;
                };
                for (const st of b.stmts) {
                    if (st.kind === 'assume') {
                        next(text(st));
                        continue;
                    }
                    const en = enable.get(st.check!)!;
                    // The condition is asserted negatively (err) and, after it, assumed.
                    lines.push(`(declare-const ${st.err} Bool)`, `(assert (=> ${st.err} (and ${point} ${en} (not ${text(st)}))))`);
                    errors.push(st.err!);
                    const check = checkById.get(st.check!)!;
                    const assumed = () => { const a: PStmt = { ...st, kind: 'assume' }; original.set(a, st); return text(a); };
                    if (check.kind === 'candidate') next(`(=> ${en} ${assumed()})`);
                    else if (check.assumeAfter !== false) next(assumed());
                }
                out.set(b.name, point);
            }
            for (const t of lengths) lines.push(`(assert (>= ${t} 0))`);
            lines.push(`(assert R!${entry.name})`);
            for (const b of this.blocks) {
                if (b === entry) continue;
                const from = (preds.get(b.name) ?? []).map(p => out.get(p)!);
                lines.push(`(assert (=> R!${b.name} ${from.length === 0 ? 'false' : from.length === 1 ? from[0] : `(or ${from.join(' ')})`}))`);
            }
            lines.push(`(assert (or ${errors.join(' ')} false))`);
            return lines.join('\n') + '\n';
        };
        const script = build(st => toSmt(st.cond), new Map());
        // Rewrite every condition first: skolemization declares constants.
        const g = grounding(conds);
        const checked = new Map<PStmt, string>();
        const assumed = new Map<PStmt, string>();
        for (const b of this.blocks) {
            for (const st of b.stmts) {
                assumed.set(st, toSmt(g.rewrite(st.cond, true)));
                if (st.kind === 'assert') checked.set(st, toSmt(g.rewrite(st.cond, false)));
            }
        }
        const groundScript = build(st => (st.kind === 'assume' ? assumed.get(st) ?? assumed.get(original.get(st)!)! : checked.get(st)!), g.constants);
        const needsExtensionality = this.blocks.some(b => b.stmts.some(s => s.kind === 'assume' && comparesMapsBeyondDefinitions(s.cond)));
        if (process.env.CALVIN_DEBUG && needsExtensionality) {
            const s = this.blocks.flatMap(b => b.stmts).find(s => s.kind === 'assume' && comparesMapsBeyondDefinitions(s.cond))!;
            console.error(`[vc] needs extensionality: ${toSmt(s.cond).slice(0, 300)}`);
        }
        return { script, groundScript, blocks: this.blocks, entry: entry.name, enable, checks: this.p.checks, errors: this.errors, needsExtensionality };
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

    private block(): Block {
        if (!this.cur) this.cur = this.newBlock(); // unreachable code: a block nobody jumps to
        return this.cur;
    }

    private assume(t: Term): void {
        const c = this.now(t);
        if (c.t === 'bool' && c.value) return;
        this.block().stmts.push({ kind: 'assume', cond: c });
    }

    private assert(t: Term, check: number): void {
        const c = this.skolemize(this.now(t));
        const err = `err!${this.errors.size}`;
        this.errors.set(err, { check, sigma: new Map(this.sigma), comparesMaps: T.comparesArrays(c) });
        this.block().stmts.push({ kind: 'assert', cond: c, check, err });
    }

    /**
     * A check `forall x. P` is refuted by one x: the error condition `not P[x := sk]` with a fresh
     * constant is equisatisfiable and quantifier-free (Z3 4.15 answered `unknown (incomplete
     * quantifiers)` on negated universal guarantees instead of finding the counterexample).
     */
    private skolemize(t: Term): Term {
        if (t.t === 'quant' && t.q === 'forall') {
            const map = new Map<string, Term>();
            for (const v of t.vars) {
                const name = `sk!${this.skolems++}`;
                this.decls.set(name, v.sort);
                map.set(v.name, T.v(name, v.sort));
            }
            return this.skolemize(T.substitute(t.body, map));
        }
        if (t.t === 'app' && t.fn === '=>') return T.implies(t.args[0], this.skolemize(t.args[1]));
        if (t.t === 'app' && t.fn === 'and') return T.and(...t.args.map(a => this.skolemize(a)));
        return t;
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
                this.block().stmts.push({ kind: 'assume', cond: T.eq(x, value) });
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
                    if (!(guard.t === 'bool' && guard.value)) b.stmts.push({ kind: 'assume', cond: guard });
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
                if (t) e.block.stmts.push({ kind: 'assume', cond: T.eq(x, t) });
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

/** The ground `len` terms of some formulas (under no binder), as SMT text. */
export function lengthTerms(terms: Term[]): Set<string> {
    const out = new Set<string>();
    const seen = new Set<Term>();
    const walk = (t: Term, bound: boolean): void => {
        if (!bound && seen.has(t)) return;
        if (!bound) seen.add(t);
        switch (t.t) {
            case 'app':
                if (t.fn === 'len' && !bound) out.add(toSmt(t));
                for (const a of t.args) walk(a, bound);
                return;
            case 'lambda': walk(t.body, true); return;
            case 'quant': walk(t.body, true); return;
            default: return;
        }
    };
    for (const t of terms) walk(t, false);
    return out;
}

/**
 * An array equality that an assumption uses other than positively (under `not`, in the
 * premise of `=>`, in a Boolean `=` or an `ite` condition): only then can a model found
 * without extensionality be spurious (a positive equality still forces equal elements).
 */
function comparesMapsBeyondDefinitions(t: Term, positive = true): boolean {
    switch (t.t) {
        case 'var': case 'int': case 'bool': return false;
        case 'lambda': return T.comparesArrays(t.body);
        case 'quant': return comparesMapsBeyondDefinitions(t.body, positive);
        case 'app':
            switch (t.fn) {
                case 'and': case 'or': return t.args.some(a => comparesMapsBeyondDefinitions(a, positive));
                case 'not': return comparesMapsBeyondDefinitions(t.args[0], !positive);
                case '=>': return comparesMapsBeyondDefinitions(t.args[0], !positive) || comparesMapsBeyondDefinitions(t.args[1], positive);
                case '=':
                    if (typeof T.sortOf(t.args[0]) !== 'string') return !positive || t.args.some(a => T.comparesArrays(a));
                    return t.args.some(a => T.comparesArrays(a));
                default: return t.args.some(a => T.comparesArrays(a));
            }
    }
}

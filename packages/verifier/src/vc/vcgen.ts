import { append } from '../smt/append.js';
import { typeKey, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import { symbol, toSmt } from '../smt/term.js';
import type { EnvStep, Obligation, SCmd, SeqProgram } from '../sim/seq.js';
import { EPOST, EPRE } from '../spec/environment.js';
import { envState } from '../encode/env-step.js';
import { addGround, Formulas, PRELUDE, type Ground, type Scope, type State } from '../encode/formulas.js';
import { reachableDeclarations } from './prune.js';

/**
 * Verification conditions (pipeline stage 6). The simulation-checking program
 * is cut at loops (invariants asserted on entry and after the body, assumed at
 * the head), put in passive form (every assignment and every state change a
 * new incarnation, defined as a macro; joins choose between incarnations with
 * a selector) and turned into a linear-size formula: the compact VCs of
 * Flanagan and Saxe in their "reachability" form. `R!B` means block B is
 * reached with every assumption on the way satisfied, `err!k` that assertion k
 * is reached and fails. Every definition is a one-way implication, so a model
 * is a concrete failing execution.
 *
 * Each obligation has an enable literal: a disabled program obligation is
 * assumed instead of asserted (so repeated queries find every failing one),
 * and a Houdini candidate is dropped from its assertions and its assumptions.
 */
export interface VC {
    /** Declarations and assertions, sent once per solver session. */
    script: string;
    /** Enable literal per obligation id. */
    enable: Map<number, string>;
    obligations: Obligation[];
    /** Error literal → the obligation it reports and the values that explain it. */
    errors: Map<string, ErrorInfo>;
}

/** An assertion's error literal: the obligation, and the terms (resolved at the assertion) that explain a failure. */
export interface ErrorInfo {
    obligation: number;
    show: Array<[string, Term]>;
    changes: Array<{ name: string; before: Term; after: Term; line: number }>;
}

interface PStmt {
    kind: 'assume' | 'assert';
    cond: Term;
    check?: number;
    err?: string;
}

interface Block {
    name: string;
    stmts: PStmt[];
    succ: string[];
}

interface Env {
    cur: State;
    locals: Map<string, Term>;
}

interface End { block: Block; env: Env }

export function vcgen(vocab: Vocabulary, p: SeqProgram): VC {
    return new Generator(vocab, p).run();
}

class Generator {
    private readonly f: Formulas;
    private blocks: Block[] = [];
    private curBlock: Block | undefined;
    private env!: Env;
    private readonly snapshots = new Map<string, State>();
    private readonly labels = new Map<string, End[]>();
    private readonly errors = new Map<string, ErrorInfo>();
    private readonly ground: Ground = new Map();
    private readonly obligationById: Map<number, Obligation>;
    private tags = 0;

    constructor(vocab: Vocabulary, private readonly p: SeqProgram) {
        this.f = new Formulas(vocab);
        this.f.lateInstances = true;
        this.obligationById = new Map(p.obligations.map(c => [c.id, c]));
    }

    run(): VC {
        for (const [name, sort] of this.p.constants) {
            this.f.fresh(name);
            this.f.decls.push(`(declare-const ${symbol(name)} ${sort})`);
        }
        const locals = new Map<string, Term>();
        for (const l of this.p.locals.values()) locals.set(l.name, this.f.declareConst(l.name, l.sort));
        for (const name of this.p.inputs) {
            const decl = this.p.locals.get(name);
            const v = locals.get(name);
            if (decl?.sort === 'Ref' && v) addGround(this.ground, decl.type ? typeKey(decl.type) : undefined, v);
        }
        const cur: State = new Map();
        for (const m of this.p.maps) cur.set(m, this.f.arbitrary(m, '0'));
        this.env = { cur, locals };
        const entry = this.newBlock();
        this.curBlock = entry;
        this.gen(this.p.body);
        return this.emit(entry);
    }

    // ------------------------------------------------------------ emission

    private emit(entry: Block): VC {
        const enable = new Map<number, string>();
        for (const c of this.p.obligations) enable.set(c.id, `en!${c.id}`);
        const roots = this.blocks.flatMap(b => b.stmts.map(st => st.cond));
        for (const e of this.errors.values()) {
            for (const [, t] of e.show) roots.push(t);
            for (const c of e.changes) roots.push(c.before, c.after);
        }
        roots.push(...this.f.late);
        const definitions = this.f.definitions(roots);
        const lines: string[] = [];
        for (const e of enable.values()) lines.push(`(declare-const ${e} Bool)`);
        append(lines, definitions);
        const preds = new Map<string, string[]>();
        for (const b of this.blocks) for (const s of b.succ) (preds.get(s) ?? preds.set(s, []).get(s)!).push(b.name);
        const endPoint = new Map<string, string>();
        let points = 0;
        const errs: string[] = [];
        for (const b of this.blocks) lines.push(`(declare-const R!${b.name} Bool)`);
        for (const b of this.blocks) {
            let point = `R!${b.name}`;
            const next = (cond: string) => {
                const p = `P!${points++}`;
                lines.push(`(declare-const ${p} Bool)`, `(assert (=> ${p} (and ${point} ${cond})))`);
                point = p;
            };
            for (const st of b.stmts) {
                const cond = toSmt(st.cond);
                if (st.kind === 'assume') {
                    next(cond);
                    continue;
                }
                const en = enable.get(st.check!)!;
                // exactly "reached, enabled and failing" in a model: one model shows every obligation it falsifies
                lines.push(`(declare-const ${st.err} Bool)`, `(assert (= ${st.err} (and ${point} ${en} (not ${cond}))))`);
                errs.push(st.err!);
                const obligation = this.obligationById.get(st.check!)!;
                // A candidate is assumed at the loop head, not after its check (one model refutes many).
                if (obligation.kind !== 'candidate' && obligation.assumeAfter) next(cond);
            }
            endPoint.set(b.name, point);
        }
        for (const t of this.f.late) lines.push(`(assert ${toSmt(t)})`);
        lines.push(`(assert R!${entry.name})`);
        for (const b of this.blocks) {
            if (b === entry) continue;
            const from = (preds.get(b.name) ?? []).map(p => endPoint.get(p)!);
            lines.push(`(assert (=> R!${b.name} ${from.length === 0 ? 'false' : from.length === 1 ? from[0] : `(or ${from.join(' ')})`}))`);
        }
        lines.push(`(assert (or ${errs.join(' ')} false))`);
        // only the declarations something reads (the assertions, or the values a failure shows)
        const asked: string[] = [];
        for (const e of this.errors.values()) {
            for (const [, t] of e.show) asked.push(toSmt(t));
            for (const c of e.changes) asked.push(toSmt(c.before), toSmt(c.after));
        }
        const decls = reachableDeclarations(this.f.decls, [...lines, ...asked]);
        return { script: [PRELUDE, ...decls, ...lines].join('\n') + '\n', enable, obligations: this.p.obligations, errors: this.errors };
    }

    // ------------------------------------------------------------ blocks and terms

    private newBlock(): Block {
        const b: Block = { name: `B${this.blocks.length}`, stmts: [], succ: [] };
        this.blocks.push(b);
        return b;
    }

    private block(): Block {
        if (!this.curBlock) this.curBlock = this.newBlock(); // unreachable code: a block nobody jumps to
        return this.curBlock;
    }

    private tag(): string {
        return String(++this.tags);
    }

    private scope(extra?: Array<[string | undefined, State]>): Scope {
        const states = new Map<string | undefined, State>(this.snapshots);
        states.set(undefined, this.env.cur);
        for (const [k, s] of extra ?? []) states.set(k, s);
        return { states, locals: this.env.locals };
    }

    /** A condition in SMT form: reads resolved, quantifiers over objects removed by polarity. */
    private smt(t: Term, mode: 'assume' | 'assert', extra?: Array<[string | undefined, State]>): Term {
        return this.f.ground(this.f.resolve(t, this.scope(extra)), mode, this.ground);
    }

    private assume(t: Term, extra?: Array<[string | undefined, State]>): void {
        const c = this.smt(t, 'assume', extra);
        if (c.t === 'bool' && c.value) return;
        this.block().stmts.push({ kind: 'assume', cond: c });
    }

    private assert(t: Term, check: number): void {
        const c = this.smt(t, 'assert');
        const err = `err!${this.errors.size}`;
        const info = this.obligationById.get(check)!.info;
        const show: Array<[string, Term]> = [];
        for (const [name, term] of info.show ?? []) {
            try { show.push([name, this.f.resolve(term, this.scope())]); } catch { /* not resolvable here */ }
        }
        const changes: ErrorInfo['changes'] = [];
        for (const c of info.changes ?? []) {
            try {
                changes.push({ name: c.name, before: this.f.resolve(c.before, this.scope()), after: this.f.resolve(c.after, this.scope()), line: c.range.startLine + 1 });
            } catch { /* not resolvable here */ }
        }
        this.errors.set(err, { obligation: check, show, changes });
        this.block().stmts.push({ kind: 'assert', cond: c, check, err });
    }

    /** A local's new value (a name for it when it is not simple). */
    private setLocal(name: string, value: Term): void {
        const decl = this.p.locals.get(name);
        const v = this.f.defineConst(`${name}`, value);
        this.env.locals.set(name, v);
        const type = decl?.type ? typeKey(decl.type) : undefined;
        if (decl?.sort === 'Ref' && type) addGround(this.ground, type, v);
        else if (decl?.sort === 'Ref') addGround(this.ground, undefined, v);
    }

    // ------------------------------------------------------------ commands

    private gen(cmds: SCmd[]): void {
        for (const c of cmds) this.cmd(c);
    }

    private cmd(c: SCmd): void {
        switch (c.k) {
            case 'assume': this.assume(c.cond); return;
            case 'assert': this.assert(c.cond, c.check); return;
            case 'local': this.setLocal(c.var, this.f.resolve(c.value, this.scope())); return;
            case 'havocLocal':
                for (const v of c.vars) {
                    const decl = this.p.locals.get(v);
                    if (!decl) throw new Error(`undeclared local ${v}`);
                    const x = this.f.declareConst(v, decl.sort);
                    this.env.locals.set(v, x);
                    // (a scratch local's value at a loop head is read nowhere: no object to instantiate facts at)
                    if (decl.sort === 'Ref' && !c.scratch?.includes(v)) addGround(this.ground, decl.type ? typeKey(decl.type) : undefined, x);
                }
                return;
            case 'store': {
                const prev = this.incarnation(c.map);
                const scope = this.scope();
                const keys = c.keys.map(k => this.f.resolve(k, scope));
                const value = this.f.resolve(c.value, scope);
                if (keys.length === 0) {
                    this.env.cur.set(c.map, value.t === 'var' ? value.name : this.f.macro(c.map, this.tag(), () => value));
                } else {
                    this.env.cur.set(c.map, this.f.macro(c.map, this.tag(), ks =>
                        T.ite(T.and(...ks.map((k, i) => T.eq(k, keys[i]))), value, this.f.at(prev, c.map, ks))));
                }
                return;
            }
            case 'update': {
                const scope = this.scope();
                this.env.cur.set(c.map, this.f.macro(c.map, this.tag(), ks => {
                    const body = T.substitute(c.value, new Map(c.params.map((p, i) => [p.name, ks[i]])));
                    return this.f.resolve(body, scope);
                }));
                return;
            }
            case 'havocMap': {
                const prev = this.incarnation(c.map);
                const h = this.f.arbitrary(c.map, `h${this.tag()}`);
                if (c.where.t === 'bool' && c.where.value) {
                    this.env.cur.set(c.map, h);
                    return;
                }
                const scope = this.scope();
                this.env.cur.set(c.map, this.f.macro(c.map, this.tag(), ks => {
                    const where = this.f.resolve(T.substitute(c.where, new Map(c.params.map((p, i) => [p.name, ks[i]]))), scope);
                    return T.ite(where, this.f.at(h, c.map, ks), this.f.at(prev, c.map, ks));
                }));
                return;
            }
            case 'env': {
                const before = this.env.cur;
                const after = this.envStep(c.step, before);
                this.env.cur = after;
                if (c.step.assumeResidual) {
                    for (const conj of c.step.conjuncts) {
                        if (conj.residual) this.assume(conj.residual, [[EPRE, before], [EPOST, after]]);
                    }
                }
                for (const inv of c.step.invariants) this.assume(inv, [[EPRE, before], [EPOST, after]]);
                return;
            }
            case 'probe':
                this.snapshots.set(c.name, this.envStep(c.step, this.env.cur));
                return;
            case 'snapshot':
                this.snapshots.set(c.name, new Map(this.env.cur));
                return;
            case 'if': {
                const cond = this.smt(c.cond, 'assume');
                const start = this.block();
                const s0: Env = { cur: new Map(this.env.cur), locals: new Map(this.env.locals) };
                const ends: End[] = [];
                for (const [branch, guard] of [[c.then, cond], [c.else, T.not(cond)]] as const) {
                    const b = this.newBlock();
                    start.succ.push(b.name);
                    this.curBlock = b;
                    this.env = { cur: new Map(s0.cur), locals: new Map(s0.locals) };
                    if (!(guard.t === 'bool' && guard.value)) b.stmts.push({ kind: 'assume', cond: guard });
                    this.gen(branch);
                    if (this.curBlock) ends.push({ block: this.curBlock, env: this.env });
                }
                this.merge(ends, s0);
                return;
            }
            case 'scope': {
                this.labels.set(c.label, []);
                this.gen(c.body);
                const ends = this.labels.get(c.label)!;
                this.labels.delete(c.label);
                if (this.curBlock) ends.push({ block: this.curBlock, env: this.env });
                this.merge(ends, this.env);
                return;
            }
            case 'exit': case 'break': {
                const ends = this.labels.get(c.label);
                if (!ends) throw new Error(`jump to unknown label ${c.label}`);
                if (this.curBlock) ends.push({ block: this.curBlock, env: this.env });
                this.curBlock = undefined;
                this.env = { cur: new Map(this.env.cur), locals: new Map(this.env.locals) };
                return;
            }
            case 'loop': {
                if (!this.curBlock) return; // unreachable loop
                for (const inv of c.invariants) this.assert(inv.cond, inv.entryCheck ?? inv.check);
                const head = this.newBlock();
                this.block().succ.push(head.name);
                this.curBlock = head;
                this.gen(c.head);
                for (const inv of c.invariants) {
                    this.assume(inv.candidate ? T.implies(T.v(`en!${inv.check}`, 'Bool'), inv.cond) : inv.cond);
                }
                this.labels.set(c.label, []);
                this.gen(c.body);
                if (this.curBlock) {
                    for (const inv of c.invariants) this.assert(inv.cond, inv.check);
                    this.curBlock = undefined; // the back edge is cut
                }
                const ends = this.labels.get(c.label)!;
                this.labels.delete(c.label);
                this.merge(ends, this.env);
                return;
            }
        }
    }

    private incarnation(map: string): string {
        const inc = this.env.cur.get(map);
        if (!inc) throw new Error(`state variable ${map} is not part of this check`);
        return inc;
    }

    private envStep(step: EnvStep, from: State): State {
        return envState(this.f, step.maps, step.conjuncts, from, this.ground, this.tag());
    }

    /** Join point: locals and state variables whose incarnations differ are chosen by a selector. */
    private merge(ends: End[], fallback: Env): void {
        if (ends.length === 0) {
            this.curBlock = undefined;
            this.env = { cur: new Map(fallback.cur), locals: new Map(fallback.locals) };
            return;
        }
        const join = this.newBlock();
        for (const e of ends) e.block.succ.push(join.name);
        this.curBlock = join;
        if (ends.length === 1) {
            this.env = ends[0].env;
            return;
        }
        const sel = this.f.declareConst(`sel!${join.name}`, 'Int');
        ends.forEach((e, i) => e.block.stmts.push({ kind: 'assume', cond: T.eq(sel, T.int(i)) }));
        const choose = (vals: Term[]): Term => {
            let out = vals[vals.length - 1];
            for (let i = vals.length - 2; i >= 0; i--) out = T.ite(T.eq(sel, T.int(i)), vals[i], out);
            return out;
        };
        const locals = new Map<string, Term>();
        for (const name of ends[0].env.locals.keys()) {
            const vals = ends.map(e => e.env.locals.get(name)!);
            if (vals.every(x => T.sameTerm(x, vals[0]))) locals.set(name, vals[0]);
            else {
                const v = this.f.defineConst(name, choose(vals));
                locals.set(name, v);
                const decl = this.p.locals.get(name);
                if (decl?.sort === 'Ref') addGround(this.ground, decl.type ? typeKey(decl.type) : undefined, v);
            }
        }
        const cur: State = new Map();
        for (const map of ends[0].env.cur.keys()) {
            const incs = ends.map(e => e.env.cur.get(map)!);
            if (incs.every(x => x === incs[0])) cur.set(map, incs[0]);
            else cur.set(map, this.f.macro(map, `j${this.tag()}`, ks => choose(incs.map(inc => this.f.at(inc, map, ks)))));
        }
        this.env = { cur, locals };
    }
}

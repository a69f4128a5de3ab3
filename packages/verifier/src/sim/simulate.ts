import type { MethodModel, Range, ThreadModel } from '../model/program.js';
import { ALLOC, heapFacts, HOLDER, nullUnallocated, LEN, OWNER, sortOfType, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Sort, Term } from '../smt/term.js';
import type { Access, AtomicOp, CheckInfo, Cmd, LocalDecl, OpCmd } from '../il/il.js';
import { PRE, preName } from '../il/il.js';
import type { Check, CheckKind, LoopInv, SCmd, SeqProgram } from '../vc/seq.js';
import { clausesText, guardTerm, type Conjunct, type Guard, type StateFn } from '../spec/environment.js';
import { actionRelation, frameConstraint } from '../spec/abstraction.js';
import { translate, type TrContext } from '../spec/translate.js';
import { loopCandidates } from './candidates.js';

/** The specification a body is checked against. */
export interface SimSpec {
    vocab: Vocabulary;
    /** E(p), one step (race checks, guarantee). */
    env: Conjunct[];
    /** The reflexive-transitive relation used for E* (see check/closure.ts). */
    envStar: Conjunct[];
    inv: Conjunct[];
    guards: Map<string, Guard>;
    tid: Term;
    tidConstraint: Term;
}

export interface AbstractionTarget {
    method: MethodModel;
    thisTerm?: Term;
    /** Local names of the parameters. */
    params: string[];
    resultVar?: string;
    /** The label of the method body's scope (returns exit it). */
    exitLabel: string;
}

/**
 * Builds the simulation-checking program (pipeline stage 4, Calvin §5 and
 * checking.md Theorem 1): every atomic operation `{p}X` becomes `E*; checks;
 * X; guarantee; sim({p}X, W)`.
 */
export class Simulator {
    private readonly checks: Check[] = [];
    private readonly vars = new Map<string, Sort>();
    private readonly constants = new Map<string, Sort>();
    private components: Map<string, Set<string>>;
    private fresh = 0;
    private abs?: AbstractionTarget & { relStutter: Term; relSteps: Term[]; ctx: TrContext };
    private readonly pc = 'pc';
    private definedLocals = new Set<string>();
    private stateNames: string[];

    constructor(private readonly spec: SimSpec, private readonly locals: Map<string, LocalDecl>) {
        for (const v of spec.vocab.allVars()) {
            this.vars.set(v.name, v.sort);
            this.vars.set(preName(v.name), v.sort);
        }
        this.stateNames = spec.vocab.allVars().map(v => v.name);
        for (const l of locals.values()) this.vars.set(l.name, l.sort);
        this.constants.set('tid', 'Int');
        this.components = components(spec.vocab, [...spec.env, ...spec.envStar, ...spec.inv]);
    }

    // ------------------------------------------------------------ entry points

    /**
     * Only the state variables the body, its specification and Init can touch
     * take part (an unused field map is never havocked nor framed).
     */
    private restrictTo(cmds: Cmd[], extra: Term[] = []): void {
        const vocab = this.spec.vocab;
        const used = new Set<string>();
        const addTerm = (t: Term) => { for (const v of stateVars(t, this.vars, vocab)) used.add(v); };
        const walk = (cs: Cmd[]) => {
            for (const c of cs) {
                switch (c.k) {
                    case 'op': {
                        for (const v of opStateVars(c.op, this.vars, vocab)) used.add(v);
                        for (const a of c.op.accesses) used.add(locVar(a));
                        break;
                    }
                    case 'local': addTerm(c.value); break;
                    case 'assumeLocal': case 'checkLocal': case 'checkState': case 'assumeState': addTerm(c.cond); break;
                    case 'if': addTerm(c.cond); walk(c.then); walk(c.else); break;
                    case 'loop': c.invariants.forEach(i => addTerm(i.cond)); walk(c.body); break;
                    case 'scope': walk(c.body); break;
                }
            }
        };
        walk(cmds);
        extra.forEach(addTerm);
        const conjuncts = [...this.spec.env, ...this.spec.envStar, ...this.spec.inv];
        for (let changed = true; changed;) {
            changed = false;
            for (const c of conjuncts) {
                if (c.construct || ![...c.vars].some(v => used.has(v)) || c.kind === 'builtin') continue;
                for (const v of c.vars) if (!used.has(v)) { used.add(v); changed = true; }
            }
        }
        // Ownership and allocation bookkeeping whenever objects are involved.
        if ([...used].some(v => vocab.vars.get(v)?.kind !== 'global') && vocab.has(ALLOC)) { used.add(OWNER); used.add(ALLOC); }
        this.stateNames = vocab.allVars().map(v => v.name).filter(n => used.has(n));
        const comps = components(vocab, conjuncts);
        this.components = new Map([...comps].filter(([v]) => used.has(v)).map(([v, set]) => [v, new Set([...set].filter(x => used.has(x)))]));
    }

    /** Condition 4: a thread's body, from Init, simulated by its guarantee w.r.t. its environment. */
    thread(t: ThreadModel, init: Cmd[], body: Cmd[]): SeqProgram {
        void t;
        this.restrictTo([...init, ...body], this.inv());
        const out: SCmd[] = [{ k: 'assume', cond: this.spec.tidConstraint }];
        out.push(...this.initialStore(), ...this.cmds(init));
        out.push(...this.inv().map(cond => ({ k: 'assume', cond }) as SCmd));
        out.push(...this.cmds(body));
        return this.program(out);
    }

    /** Condition 1: a method's body (abstractions of callees inlined) simulated by its derived abstraction Â(p) w.r.t. Ê(p). */
    abstraction(target: AbstractionTarget, body: Cmd[]): SeqProgram {
        const m = target.method;
        const abs = m.abstraction!;
        this.restrictTo(body, this.inv());
        this.vars.set(this.pc, 'Int');
        const ctx = this.methodCtx(target, T.v(this.pc, 'Int'));
        const only = new Set(this.stateNames);
        const relOf = (a: typeof abs.steps[number]) => actionRelation(this.spec.vocab, a, ctx, a.hasFrame, this.spec.tid, only).relation;
        const noChange = frameConstraint(this.spec.vocab, { whole: new Set(), atObjects: new Map() },
            n => T.v(preName(n), this.spec.vocab.sortOfVar(n)), n => T.v(n, this.spec.vocab.sortOfVar(n)), this.spec.tid, only);
        this.abs = { ...target, relStutter: abs.stutter ? T.or(relOf(abs.stutter), noChange) : noChange, relSteps: abs.steps.map(relOf), ctx };
        const out: SCmd[] = [{ k: 'assume', cond: this.spec.tidConstraint }, ...this.wellFormed(),
            ...heapFacts(this.spec.vocab, n => this.state(n), new Set(this.stateNames)).map(cond => ({ k: 'assume', cond }) as SCmd)];
        if (target.thisTerm) {
            // `this` is published: an object private to the caller is a special case the environment cannot touch at all.
            out.push({ k: 'assume', cond: T.and(T.ne(target.thisTerm, T.NULL), T.select(this.state(ALLOC), target.thisTerm), T.eq(T.select(this.state(OWNER), target.thisTerm), T.int(0)), T.eq(T.call('dtype', 'Int', target.thisTerm), T.int(this.spec.vocab.typeId({ kind: 'class', name: m.owner! })))) });
        }
        m.params.forEach((p, i) => {
            if (p.type.kind === 'class' || p.type.kind === 'array') {
                const x = T.v(target.params[i], 'Ref');
                out.push({ k: 'assume', cond: T.or(T.eq(x, T.NULL), T.and(T.select(this.state(ALLOC), x), T.eq(T.select(this.state(OWNER), x), T.int(0)), T.eq(T.call('dtype', 'Int', x), T.int(this.spec.vocab.typeId(p.type))))) });
            }
        });
        out.push(...this.inv().map(cond => ({ k: 'assume', cond }) as SCmd));
        for (const r of abs.requires) out.push({ k: 'assume', cond: translate(r.expr, { ...ctx, state: n => this.state(n) }) });
        out.push({ k: 'assign', var: this.pc, value: T.int(1) });
        // \old: the state at entry
        for (const n of this.stateNames) {
            this.vars.set(`entry~${n}`, this.spec.vocab.sortOfVar(n));
            out.push({ k: 'assign', var: `entry~${n}`, value: this.state(n) });
        }
        out.push(...this.cmds(body));
        out.push(...this.finalChecks(m.endRange));
        return this.program(out);
    }

    /** Condition 3: the store after the field initializers satisfies every invariant. */
    initCheck(init: Cmd[], inv: Conjunct[]): SeqProgram {
        const s = (n: string) => this.state(n);
        this.restrictTo(init, inv.map(c => c.build(s, s, this.spec.tid)));
        const out: SCmd[] = [...this.initialStore(), ...this.cmds(init)];
        for (const c of inv) {
            out.push({
                k: 'assert', cond: c.build(s, s, this.spec.tid), check: this.check({
                    code: 'invariant', range: c.clause?.range ?? { file: '', startLine: 0, startChar: 0, endLine: 0, endChar: 0 }, chain: [],
                    message: `the initial state (after the field initializers) may not satisfy the invariant '${c.text}'`,
                }),
            });
        }
        return this.program(out);
    }

    private methodCtx(target: AbstractionTarget, _pc: Term): TrContext {
        const m = target.method;
        const ids = new Map(m.params.map((p, i) => [p.id, target.params[i]]));
        const base: TrContext = {
            vocab: this.spec.vocab,
            state: (name, post) => post ? this.state(name) : T.v(preName(name), this.spec.vocab.sortOfVar(name)),
            local: id => {
                const n = ids.get(id);
                if (!n) throw new Error(`unknown parameter ${id}`);
                return T.v(n, this.vars.get(n)!);
            },
            thisTerm: target.thisTerm,
            tid: this.spec.tid,
        };
        return base;
    }

    private program(body: SCmd[]): SeqProgram {
        return { body, vars: this.vars, checks: this.checks, constants: this.constants };
    }

    // ------------------------------------------------------------ helpers

    private state(name: string): Term {
        return T.v(name, this.spec.vocab.sortOfVar(name));
    }

    private check(info: CheckInfo, kind: CheckKind = 'program', extra: Partial<Check> = {}): number {
        const id = this.checks.length;
        this.checks.push({ id, kind, info, ...extra });
        return id;
    }

    private inv(): Term[] {
        const s = (n: string) => this.state(n);
        return this.spec.inv.map(c => c.build(s, s, this.spec.tid));
    }

    /** Facts true of every heap (null is not allocated). */
    private wellFormed(): SCmd[] {
        return [{ k: 'assume', cond: nullUnallocated(this.spec.vocab, n => this.state(n)) }];
    }

    /** Before the initializers run: default values, nothing allocated, no monitor held. */
    private initialStore(): SCmd[] {
        const out: SCmd[] = [];
        for (const v of this.spec.vocab.allVars()) {
            if (v.kind === 'global' && this.stateNames.includes(v.name)) out.push({ k: 'assign', var: v.name, value: defaultOf(v.sort) });
        }
        const vocab = this.spec.vocab;
        if (vocab.has(ALLOC)) out.push({ k: 'assign', var: ALLOC, value: T.constArray('Ref', T.FALSE) });
        if (vocab.has(OWNER)) out.push({ k: 'assign', var: OWNER, value: T.constArray('Ref', T.int(0)) });
        if (vocab.has(HOLDER)) out.push({ k: 'assign', var: HOLDER, value: T.constArray('Ref', T.int(0)) });
        return out;
    }

    // ------------------------------------------------------------ environment steps

    /**
     * E*: an environment step before an operation. Only the components of
     * E ∪ I (variables linked by some conjunct) that the operation touches are
     * havocked; the others' steps are taken later, when they are touched (sound
     * because a component's conjuncts mention only its own variables).
     */
    private envStep(touched: Set<string>): SCmd[] {
        const vars = new Set<string>();
        for (const t of touched) for (const v of this.components.get(t) ?? [t]) vars.add(v);
        for (const v of [...vars]) if (!this.stateNames.includes(v)) vars.delete(v);
        if (vars.size === 0) return [];
        const out: SCmd[] = [];
        const n = this.fresh++;
        const sortOf = (name: string) => this.spec.vocab.sortOfVar(name);
        const preName = (name: string) => `env${n}~${name}`;
        const havocName = (name: string) => `envh${n}~${name}`;
        for (const v of vars) {
            this.vars.set(preName(v), sortOf(v));
            this.vars.set(havocName(v), sortOf(v));
            out.push({ k: 'assign', var: preName(v), value: this.state(v) });
        }
        out.push({ k: 'havoc', vars: [...vars].map(havocName) });
        const before: StateFn = name => vars.has(name) ? T.v(preName(name), sortOf(name)) : this.state(name);
        const conjuncts = this.spec.envStar.filter(c => [...c.vars].some(v => vars.has(v)));
        const next = buildTransition(this.spec.vocab, vars, conjuncts, before, name => T.v(havocName(name), sortOf(name)), this.spec.tid);
        for (const v of vars) out.push({ k: 'assign', var: v, value: next.get(v)! });
        const post: StateFn = name => this.state(name);
        for (const c of conjuncts) {
            if (c.exact) continue;
            out.push({ k: 'assume', cond: c.build(before, post, this.spec.tid) });
        }
        const s = (name: string) => this.state(name);
        for (const c of this.spec.inv) {
            if (![...c.vars].some(v => vars.has(v))) continue;
            out.push({ k: 'assume', cond: c.build(s, s, this.spec.tid) });
        }
        for (const f of heapFacts(this.spec.vocab, s, new Set(this.stateNames))) out.push({ k: 'assume', cond: f });
        return out;
    }

    // ------------------------------------------------------------ commands

    cmds(cmds: Cmd[]): SCmd[] {
        const out: SCmd[] = [];
        for (const c of cmds) out.push(...this.cmd(c));
        return out;
    }

    private cmd(c: Cmd): SCmd[] {
        switch (c.k) {
            case 'op': return this.op(c.op);
            case 'local': this.definedLocals.add(c.var); return [{ k: 'assign', var: c.var, value: c.value }];
            case 'havocLocal': return [{ k: 'havoc', vars: c.vars }];
            case 'assumeLocal': return [{ k: 'assume', cond: c.cond }];
            case 'checkLocal': return [{ k: 'assert', cond: c.cond, check: this.check(c.check) }];
            case 'checkState': return [...this.envStep(stateVars(c.cond, this.vars, this.spec.vocab)), { k: 'assert', cond: c.cond, check: this.check(c.check) }];
            case 'assumeState': return [...this.envStep(stateVars(c.cond, this.vars, this.spec.vocab)), { k: 'assume', cond: c.cond }];
            case 'if': return [{ k: 'if', cond: c.cond, then: this.cmds(c.then), else: this.cmds(c.else) }];
            case 'loop': return this.loop(c);
            case 'break': return [{ k: 'break', label: c.label }];
            case 'continue': return [{ k: 'exit', label: c.label }];
            case 'scope': {
                const body = this.cmds(c.body);
                return [{ k: 'scope', label: c.label, body }];
            }
            case 'exit':
                if (this.abs && c.label === this.abs.exitLabel && c.range) return [...this.finalChecks(c.range), { k: 'exit', label: c.label }];
                return [{ k: 'exit', label: c.label }];
            case 'snapshot': {
                const out: SCmd[] = [];
                for (const n of this.stateNames) {
                    this.vars.set(c.prefix + n, this.spec.vocab.sortOfVar(n));
                    out.push({ k: 'assign', var: c.prefix + n, value: this.state(n) });
                }
                return out;
            }
        }
    }

    private loop(c: Extract<Cmd, { k: 'loop' }>): SCmd[] {
        const out: SCmd[] = [];
        // Snapshot at entry, so candidates can say "unchanged since the loop began".
        const entry = `loop${this.fresh++}~`;
        for (const n of this.stateNames) {
            this.vars.set(entry + n, this.spec.vocab.sortOfVar(n));
            out.push({ k: 'assign', var: entry + n, value: this.state(n) });
        }
        const body = this.cmds(c.body);
        const invariants: LoopInv[] = c.invariants.map(inv => ({
            cond: inv.cond, check: this.check(inv.check, 'user-invariant'), candidate: false, text: '',
        }));
        // Every state satisfies I and is a well-formed heap: true at the head without proof.
        const st = (n: string) => this.state(n);
        for (const cond of [...this.inv(), nullUnallocated(this.spec.vocab, st), ...heapFacts(this.spec.vocab, st, new Set(this.stateNames))]) {
            invariants.push({ cond, check: -1, candidate: false, assumeOnly: true, text: '' });
        }
        const candidates = loopCandidates({
            vocab: this.spec.vocab, body: c.body, entryPrefix: entry, locals: this.locals, vars: this.vars, stateNames: new Set(this.stateNames),
            definedLocals: this.definedLocals, tid: this.spec.tid, guards: this.spec.guards,
            pc: this.abs ? { name: this.pc, steps: this.abs.relSteps.length } : undefined,
            userInvariants: c.invariants.map(i => i.cond),
        });
        for (const cand of candidates) {
            invariants.push({
                cond: cand.cond, candidate: true, text: cand.text,
                check: this.check({ code: 'loop-invariant', range: c.range, message: `candidate loop invariant ${cand.text}`, chain: [] }, 'candidate', { loop: c.label }),
            });
        }
        out.push({ k: 'loop', label: c.label, invariants, body });
        return out;
    }

    // ------------------------------------------------------------ atomic operations

    private op(op: AtomicOp): SCmd[] {
        if (op.init) return this.opBody(op.body, op);
        const out: SCmd[] = [];
        const touched = new Set<string>();
        for (const a of op.accesses) touched.add(locVar(a));
        for (const v of opStateVars(op, this.vars, this.spec.vocab)) touched.add(v);
        out.push(...this.envStep(touched));
        // A blocking `assume` at the start of an atomic block holds whenever the step runs:
        // the race and writable_if checks of its accesses may rely on it.
        let blocking = 0;
        while (blocking < op.body.length && op.body[blocking].k === 'assume') blocking++;
        out.push(...this.opBody(op.body.slice(0, blocking), op));
        out.push(...this.raceChecks(op));
        for (const n of this.stateNames) out.push({ k: 'assign', var: preName(n), value: this.state(n) });
        out.push(...this.opBody(op.body.slice(blocking), op));
        out.push(...this.guarantee(op));
        if (this.abs) out.push(...this.simulate(op));
        return out;
    }

    private opBody(body: OpCmd[], op: AtomicOp): SCmd[] {
        const out: SCmd[] = [];
        for (const c of body) {
            switch (c.k) {
                case 'assume': out.push({ k: 'assume', cond: c.cond }); break;
                case 'assert': out.push({ k: 'assert', cond: c.cond, check: this.check(c.check, 'program', { op: op.id }) }); break;
                case 'set': out.push({ k: 'assign', var: c.var, value: c.value }); break;
                case 'havoc': out.push({ k: 'havoc', vars: c.vars }); break;
                case 'if': out.push({ k: 'if', cond: c.cond, then: this.opBody(c.then, op), else: this.opBody(c.else, op) }); break;
            }
        }
        return out;
    }

    /** Races (checking.md "Races"): stability of non-synchronized accesses; writable_if of writes. */
    private raceChecks(op: AtomicOp): SCmd[] {
        const out: SCmd[] = [];
        const seen = new Set<string>();
        for (const a of op.accesses) {
            const key = `${T.toSmt(locTerm(a, this.state.bind(this)))}/${a.write}`;
            if (seen.has(key)) continue;
            seen.add(key);
            if (!a.sync && !(a.field?.isFinal)) out.push(...this.stability(a, op));
            if (a.write && op.kind !== 'step' && op.kind !== 'stutter') out.push(...this.writable(a, op));
        }
        return out;
    }

    private stability(a: Access, op: AtomicOp): SCmd[] {
        const v = locVar(a);
        const comp = this.components.get(v) ?? new Set([v]);
        const n = this.fresh++;
        const cur = (name: string) => this.state(name);
        // One step of E from the current state, with fresh values where E lets the environment choose.
        const conjuncts = this.spec.env.filter(c => [...c.vars].some(x => comp.has(x)));
        const havoc = (name: string) => {
            const c = `st${n}~${name}`;
            this.constants.set(c, this.spec.vocab.sortOfVar(name));
            return T.v(c, this.spec.vocab.sortOfVar(name));
        };
        const next = buildTransition(this.spec.vocab, comp, conjuncts, cur, havoc, this.spec.tid);
        const post = (name: string) => next.get(name) ?? cur(name);
        const assumption = T.and(...conjuncts.filter(c => !c.exact).map(c => c.build(cur, post, this.spec.tid)));
        const stable = T.eq(locTerm(a, post), locTerm(a, cur));
        const what = a.write ? 'write' : 'read';
        const guard = a.field ? this.spec.guards.get(a.field.id) : undefined;
        const why = !a.field ? 'no environment assumption keeps it stable here'
            : guard?.inferred ? (guard.inferred.writers.length > 0 ? 'another thread may write it here' : 'it may change here')
                : guard ? `its writable_if '${clausesText(guard.clauses)}' lets another thread write it here`
                    : `another thread may write it here (it has no writable_if and no environment clause protects it)`;
        const info: CheckInfo = {
            code: 'race', range: a.range, chain: op.chain,
            message: `${what} of ${a.text} may race: ${why}`,
            show: [[a.text, locTerm(a, cur)]],
            related: guard && !guard.inferred && guard.clauses[0] ? { range: guard.clauses[0].range, message: `writable_if of ${a.field!.id}` } : undefined,
        };
        return [{ k: 'assert', cond: T.implies(assumption, stable), check: this.check(info, 'program', { op: op.id, location: locKey(a), assumeAfter: false }) }];
    }

    /** A write must satisfy the field's writable_if (unless the object is private to this thread). */
    private writable(a: Access, op: AtomicOp): SCmd[] {
        const cur = (name: string) => this.state(name);
        const tid = this.spec.tid;
        const loc = a.loc;
        let cond: Term | undefined;
        let text = '';
        let related: CheckInfo['related'];
        if ((loc.kind === 'global' || loc.kind === 'field') && a.field) {
            const g = this.spec.guards.get(a.field.id);
            if (!g) return [];
            text = g.inferred ? g.inferred.text : clausesText(g.clauses);
            if (!g.inferred) related = { range: g.clauses[0].range, message: `writable_if of ${a.field.id}` };
            const obj = loc.kind === 'field' ? loc.obj : undefined;
            const p = guardTerm(this.spec.vocab, g, cur, tid, obj);
            cond = obj ? T.or(T.eq(T.select(cur(OWNER), obj), tid), p) : p;
        } else if (loc.kind === 'elem') {
            // The array may be referenced by array-typed fields with a writable_if.
            const parts: Term[] = [];
            for (const g of this.spec.guards.values()) {
                const f = g.field;
                if (f.type.kind !== 'array' || g.inferred) continue;
                if (sortOfType(f.type.element) !== sortOfVarElem(loc.var)) continue;
                const fv = this.spec.vocab.varOfField(f.id);
                if (f.isStatic) parts.push(T.implies(T.eq(cur(fv), loc.arr), guardTerm(this.spec.vocab, g, cur, tid, undefined)));
                else {
                    const o = T.v('o!e', 'Ref');
                    parts.push(T.forall([{ name: 'o!e', sort: 'Ref' }], T.implies(
                        T.and(T.select(cur(ALLOC), o), T.eq(T.select(cur(OWNER), o), T.int(0)), T.eq(T.select(cur(fv), o), loc.arr)),
                        guardTerm(this.spec.vocab, g, cur, tid, o))));
                }
                text = text ? `${text}; ${clausesText(g.clauses)}` : clausesText(g.clauses);
            }
            if (parts.length === 0) return [];
            cond = T.or(T.eq(T.select(cur(OWNER), loc.arr), tid), T.and(...parts));
        }
        if (!cond) return [];
        const info: CheckInfo = {
            code: 'race', range: a.range, chain: op.chain, related,
            message: `write of ${a.text} violates its writable_if '${text}'`,
        };
        return [{ k: 'assert', cond, check: this.check(info, 'program', { op: op.id, location: locKey(a), assumeAfter: false }) }];
    }

    /** The guarantee: every step satisfies the other threads' environment assumption and preserves I. */
    private guarantee(op: AtomicOp): SCmd[] {
        const written = writtenVars(op.body);
        if (written.size === 0) return [];
        const out: SCmd[] = [];
        const pre = (n: string) => T.v(preName(n), this.spec.vocab.sortOfVar(n));
        const cur = (n: string) => this.state(n);
        const j = T.v('j!g', 'Int');
        for (const c of this.spec.env) {
            if (c.kind !== 'env' || ![...c.vars].some(v => written.has(v))) continue;
            const cond = T.forall([{ name: 'j!g', sort: 'Int' }], T.implies(T.and(T.ne(j, T.int(0)), T.ne(j, this.spec.tid)), c.build(pre, cur, j)));
            out.push({
                k: 'assert', cond, check: this.check({
                    code: 'env', range: op.range, chain: op.chain,
                    message: `${describeOp(op)} may violate another thread's environment assumption '${c.text}'`,
                    related: c.clause ? { range: c.clause.range, message: c.origin } : undefined,
                }, 'program', { op: op.id, assumeAfter: false }),
            });
        }
        for (const c of this.spec.inv) {
            if (![...c.vars].some(v => written.has(v))) continue;
            out.push({
                k: 'assert', cond: c.build(cur, cur, this.spec.tid), check: this.check({
                    code: 'invariant', range: op.range, chain: op.chain,
                    message: `${describeOp(op)} may break the invariant '${c.text}'`,
                    related: c.clause ? { range: c.clause.range, message: c.origin } : undefined,
                }, 'program', { op: op.id, assumeAfter: false }),
            });
        }
        return out;
    }

    /** sim({p}X, W): a step that is a stutter keeps `pc`; any other must be abstraction step `pc` (or the witness). */
    private simulate(op: AtomicOp): SCmd[] {
        const abs = this.abs!;
        const pc = T.v(this.pc, 'Int');
        const n = abs.relSteps.length;
        const name = abs.method.name;
        let allowed: Term;
        let next: Term;
        if (op.witness !== undefined && op.witness >= 1 && op.witness <= n) {
            allowed = T.and(T.eq(pc, T.int(op.witness)), abs.relSteps[op.witness - 1]);
            next = T.int(op.witness + 1);
        } else {
            allowed = T.and(T.cmp('<=', pc, T.int(n)), ...abs.relSteps.map((r, i) => T.implies(T.eq(pc, T.int(i + 1)), r)));
            // A step after the last one (reported above) leaves pc at n+1: one failure, one report.
            next = T.ite(T.cmp('<=', pc, T.int(n)), T.arith('+', pc, T.int(1)), pc);
        }
        const stutter = this.fresh++;
        const sv = `stutters${stutter}`;
        this.vars.set(sv, 'Bool');
        const steps = abs.method.abstraction!.steps;
        const info: CheckInfo = {
            code: 'abstraction', range: op.range, chain: op.chain,
            message: n === 0
                ? `${describeOp(op)} changes shared state, but the abstraction of '${name}' allows no step`
                : `${describeOp(op)} is not a step the abstraction of '${name}' allows here (its steps: ${steps.map((s, i) => `${i + 1}: ${s.text}`).join('; ')})`,
            show: [['pc', pc]],
            related: { range: abs.method.abstraction!.range, message: `abstraction of '${name}'` },
        };
        return [
            { k: 'assign', var: sv, value: abs.relStutter },
            { k: 'assert', cond: T.or(T.v(sv, 'Bool'), allowed), check: this.check(info, 'program', { op: op.id, assumeAfter: false }) },
            { k: 'if', cond: T.v(sv, 'Bool'), then: [], else: [{ k: 'assign', var: this.pc, value: next }] },
        ];
    }

    /** At a return (or the end of the body): E*; assert post && pc == n+1. */
    private finalChecks(range: Range): SCmd[] {
        const abs = this.abs!;
        const m = abs.method;
        const a = m.abstraction!;
        const n = a.steps.length;
        const out: SCmd[] = [];
        const cur = (name: string) => this.state(name);
        const oldCtx: TrContext = { ...abs.ctx, state: (name: string) => T.v(`entry~${name}`, this.spec.vocab.sortOfVar(name)) };
        const ctx: TrContext = { ...abs.ctx, state: (name: string) => cur(name), old: oldCtx, result: abs.resultVar ? T.v(abs.resultVar, this.vars.get(abs.resultVar)!) : undefined };
        const ensures = a.ensures.map(e => ({ e, t: translate(e.expr, ctx) }));
        const touched = new Set<string>();
        for (const { t } of ensures) for (const v of stateVars(t, this.vars, this.spec.vocab)) touched.add(v);
        out.push(...this.envStep(touched));
        for (const { e, t } of ensures) {
            out.push({
                k: 'assert', cond: t, check: this.check({
                    code: 'abstraction', range, chain: [],
                    message: `the postcondition '${e.text}' of '${m.name}' may not hold when it returns here`,
                    related: { range: e.range, message: `postcondition of '${m.name}'` },
                }),
            });
        }
        if (n > 0) {
            out.push({
                k: 'assert', cond: T.eq(T.v(this.pc, 'Int'), T.int(n + 1)), check: this.check({
                    code: 'abstraction', range, chain: [],
                    message: `'${m.name}' may return before all ${n} step${n === 1 ? '' : 's'} of its abstraction happened`,
                    show: [['steps done', T.arith('-', T.v(this.pc, 'Int'), T.int(1))]],
                    related: { range: a.range, message: `abstraction of '${m.name}'` },
                }),
            });
        }
        return out;
    }
}

// ------------------------------------------------------------ utilities

function defaultOf(sort: Sort): Term {
    return sort === 'Int' ? T.int(0) : sort === 'Bool' ? T.FALSE : T.NULL;
}

function sortOfVarElem(elemsVarName: string): Sort {
    const s = elemsVarName.split(':')[1];
    return s === 'Int' || s === 'Bool' ? s : 'Ref';
}

export function locVar(a: Access): string {
    switch (a.loc.kind) {
        case 'holder': return HOLDER;
        default: return a.loc.var;
    }
}

function locKey(a: Access): string {
    return `${locVar(a)}`;
}

function locTerm(a: Access, state: (n: string) => Term): Term {
    const l = a.loc;
    switch (l.kind) {
        case 'global': return state(l.var);
        case 'field': return T.select(state(l.var), l.obj);
        case 'elem': return T.select(T.select(state(l.var), l.arr), l.index);
        case 'holder': return T.select(state(HOLDER), l.obj);
        case 'all': return state(l.var);
    }
}

/** State variables a term mentions (current or pre-op). */
function stateVars(t: Term, vars: Map<string, Sort>, vocab: Vocabulary): Set<string> {
    const out = new Set<string>();
    for (const name of T.freeVars(t)) {
        const base = name.startsWith(PRE) ? name.slice(PRE.length) : name;
        if (vocab.vars.has(base)) out.add(base);
    }
    void vars;
    return out;
}

function opStateVars(op: AtomicOp, vars: Map<string, Sort>, vocab: Vocabulary): Set<string> {
    const out = new Set<string>();
    const walk = (cmds: OpCmd[]) => {
        for (const c of cmds) {
            if (c.k === 'assume' || c.k === 'assert') stateVars(c.cond, vars, vocab).forEach(v => out.add(v));
            else if (c.k === 'set') { stateVars(c.value, vars, vocab).forEach(v => out.add(v)); if (vocab.vars.has(c.var)) out.add(c.var); }
            else if (c.k === 'havoc') c.vars.filter(v => vocab.vars.has(v)).forEach(v => out.add(v));
            else if (c.k === 'if') { stateVars(c.cond, vars, vocab).forEach(v => out.add(v)); walk(c.then); walk(c.else); }
        }
    };
    walk(op.body);
    return out;
}

function writtenVars(body: OpCmd[], out = new Set<string>()): Set<string> {
    for (const c of body) {
        if (c.k === 'set' && !c.var.startsWith('l~')) out.add(c.var);
        else if (c.k === 'havoc') c.vars.filter(v => !v.startsWith('l~')).forEach(v => out.add(v));
        else if (c.k === 'if') { writtenVars(c.then, out); writtenVars(c.else, out); }
    }
    return out;
}

function describeOp(op: AtomicOp): string {
    return op.label ? `the ${op.label}` : 'this step';
}

/** Connected components of state variables linked by conjuncts. */
function components(vocab: Vocabulary, conjuncts: Conjunct[]): Map<string, Set<string>> {
    const parent = new Map<string, string>();
    const find = (x: string): string => {
        let r = x;
        while (parent.get(r) !== undefined && parent.get(r) !== r) r = parent.get(r)!;
        parent.set(x, r);
        return r;
    };
    for (const v of vocab.allVars()) parent.set(v.name, v.name);
    for (const c of conjuncts) {
        const vs = [...c.vars];
        for (let i = 1; i < vs.length; i++) parent.set(find(vs[i]), find(vs[0]));
    }
    const groups = new Map<string, Set<string>>();
    for (const v of vocab.allVars()) {
        const r = find(v.name);
        if (!groups.has(r)) groups.set(r, new Set());
        groups.get(r)!.add(v.name);
    }
    const result = new Map<string, Set<string>>();
    for (const g of groups.values()) for (const v of g) result.set(v, g);
    return result;
}

export { LEN };

/**
 * The state after one environment step, built from the frames of the
 * conjuncts ("keep(o) ==> v'[o] == v[o]") as `lambda o. keep(o) ? v[o] : havoc[o]`,
 * and the built-in monitor/allocation/ownership rules, so that most of E needs
 * no quantifier. Conjuncts that are not `exact` must still be assumed.
 */
export function buildTransition(vocab: Vocabulary, vars: Set<string>, conjuncts: Conjunct[], pre: StateFn, havoc: (name: string) => Term, tid: Term): Map<string, Term> {
    const out = new Map<string, Term>();
    const constructs = new Set(conjuncts.map(c => c.construct).filter(x => x));
    for (const v of vars) {
        const sort = vocab.sortOfVar(v);
        const h = havoc(v);
        const o = T.v('o!env', 'Ref');
        const sel = (m: Term) => T.select(m, o);
        if (v === HOLDER && constructs.has('holder')) {
            out.set(v, T.lambda('o!env', 'Ref', T.ite(T.eq(sel(pre(v)), tid), tid, T.ite(T.eq(sel(h), tid), sel(pre(v)), sel(h)))));
            continue;
        }
        if (v === ALLOC && constructs.has('alloc')) {
            out.set(v, T.lambda('o!env', 'Ref', T.or(sel(pre(v)), sel(h))));
            continue;
        }
        if (v === OWNER && constructs.has('owner')) {
            const keep = T.or(T.eq(sel(pre(v)), tid), T.eq(sel(pre(v)), T.int(0)));
            out.set(v, T.lambda('o!env', 'Ref', T.ite(keep, sel(pre(v)), T.ite(T.eq(sel(h), tid), sel(pre(v)), sel(h)))));
            continue;
        }
        const frames = conjuncts.flatMap(c => c.frames ?? []).filter(f => f.var === v);
        if (typeof sort === 'string') {
            out.set(v, frames.length === 0 ? h : T.ite(T.or(...frames.map(f => f.keep(pre, tid, undefined))), pre(v), h));
        } else {
            out.set(v, frames.length === 0 ? h : T.lambda('o!env', 'Ref', T.ite(T.or(...frames.map(f => f.keep(pre, tid, o))), sel(pre(v)), sel(h))));
        }
    }
    return out;
}

import { visit } from '../model/visit.js';
import { append } from '../smt/append.js';
import type { Action, MethodModel, Range, Type } from '../model/program.js';
import { sameType } from '../model/program.js';
import { initializedFacts } from '../spec/initialized.js';
import {
    ALLOC, allocated, dtypeOf, elemsVar, heapFacts, HOLDER, holderOf, LINKED, linkedOf, OWNER, ownerOf, publishedOf, sortOfType, typeKey, wellTyped, type Vocabulary,
} from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { BoundVar, Sort, Term } from '../smt/term.js';
import type { Access, AtomicOp, CheckInfo, Cmd, LocalDecl, OpCmd, OpKind } from '../il/il.js';
import { OP_PRE } from '../il/il.js';
import type { EnvStep, LoopInv, Obligation, ObligationKind, SCmd, SeqProgram } from './seq.js';
import { allInvariants, clausesText, EPOST, EPRE, guardTerm, otherMayWrite, stateCtx, type Conjunct, type Guard, type Invariant } from '../spec/environment.js';
import { actionPredicate, frameMaps, frameOf, inFrame, type FrameInfo } from '../spec/abstraction.js';
import { stateVarsOf, translate, type TrContext } from '../spec/translate.js';
import { loopCandidates, type Candidate } from './candidates.js';

/** The specification a body is checked against. */
export interface SimSpec {
    vocab: Vocabulary;
    guards: Map<string, Guard>;
    /** Guards of the elements of owned arrays (SpecContext.elementGuards), and why other array fields own none. */
    elementGuards: Map<string, Guard>;
    notOwned: Map<string, string>;
    /** E(p): one environment step (race checks). */
    env: Conjunct[];
    /** A reflexive-transitive over-approximation of E(p)* (solve/closure.ts): the environment steps. */
    star: Conjunct[];
    /** I(p): assumed after environment steps, checked after the thread's own steps. */
    inv: Invariant[];
    /** Every `environment` clause of the program: the thread's steps must satisfy them for every other thread. */
    guarantee: Conjunct[];
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

const PC = 'pc';
/**
 * An observation of the abstraction's next step since the last step: an
 * operation that changed nothing visible to the other threads and that the
 * step allowed as it was (`step [max] v <= max ==> max' == max`, read as
 * `cur = max; if (v <= cur) return;`). It is a stutter when it happens (a
 * plain read is, unless `witness step N` says otherwise), but a body that then
 * returns with only that step missing did take it there: every operation
 * after it was a stutter too, which the same stutter relation allows after
 * the step. So the check at a return accepts pc == n when one happened.
 */
const OBS = 'observed~';
/** Whether commands run before the threads start (the field initializers) or with them. */
type Phase = 'init' | 'threads';
const ENTRY = 'entry';

/**
 * Builds the simulation-checking program (pipeline stage 4, Calvin §5 and
 * checking.md Theorem 1): every atomic operation `{p}X` becomes
 * `E*; race checks; X; guarantee; sim({p}X, W)`.
 */
export class Simulator {
    private readonly obligations: Obligation[] = [];
    private readonly locals: Map<string, LocalDecl>;
    private readonly constants = new Map<string, Sort>();
    private inputs: string[] = [];
    private abs?: AbstractionTarget & { steps: MethodModel['abstraction'] & object; ctx: TrContext };
    private fresh = 0;
    private maps: string[] = [];
    /** Locals holding objects this thread allocated and has not published since (private for sure). */
    private privateLocals = new Set<string>();
    private defined = new Set<string>();
    /** Locals that hold a value read from shared state: its name and its value before and after the environment step before the read. */
    private provenance = new Map<string, { name: string; before: Term; after: Term; range: Range }>();
    /** Locals shown under another name than their variable's: `this`, `\result`, a parameter's entry copy. */
    private names = new Map<string, string>();
    /** The command lists being simulated, and where in each the simulation is (followingCmds). */
    private readonly following: Array<{ cmds: Cmd[]; next: number }> = [];

    constructor(private readonly spec: SimSpec, locals: Map<string, LocalDecl>) {
        this.locals = new Map(locals);
        this.constants.set('tid', 'Int');
    }

    // ------------------------------------------------------------ entry points

    /** Condition 4: a thread's body, from Init, simulated by its guarantee w.r.t. its environment. */
    thread(init: Cmd[], body: Cmd[]): SeqProgram {
        this.maps = this.usedMaps([...init, ...body]);
        const out: SCmd[] = [{ k: 'assume', cond: this.spec.tidConstraint }];
        // Init satisfies I when condition 3 holds (checked on its own); nothing is assumed about it here.
        // Its implicit checks are checked here too: the initialization check exists only when the
        // program has invariants.
        append(out, this.initialStore(), this.cmds(init, 'init'));
        this.privateLocals.clear();
        append(out, this.cmds(body, 'threads'));
        return this.program(out);
    }

    /** Condition 1: a method's body (abstractions of callees inlined) simulated by its derived abstraction Â(p) w.r.t. Ê(p). */
    abstraction(target: AbstractionTarget, body: Cmd[]): SeqProgram {
        const m = target.method;
        const abs = m.abstraction!;
        this.maps = this.usedMaps(body, abs);
        this.locals.set(PC, { name: PC, sort: 'Int' });
        this.locals.set(OBS, { name: OBS, sort: 'Bool' });
        // The specification speaks of the caller's arguments: the parameters' values at entry, kept
        // in copies the body cannot assign (a body may reuse a parameter as a variable).
        const assigned = assignedLocals(body);
        const entry = target.params.map(p => {
            const name = `${p}~entry`;
            this.locals.set(name, { ...this.locals.get(p)!, name });
            // shown as the parameter, or apart from it when the body assigns it
            const shown = displayName(p);
            if (shown) this.names.set(name, assigned.has(p) ? `${shown} at entry` : shown);
            return name;
        });
        if (target.thisTerm?.t === 'var') this.names.set(target.thisTerm.name, 'this');
        if (target.resultVar) this.names.set(target.resultVar, '\\result');
        const ctx = this.methodCtx(target, entry);
        this.abs = { ...target, steps: abs, ctx };
        const vocab = this.spec.vocab;
        const out: SCmd[] = [{ k: 'assume', cond: this.spec.tidConstraint }];
        target.params.forEach((p, i) => out.push({ k: 'local', var: entry[i], value: T.v(p, this.locals.get(p)!.sort) }));
        for (const f of heapFacts(vocab, undefined, new Set(this.maps))) out.push({ k: 'assume', cond: f });
        // The objects private to the thread at entry are the caller's, which this body cannot reach
        // (its receiver and arguments are published objects, which reference published objects
        // only): none is linked to what it publishes. (Those a private argument reaches had their
        // invariants checked at the call; `linked` only over-approximates what a store publishes.)
        // Objects not allocated yet belong to no thread and hold no monitor (as in the initial store:
        // another thread that allocates one cannot make it this thread's).
        const oi = T.v('o!i', 'Ref');
        const params = [{ name: 'o!i', sort: 'Ref' as const }];
        if (this.maps.includes(LINKED)) out.push({ k: 'update', map: LINKED, params, value: T.FALSE });
        if (this.maps.includes(OWNER)) out.push({ k: 'update', map: OWNER, params, value: T.ite(allocated(oi), ownerOf(oi), T.int(0)) });
        if (this.maps.includes(HOLDER)) out.push({ k: 'update', map: HOLDER, params, value: T.ite(allocated(oi), holderOf(oi), T.int(0)) });
        if (target.thisTerm && vocab.has(ALLOC)) {
            // `this` is a published object of the class (a private receiver is a special case the environment cannot touch at all)
            const type: Type = { kind: 'class', name: m.owner! };
            out.push({ k: 'assume', cond: T.and(T.ne(target.thisTerm, T.NULL), publishedOf(vocab, type, target.thisTerm), initializedFacts(vocab, target.thisTerm, type)) });
        }
        m.params.forEach((p, i) => {
            if ((p.type.kind === 'class' || p.type.kind === 'array') && vocab.has(ALLOC)) {
                const x = T.v(target.params[i], 'Ref');
                out.push({ k: 'assume', cond: T.and(T.or(T.eq(x, T.NULL), publishedOf(vocab, p.type, x)), initializedFacts(vocab, x, p.type)) });
            }
        });
        append(out, this.invariantTerms().map(cond => ({ k: 'assume', cond }) as SCmd));
        for (const r of abs.requires) out.push({ k: 'assume', cond: translate(r.expr, ctx) });
        out.push({ k: 'local', var: PC, value: T.int(1) });
        out.push({ k: 'local', var: OBS, value: T.FALSE });
        out.push({ k: 'snapshot', name: ENTRY });
        this.inputs = [...target.params, ...entry, ...(target.thisTerm?.t === 'var' ? [target.thisTerm.name] : [])];
        for (const id of this.inputs) this.defined.add(id);
        // The checks at the end of the body are for the path that falls off it: inside the body's
        // scope, so that a `return` (checked where it stands) skips them.
        const cmds = this.cmds(body, 'threads');
        const scope = cmds.length === 1 && cmds[0].k === 'scope' && cmds[0].label === target.exitLabel ? cmds[0] : undefined;
        if (scope) append(scope.body, this.finalChecks(m.endRange));
        append(out, cmds);
        if (!scope) append(out, this.finalChecks(m.endRange));
        return this.program(out);
    }

    /** Condition 3: the store after the field initializers satisfies every invariant (reported at the clause). */
    initCheck(init: Cmd[], inv: Invariant[]): SeqProgram {
        this.maps = this.usedMaps(init, undefined, inv);
        const out: SCmd[] = [...this.initialStore(), ...this.cmds(init, 'init')];
        for (const c of inv) {
            out.push({
                k: 'assert', cond: c.term, check: this.check({
                    code: 'invariant', range: c.clause.range, chain: [],
                    message: `the initial state (after the field initializers) may not satisfy the invariant '${c.text}'`,
                    ...inferredOf(c),
                }),
            });
        }
        return this.program(out);
    }

    /** The context of the abstraction's clauses: `this`, and the parameters' entry copies. */
    private methodCtx(target: AbstractionTarget, entry: string[]): TrContext {
        const m = target.method;
        const ids = new Map(m.params.map((p, i) => [p.id, entry[i]]));
        return {
            vocab: this.spec.vocab,
            local: id => {
                const n = ids.get(id);
                if (!n) throw new Error(`unknown parameter ${id}`);
                return T.v(n, this.locals.get(n)!.sort);
            },
            thisTerm: target.thisTerm,
            tid: this.spec.tid,
        };
    }

    private program(body: SCmd[]): SeqProgram {
        return { body, obligations: this.obligations, locals: this.locals, maps: this.maps, constants: this.constants, inputs: this.inputs };
    }

    // ------------------------------------------------------------ helpers

    private check(info: CheckInfo, kind: ObligationKind = 'program', extra: Partial<Obligation> = {}, cond?: Term): number {
        const id = this.obligations.length;
        // An inferred annotation's obligation that fails is not assumed afterwards: the annotation
        // is dropped anyway, and assuming it would hide the refutations of others after it (a
        // failing `c < n` assumed made `c <= n` at the same step unreachable: one inference round
        // more for each). Not assuming is sound: it only lets more obligations fail.
        this.obligations.push({ id, kind, info: cond && kind !== 'candidate' ? this.explained(info, cond) : info, assumeAfter: !info.inferred, ...extra });
        return id;
    }

    /**
     * A failing check's counterexample shows the values of the program
     * variables and shared locations its condition mentions, and, for values
     * read from shared state, the other thread's step that changed them just
     * before the read.
     */
    private explained(info: CheckInfo, cond: Term): CheckInfo {
        const show = [...(info.show ?? [])];
        const changes = [...(info.changes ?? [])];
        const shown = new Set(show.map(([n]) => n));
        for (const v of T.freeVars(cond)) {
            const name = this.shownAs(v);
            const sort = this.locals.get(v)?.sort;
            if (!name || !sort || shown.has(name)) continue;
            shown.add(name);
            // a value already shown under another name is shown under the variable's
            const same = show.findIndex(([, t]) => t.t === 'var' && t.name === v);
            if (same >= 0) show[same] = [name, show[same][1]];
            else show.push([name, T.v(v, sort)]);
            const p = this.provenance.get(v);
            if (p && !changes.some(c => c.name === p.name)) changes.push(p);
        }
        // the shared locations the condition reads (fields, ghost fields, monitors' holders, elements)
        for (const r of T.readsOf(cond)) {
            // in the current state, or before the step being checked
            const before = r.state !== undefined && r.state.startsWith('pre~');
            if ((r.state !== undefined && !before) || r.t !== 'read') continue;
            const base = this.readName(r);
            const name = base && before ? `${base} before` : base;
            if (!name || shown.has(name) || show.some(([, t]) => T.sameTerm(t, r))) continue;
            shown.add(name);
            show.push([name, r]);
        }
        return { ...info, show, changes };
    }

    /** How a local is shown in a counterexample (undefined: not shown). */
    private shownAs(local: string): string | undefined {
        return this.names.get(local) ?? displayName(local);
    }

    /** How a read of shared state is shown in a counterexample (`x`, `c.size`, `v.holder`, `buf[i]`), or undefined. */
    private readName(r: Extract<Term, { t: 'read' }>): string | undefined {
        const key = (t: Term): string | undefined => {
            if (t.t === 'int') return String(t.value);
            if (t.t === 'var') return t.name === 'null' ? 'null' : this.shownAs(t.name);
            if (t.t === 'read') return this.readName(t);
            return undefined;
        };
        const sv = this.spec.vocab.vars.get(r.map);
        if (!sv) return undefined;
        switch (sv.kind) {
            case 'global': return sv.field?.name;
            case 'field': { const o = key(r.keys[0]); return o && sv.field ? `${o}.${sv.field.name}` : undefined; }
            case 'holder': { const o = key(r.keys[0]); return o ? `${o}.holder` : undefined; }
            case 'elems': { const a = key(r.keys[0]), i = key(r.keys[1]); return a && i ? `${a}[${i}]` : undefined; }
            default: return undefined;
        }
    }

    private relevantInvariants(): Invariant[] {
        return this.spec.inv.filter(i => [...i.maps].every(m => this.maps.includes(m)));
    }

    private invariantTerms(): Term[] {
        return this.relevantInvariants().map(i => i.term);
    }

    /**
     * Ê = E && (I ==> I'): after an environment step, I holds (over EPOST). I
     * holds in every state because Init satisfies it (condition 3, checked on
     * its own) and every step preserves it (checked at each step): each check
     * assumes what the others prove, as in Theorem 1.
     */
    private invariantSteps(invs: Invariant[]): Term[] {
        return invs.map(i => T.rebase(i.term, new Map([[undefined, EPOST]])));
    }

    /**
     * The state variables the check involves: those the body and its
     * specification touch, closed under the conjuncts that link them.
     */
    private usedMaps(cmds: Cmd[], abs?: MethodModel['abstraction'], inv?: Invariant[]): string[] {
        const vocab = this.spec.vocab;
        const used = new Set<string>();
        const addTerm = (t: Term) => T.mapsOf(t, used);
        const walkOp = (cs: OpCmd[]) => {
            for (const c of cs) {
                switch (c.k) {
                    case 'assume': case 'assert': addTerm(c.cond); break;
                    case 'local': addTerm(c.value); break;
                    case 'store': used.add(c.map); c.keys.forEach(addTerm); addTerm(c.value); break;
                    case 'update': used.add(c.map); addTerm(c.value); break;
                    case 'havocMap': used.add(c.map); addTerm(c.where); break;
                    case 'if': addTerm(c.cond); walkOp(c.then); walkOp(c.else); break;
                    default: break;
                }
            }
        };
        const walk = (cs: Cmd[]) => {
            for (const c of cs) {
                switch (c.k) {
                    case 'op': walkOp(c.op.body); for (const a of c.op.accesses) if (a.loc.kind !== 'holder') used.add(a.loc.map); break;
                    case 'local': addTerm(c.value); break;
                    case 'assumeLocal': case 'checkLocal': case 'checkState': case 'assumeState': addTerm(c.cond); break;
                    case 'if': addTerm(c.cond); walk(c.then); walk(c.else); break;
                    case 'loop': c.invariants.forEach(i => addTerm(i.cond)); walk(c.body); break;
                    case 'scope': walk(c.body); break;
                    default: break;
                }
            }
        };
        walk(cmds);
        if (abs) {
            for (const a of [...abs.steps, ...(abs.stutter ? [abs.stutter] : [])]) {
                for (const m of frameMaps(vocab, a)) if (vocab.has(m)) used.add(m);
            }
            for (const c of [...abs.requires, ...abs.ensures, ...abs.steps, ...(abs.stutter ? [abs.stutter] : [])]) {
                const e = 'expr' in c ? c.expr : undefined;
                if (e) for (const v of mapsOfExprSafe(e, vocab)) used.add(v);
            }
        }
        for (const i of inv ?? []) for (const m of i.maps) used.add(m);
        if ([...used].some(m => vocab.vars.get(m)?.kind !== 'global') && vocab.has(ALLOC)) used.add(ALLOC).add(OWNER).add(HOLDER).add(LINKED);
        // Close under the conjuncts (a frame's keep condition reads other variables) and invariants.
        const groups: Array<Set<string>> = [
            ...[...this.spec.env, ...this.spec.star, ...this.spec.guarantee].map(c => new Set([...c.maps, ...c.frames.flatMap(f => [...T.mapsOf(f.keep)])])),
            ...this.spec.inv.map(i => i.maps),
        ];
        for (let changed = true; changed;) {
            changed = false;
            for (const g of groups) {
                if (![...g].some(m => used.has(m))) continue;
                for (const m of g) if (!used.has(m) && vocab.has(m)) { used.add(m); changed = true; }
            }
        }
        return vocab.allVars().map(v => v.name).filter(n => used.has(n));
    }

    /** Before the initializers run: default values, nothing allocated, no monitor held. */
    private initialStore(): SCmd[] {
        const out: SCmd[] = [];
        const vocab = this.spec.vocab;
        for (const name of this.maps) {
            const sv = vocab.stateVar(name);
            if (sv.kind === 'global') out.push({ k: 'store', map: name, keys: [], value: defaultOf(sv.sort) });
            else if (sv.kind === 'alloc') out.push({ k: 'update', map: name, params: [{ name: 'o!i', sort: 'Ref' }], value: T.FALSE });
            else if (sv.kind === 'owner' || sv.kind === 'holder') out.push({ k: 'update', map: name, params: [{ name: 'o!i', sort: 'Ref' }], value: T.int(0) });
            else if (sv.kind === 'linked') out.push({ k: 'update', map: name, params: [{ name: 'o!i', sort: 'Ref' }], value: T.FALSE });
        }
        return out;
    }

    private name(base: string): string {
        return `${base}${this.fresh++}`;
    }

    // ------------------------------------------------------------ environment steps

    /**
     * An environment step by the given conjuncts over the check's state variables; `residual`:
     * assume the conjuncts' residual relations (a probe leaves them to its check); `invariants`:
     * assume I after the step.
     */
    private envStep(conjuncts: Conjunct[], options: { residual: boolean; invariants: boolean }): EnvStep {
        return {
            maps: this.maps,
            conjuncts: conjuncts.filter(c => [...c.maps].some(m => this.maps.includes(m)) || c.frames.some(f => this.maps.includes(f.map))),
            invariants: options.invariants ? this.invariantSteps(this.relevantInvariants()) : [],
            assumeResidual: options.residual,
        };
    }

    /**
     * E*: the other threads take any number of steps. Only the state
     * variables linked (by some conjunct of E, E*, I or the guarantee) to
     * those the next operation touches take the step (the paper's second
     * optimization): the others' steps are taken when an operation touches
     * them, which is the same, because no operation touched them meanwhile and
     * their environment frames depend only on each other.
     */
    private star(touched?: Set<string>): SCmd {
        const step = this.envStep(this.spec.star, { residual: true, invariants: true });
        if (touched) {
            const comps = this.components();
            const maps = new Set<string>();
            for (const m of touched) for (const x of comps.get(m) ?? [m]) maps.add(x);
            step.maps = this.maps.filter(m => maps.has(m));
            step.invariants = this.invariantSteps(this.relevantInvariants().filter(i => [...i.maps].some(m => maps.has(m))));
        }
        return { k: 'env', step };
    }

    private comps?: Map<string, Set<string>>;
    private absMaps?: Set<string>;

    /** The state variables the abstraction being checked mentions or frames. */
    private abstractionMaps(): Set<string> {
        if (this.absMaps) return this.absMaps;
        const out = new Set<string>();
        const a = this.abs!.steps;
        for (const act of [...a.steps, ...(a.stutter ? [a.stutter] : [])]) {
            for (const m of mapsOfExprSafe(act.expr, this.spec.vocab)) out.add(m);
            for (const m of frameMaps(this.spec.vocab, act)) if (this.spec.vocab.has(m)) out.add(m);
        }
        this.absMaps = out;
        return out;
    }

    /** Connected components of the state variables, linked by the conjuncts and invariants. */
    private components(): Map<string, Set<string>> {
        if (this.comps) return this.comps;
        const parent = new Map<string, string>(this.maps.map(m => [m, m]));
        const find = (x: string): string => {
            let r = x;
            while (parent.get(r) !== r) r = parent.get(r)!;
            parent.set(x, r);
            return r;
        };
        const link = (ms: Iterable<string>) => {
            const list = [...ms].filter(m => parent.has(m));
            for (let i = 1; i < list.length; i++) parent.set(find(list[i]), find(list[0]));
        };
        for (const c of [...this.spec.env, ...this.spec.star, ...this.spec.guarantee]) {
            link(c.maps);
            for (const f of c.frames) link([f.map, ...T.mapsOf(f.keep)]);
        }
        for (const i of this.spec.inv) link(i.maps);
        const groups = new Map<string, Set<string>>();
        for (const m of this.maps) {
            const r = find(m);
            if (!groups.has(r)) groups.set(r, new Set());
            groups.get(r)!.add(m);
        }
        this.comps = new Map(this.maps.map(m => [m, groups.get(find(m))!]));
        return this.comps;
    }

    // ------------------------------------------------------------ commands

    /**
     * Commands of the field initializers (`init`: before the threads start, no environment
     * steps, no guarantee) or of a body that runs with the other threads (`threads`).
     */
    private cmds(cmds: Cmd[], phase: Phase): SCmd[] {
        const out: SCmd[] = [];
        const frame = { cmds, next: 0 };
        this.following.push(frame);
        try {
            for (let i = 0; i < cmds.length; i++) {
                frame.next = i + 1;
                append(out, this.cmd(cmds[i], phase));
            }
        } finally {
            this.following.pop();
        }
        return out;
    }

    /** The commands after the one being simulated, innermost first (what a loop is followed by). */
    private followingCmds(): Cmd[] {
        const out: Cmd[] = [];
        for (let i = this.following.length - 1; i >= 0; i--) {
            const f = this.following[i];
            for (let k = f.next; k < f.cmds.length; k++) out.push(f.cmds[k]);
        }
        return out;
    }

    private cmd(c: Cmd, phase: Phase): SCmd[] {
        switch (c.k) {
            case 'op': return this.op(c.op, phase);
            case 'local': {
                this.defined.add(c.var);
                // (a copy of a local that holds a private object holds it too: `int[] a = new int[4];`)
                const copiesPrivate = c.value.t === 'var' && this.privateLocals.has(c.value.name);
                this.privateLocals.delete(c.var);
                if (copiesPrivate) this.privateLocals.add(c.var);
                const from = c.value.t === 'var' ? this.provenance.get(c.value.name) : undefined;
                if (from) this.provenance.set(c.var, from);
                else this.provenance.delete(c.var);
                return [{ k: 'local', var: c.var, value: c.value }];
            }
            case 'havocLocal': c.vars.forEach(v => { this.defined.add(v); this.privateLocals.delete(v); }); return [{ k: 'havocLocal', vars: c.vars }];
            case 'assumeLocal': case 'assumeState': return [{ k: 'assume', cond: c.cond }];
            case 'checkLocal':
                return [{ k: 'assert', cond: c.cond, check: this.check(c.check, 'program', {}, c.cond) }];
            case 'checkState': {
                const check: SCmd = { k: 'assert', cond: c.cond, check: this.check(c.check, 'program', {}, c.cond) };
                // (no other thread runs during the initializers)
                return phase === 'init' ? [check] : [this.star(T.mapsOf(c.cond)), check];
            }
            case 'if': {
                const before = new Set(this.privateLocals);
                const a = this.cmds(c.then, phase);
                const afterThen = this.privateLocals;
                this.privateLocals = new Set(before);
                const b = this.cmds(c.else, phase);
                this.privateLocals = new Set([...afterThen].filter(x => this.privateLocals.has(x)));
                return [{ k: 'if', cond: c.cond, then: a, else: b }];
            }
            case 'loop': return this.loop(c, phase);
            case 'break': return [{ k: 'break', label: c.label }];
            case 'continue': return [{ k: 'exit', label: c.label }];
            case 'scope': return [{ k: 'scope', label: c.label, body: this.cmds(c.body, phase) }];
            case 'exit':
                if (this.abs && c.label === this.abs.exitLabel && c.range) return [...this.finalChecks(c.range), { k: 'exit', label: c.label }];
                return [{ k: 'exit', label: c.label }];
            case 'snapshot': return [{ k: 'snapshot', name: c.name }];
        }
    }

    // ------------------------------------------------------------ loops

    /**
     * A loop, cut at its head. The head state: locals the loop assigns are
     * arbitrary; state variables the thread itself writes in the loop (and
     * those whose environment frames depend on them) are arbitrary; the others
     * are what the environment can make of them since the loop began (one E*
     * step from the entry state: the loop's own steps do not touch them).
     * Writes to objects that are private to the thread at entry and stay so
     * only make those objects' locations arbitrary. Houdini candidates
     * (sim/candidates.ts) and `loop_invariant`s constrain the rest.
     */
    private loop(c: Extract<Cmd, { k: 'loop' }>, phase: Phase): SCmd[] {
        const entry = this.name('loop~');
        const vocab = this.spec.vocab;
        const analysis = analyzeLoop(c.body);
        const havocked = new Set<string>();
        const at = new Map<string, Term[]>(); // map -> conditions on its first key where it is arbitrary at the head
        const addAt = (map: string, cond: Term) => at.set(map, [...(at.get(map) ?? []), cond]);
        const k0 = T.v('k!0', 'Ref');
        // (a store into an object private to the thread since before the loop, through a local
        // the loop does not assign, publishes nothing: it stays private at the head by induction)
        const entryPrivateLocals = this.privateLocals;
        // (an array an object's initializer made, read from a field that keeps it, is as private
        // as that object: a store into the elements of a private object's array publishes nothing)
        const privateObject = (into: Term | undefined): boolean => {
            if (into?.t !== 'var') return false;
            if (intoPrivate(into, entryPrivateLocals)) return !analysis.assignedLocals.has(into.name);
            const def = analysis.fieldReads.get(into.name);
            const field = def ? vocab.vars.get(def.map)?.field : undefined;
            return field !== undefined && vocab.stableFields.has(field.id) && (field.init?.kind === 'new' || field.init?.kind === 'newArray') && privateObject(def!.obj);
        };
        const publishesAny = analysis.publications.some(into => !privateObject(into));
        for (const w of analysis.writes) {
            // objects the loop allocates stay allocated at the head: those of earlier iterations may
            // be any of the objects not allocated at entry (no environment step runs during the
            // initializers, and the thread's own allocations are no environment's)
            if (w.map === ALLOC) { addAt(ALLOC, T.not(allocated(k0, entry))); continue; }
            const obj = w.obj?.t === 'var' ? w.obj.name : undefined;
            if (obj && analysis.freshLocals.has(obj)) {
                addAt(w.map, T.not(allocated(k0, entry))); // objects allocated in the loop: anything
            } else if (obj && this.privateLocals.has(obj) && !publishesAny && !analysis.assignedLocals.has(obj)) {
                addAt(w.map, T.eq(k0, w.obj!)); // an object private to the thread since before the loop
            } else {
                // a frame's locations the same in every iteration (`vals[i]` of a callee's stutter, with
                // i not assigned in the loop and vals a final field): only they are arbitrary
                const fixed = w.locs && fixedLocations(w.locs, analysis.assignedLocals, vocab);
                if (fixed) addAt(w.map, T.or(...fixed.map(l => T.and(...l.map((k, i) => T.eq(T.v(`k!${i}`, T.sortOf(k)), k))))));
                else havocked.add(w.map);
            }
        }
        if (publishesAny) {
            // objects private at entry may be published, and changed by others afterwards
            for (const m of this.maps) {
                const sv = vocab.stateVar(m);
                // (a field that keeps its initial value does not change, published or not)
                if (sv.field && vocab.stableFields.has(sv.field.id)) continue;
                // (an object still private at the head was never published: no other thread changed
                // it; the head's owners come first, below)
                if (sv.keys[0] === 'Ref' && sv.kind !== 'alloc') addAt(m, T.and(allocated(k0, entry), T.eq(ownerOf(k0, entry), this.spec.tid), ...(sv.kind === 'owner' ? [] : [T.ne(ownerOf(k0), this.spec.tid)])));
            }
        }
        // Variables whose environment frames read a havocked variable are havocked too.
        const star = this.spec.star;
        for (let changed = true; changed;) {
            changed = false;
            for (const m of this.maps) {
                if (havocked.has(m)) continue;
                const readsHavocked = star.some(cj => cj.frames.some(f => f.map === m && [...T.mapsOf(f.keep)].some(x => havocked.has(x)))
                    || (cj.residual !== undefined && constrains(cj.residual, m) && readsBefore(cj.residual).some(x => havocked.has(x))));
                if (readsHavocked) { havocked.add(m); changed = true; }
            }
        }
        const head: SCmd[] = [];
        const assigned = [...analysis.assignedLocals].filter(l => this.locals.has(l));
        if (this.abs && analysis.hasOps) assigned.push(PC, OBS);
        // (a local first defined inside the body, such as the temporary of a read there, is
        // defined anew before each use: its value at the head is never read)
        const scratch = assigned.filter(l => !this.defined.has(l) && l !== PC && l !== OBS);
        if (assigned.length > 0) head.push({ k: 'havocLocal', vars: [...new Set(assigned)], ...(scratch.length > 0 ? { scratch } : {}) });
        if (analysis.hasOps && phase === 'threads') {
            const step = this.envStep(star, { residual: true, invariants: false });
            step.maps = this.maps.filter(m => !havocked.has(m));
            head.push({ k: 'env', step });
        }
        // (the owners first, arbitrary or not: whether an object is still the thread's own at the
        // head decides whether a publication may have let others change it)
        const ownersFirst = havocked.has(OWNER) && this.maps.includes(OWNER);
        if (ownersFirst) head.push({ k: 'havocMap', map: OWNER, params: [], where: T.TRUE });
        for (const [m, conds] of [...at].sort(([a], [b]) => Number(b === OWNER) - Number(a === OWNER))) {
            if (havocked.has(m) || !this.maps.includes(m)) continue;
            const params = vocab.stateVar(m).keys.map((s, i) => ({ name: `k!${i}`, sort: s }));
            head.push({ k: 'havocMap', map: m, params, where: T.or(...conds) });
        }
        for (const m of havocked) {
            if (this.maps.includes(m) && !(m === OWNER && ownersFirst)) head.push({ k: 'havocMap', map: m, params: [], where: T.TRUE });
        }
        append(head, this.bookkeepingAtHead(entry, phase, analysis.writes, analysis.freshLocals));
        // What every state satisfies: a well-formed heap, and I once the threads run (the
        // initializers are still establishing it).
        for (const f of [...(phase === 'threads' ? this.invariantTerms() : []), ...heapFacts(vocab, undefined, new Set(this.maps))]) head.push({ k: 'assume', cond: f });
        // A reference local the loop assigns holds, at the head as everywhere, null or an object of
        // its type that is published or the thread's own (a local never holds another thread's
        // private object): the class's environment clauses then apply to it.
        if (this.maps.includes(ALLOC) && this.maps.includes(OWNER)) {
            for (const l of assigned) {
                const decl = this.locals.get(l);
                if (!decl || decl.sort !== 'Ref' || !decl.type || scratch.includes(l)) continue;
                const v = T.v(l, 'Ref');
                const typed = wellTyped(vocab, v, decl.type);
                if (typed.t === 'bool') continue;
                head.push({ k: 'assume', cond: T.and(typed, T.or(T.eq(v, T.NULL), T.eq(ownerOf(v), T.int(0)), T.eq(ownerOf(v), this.spec.tid))) });
            }
        }
        // (objects not allocated yet belong to no thread, as in the initial store: the head's
        // arbitrary owners are those of allocated objects)
        if (this.maps.includes(ALLOC) && head.some(h => h.k === 'havocMap' && h.map === OWNER)) {
            const name = 'o!free', o = T.v(name, 'Ref');
            head.push({ k: 'assume', cond: T.forall([{ name, sort: 'Ref' }], T.implies(T.not(allocated(o)), T.eq(ownerOf(o), T.int(0)))) });
        }

        // A loop invariant is assumed at the head (not after its check on entry: that would cut the path).
        const invariants: LoopInv[] = c.invariants.map(inv => ({
            cond: inv.cond, candidate: false, text: inv.text,
            entryCheck: this.check({ ...inv.check, message: `loop invariant '${inv.text}' may not hold when the loop is entered` }, 'user-invariant', { assumeAfter: false }, inv.cond),
            check: this.check({ ...inv.check, message: `loop invariant '${inv.text}' may not be preserved by an iteration of the loop` }, 'user-invariant', { assumeAfter: false }, inv.cond),
        }));
        const candidates = loopCandidates({
            vocab: this.spec.vocab, body: c.body, locals: this.locals, modifiedLocals: new Set(assigned), havocked, entryState: entry,
            partlyHavocked: new Set([...at.keys()].filter(m => this.maps.includes(m))),
            definedLocals: this.defined, tid: this.spec.tid, guards: this.spec.guards, range: c.range,
            pc: this.abs && analysis.hasOps ? { name: PC, steps: this.abs.steps.steps.length } : undefined,
            userInvariants: c.invariants.map(i => i.cond),
            after: this.followingCmds(),
        });
        const own = [
            ...stutterSinceEntry(c.body, entry, vocab, this.spec.tid),
            ...(analysis.publications.length > 0 ? this.unlinkedSinceEntry(entry, analysis.freshLocals) : []),
            ...this.allocatedSinceEntry(entry, analysis.freshLocals),
            ...(phase === 'threads' ? this.publishedLocals(assigned.filter(l => !scratch.includes(l))) : []),
            ...(this.abs && analysis.hasOps ? this.postconditionsAfterLastStep() : []),
            ...(this.abs && analysis.hasOps ? [{ cond: T.v(OBS, 'Bool'), text: 'the next step was observed' }] : []),
        ];
        for (const cand of [...candidates, ...own]) {
            invariants.push({
                cond: cand.cond, candidate: true, text: cand.text,
                check: this.check({ code: 'loop-invariant', range: c.range, message: `candidate loop invariant ${cand.text}`, chain: [] }, 'candidate', { loop: c.label }),
            });
        }
        const entryPrivate = new Set(this.privateLocals);
        if (publishesAny) this.privateLocals.clear();
        const body = this.cmds(c.body, phase);
        this.privateLocals = publishesAny ? new Set() : entryPrivate;
        for (const f of analysis.freshLocals) this.privateLocals.delete(f);
        return [{ k: 'snapshot', name: entry }, { k: 'loop', label: c.label, head, invariants, body }];
    }

    /**
     * Houdini candidates of a loop in a method checked against its abstraction: once every step
     * happened (pc == n+1), each postcondition holds (a retry loop whose failed try was the
     * step, as its value already satisfied it: the next iteration must not try again).
     */
    private postconditionsAfterLastStep(): Candidate[] {
        const abs = this.abs!;
        const a = abs.method.abstraction!;
        const n = a.steps.length;
        if (n === 0) return [];
        const ctx: TrContext = { ...abs.ctx, pre: undefined, old: { ...abs.ctx, pre: ENTRY } };
        const out: Candidate[] = [];
        for (const e of a.ensures) {
            let result = false;
            visit(e.expr, x => { if (x.kind === 'result') result = true; });
            if (result) continue;
            out.push({ cond: T.implies(T.eq(T.v(PC, 'Int'), T.int(n + 1)), translate(e.expr, ctx)), text: `pc == ${n + 1} ==> ${e.text}` });
        }
        return out;
    }

    /**
     * A Houdini candidate for a loop that publishes: the thread's objects that were unlinked at
     * loop entry (or allocated since) are unlinked at the head. It holds when the loop links
     * nothing to them (stores references only into shared locations): then a publication in the
     * loop does not publish the objects of earlier iterations with it (the producer's
     * `j = new Job(); ...; last = j;`).
     */
    private unlinkedSinceEntry(entry: string, fresh: Set<string>): Candidate[] {
        if (!this.maps.includes(LINKED) || !this.maps.includes(OWNER) || !this.maps.includes(ALLOC)) return [];
        const name = 'o!link', o = T.v(name, 'Ref');
        const unlinked = (only: Term, text: string): Candidate => ({
            cond: T.forall([{ name, sort: 'Ref' }], T.implies(
                T.and(allocated(o), T.eq(ownerOf(o), this.spec.tid), only, T.or(T.not(allocated(o, entry)), T.not(linkedOf(o, entry)))),
                T.not(linkedOf(o)))),
            text,
        });
        const out = [unlinked(T.TRUE, 'the objects of this thread unlinked at loop entry, or allocated since, stay unlinked')];
        // and per class the loop allocates: the objects an iteration makes and links to its new
        // object (a field initializer's `new`) do not keep that object from staying unlinked
        const vocab = this.spec.vocab;
        const classes = this.classesOf(fresh);
        if (classes.size > 1 || [...classes].some(c => vocab.classes.get(c)?.fields.some(f => f.init?.kind === 'new' || f.init?.kind === 'newArray'))) {
            for (const c of classes) {
                out.push(unlinked(T.eq(dtypeOf(o), T.int(vocab.typeId({ kind: 'class', name: c }))), `the objects of class ${c} of this thread unlinked at loop entry, or allocated since, stay unlinked`));
            }
        }
        return out;
    }

    /**
     * Houdini candidates: a reference local the loop assigns holds null or a published object
     * (a walk over a list the thread has published: the head's typing allows the thread's own
     * objects too, whose class invariants nothing states).
     */
    private publishedLocals(assigned: string[]): Candidate[] {
        if (!this.maps.includes(OWNER) || !this.maps.includes(ALLOC)) return [];
        const out: Candidate[] = [];
        for (const l of assigned) {
            const decl = this.locals.get(l);
            if (!decl || decl.sort !== 'Ref' || decl.type?.kind !== 'class') continue;
            const v = T.v(l, 'Ref');
            out.push({ cond: T.or(T.eq(v, T.NULL), T.and(allocated(v), T.eq(ownerOf(v), T.int(0)))), text: `${displayName(l) ?? l} is null or published` });
        }
        return out;
    }

    /**
     * What the head knows of the objects allocated since loop entry, as map
     * updates (definitions reach every object read later, where an assumed
     * universal reaches only the objects in scope): during the initializers
     * every object is published (owner 0); and no monitor of such an object is
     * held by this thread when the loop's only monitor writes are synchronized
     * blocks in its body, which end before the next iteration (the
     * initializers hold none at all).
     */
    private bookkeepingAtHead(entry: string, phase: Phase, writes: Array<{ map: string; obj?: Term; kind: OpKind }>, fresh: Set<string>): SCmd[] {
        if (!this.maps.includes(ALLOC) || fresh.size === 0) return [];
        const o = T.v('o!h', 'Ref');
        const params = [{ name: 'o!h', sort: 'Ref' as Sort }];
        const since = T.not(allocated(o, entry));
        const out: SCmd[] = [];
        if (phase === 'init' && this.maps.includes(OWNER)) out.push({ k: 'update', map: OWNER, params, value: T.ite(since, T.int(0), ownerOf(o)) });
        const blockStructured = writes.every(w => w.map !== HOLDER || w.kind === 'enter' || w.kind === 'exit' || (w.obj?.t === 'var' && fresh.has(w.obj.name)));
        if (this.maps.includes(HOLDER) && blockStructured) {
            const held = phase === 'init' ? since : T.and(since, T.eq(holderOf(o), this.spec.tid));
            out.push({ k: 'update', map: HOLDER, params, value: T.ite(held, T.int(0), holderOf(o)) });
        }
        return out;
    }

    /** The classes of the objects these locals hold. */
    private classesOf(locals: Set<string>): Set<string> {
        const out = new Set<string>();
        for (const l of locals) {
            const t = this.locals.get(l)?.type;
            if (t?.kind === 'class') out.add(t.name);
        }
        return out;
    }

    /**
     * Houdini candidates for a loop that allocates: the objects allocated since
     * loop entry satisfy their class's invariants at the head (an initializer
     * that fills an array with new objects: without them, the objects of
     * earlier iterations would be anything after the loop).
     */
    private allocatedSinceEntry(entry: string, fresh: Set<string>): Candidate[] {
        if (fresh.size === 0 || !this.maps.includes(ALLOC)) return [];
        const vocab = this.spec.vocab;
        const classes = this.classesOf(fresh);
        // (of the objects the head's arbitrary owners leave to this thread or publish: one another
        // thread owns is changed by it, and its invariant is its own business until published)
        // (null excluded: an environment step's arbitrary allocation may take it)
        const since = (o: Term) => T.and(T.not(T.eq(o, T.NULL)), allocated(o), T.not(allocated(o, entry)), this.maps.includes(OWNER) ? T.or(T.eq(ownerOf(o), T.int(0)), T.eq(ownerOf(o), this.spec.tid)) : T.TRUE);
        const out: Candidate[] = [];
        // (all of them: the check of the initializers assumes no invariant, yet checks them after)
        for (const inv of allInvariants(vocab)) {
            const q = inv.term;
            if (![...inv.maps].every(m => this.maps.includes(m))) continue;
            if (!inv.className || !classes.has(inv.className) || q.t !== 'quant' || q.body.t !== 'app' || q.body.fn !== '=>') continue;
            const o = T.v(q.vars[0].name, 'Ref');
            const ofClass = T.eq(dtypeOf(o), T.int(vocab.typeId({ kind: 'class', name: inv.className })));
            out.push({ cond: T.forall(q.vars, T.implies(T.and(since(o), ofClass), q.body.args[1])), text: `the objects allocated since loop entry satisfy '${inv.text}'` });
        }
        return out;
    }

    // ------------------------------------------------------------ atomic operations

    private op(op: AtomicOp, phase: Phase): SCmd[] {
        if (op.init || phase === 'init') {
            // Field initializers: no environment, no guarantee; their implicit checks are checked.
            return this.opBody(op.body, op, 'check', OP_PRE);
        }
        const touched = opMaps(op);
        // the abstraction's actions are evaluated on this step too
        if (this.abs) for (const m of this.abstractionMaps()) touched.add(m);
        const before = this.name('env~');
        const out: SCmd[] = [{ k: 'snapshot', name: before }, this.star(touched)];
        const pre = this.name('pre~');
        // blocking assumes, then the implicit checks of the access (null, bounds), then its race checks
        let lead = op.blocking;
        while (lead < op.body.length && op.body[lead].k === 'assert') lead++;
        // (before the step, its pre-state is the current state)
        append(out, this.opBody(op.body.slice(0, lead), op, 'check', undefined));
        append(out, this.raceChecks(op));
        out.push({ k: 'snapshot', name: pre });
        append(out, this.opBody(op.body.slice(lead), op, 'check', pre));
        // an object read here satisfies its class invariants (every published object does, in every state)
        if (op.kind === 'read') append(out, this.invariantsAt(op));
        // a value read here: what it was before the environment's step
        if (op.kind === 'read') {
            for (const c of op.body) {
                if (c.k !== 'local' || c.value.t !== 'read' || c.value.state !== undefined) continue;
                const text = op.accesses[0]?.text ?? c.value.map;
                this.provenance.set(c.var, { name: text, before: T.rebase(c.value, new Map([[undefined, before]])), after: T.rebase(c.value, new Map([[undefined, pre]])), range: op.range });
            }
        }
        append(out, this.guarantee(op, pre));
        if (this.abs) append(out, this.simulate(op, pre));
        if (op.fresh) for (const f of op.fresh) if (f.t === 'var') this.privateLocals.add(f.name);
        if (publishes(op.body, this.privateLocals)) this.privateLocals.clear();
        return out;
    }

    /** The class invariants of the objects a read operation yields, instantiated at them. */
    private invariantsAt(op: AtomicOp): SCmd[] {
        const out: SCmd[] = [];
        for (const c of op.body) {
            if (c.k !== 'local') continue;
            const type = this.locals.get(c.var)?.type;
            if (type?.kind !== 'class') continue;
            for (const inv of this.relevantInvariants()) {
                const t = inv.term;
                if (inv.className !== type.name || t.t !== 'quant' || t.q !== 'forall' || t.vars.length !== 1) continue;
                out.push({ k: 'assume', cond: T.substitute(t.body, new Map([[t.vars[0].name, T.v(c.var, 'Ref')]])) });
            }
        }
        return out;
    }

    private opBody(body: OpCmd[], op: AtomicOp, checks: 'check' | 'assume', pre: string | undefined): SCmd[] {
        const out: SCmd[] = [];
        const at = (t: Term) => T.rebase(t, new Map([[OP_PRE, pre]]));
        for (const c of body) {
            switch (c.k) {
                case 'assume': out.push({ k: 'assume', cond: at(c.cond) }); break;
                case 'assert':
                    out.push(checks === 'check' ? { k: 'assert', cond: at(c.cond), check: this.check(c.check, 'program', { op: op.id }, at(c.cond)) } : { k: 'assume', cond: at(c.cond) });
                    break;
                case 'local': this.defined.add(c.var); this.privateLocals.delete(c.var); this.provenance.delete(c.var); out.push({ k: 'local', var: c.var, value: at(c.value) }); break;
                case 'havocLocal': c.vars.forEach(v => { this.defined.add(v); this.privateLocals.delete(v); }); out.push({ k: 'havocLocal', vars: c.vars }); break;
                case 'store': out.push({ k: 'store', map: c.map, keys: c.keys.map(at), value: at(c.value) }); break;
                case 'update': out.push({ k: 'update', map: c.map, params: c.params, value: at(c.value) }); break;
                case 'havocMap': out.push({ k: 'havocMap', map: c.map, params: c.params, where: at(c.where) }); break;
                case 'if': out.push({ k: 'if', cond: at(c.cond), then: this.opBody(c.then, op, checks, pre), else: this.opBody(c.else, op, checks, pre) }); break;
            }
        }
        return out;
    }

    /** Races (checking.md "Races"): stability of non-synchronized accesses; writable_if of writes. */
    private raceChecks(op: AtomicOp): SCmd[] {
        const out: SCmd[] = [];
        const seen = new Set<string>();
        const fresh = new Set((op.fresh ?? []).map(T.key));
        for (const a of op.accesses) {
            const obj = objectOf(a);
            if (obj && fresh.has(T.key(obj))) continue;
            const k = `${a.write}/${accessKey(a)}`;
            if (seen.has(k)) continue;
            seen.add(k);
            // (a write that breaks its writable_if first: when both fail at one access, that is the one reported)
            if (a.write && op.kind !== 'step' && op.kind !== 'stutter') {
                const writes = this.writeCondition(op, locMap(a));
                append(out, this.writable(a, op, writes));
                append(out, this.privateElementWrite(a, op, writes));
            }
            if (!a.sync && !a.field?.isFinal) append(out, this.stability(a, op));
        }
        return out;
    }

    /** A non-synchronized access is race-free iff one step of E(p) cannot change the location here. */
    private stability(a: Access, op: AtomicOp): SCmd[] {
        const loc = locTerm(a, undefined);
        if (!loc || !this.maps.includes(locMap(a))) return [];
        const probe = this.name('probe~');
        // only the accessed variable takes the hypothetical step (its frames read the others as they are)
        const step = this.envStep(this.spec.env, { residual: false, invariants: false });
        step.maps = [locMap(a)];
        const residual = T.and(...step.conjuncts.filter(c => c.residual).map(c => T.rebase(c.residual!, new Map([[EPRE, undefined], [EPOST, probe]]))));
        const stable = T.eq(locTerm(a, probe)!, loc);
        const what = a.write ? 'write' : 'read';
        const via = a.loc.kind === 'elem' ? a.loc.via?.field : undefined;
        const guard = a.field ? this.spec.guards.get(a.field.id) : via ? this.spec.elementGuards.get(via.id) : undefined;
        const notOwned = via ? this.spec.notOwned.get(via.id) : undefined;
        const field = a.field ?? via;
        const writes = field ? this.writesOf(field.id, guard) : undefined;
        const why = notOwned ? `no guard protects the elements of ${via!.name}'s arrays, because ${via!.name} does not own them (${notOwned})`
            : !a.field && !via ? 'no environment assumption keeps it stable here'
                : writes ? `another thread may write it here: ${field!.name} is ${writes.text}`
                : guard?.inferred ? (guard.inferred.writers.length > 0 ? 'another thread may write it here' : 'it may change here')
                    : guard ? `its writable_if '${clausesText(guard.clauses)}' lets another thread write it here`
                        : this.userClausesOn(step.conjuncts, locMap(a))
                            ?? `another thread may write it here (${a.field ? 'it has' : `${via!.name} has`} no writable_if and no environment clause protects it)`;
        const info: CheckInfo = {
            code: 'race', range: a.range, chain: op.chain,
            message: `${what} of ${a.text} may race: ${why}`,
            show: [[a.text, loc]],
            related: guard && !guard.inferred && guard.clauses[0] && !guard.clauses[0].inferred ? { range: guard.clauses[0].range, message: `writable_if of ${guard.field.id}` } : undefined,
            ...(writes ? { also: writes.related } : {}),
        };
        return [{ k: 'probe', name: probe, step }, { k: 'assert', cond: T.implies(residual, stable), check: this.check(info, 'program', { op: op.id, assumeAfter: false }) }];
    }

    /** "the environment clause 'c' does not keep it stable here", for the user's clauses that frame `map`. */
    private userClausesOn(conjuncts: Conjunct[], map: string): string | undefined {
        const texts = [...new Set(conjuncts.filter(c => c.kind === 'env' && c.clause && c.frames.some(f => f.map === map)).map(c => c.clause!.text))];
        if (texts.length === 0) return undefined;
        const list = texts.map(t => `'${t}'`).join(texts.length === 2 ? ' and ' : ', ');
        return `another thread may write it here (${texts.length === 1 ? 'the environment clause' : 'the environment clauses'} ${list} ${texts.length === 1 ? 'does' : 'do'} not keep it stable here)`;
    }

    /**
     * The writes of a field whose protection the inference inferred (or found
     * none for), for a race's message: "written at line 23 by T1, holding
     * nothing and at line 29 by T2, holding Mutex.m: no common protection".
     */
    private writesOf(field: string, guard: Guard | undefined): { text: string; related: Array<{ range: Range; message: string }> } | undefined {
        const inf = guard?.clauses[0]?.inferred;
        const sites = inf ? inf.sites : this.spec.vocab.program.unprotected?.find(u => u.field === field)?.sites;
        if (!sites || sites.length === 0) return undefined;
        // (no line numbers in the text: a cached result is shown after edits that move lines; the
        // related locations move with the text)
        const kinds = [...new Set(sites.map(s => s.held))];
        const shown = kinds.slice(0, 4);
        const list = shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
        const more = kinds.length > shown.length ? ` (and ${kinds.length - shown.length} more)` : '';
        // several writers that hold nothing in common (no lock or monitor all of them hold)
        const owned = (x: { atoms: Array<{ key: string }> }) => new Set(x.atoms.map(a => a.key).filter(k => k.endsWith('==tid')));
        const shared = inf && inf.sites.length > 1 ? inf.sites.map(owned).reduce((a, b) => new Set([...a].filter(k => b.has(k)))) : undefined;
        const writers = inf ? new Set(inf.sites.map(x => (x.threads ?? ['*']).join(','))) : undefined;
        const common = !inf || (shared && shared.size === 0 && writers && (writers.size > 1 || writers.has('*'))) ? ': no common protection' : '';
        return {
            text: `written ${list}${more}${common}`,
            related: sites.slice(0, 6).map(s => ({ range: s.range, message: `written here, ${s.held}` })),
        };
    }

    /**
     * The guarantee of the inferred fact that threads write the elements of this sort only while
     * the array is private (Vocabulary.privateElements): a write to a published array refutes it
     * (the inference drops it and the checks run again).
     */
    private privateElementWrite(a: Access, op: AtomicOp, writes: Term): SCmd[] {
        const vocab = this.spec.vocab;
        const loc = a.loc;
        if (loc.kind !== 'elem' || !vocab.privateElements.has(loc.map)) return [];
        const cond = T.or(T.not(writes), T.and(allocated(loc.arr), T.eq(ownerOf(loc.arr), this.spec.tid)));
        const info: CheckInfo = {
            code: 'race', range: a.range, chain: op.chain, show: [],
            message: `write of ${a.text} may change a published array's element (the elements were inferred to be written only while their array is private)`,
            inferred: { kind: 'environment', field: `elems:${vocab.stateVar(loc.map).sort}` },
        };
        return [{ k: 'assert', cond, check: this.check(info, 'program', { op: op.id, assumeAfter: false }, cond) }];
    }

    /** A write must satisfy the field's writable_if (unless the object is private to this thread). */
    private writable(a: Access, op: AtomicOp, writes: Term): SCmd[] {
        const vocab = this.spec.vocab;
        const tid = this.spec.tid;
        const loc = a.loc;
        let cond: Term | undefined;
        let text = '';
        let related: CheckInfo['related'];
        // a step that may not write (a failing cas, an atomic block's branch) need not satisfy the guard when it does not
        const privateObj = (o: Term) => T.or(T.not(writes), vocab.has(ALLOC) ? T.and(allocated(o), T.eq(ownerOf(o), tid)) : T.FALSE);
        if ((loc.kind === 'global' || loc.kind === 'field') && a.field) {
            const g = this.spec.guards.get(a.field.id);
            if (!g) return [];
            const obj = loc.kind === 'field' ? loc.obj : undefined;
            if (g.clauses[0]?.inferred) return this.inferredGuard(g, a, op, obj, obj ? privateObj(obj) : T.not(writes));
            text = g.inferred ? g.inferred.text : clausesText(g.clauses);
            if (!g.inferred) related = { range: g.clauses[0].range, message: `writable_if of ${a.field.id}` };
            const p = guardTerm(vocab, g, undefined, tid, obj);
            cond = obj ? T.or(privateObj(obj), p) : T.or(T.not(writes), p);
        } else if (loc.kind === 'elem') {
            // The elements of an owned array are protected by the guard of the field that owns it, at
            // the object the array was read from; an array reached through a local, by the guard of
            // every owning field, at every object in scope that references it (the array was read
            // from, or stored into, one of them: an owned array never reaches a place where the
            // referencing object is not in scope, analysis/arrays.ts).
            const parts: Term[] = [];
            const texts: string[] = [];
            const via = loc.via ? this.spec.elementGuards.get(loc.via.field.id) : undefined;
            if (loc.via && via) {
                if (via.clauses[0]?.inferred) return this.inferredGuard(via, a, op, loc.via.obj, privateObj(loc.arr));
                parts.push(guardTerm(vocab, via, undefined, tid, loc.via.obj));
                texts.push(via.inferred ? via.inferred.text : clausesText(via.clauses));
                if (!via.inferred) related = { range: via.clauses[0].range, message: `writable_if of ${loc.via.field.id}` };
            } else if (!loc.via) {
                // An owned array is referenced by at most one location (o.f), and that object is in
                // scope wherever a local holds the array: the write is allowed when some object in
                // scope references the array and its guard holds, or when none references it (it
                // is private, or no field references it any more).
                const owners: Term[] = [];
                const none: Term[] = [];
                for (const g of this.spec.elementGuards.values()) {
                    const f = g.field;
                    if (f.type.kind !== 'array' || elemsVar(sortOfType(f.type.element)) !== loc.map) continue;
                    const fv = vocab.varOfField(f.id);
                    if (!this.maps.includes(fv)) continue;
                    if (f.isStatic) {
                        owners.push(T.and(T.eq(vocab.read(fv, []), loc.arr), guardTerm(vocab, g, undefined, tid, undefined)));
                        none.push(T.ne(vocab.read(fv, []), loc.arr));
                    } else {
                        const o = T.v('o!e', 'Ref');
                        const scoped = [{ name: 'o!e', sort: 'Ref' as const, type: `scoped:${typeKey({ kind: 'class', name: f.owner! })}` }];
                        owners.push(T.exists(scoped, T.and(T.eq(vocab.read(fv, [o]), loc.arr), guardTerm(vocab, g, undefined, tid, o))));
                        none.push(T.forall(scoped, T.ne(vocab.read(fv, [o]), loc.arr)));
                    }
                    texts.push(g.inferred ? g.inferred.text : clausesText(g.clauses));
                }
                if (owners.length > 0) parts.push(T.or(...owners, T.and(...none)));
            }
            if (parts.length === 0) return [];
            text = texts.join('; ');
            cond = T.or(privateObj(loc.arr), T.and(...parts));
        }
        if (!cond) return [];
        const inferredRef = [...this.spec.elementGuards.values()].find(g => g.clauses[0]?.inferred && loc.kind === 'elem' && !loc.via && elemsVar(sortOfType((g.field.type as { element: Type }).element)) === loc.map);
        const info: CheckInfo = {
            code: 'race', range: a.range, chain: op.chain, related, message: `write of ${a.text} violates its writable_if '${text}'`, show: [['tid', tid]],
            ...(inferredRef ? { inferred: { kind: 'guard' as const, field: inferredRef.field.id } } : {}),
        };
        return [{ k: 'assert', cond, check: this.check(info, 'program', { op: op.id, assumeAfter: false }, cond) }];
    }

    /**
     * When an operation stores into `map`, as a condition on the state before
     * it (a cas writes when the location holds the expected value; an atomic
     * block, on the paths that reach the store). True when it cannot tell (a
     * condition that reads what the operation itself wrote before).
     */
    private writeCondition(op: AtomicOp, map: string): Term {
        const defs = new Map<string, Term>();
        const tainted = new Set<string>();
        // (a read of a map the operation has not written yet still reads the pre-state)
        const stored = new Set<string>();
        let unknown = false;
        const value = (t: Term): Term | undefined => {
            if ([...T.freeVars(t)].some(v => tainted.has(v)) || T.readsOf(t).some(r => stored.has(r.map))) return undefined;
            return T.substitute(t, defs);
        };
        const walk = (cmds: OpCmd[], pc: Term): Term[] => {
            const out: Term[] = [];
            for (const c of cmds) {
                switch (c.k) {
                    case 'local': {
                        const v = value(c.value);
                        if (v) defs.set(c.var, v); else tainted.add(c.var);
                        break;
                    }
                    case 'havocLocal': for (const v of c.vars) tainted.add(v); break;
                    case 'assume': { const v = value(c.cond); if (v) pc = T.and(pc, v); break; }
                    case 'assert': break;
                    case 'store': case 'update': case 'havocMap':
                        if (c.map === map) out.push(pc);
                        stored.add(c.map);
                        break;
                    case 'if': {
                        const v = value(c.cond);
                        if (!v) { unknown = true; return out; }
                        append(out, walk(c.then, T.and(pc, v)));
                        append(out, walk(c.else, T.and(pc, T.not(v))));
                        break;
                    }
                }
            }
            return out;
        };
        let lead = op.blocking;
        while (lead < op.body.length && op.body[lead].k === 'assert') lead++;
        const paths = walk(op.body.slice(lead), T.TRUE);
        return unknown || paths.length === 0 ? T.TRUE : T.or(...paths);
    }

    /**
     * The guarantee of an inferred guard at a write: what the inference says
     * the thread knows there (the guard's disjunct for this write), one fact
     * at a time, so that a fact that does not hold is the one the inference
     * drops. Together they imply the guard. A write the inference did not see
     * is checked against the whole guard.
     */
    private inferredGuard(g: Guard, a: Access, op: AtomicOp, obj: Term | undefined, priv: Term): SCmd[] {
        const inf = g.clauses[0].inferred!;
        const tid = this.spec.tid;
        const key = `${a.range.file}:${a.range.startLine}:${a.range.startChar}`;
        const site = inf.sites.find(x => `${x.range.file}:${x.range.startLine}:${x.range.startChar}` === key);
        const text = clausesText(g.clauses);
        const parts: Array<{ cond: Term; atom?: string; what: string }> = [];
        if (!site) parts.push({ cond: guardTerm(this.spec.vocab, g, undefined, tid, obj), what: text });
        else {
            if (site.threads) parts.push({ cond: T.or(...site.threads.map(t => T.eq(tid, T.int(t)))), what: 'the writing thread' });
            const ctx = stateCtx(this.spec.vocab, tid, undefined, obj);
            for (const x of site.atoms) parts.push({ cond: translate(x.expr, ctx), atom: x.key, what: x.text });
        }
        return parts.map(p => {
            const cond = T.or(priv, p.cond);
            const info: CheckInfo = {
                code: 'race', range: a.range, chain: op.chain, show: [['tid', tid]],
                message: `write of ${a.text} may not satisfy its inferred writable_if '${text}' ('${p.what}' may not hold here)`,
                inferred: { kind: 'guard', field: inf.field, site: site ? key : undefined, atom: p.atom },
            };
            return { k: 'assert' as const, cond, check: this.check(info, 'program', { op: op.id, assumeAfter: false }, cond) };
        });
    }

    /** The guarantee: every step satisfies the other threads' environment assumptions and preserves I. */
    private guarantee(op: AtomicOp, pre: string): SCmd[] {
        const writes = opWrites(op.body);
        const written = new Set(writes.map(w => w.map));
        if (written.size === 0) return [];
        const out: SCmd[] = [];
        const j = T.v('j!g', 'Int');
        // the written locations, before and after the step
        const show: Array<[string, Term]> = [];
        for (const a of op.accesses) {
            const loc = a.write ? locTerm(a, undefined) : undefined;
            if (!loc || show.some(([n]) => n === a.text)) continue;
            show.push([`${a.text} before`, T.rebase(loc, new Map([[undefined, pre]]))], [a.text, loc]);
        }
        for (const c of this.spec.guarantee) {
            if (![...c.maps].some(v => written.has(v))) continue;
            if (![...c.maps].every(v => this.maps.includes(v))) continue;
            // (every j but 0 and tid: ids are positive, so this asks more than it must; a sound
            // obligation, kept as it was because the counterexamples Z3 then gives explain more)
            const rel = T.rebase(T.substitute(c.relation, new Map([['tid', j]])), new Map([[EPRE, pre], [EPOST, undefined]]));
            const cond = T.forall([{ name: 'j!g', sort: 'Int' }], T.implies(T.and(T.ne(j, T.int(0)), T.ne(j, this.spec.tid)), atWrittenObjects(rel, writes)));
            out.push({
                k: 'assert', cond, check: this.check({
                    code: 'env', range: op.range, chain: op.chain,
                    message: `${describeOp(op)} may violate another thread's environment assumption '${c.text}'`,
                    related: c.clause && !c.clause.inferred ? { range: c.clause.range, message: c.origin } : undefined, show,
                    ...(c.clause?.inferred ? { inferred: { kind: 'environment' as const, field: c.clause.inferred.field } } : {}),
                }, 'program', { op: op.id }, atWrittenObjects(rel, writes)),
            });
        }
        // (the elements of an array a field owns are the owner's: spec.elementGuards has the owning fields)
        const owned = ownedWrites(op, this.spec.vocab, id => this.spec.elementGuards.has(id));
        for (const c of this.spec.inv) {
            if (![...c.maps].some(v => written.has(v))) continue;
            if (![...c.maps].every(v => this.maps.includes(v))) continue;
            // the globals the invariant mentions, after the step, and for a class invariant, its
            // locations at the objects of the class the step writes or publishes
            const mentioned: Array<[string, Term]> = [];
            const mention = (r: Extract<Term, { t: 'read' }>, name: string | undefined) => {
                if (r.state === undefined && name && !show.some(([n]) => n === name) && !mentioned.some(([n]) => n === name)) mentioned.push([name, r]);
            };
            for (const r of T.readsOf(c.term)) if (r.keys.length === 0) mention(r, this.spec.vocab.vars.get(r.map)?.field?.name);
            const t = c.term;
            if (c.className !== undefined && t.t === 'quant' && t.vars.length === 1) {
                for (const x of touchedObjects(op.body)) {
                    const type = this.locals.get(x.name)?.type;
                    if (type?.kind !== 'class' || type.name !== c.className) continue;
                    for (const r of T.readsOf(T.substitute(t.body, new Map([[t.vars[0].name, x as Term]])))) mention(r, this.readName(r));
                }
            }
            const cond = T.implies(T.and(this.globalsPublished(c.term, pre), this.freshUnreferenced(op, c.term, pre)), atWrittenObjects(preserves(c.term, pre), writes, owned));
            out.push({
                k: 'assert', cond, check: this.check({
                    code: 'invariant', range: op.range, chain: op.chain,
                    message: `${describeOp(op)} may break the invariant '${c.text}'`,
                    related: c.clause.inferred ? undefined : { range: c.clause.range, message: c.origin }, show: [...show, ...mentioned],
                    ...inferredOf(c),
                }, 'program', { op: op.id }, cond),
            });
        }
        return out;
    }

    /**
     * At an allocation, no object's field that the term reads references the new object (no
     * reference anywhere is to an object not allocated yet; an environment step's values of
     * `o.next` are not otherwise known to be allocated): the new node is not some node's `next`.
     * (A premise of the invariant check only: assumed on the path it made every later query
     * slower.)
     */
    private freshUnreferenced(op: AtomicOp, term: Term, pre: string): Term {
        if (op.kind !== 'alloc' || !op.fresh) return T.TRUE;
        const vocab = this.spec.vocab;
        const facts: Term[] = [];
        for (const x of op.fresh) {
            // (objects only: at an array's allocation, as in a vector's growth, it made the checks
            // slower by half, and arrays are referenced through owning fields)
            const type = x.t === 'var' ? this.locals.get(x.name)?.type : undefined;
            if (type?.kind !== 'class') continue;
            const seen = new Set<string>();
            for (const r of T.readsOf(term)) {
                const field = vocab.vars.get(r.map)?.field;
                if (r.keys.length !== 1 || r.sort !== 'Ref' || !field || field.isStatic || !sameType(field.type, type) || seen.has(r.map)) continue;
                seen.add(r.map);
                const o = T.v('o!fresh', 'Ref');
                facts.push(T.forall([{ name: 'o!fresh', sort: 'Ref' }], T.ne(vocab.read(r.map, [o], pre), x)));
            }
        }
        return T.and(...facts);
    }

    /**
     * Before a step, every reference global the term reads holds null or a published object (a
     * store into a global publishes; the environment's values of a global are not otherwise
     * known to be): a write to the thread's own new object then leaves an invariant about the
     * object in a global alone.
     */
    private globalsPublished(term: Term, pre: string): Term {
        if (!this.maps.includes(ALLOC) || !this.maps.includes(OWNER)) return T.TRUE;
        const facts: Term[] = [];
        const seen = new Set<string>();
        for (const r of T.readsOf(term)) {
            if (r.keys.length > 0 || r.state !== undefined || r.sort !== 'Ref' || seen.has(r.map)) continue;
            seen.add(r.map);
            const g = T.rebase(r, new Map([[undefined, pre]]));
            facts.push(T.or(T.eq(g, T.NULL), T.and(allocated(g, pre), T.eq(ownerOf(g, pre), T.int(0)))));
        }
        return T.and(...facts);
    }

    // ------------------------------------------------------------ simulation by the abstraction

    /** sim({p}X, W): a step that is a stutter keeps `pc`; any other must be abstraction step `pc` (or the witness). */
    private simulate(op: AtomicOp, pre: string): SCmd[] {
        const abs = this.abs!;
        const a = abs.steps;
        const n = a.steps.length;
        const pc = T.v(PC, 'Int');
        // (the terms of a callee's step, such as the array of its frame `a[*]`, read its pre-state as OP_PRE)
        const at = (t: Term) => T.rebase(t, new Map([[OP_PRE, pre]]));
        const writes = opWrites(op.body).filter(w => !(op.kind === 'alloc' && !w.keys))
            .map(w => ({ ...w, when: at(w.when), keys: w.keys?.map(at), locs: w.locs?.map(l => l.map(at)), into: w.into && at(w.into) }));
        const ctx: TrContext = { ...abs.ctx, pre };
        const frames = a.steps.map(s => frameOf(this.spec.vocab, s, ctx));
        const stepOk = (i: number) => T.and(actionPredicate(a.steps[i], ctx), this.frameOk(writes, frames[i], pre));
        const noChange = this.frameOk(writes, new Map(), pre);
        const stutter = a.stutter ? T.or(noChange, T.and(actionPredicate(a.stutter, ctx), this.frameOk(writes, frameOf(this.spec.vocab, a.stutter, ctx), pre))) : noChange;
        let allowed: Term;
        let next: Term;
        const witness = op.witness !== undefined && op.witness >= 1 && op.witness <= n ? op.witness : undefined;
        if (witness !== undefined) {
            // `witness step N`: this operation is step N, even where it changes nothing
            allowed = T.and(T.eq(pc, T.int(witness)), stepOk(witness - 1));
            next = T.int(witness + 1);
        } else {
            allowed = T.and(T.cmp('<=', pc, T.int(n)), ...a.steps.map((_, i) => T.implies(T.eq(pc, T.int(i + 1)), stepOk(i))));
            // A step after the last one (reported) leaves pc at n+1: one failure, one report.
            next = T.ite(T.cmp('<=', pc, T.int(n)), T.arith('+', pc, T.int(1)), pc);
        }
        // The witness depends on the state: an operation that writes (or an atomic block) is the
        // next step whenever it satisfies it (a write that may leave its location unchanged, a
        // failed try that the next step allows as well, an `atomic { assume P; }` for `step [] P`),
        // and a stutter otherwise; a plain read is a stutter (`witness step N` makes it a step).
        // (monitors, allocation and publication are bookkeeping no frame names, and a write to an
        // object private to the thread is invisible to the others: they do not make a step; a write
        // counts whether or not its path runs, as a failed cas)
        const vocab = this.spec.vocab;
        const privateAtPre = (o: Term) => vocab.has(ALLOC) ? T.or(T.not(allocated(o, pre)), T.eq(ownerOf(o, pre), this.spec.tid)) : T.FALSE;
        const visible = T.or(...writes.filter(w => !['holder', 'alloc', 'owner', 'linked'].includes(vocab.stateVar(w.map).kind))
            .map(w => w.keys && w.keys.length > 0 ? T.not(privateAtPre(w.keys[0])) : T.TRUE));
        // An operation that changes nothing is an observation of the next step it satisfies
        // (`OBS`), not the step: a failed attempt of a retry loop, a read that returns early. An
        // operation that changes something and that the next step does not allow, after an
        // observation, is the step after it: the observation was the next step (a write that
        // left its location unchanged, then the following step).
        const obs = T.v(OBS, 'Bool');
        const changes = T.not(noChange);
        const skip = witness !== undefined || n < 2 ? T.FALSE
            : T.and(T.cmp('<', pc, T.int(n)), ...a.steps.slice(1).map((_, i) => T.implies(T.eq(pc, T.int(i + 1)), stepOk(i + 1))));
        const takes = witness !== undefined ? allowed : op.kind === 'atomic' ? allowed : T.and(visible, changes, allowed);
        const skips = witness !== undefined ? T.FALSE : T.and(T.not(takes), obs, op.kind === 'atomic' ? T.TRUE : T.and(visible, changes), skip);
        const tk = this.name('step~');
        this.locals.set(tk, { name: tk, sort: 'Bool' });
        const sv = this.name('stutters~');
        this.locals.set(sv, { name: sv, sort: 'Bool' });
        const sk = this.name('skips~');
        this.locals.set(sk, { name: sk, sort: 'Bool' });
        const name = abs.method.name;
        const info: CheckInfo = {
            code: 'abstraction', range: op.range, chain: op.chain,
            message: n === 0
                ? `${describeOp(op)} changes shared state, but the abstraction of '${name}' allows no step${a.explicit ? '' : ' (requires/ensures alone make an abstraction without steps: write an `abstraction { ... step [...] ...; }` that says how it changes shared state)'}`
                : `${describeOp(op)} is not a step the abstraction of '${name}' allows here (its steps: ${a.steps.map((s, i) => `${i + 1}: ${s.text}`).join('; ')})`,
            show: [['pc', pc], ...this.locationsChanged(op, frames, pre)],
            related: { range: a.range, message: `abstraction of '${name}'` },
        };
        // (the counterexample also shows what the steps' predicates read, before and after)
        const explain = T.and(...a.steps.map(s => actionPredicate(s, ctx)));
        return [
            { k: 'local', var: tk, value: takes },
            { k: 'local', var: sk, value: skips },
            { k: 'local', var: sv, value: witness !== undefined ? T.FALSE : stutter },
            { k: 'assert', cond: T.or(T.v(tk, 'Bool'), T.v(sk, 'Bool'), T.v(sv, 'Bool'), allowed), check: this.check(info, 'program', { op: op.id }, explain) },
            // (a stutter that the next step allows as it is observes it; pc moves on otherwise, and the observation is forgotten)
            { k: 'local', var: OBS, value: witness !== undefined ? T.FALSE : T.ite(T.or(T.v(tk, 'Bool'), T.v(sk, 'Bool'), T.not(T.v(sv, 'Bool'))), T.FALSE, T.or(obs, allowed)) },
            { k: 'local', var: PC, value: T.ite(T.v(tk, 'Bool'), next, T.ite(T.v(sk, 'Bool'), T.arith('+', pc, T.int(2)), T.ite(T.v(sv, 'Bool'), pc, next))) },
        ];
    }

    /** The locations an operation writes and those the abstraction's frames name, before and after it (for a counterexample). */
    private locationsChanged(op: AtomicOp, frames: FrameInfo[], pre: string): Array<[string, Term]> {
        const out: Array<[string, Term]> = [];
        const add = (name: string | undefined, now: Term) => {
            if (!name || out.some(([n]) => n === name)) return;
            out.push([`${name} before`, T.rebase(now, new Map([[undefined, pre]]))], [name, now]);
        };
        for (const acc of op.accesses) {
            const loc = acc.write ? locTerm(acc, undefined) : undefined;
            if (loc?.t === 'read') add(this.readName(loc) ?? acc.text, loc);
        }
        for (const frame of frames) {
            for (const [map, where] of frame) {
                const sv = this.spec.vocab.vars.get(map);
                if (!sv || sv.kind === 'alloc' || sv.kind === 'owner' || sv.kind === 'linked') continue;
                // (a global is one location; other variables framed everywhere have no location to show)
                for (const keys of where === 'all' ? (sv.keys.length === 0 ? [[]] : []) : where) {
                    if (keys.length !== sv.keys.length) continue;
                    const r = this.spec.vocab.read(map, keys);
                    if (r.t === 'read') add(this.readName(r), r);
                }
            }
        }
        return out;
    }

    /** The operation's writes stay within the frame (or change nothing; objects private to the thread may change freely). */
    private frameOk(writes: Write[], frame: FrameInfo, pre: string): Term {
        const vocab = this.spec.vocab;
        const tid = this.spec.tid;
        const parts: Term[] = [];
        for (const w of writes) {
            const sv = vocab.stateVar(w.map);
            if (sv.kind === 'holder' || sv.kind === 'alloc' || sv.kind === 'owner' || sv.kind === 'linked') continue;
            const priv = (o: Term) => vocab.has(ALLOC) ? T.or(T.not(allocated(o, pre)), T.eq(ownerOf(o, pre), tid)) : T.FALSE;
            if (w.keys) {
                const unchanged = T.eq(vocab.read(w.map, w.keys), vocab.read(w.map, w.keys, pre));
                parts.push(T.implies(w.when, T.or(inFrame(frame, w.map, w.keys), unchanged, w.keys.length > 0 ? priv(w.keys[0]) : T.FALSE)));
            } else if (w.locs) {
                for (const loc of w.locs) {
                    // a whole location may also be left unchanged; a set of locations (every element of an array) must be in the frame
                    const whole = loc.length === sv.keys.length;
                    const unchanged = whole ? T.eq(vocab.read(w.map, loc), vocab.read(w.map, loc, pre)) : T.FALSE;
                    parts.push(T.implies(w.when, T.or(inFrame(frame, w.map, loc), unchanged, priv(loc[0]))));
                }
            } else {
                parts.push(T.implies(w.when, frame.get(w.map) === 'all' ? T.TRUE : T.FALSE));
            }
        }
        return T.and(...parts);
    }

    /** At a return (or the end of the body): E*; assert post && pc == n+1. */
    private finalChecks(range: Range): SCmd[] {
        const abs = this.abs!;
        const m = abs.method;
        const a = m.abstraction!;
        const n = a.steps.length;
        const out: SCmd[] = [this.star()];
        const result = abs.resultVar ? T.v(abs.resultVar, this.locals.get(abs.resultVar)!.sort) : undefined;
        const ctx: TrContext = { ...abs.ctx, pre: undefined, old: { ...abs.ctx, pre: ENTRY }, result };
        for (const e of a.ensures) {
            const cond = translate(e.expr, ctx);
            out.push({
                k: 'assert', cond, check: this.check({
                    code: 'abstraction', range, chain: [],
                    message: `the postcondition '${e.text}' of '${m.name}' may not hold when it returns here`,
                    related: { range: e.range, message: `postcondition of '${m.name}'` },
                }, 'program', {}, cond),
            });
        }
        if (n > 0) {
            out.push({
                k: 'assert', cond: T.or(T.eq(T.v(PC, 'Int'), T.int(n + 1)), T.and(T.eq(T.v(PC, 'Int'), T.int(n)), T.v(OBS, 'Bool'))), check: this.check({
                    code: 'abstraction', range, chain: [],
                    message: `'${m.name}' may return before ${n === 1 ? 'the step' : `all ${n} steps`} of its abstraction happened`,
                    show: [['steps done', T.arith('-', T.v(PC, 'Int'), T.int(1))]],
                    missingStep: { steps: a.steps.map(s => ({ text: s.text, changesNothing: allowsNoChange(s, abs.ctx) })) },
                    related: { range: a.range, message: `abstraction of '${m.name}'` },
                }),
            });
        }
        return out;
    }
}

// ------------------------------------------------------------ utilities

/** How a local is shown in a counterexample: a program variable by its name, a read by the location's; temporaries not at all. */
function displayName(local: string): string | undefined {
    // (Java identifiers: Unicode letters, currency symbols, connectors, digits)
    const source = /^l~([\p{L}\p{Nl}\p{Sc}\p{Pc}][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Sc}\p{Pc}]*)@\d+:\d+~\d+$/u.exec(local);
    if (source) return source[1];
    const read = /^l~(?:read|final)_([\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Sc}\p{Pc}]+?)~\d+$/u.exec(local);
    if (read) return read[1];
    return undefined;
}

/**
 * Whether an abstraction step allows a transition that changes nothing (`step
 * [x] x' == x`, `step [m] (m == 0 && m' == tid) || m' == m`, an empty
 * frame): decided syntactically, by reading every location after the step as
 * before it; undecided cases count as no.
 */
function allowsNoChange(step: Action, ctx: TrContext): boolean {
    if (step.hasFrame && step.frame.length === 0) return true; // (it can only change nothing)
    const same = 'same~';
    const t = T.rebase(actionPredicate(step, { ...ctx, pre: same }), new Map([[undefined, same]]));
    return t.t === 'bool' && t.value;
}

/** The locals a body assigns (outside atomic operations and inside them). */
function assignedLocals(cmds: Cmd[], out = new Set<string>()): Set<string> {
    const walkOp = (cs: OpCmd[]) => {
        for (const c of cs) {
            if (c.k === 'local') out.add(c.var);
            else if (c.k === 'havocLocal') c.vars.forEach(v => out.add(v));
            else if (c.k === 'if') { walkOp(c.then); walkOp(c.else); }
        }
    };
    for (const c of cmds) {
        switch (c.k) {
            case 'op': walkOp(c.op.body); break;
            case 'local': out.add(c.var); break;
            case 'havocLocal': c.vars.forEach(v => out.add(v)); break;
            case 'if': assignedLocals(c.then, out); assignedLocals(c.else, out); break;
            case 'loop': case 'scope': assignedLocals(c.body, out); break;
            default: break;
        }
    }
    return out;
}

/** The state variables an operation reads or writes. */
function opMaps(op: AtomicOp): Set<string> {
    const out = new Set<string>();
    for (const a of op.accesses) out.add(a.loc.kind === 'holder' ? HOLDER : a.loc.map);
    const walk = (cs: OpCmd[]) => {
        for (const c of cs) {
            switch (c.k) {
                case 'assume': case 'assert': T.mapsOf(c.cond, out); break;
                case 'local': T.mapsOf(c.value, out); break;
                case 'store': out.add(c.map); c.keys.forEach(k => T.mapsOf(k, out)); T.mapsOf(c.value, out); break;
                case 'update': out.add(c.map); T.mapsOf(c.value, out); break;
                case 'havocMap': out.add(c.map); T.mapsOf(c.where, out); break;
                case 'if': T.mapsOf(c.cond, out); walk(c.then); walk(c.else); break;
                default: break;
            }
        }
    };
    walk(op.body);
    return out;
}

/** Whether a relation constrains a state variable after the step. */
function constrains(rel: Term, map: string): boolean {
    return T.readsOf(rel).some(r => r.state === EPOST && r.map === map);
}

/** The state variables a relation reads before the step. */
function readsBefore(rel: Term): string[] {
    return T.readsOf(rel).filter(r => r.state === EPRE).map(r => r.map);
}

function defaultOf(sort: Sort): Term {
    return sort === 'Int' ? T.int(0) : sort === 'Bool' ? T.FALSE : T.NULL;
}

/**
 * A property of every object (`forall o. P(o)`) after a step that writes only
 * single locations: when P(o) reads the written variables only at o itself,
 * the step can change P only at the objects it writes, so P is checked there
 * (no arbitrary object, and a smaller VC); likewise when P(o) reads the
 * elements of `o.f`'s array and the step writes them through `x.f`, f owning its
 * arrays (`owned`): only at x. Otherwise, at an arbitrary object.
 */
function atWrittenObjects(t: Term, writes: Write[], owned: OwnedWrite[] = []): Term {
    if (t.t !== 'quant' || t.q !== 'forall' || t.vars.length !== 1 || t.vars[0].sort !== 'Ref') return t;
    const o = t.vars[0].name;
    const written = new Set(writes.map(w => w.map));
    const isO = (k: Term | undefined) => k?.t === 'var' && k.name === o;
    // the owner of the array a write of an element changes, when it is written through a field that owns its arrays
    const ownerOf = (w: Write, fv: string) => owned.find(x => x.map === w.map && x.fv === fv && w.keys !== undefined && w.keys.length > 0 && T.sameTerm(x.arr, w.keys[0]));
    const viaOwned = (r: Extract<Term, { t: 'read' }>) => {
        const k = r.keys[0];
        if (k?.t !== 'read' || k.keys.length !== 1 || !isO(k.keys[0])) return false;
        return writes.every(w => w.map !== r.map || ownerOf(w, k.map) !== undefined);
    };
    const reads = T.readsOf(t.body);
    const local = reads.every(r => !written.has(r.map) || (r.keys.length > 0 && (isO(r.keys[0]) || viaOwned(r))));
    if (!local) return t;
    const objects: Term[] = [];
    for (const w of writes) {
        const mine = reads.filter(r => r.map === w.map);
        if (mine.length === 0) continue;
        if (!w.keys || w.keys.length === 0) return t; // a whole map or a global changes
        for (const r of mine) {
            // a location at o: the written object; an element of o.f's array, f owning its arrays:
            // the owner x the write went through (no other object's f references the array)
            const k = r.keys[0];
            const x = isO(k) ? w.keys[0] : ownerOf(w, (k as Extract<Term, { t: 'read' }>).map)!.obj;
            if (!objects.some(y => T.sameTerm(y, x))) objects.push(x);
        }
    }
    return T.and(...objects.map(x => T.substitute(t.body, new Map([[o, x]]))));
}

/**
 * An element write of a step through a field that owns its arrays (`x.f[i] = v`,
 * analysis/arrays.ts: no location but x.f references the array): the element
 * map, the array, the field's map and x.
 */
interface OwnedWrite { map: string; arr: Term; fv: string; obj: Term }

function ownedWrites(op: AtomicOp, vocab: Vocabulary, owns: (fieldId: string) => boolean): OwnedWrite[] {
    const out: OwnedWrite[] = [];
    for (const a of op.accesses) {
        const l = a.loc;
        if (!a.write || l.kind !== 'elem' || !l.via?.obj || l.via.field.isStatic || !owns(l.via.field.id)) continue;
        out.push({ map: l.map, arr: l.arr, fv: vocab.varOfField(l.via.field.id), obj: l.via.obj });
    }
    return out;
}

/** `I in pre ==> I now`; for a class invariant, object by object: `forall o. I(o) in pre ==> I(o) now`. */
function preserves(term: Term, pre: string): Term {
    if (term.t === 'quant' && term.q === 'forall') {
        return T.forall(term.vars, T.implies(T.rebase(term.body, new Map([[undefined, pre]])), term.body));
    }
    return T.implies(T.rebase(term, new Map([[undefined, pre]])), term);
}

function mapsOfExprSafe(e: import('../model/program.js').Expr, vocab: Vocabulary): Set<string> {
    const { pre, post } = stateVarsOf(e, vocab);
    return new Set([...pre, ...post]);
}

function objectOf(a: Access): Term | undefined {
    const l = a.loc;
    return l.kind === 'field' || l.kind === 'holder' ? l.obj : l.kind === 'elem' ? l.arr : undefined;
}

function accessKey(a: Access): string {
    const t = locTerm(a, undefined);
    return t ? T.key(t) : locMap(a);
}

function locMap(a: Access): string {
    return a.loc.kind === 'holder' ? HOLDER : a.loc.map;
}

function locTerm(a: Access, state: string | undefined): Term | undefined {
    const l = a.loc;
    switch (l.kind) {
        case 'global': return T.read(l.map, [], sortOfField(a), state);
        case 'field': return T.read(l.map, [l.obj], sortOfField(a), state);
        case 'elem': return T.read(l.map, [l.arr, l.index], l.map.endsWith('Int') ? 'Int' : l.map.endsWith('Bool') ? 'Bool' : 'Ref', state);
        case 'holder': return T.read(HOLDER, [l.obj], 'Int', state);
        case 'all': return undefined;
    }
}

function sortOfField(a: Access): Sort {
    return a.field ? sortOfType(a.field.type) : 'Int';
}

/** One write of an operation: at keys, at some objects (a frame), or anywhere; under a path condition. */
interface Write { map: string; when: Term; keys?: Term[]; locs?: Term[][]; into?: Term }

function opWrites(body: OpCmd[], when: Term = T.TRUE, out: Write[] = []): Write[] {
    for (const c of body) {
        switch (c.k) {
            case 'store': out.push({ map: c.map, when, keys: c.keys }); break;
            case 'update': out.push(c.into ? { map: c.map, when, into: c.into } : { map: c.map, when }); break;
            case 'havocMap': {
                // a global is one location: written (perhaps with the same value) like a store
                if (c.params.length === 0) { out.push({ map: c.map, when, keys: [] }); break; }
                const locs = whereLocations(c.where, c.params.map(p => p.name));
                out.push(locs ? { map: c.map, when, locs } : { map: c.map, when });
                break;
            }
            case 'if': opWrites(c.then, T.and(when, c.cond), out); opWrites(c.else, T.and(when, T.not(c.cond)), out); break;
            default: break;
        }
    }
    return out;
}

/** `(k0 == a && k1 == i) || k0 == o ...` over the key variables → the key prefixes [[a, i], [o], ...]. */
function whereLocations(where: Term, keys: string[]): Term[][] | undefined {
    if (keys.length === 0) return undefined;
    const parts = where.t === 'app' && where.fn === 'or' ? where.args : [where];
    const out: Term[][] = [];
    for (const p of parts) {
        const eqs = p.t === 'app' && p.fn === 'and' ? p.args : [p];
        const loc: Term[] = [];
        for (const e of eqs) {
            if (e.t !== 'app' || e.fn !== '=') return undefined;
            const [a, b] = e.args;
            const i = a.t === 'var' ? keys.indexOf(a.name) : -1;
            const j = b.t === 'var' ? keys.indexOf(b.name) : -1;
            if (i >= 0 && loc[i] === undefined) loc[i] = b;
            else if (j >= 0 && loc[j] === undefined) loc[j] = a;
            else return undefined;
        }
        // a prefix of the keys, without gaps
        if (loc.length === 0 || loc.length !== eqs.length) return undefined;
        out.push(loc);
    }
    return out;
}


/** The objects (held in locals) whose fields an operation writes, and the references it stores (and so may publish). */
function touchedObjects(body: OpCmd[], out: Array<Extract<Term, { t: 'var' }>> = []): Array<Extract<Term, { t: 'var' }>> {
    const add = (t: Term | undefined) => { if (t?.t === 'var' && t.sort === 'Ref' && t.name !== 'null' && !out.some(x => x.name === t.name)) out.push(t); };
    for (const c of body) {
        if (c.k === 'store') { add(c.keys[0]); add(c.value); } else if (c.k === 'if') { touchedObjects(c.then, out); touchedObjects(c.else, out); }
    }
    return out;
}

/** Whether an operation may publish objects: a store of a reference into anything but an object a private local holds. */
function publishes(body: OpCmd[], privateLocals: Set<string>): boolean {
    return opWrites(body).some(w => w.map === OWNER && !w.keys && !intoPrivate(w.into, privateLocals));
}

function intoPrivate(into: Term | undefined, privateLocals: Set<string>): boolean {
    return into?.t === 'var' && privateLocals.has(into.name);
}

function describeOp(op: AtomicOp): string {
    return op.label ? `the ${op.label}` : 'this step';
}

/**
 * What a loop body does on the paths that come back to its head: its writes
 * (with the object written when it is a local), the objects it allocates,
 * publication; and every local it assigns. Steps on paths that leave the loop
 * (a `return` inside it, say) do not change the state at the head.
 */
function analyzeLoop(body: Cmd[]): {
    writes: Array<{ map: string; obj?: Term; locs?: Term[][]; kind: OpKind }>; freshLocals: Set<string>; assignedLocals: Set<string>;
    publications: Array<Term | undefined>; hasOps: boolean; fieldReads: Map<string, { map: string; obj: Term }>;
} {
    const writes: Array<{ map: string; obj?: Term; locs?: Term[][]; kind: OpKind }> = [];
    const assignedLocals = new Set<string>();
    const freshLocals = new Set<string>();
    /** Locals the body sets to a field of an object (`l := f[o]`). */
    const fieldReads = new Map<string, { map: string; obj: Term }>();
    /** The objects stores into which may publish (undefined: a shared location). */
    const publications: Array<Term | undefined> = [];
    let hasOps = false;
    /**
     * From a point of the body: whether falling off it comes back to the head, and the boolean
     * locals whose value is the same on every path that does (a cas loop comes back only when
     * its cas failed: its write is on no such path).
     */
    interface Flow { reaches: boolean; known: Map<string, boolean> }
    const labels = new Map<string, Flow>();
    const walkOp = (cs: OpCmd[]) => {
        for (const c of cs) {
            if (c.k === 'local' && c.value.t === 'read' && c.value.keys.length === 1 && c.value.state === undefined) fieldReads.set(c.var, { map: c.value.map, obj: c.value.keys[0] });
            if (c.k === 'local') assignedLocals.add(c.var);
            else if (c.k === 'havocLocal') c.vars.forEach(v => assignedLocals.add(v));
            else if (c.k === 'if') { walkOp(c.then); walkOp(c.else); }
        }
    };
    const contradicts = (when: Term, known: Map<string, boolean>): boolean => {
        const lits = T.conjuncts(when);
        return lits.some(l => {
            const [v, val] = l.t === 'var' ? [l.name, true] : l.t === 'app' && l.fn === 'not' && l.args[0].t === 'var' ? [l.args[0].name, false] : [undefined, false];
            return v !== undefined && known.has(v) && known.get(v) !== val;
        });
    };
    const op = (o: AtomicOp, f: Flow) => {
        hasOps = true;
        walkOp(o.body);
        if (!f.reaches) return;
        for (const x of o.fresh ?? []) if (x.t === 'var') freshLocals.add(x.name);
        for (const w of opWrites(o.body)) {
            if (contradicts(w.when, f.known)) continue; // this write leaves the loop
            if (w.map === OWNER && !w.keys) { publications.push(w.into); continue; }
            if (o.kind === 'alloc' && !w.keys) continue; // a new array's elements
            writes.push({ map: w.map, obj: w.keys && w.keys.length > 0 ? w.keys[0] : undefined, locs: w.locs, kind: o.kind });
        }
    };
    const without = (known: Map<string, boolean>, vars: Iterable<string>) => {
        const out = new Map(known);
        for (const v of vars) out.delete(v);
        return out;
    };
    const localsOf = (cs: OpCmd[]): string[] => cs.flatMap(c => c.k === 'local' ? [c.var] : c.k === 'havocLocal' ? c.vars : c.k === 'if' ? [...localsOf(c.then), ...localsOf(c.else)] : []);
    const literal = (t: Term): [string, boolean] | undefined =>
        t.t === 'var' ? [t.name, true] : t.t === 'app' && t.fn === 'not' && t.args[0].t === 'var' ? [t.args[0].name, false] : undefined;
    const NOWHERE: Flow = { reaches: false, known: new Map() };
    /** Walks a command list backwards from the flow after its end; returns the flow at its start. */
    const walk = (cs: Cmd[], next: Flow): Flow => {
        let r = next;
        for (let i = cs.length - 1; i >= 0; i--) {
            const c = cs[i];
            switch (c.k) {
                case 'op': op(c.op, r); r = { reaches: r.reaches, known: without(r.known, localsOf(c.op.body)) }; break;
                case 'local':
                    if (c.value.t === 'read' && c.value.keys.length === 1 && c.value.state === undefined) fieldReads.set(c.var, { map: c.value.map, obj: c.value.keys[0] });
                    assignedLocals.add(c.var); r = { reaches: r.reaches, known: without(r.known, [c.var]) }; break;
                case 'havocLocal': c.vars.forEach(v => assignedLocals.add(v)); r = { reaches: r.reaches, known: without(r.known, c.vars) }; break;
                case 'exit': case 'break': case 'continue': r = labels.get(c.label) ?? NOWHERE; break;
                case 'if': {
                    const t = walk(c.then, r), e = walk(c.else, r);
                    const lit = literal(c.cond);
                    const tk = new Map(t.known), ek = new Map(e.known);
                    if (lit) { tk.set(lit[0], lit[1]); ek.set(lit[0], !lit[1]); }
                    if (!t.reaches) r = { reaches: e.reaches, known: ek };
                    else if (!e.reaches) r = { reaches: true, known: tk };
                    else r = { reaches: true, known: new Map([...tk].filter(([k, v]) => ek.get(k) === v)) };
                    break;
                }
                case 'scope': labels.set(c.label, r); r = walk(c.body, r); break;
                // An inner loop's body is walked once, as if its end came back to our head: its own
                // head may be reached again and left by a break, so this over-approximates (walking
                // it a second time, with the value after the loop, would only confirm a subset of
                // it, at twice the cost per level of nesting).
                case 'loop': labels.set(c.label, { reaches: r.reaches, known: new Map() }); walk(c.body, { reaches: true, known: new Map() }); r = { reaches: r.reaches, known: new Map() }; break;
                case 'checkState': hasOps = true; break;
                default: break;
            }
        }
        return r;
    };
    walk(body, { reaches: true, known: new Map() });
    return { writes, freshLocals, assignedLocals, publications, hasOps, fieldReads };
}

/** An inferred invariant's obligation: refuting it weakens the inference (infer/), it is not the program's failure. */
function inferredOf(inv: Invariant): Pick<CheckInfo, 'inferred'> {
    return inv.clause.inferred ? { inferred: { kind: 'invariant', field: inv.clause.inferred.field } } : {};
}

export { otherMayWrite, wellTyped };

/**
 * The stutter loop of a call (InlineAbs: `K*`) relates the state at its head
 * to the state before it by any number of stutter steps and environment
 * steps; its head is cut like any loop's. Each conjunct of the stutter's
 * predicate, taken from the state before the loop to the head, is a Houdini
 * candidate: a reflexive and transitive one (`next' >= next`) survives, and
 * what the caller knows after the call keeps it (`seen = x; m(); assert x >=
 * seen;`). A quantifier over objects in it is narrowed to the objects
 * published or the thread's own at loop entry: the others' steps may change
 * any other object (one they allocate, one private to them).
 */
function stutterSinceEntry(body: Cmd[], entry: string, vocab: Vocabulary, tid: Term): Candidate[] {
    const out: Candidate[] = [];
    const known = (b: BoundVar) => {
        const o = T.v(b.name, 'Ref');
        const cls = b.type?.startsWith('C:') ? b.type.slice(2) : undefined;
        return T.and(allocated(o, entry), T.or(T.eq(ownerOf(o, entry), T.int(0)), T.eq(ownerOf(o, entry), tid)),
            ...(cls && vocab.classes.has(cls) ? [T.eq(dtypeOf(o), T.int(vocab.typeId({ kind: 'class', name: cls })))] : []));
    };
    const narrow = (t: Term): Term => !vocab.has(ALLOC) ? t : T.rewrite(t, x => {
        if (x.t !== 'quant' || !x.vars.some(b => b.sort === 'Ref')) return undefined;
        const guard = T.and(...x.vars.filter(b => b.sort === 'Ref').map(known));
        const inner = narrow(x.body);
        return x.q === 'forall' ? T.forall(x.vars, T.implies(guard, inner)) : T.exists(x.vars, T.and(guard, inner));
    });
    for (const c of body) {
        if (c.k !== 'op' || c.op.kind !== 'stutter') continue;
        for (const b of c.op.body) {
            if (b.k !== 'assume') continue;
            for (const part of T.conjuncts(b.cond)) {
                out.push({ cond: narrow(T.rebase(part, new Map([[OP_PRE, entry]]))), text: `${c.op.label ?? 'the stutter'} since the loop began` });
            }
        }
    }
    return out;
}


/**
 * Key terms that name the same locations in every iteration of a loop: they
 * read no local the loop assigns and only final or stable variables (read in
 * any state: they are the same in all), which are read in the current state.
 */
function fixedLocations(locs: Term[][], assigned: Set<string>, vocab: Vocabulary): Term[][] | undefined {
    const current = (t: Term): Term => T.rewrite(t, x => (x.t === 'read' && x.state !== undefined ? T.read(x.map, x.keys.map(current), x.sort) : undefined));
    const out: Term[][] = [];
    for (const loc of locs) {
        const keys: Term[] = [];
        for (const k of loc) {
            if ([...T.freeVars(k)].some(v => assigned.has(v) || v.startsWith('k!'))) return undefined;
            for (const r of T.readsOf(k)) {
                const f = vocab.vars.get(r.map)?.field;
                if (!f || !(f.isFinal || vocab.stableFields.has(f.id))) return undefined;
            }
            keys.push(current(k));
        }
        out.push(keys);
    }
    return out.length > 0 ? out : undefined;
}

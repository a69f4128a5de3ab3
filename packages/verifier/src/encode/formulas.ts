import type { Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { BoundVar, Sort, Term } from '../smt/term.js';
import { symbol, toSmt } from '../smt/term.js';

/**
 * Declarations of a verification condition, and the translation of terms into
 * quantifier-free SMT formulas.
 *
 * A *state* gives every state variable an *incarnation*: an uninterpreted
 * function of the keys (an arbitrary state: after a havoc, at a loop head) or
 * a macro over the previous state's incarnations (`define-fun`: a store, an
 * environment step built from frames, a join). A read resolves to an
 * application of the incarnation; Z3 expands the macros, so a read costs only
 * the definitions on its way back to an arbitrary state.
 *
 * Quantifiers over objects are removed by polarity (`ground`): one that holds
 * for every object where it is assumed is instantiated at the objects in scope
 * (a weaker assumption: sound); one that needs a single witness is skolemized;
 * an existential in a checked condition becomes a disjunction over the objects
 * in scope (a stronger check: sound).
 */
export type State = Map<string, string>;

/** Resolution context: the states reads may name, and the locals' current values. */
export interface Scope {
    states: Map<string | undefined, State>;
    locals: Map<string, Term>;
}

/** Ground terms of each static type (`typeKey`), used to instantiate quantifiers; '*' holds every reference. */
export type Ground = Map<string, Term[]>;

export const PRELUDE = `(declare-sort Ref 0)
(declare-const null Ref)
(declare-fun len0 (Ref) Int)
(define-fun len ((r Ref)) Int (abs (len0 r)))
(declare-fun dtype (Ref) Int)
(declare-fun made_by (Ref) Ref)
(declare-fun made_at (Ref) Int)
(define-fun jdiv ((a Int) (b Int)) Int (ite (= (>= a 0) (> b 0)) (div (abs a) (abs b)) (- (div (abs a) (abs b)))))
(define-fun jmod ((a Int) (b Int)) Int (- a (* b (jdiv a b))))
`;

export class Formulas {
    /** Declarations (and names for terms), in order. */
    readonly decls: string[] = [];
    private readonly used = new Set<string>();
    private skolems = 0;
    /** Sorts of the declared constants (for models). */
    readonly constSorts = new Map<string, Sort>();
    /** When set, universally checked objects of a type are this one constant (an arbitrary object) instead of a fresh one. */
    fixedSkolem?: (b: BoundVar) => Term | undefined;
    /** Objects a check is made at count as in scope (for assumptions made afterwards). */
    groundCheckedObjects = false;
    /** Universals assumed before a check at an object are instantiated at it too (`late`). */
    lateInstances = false;
    /** Assertions that hold everywhere: instances of assumed universals at objects checked later. */
    readonly late: Term[] = [];
    private readonly universals: Array<{ name: Term; q: Term & { t: 'quant' }; weaken: boolean; skolemOk: boolean; g: Ground; done: Set<string> }> = [];
    private instantiatingLate = false;
    private macroDepth = 0;
    /** The shared checked objects (`checkedObject`), and how many of each type the current formula took. */
    private readonly sharedChecked = new Map<string, Term>();
    private readonly checkedOfType = new Map<string, number>();
    /** Incarnations defined from the previous ones: instantiated at the keys where they are read (`definitions`). */
    private readonly defs = new Map<string, { params: BoundVar[]; body: Term }>();
    /** Bodies of named terms: the reads in them need definitions too. */
    private readonly named: Term[] = [];
    /** The state variable of each incarnation made here. */
    private readonly incarnationOf = new Map<string, string>();

    constructor(readonly vocab: Vocabulary) { }

    /** A fresh SMT name with the given base. */
    fresh(base: string): string {
        let name = base;
        for (let i = 1; this.used.has(name); i++) name = `${base}#${i}`;
        this.used.add(name);
        return name;
    }

    declareConst(base: string, sort: Sort): Term {
        const name = this.fresh(base);
        this.decls.push(`(declare-const ${symbol(name)} ${sort})`);
        this.constSorts.set(name, sort);
        return T.v(name, sort);
    }

    /** A 0-ary macro: a name for a term. */
    defineConst(base: string, value: Term): Term {
        if (value.t === 'var' || value.t === 'int' || value.t === 'bool') return value;
        const name = this.fresh(base);
        const sort = T.sortOf(value);
        this.decls.push(`(define-fun ${symbol(name)} () ${sort} ${toSmt(value)})`);
        this.named.push(value);
        return T.v(name, sort);
    }

    /** A fresh arbitrary incarnation of a state variable. */
    arbitrary(map: string, tag: string): string {
        const sv = this.vocab.stateVar(map);
        const name = this.fresh(`${map}!${tag}`);
        this.incarnationOf.set(name, map);
        if (sv.keys.length === 0) this.decls.push(`(declare-const ${symbol(name)} ${sv.sort})`);
        else this.decls.push(`(declare-fun ${symbol(name)} (${sv.keys.join(' ')}) ${sv.sort})`);
        return name;
    }

    /**
     * An incarnation defined from the keys: `body(keys)` must already be
     * resolved. A global's is a name for its value; a map's is an
     * uninterpreted function whose definition is instantiated at the keys
     * where it is read (a `define-fun` with parameters would be expanded
     * without sharing by some Z3 versions: exponential in the chain of states).
     */
    macro(map: string, tag: string, body: (keys: Term[]) => Term): string {
        const sv = this.vocab.stateVar(map);
        const params = sv.keys.map((sort, i) => ({ name: `x!${i}`, sort }));
        this.macroDepth++;
        let b: Term;
        try {
            b = body(params.map(p => T.v(p.name, p.sort)));
        } finally {
            this.macroDepth--;
        }
        // A body that is another incarnation of the same variable (a global the step cannot
        // change, a map kept everywhere) is that incarnation: a new name would be a new key for
        // every map read at it, and each would need the definitions back along the whole chain.
        const same = this.aliasOf(map, params, b);
        if (same !== undefined) return same;
        const name = this.fresh(`${map}!${tag}`);
        this.incarnationOf.set(name, map);
        if (params.length === 0) {
            this.decls.push(`(define-fun ${symbol(name)} () ${sv.sort} ${toSmt(b)})`);
            this.named.push(b);
        } else {
            this.decls.push(`(declare-fun ${symbol(name)} (${sv.keys.join(' ')}) ${sv.sort})`);
            this.defs.set(name, { params, body: b });
        }
        return name;
    }

    /** The name `b` is: a global's value that is a name, a map's incarnation applied to exactly `params`. */
    private aliasOf(map: string, params: BoundVar[], b: Term): string | undefined {
        if (params.length === 0) return b.t === 'var' ? b.name : undefined;
        if (b.t !== 'app' || this.incarnationOf.get(b.fn) !== map || b.args.length !== params.length) return undefined;
        return b.args.every((a, i) => a.t === 'var' && a.name === params[i].name) ? b.fn : undefined;
    }

    /**
     * The definitions of the incarnations at every key where some formula
     * (`roots`, or a definition instance) reads them, as assertions; where a
     * formula reads one under a quantifier, its definition as a quantified
     * axiom (with the read as trigger).
     */
    definitions(roots: Term[]): string[] {
        const out: string[] = [];
        const done = new Set<string>();
        const quantified = new Set<string>();
        const seen = new Set<Term>();
        const work: Term[] = [...roots, ...this.named];
        const visit = (t: Term, bound: ReadonlySet<string>): void => {
            if (bound.size === 0) {
                if (seen.has(t)) return;
                seen.add(t);
            }
            switch (t.t) {
                case 'app': {
                    for (const a of t.args) visit(a, bound);
                    const def = this.defs.get(t.fn);
                    if (!def) return;
                    if (bound.size > 0 && t.args.some(a => [...T.freeVars(a)].some(v => bound.has(v)))) {
                        if (!quantified.has(t.fn)) {
                            quantified.add(t.fn);
                            const app = T.call(t.fn, T.sortOf(t), ...def.params.map(p => T.v(p.name, p.sort)));
                            out.push(`(assert (forall (${def.params.map(p => `(${p.name} ${p.sort})`).join(' ')}) (! (= ${toSmt(app)} ${toSmt(def.body)}) :pattern (${toSmt(app)}))))`);
                            visit(def.body, new Set(def.params.map(p => p.name)));
                        }
                        return;
                    }
                    const k = T.key(t);
                    if (done.has(k)) return;
                    done.add(k);
                    const inst = T.substitute(def.body, new Map(def.params.map((p, i) => [p.name, t.args[i]])));
                    out.push(`(assert (= ${toSmt(t)} ${toSmt(inst)}))`);
                    work.push(inst);
                    return;
                }
                case 'quant': {
                    const inner = new Set(bound);
                    for (const x of t.vars) inner.add(x.name);
                    visit(t.body, inner);
                    return;
                }
                default: return;
            }
        };
        const top: ReadonlySet<string> = new Set();
        while (work.length > 0) visit(work.pop()!, top);
        return out;
    }

    /** The value of an incarnation at keys. */
    at(incarnation: string, map: string, keys: Term[]): Term {
        const sort = this.vocab.sortOfVar(map);
        return keys.length === 0 ? T.v(incarnation, sort) : T.call(incarnation, sort, ...keys);
    }

    skolem(sort: Sort, hint = 'sk'): Term {
        return this.declareConst(`${hint}!${this.skolems++}`, sort);
    }

    /** Replace reads by their incarnations and locals by their values. */
    resolve(t: Term, scope: Scope): Term {
        return T.rewrite(t, (x, bound) => {
            if (x.t === 'var') {
                if (bound.has(x.name)) return undefined;
                return scope.locals.get(x.name);
            }
            if (x.t === 'read') {
                const state = scope.states.get(x.state);
                if (!state) throw new Error(`read in unknown state ${x.state ?? '(current)'}`);
                const inc = state.get(x.map);
                if (!inc) throw new Error(`state variable ${x.map} is not part of this check`);
                return this.at(inc, x.map, x.keys);
            }
            return undefined;
        });
    }

    /**
     * Remove quantifiers over objects by polarity. `mode`: 'assume' (the result
     * may be weaker: instantiate universals, skolemize existentials),
     * 'assert' (the result may be stronger: skolemize universals, instantiate
     * existentials), 'keep' (stronger, without skolems: existentials
     * instantiated, other quantifiers left to the solver).
     */
    ground(t: Term, mode: 'assume' | 'assert' | 'keep', g: Ground): Term {
        if (!T.hasQuantifier(t)) return t;
        this.checkedOfType.clear();
        return mode === 'assume' ? this.groundIn(t, true, true, g, false) : mode === 'assert' ? this.groundIn(t, false, true, g, true) : this.groundIn(t, false, false, g, false);
    }

    /**
     * `ground` of `x` in a position that may be weakened (`weaken`) or must be
     * strengthened; `skolemOk`: quantifiers that need one witness may be skolemized;
     * `asserted`: the formula is checked (not assumed).
     */
    private groundIn(x: Term, weaken: boolean, skolemOk: boolean, g: Ground, asserted: boolean): Term {
        const go = (y: Term, w: boolean): Term => this.groundIn(y, w, skolemOk, g, asserted);
        switch (x.t) {
            case 'quant': {
                if (x.vars.some(b => b.type?.startsWith('scoped:'))) {
                    // deliberately ranges over the objects in scope only (docs/semantics.md)
                    const vars = x.vars.map(b => ({ ...b, type: b.type?.replace(/^scoped:/, '') }));
                    const insts = instances(vars, g).map(m => go(T.substitute(x.body, m), weaken));
                    return x.q === 'forall' ? T.and(...insts) : T.or(...insts);
                }
                const universalInEffect = (x.q === 'forall') === weaken;
                const refOnly = x.vars.every(b => b.sort === 'Ref');
                if (universalInEffect && refOnly) {
                    // every object in scope
                    const insts = instances(x.vars, g).map(m => go(T.substitute(x.body, m), weaken));
                    // (not in a macro's body: its instances would name the macro's parameters)
                    if (this.lateInstances && x.vars.length === 1 && this.macroDepth === 0) insts.push(this.laterObjects(x, weaken, skolemOk, g));
                    return x.q === 'forall' ? T.and(...insts) : T.or(...insts);
                }
                if (!universalInEffect && skolemOk) {
                    const m = new Map<string, Term>();
                    const checked: Array<[BoundVar, Term]> = [];
                    for (const b of x.vars) {
                        // (a checked universal may be checked at a given arbitrary object; an
                        // assumed existential, a universal in a negative position of an
                        // assumption, needs a fresh one)
                        const sk = (!weaken && asserted ? this.fixedSkolem?.(b) ?? this.checkedObject(b) : undefined)
                            ?? this.skolem(b.sort, b.name.replace(/[^A-Za-z0-9]/g, '') || 'sk');
                        m.set(b.name, sk);
                        // an object an assumption says exists is in scope from then on; a checked one is not
                        if (b.sort === 'Ref' && (weaken || this.groundCheckedObjects)) addGround(g, b.type, sk);
                        if (b.sort === 'Ref' && !weaken && asserted) checked.push([b, sk]);
                    }
                    for (const [b, sk] of checked) this.instantiateLate(b, sk);
                    return go(T.substitute(x.body, m), weaken);
                }
                return x;
            }
            case 'app':
                switch (x.fn) {
                    case 'and': return T.and(...x.args.map(a => go(a, weaken)));
                    case 'or': return T.or(...x.args.map(a => go(a, weaken)));
                    case 'not': return T.not(go(x.args[0], !weaken));
                    case '=>': return T.implies(go(x.args[0], !weaken), go(x.args[1], weaken));
                    default: return x;
                }
            default: return x;
        }
    }

    /**
     * A universal over objects assumed here is instantiated at the objects in
     * scope; an object a *later* check is made at (the skolem of "for every
     * object o, ..."; the environment's clauses after a call's step, say) was
     * not in scope then, yet what held of every object holds of it. The
     * instantiation is the name returned, a Boolean implied by the universal:
     * each later checked object adds the implication "name ==> instance"
     * (`late`, asserted everywhere: the instance holds wherever the universal
     * was assumed). For an existential in a negative position, dually.
     */
    private laterObjects(x: Term & { t: 'quant' }, weaken: boolean, skolemOk: boolean, g: Ground): Term {
        const name = this.declareConst('U', 'Bool');
        this.universals.push({ name, q: x, weaken, skolemOk, g, done: new Set() });
        return name;
    }

    /**
     * The object a checked "for every object o of type T" is checked at. With
     * late instances, every check of a VC shares one constant per type (and
     * per position in the checked formula: `forall o, p` needs two), so that
     * each universal assumed before is instantiated at a few objects, not at
     * one per check. Sound: each check is still made at arbitrary objects,
     * about which only what holds of every object is assumed.
     */
    private checkedObject(b: BoundVar): Term | undefined {
        if (!this.lateInstances || b.sort !== 'Ref') return undefined;
        const type = b.type ?? '*';
        const i = this.checkedOfType.get(type) ?? 0;
        this.checkedOfType.set(type, i + 1);
        const key = `${type}#${i}`;
        let c = this.sharedChecked.get(key);
        if (!c) {
            c = this.declareConst(`o!${(b.type ?? 'any').replace(/[^A-Za-z0-9]/g, '')}${i === 0 ? '' : i}`, 'Ref');
            this.sharedChecked.set(key, c);
        }
        return c;
    }

    private instantiateLate(b: BoundVar, sk: Term): void {
        if (!this.lateInstances || this.instantiatingLate) return;
        this.instantiatingLate = true;
        try {
            for (const u of this.universals) {
                const v = u.q.vars[0];
                if (v.type !== undefined && v.type !== b.type) continue;
                const key = T.key(sk);
                if (u.done.has(key)) continue;
                u.done.add(key);
                const inst = this.groundIn(T.substitute(u.q.body, new Map([[v.name, sk]])), u.weaken, u.skolemOk, u.g, false);
                this.late.push(u.q.q === 'forall' ? T.implies(u.name, inst) : T.implies(inst, u.name));
            }
        } finally {
            this.instantiatingLate = false;
        }
    }
}

/** Substitutions of the bound variables by ground terms of their types (all combinations). */
function instances(vars: BoundVar[], g: Ground): Array<Map<string, Term>> {
    let out: Array<Map<string, Term>> = [new Map()];
    for (const b of vars) {
        const terms = (b.type ? g.get(b.type) : g.get('*')) ?? [];
        const next: Array<Map<string, Term>> = [];
        for (const m of out) for (const t of terms) next.push(new Map([...m, [b.name, t]]));
        out = next;
    }
    return out;
}

export function addGround(g: Ground, type: string | undefined, t: Term): void {
    for (const k of type ? [type, '*'] : ['*']) {
        const list = g.get(k) ?? [];
        if (!list.some(x => T.sameTerm(x, t))) list.push(t);
        g.set(k, list);
    }
}

/**
 * Terms of the verification conditions: many-sorted first-order logic with
 * integers, booleans and references, printed as SMT-LIB2.
 *
 * The heap never appears as an SMT array: a state variable (a global, a field
 * map, the array elements, `holder`, ...) is read with a `read` term at some
 * keys (none for a global, an object for a field, an array and an index for an
 * element) in some state. The VC generator (vc/vcgen.ts) turns every state
 * variable of every state into an uninterpreted function or a macro over the
 * previous state, so that the solver sees quantifier-free formulas.
 */

import { append } from './append.js';

export type Sort = 'Int' | 'Bool' | 'Ref';

/** A bound variable; `type` (a class or array type, `typeKey`) says which objects a quantifier ranges over. */
export interface BoundVar {
    name: string;
    sort: Sort;
    type?: string;
}

export type Term =
    | { t: 'var'; name: string; sort: Sort }
    | { t: 'int'; value: bigint }
    | { t: 'bool'; value: boolean }
    | { t: 'app'; fn: string; args: Term[]; sort: Sort }
    /** A state variable's value at `keys`, in state `state` (undefined: the current state). */
    | { t: 'read'; map: string; keys: Term[]; sort: Sort; state?: string }
    | { t: 'quant'; q: 'forall' | 'exists'; vars: BoundVar[]; body: Term };

export const TRUE: Term = { t: 'bool', value: true };
export const FALSE: Term = { t: 'bool', value: false };
export const NULL: Term = { t: 'var', name: 'null', sort: 'Ref' };

export function sortOf(t: Term): Sort {
    switch (t.t) {
        case 'var': case 'app': case 'read': return t.sort;
        case 'int': return 'Int';
        case 'bool': case 'quant': return 'Bool';
    }
}

export const v = (name: string, sort: Sort): Term => ({ t: 'var', name, sort });
export const int = (n: number | bigint): Term => ({ t: 'int', value: BigInt(n) });
export const bool = (b: boolean): Term => (b ? TRUE : FALSE);

export function read(map: string, keys: Term[], sort: Sort, state?: string): Term {
    return state === undefined ? { t: 'read', map, keys, sort } : { t: 'read', map, keys, sort, state };
}

function app(fn: string, sort: Sort, args: Term[]): Term {
    return { t: 'app', fn, args, sort };
}

/** An uninterpreted function application (declared elsewhere). */
export function call(fn: string, sort: Sort, ...args: Term[]): Term {
    return app(fn, sort, args);
}

export function not(a: Term): Term {
    if (a.t === 'bool') return bool(!a.value);
    if (a.t === 'app' && a.fn === 'not') return a.args[0];
    return app('not', 'Bool', [a]);
}

export function and(...xs: Term[]): Term {
    const flat: Term[] = [];
    for (const x of xs) {
        if (x.t === 'bool') {
            if (!x.value) return FALSE;
            continue;
        }
        if (x.t === 'app' && x.fn === 'and') append(flat, x.args);
        else flat.push(x);
    }
    const uniq = dedupe(flat);
    if (uniq.length === 0) return TRUE;
    if (uniq.length === 1) return uniq[0];
    return app('and', 'Bool', uniq);
}

/** The conjuncts of a term (itself when it is no conjunction). */
export function conjuncts(t: Term): Term[] {
    return t.t === 'app' && t.fn === 'and' ? t.args.flatMap(conjuncts) : [t];
}

export function or(...xs: Term[]): Term {
    const flat: Term[] = [];
    for (const x of xs) {
        if (x.t === 'bool') {
            if (x.value) return TRUE;
            continue;
        }
        if (x.t === 'app' && x.fn === 'or') append(flat, x.args);
        else flat.push(x);
    }
    const uniq = dedupe(flat);
    if (uniq.length === 0) return FALSE;
    if (uniq.length === 1) return uniq[0];
    return app('or', 'Bool', uniq);
}

/** Up to this many arguments, duplicates are found by comparing them pairwise (no keys built). */
const PAIRWISE = 8;

function dedupe(xs: Term[]): Term[] {
    if (xs.length < 2) return xs;
    if (xs.length <= PAIRWISE) {
        // (the connectives of VC generation mostly have a few arguments: a structural comparison
        // stops at the first difference, where a key would spell out every new term. Issue 15.)
        let out: Term[] | undefined;
        for (let i = 1; i < xs.length; i++) {
            let dup = false;
            for (let j = 0; j < i && !dup; j++) dup = sameTerm(xs[i], xs[j]);
            if (dup) out ??= xs.slice(0, i);
            else out?.push(xs[i]);
        }
        return out ?? xs;
    }
    const seen = new Set<string>();
    const out: Term[] = [];
    for (const x of xs) {
        const k = key(x);
        if (seen.has(k)) continue;
        seen.add(k);
        out.push(x);
    }
    return out;
}

export function implies(a: Term, b: Term): Term {
    if (a.t === 'bool') return a.value ? b : TRUE;
    if (b.t === 'bool') return b.value ? TRUE : not(a);
    return app('=>', 'Bool', [a, b]);
}

export function iff(a: Term, b: Term): Term {
    if (a.t === 'bool') return a.value ? b : not(b);
    if (b.t === 'bool') return b.value ? a : not(a);
    if (sameTerm(a, b)) return TRUE;
    return app('=', 'Bool', [a, b]);
}

export function eq(a: Term, b: Term): Term {
    if (sortOf(a) === 'Bool') return iff(a, b);
    if (sameTerm(a, b)) return TRUE;
    if (a.t === 'int' && b.t === 'int') return bool(a.value === b.value);
    return app('=', 'Bool', [a, b]);
}

export function ne(a: Term, b: Term): Term {
    return not(eq(a, b));
}

export function ite(c: Term, a: Term, b: Term): Term {
    if (c.t === 'bool') return c.value ? a : b;
    if (sameTerm(a, b)) return a;
    if (sortOf(a) === 'Bool') {
        if (a.t === 'bool' && b.t === 'bool') return a.value ? c : not(c);
        if (a.t === 'bool') return a.value ? or(c, b) : and(not(c), b);
        if (b.t === 'bool') return b.value ? or(not(c), a) : and(c, a);
    }
    return app('ite', sortOf(a), [c, a, b]);
}

export function arith(op: '+' | '-' | '*', a: Term, b: Term): Term {
    if (a.t === 'int' && b.t === 'int') {
        return int(op === '+' ? a.value + b.value : op === '-' ? a.value - b.value : a.value * b.value);
    }
    if (op === '+' && b.t === 'int' && b.value === 0n) return a;
    if (op === '-' && b.t === 'int' && b.value === 0n) return a;
    return app(op, 'Int', [a, b]);
}

export function neg(a: Term): Term {
    if (a.t === 'int') return int(-a.value);
    return app('-', 'Int', [a]);
}

export function cmp(op: '<' | '<=' | '>' | '>=', a: Term, b: Term): Term {
    if (a.t === 'int' && b.t === 'int') {
        const [x, y] = [a.value, b.value];
        return bool(op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y);
    }
    if (sameTerm(a, b)) return bool(op === '<=' || op === '>=');
    return app(op, 'Bool', [a, b]);
}

export function forall(vars: BoundVar[], body: Term): Term {
    if (body.t === 'bool' || vars.length === 0) return body;
    return { t: 'quant', q: 'forall', vars, body };
}

export function exists(vars: BoundVar[], body: Term): Term {
    if (body.t === 'bool' || vars.length === 0) return body;
    return { t: 'quant', q: 'exists', vars, body };
}

// ------------------------------------------------------------------ printing

const symbols = new Map<string, string>();

/** SMT-LIB2 symbols: simple ones as is, others quoted. */
export function symbol(name: string): string {
    let s = symbols.get(name);
    if (s === undefined) {
        s = /^[A-Za-z_~!@$%^&*+=<>.?/-][A-Za-z0-9_~!@$%^&*+=<>.?/-]*$/.test(name) ? name : `|${name.replace(/\|/g, '')}|`;
        // (the same names are printed over and over; the cache is bounded)
        if (symbols.size >= 100_000) symbols.clear();
        symbols.set(name, s);
    }
    return s;
}

/** SMT-LIB2 text of a term. `read` terms print as applications of their map (the VC generator resolves them first). */
export function toSmt(t: Term): string {
    const parts: string[] = [];
    write(t, parts);
    return parts.join('');
}

function write(t: Term, out: string[]): void {
    switch (t.t) {
        case 'var': out.push(symbol(t.name)); return;
        case 'int': out.push(t.value < 0n ? `(- ${-t.value})` : t.value.toString()); return;
        case 'bool': out.push(t.value ? 'true' : 'false'); return;
        case 'app': case 'read': {
            const fn = t.t === 'app' ? t.fn : (t.state ? `${t.state}@${t.map}` : t.map);
            const args = t.t === 'app' ? t.args : t.keys;
            if (args.length === 0) { out.push(symbol(fn)); return; }
            out.push('(', symbol(fn));
            for (const a of args) { out.push(' '); write(a, out); }
            out.push(')');
            return;
        }
        case 'quant': {
            out.push('(', t.q, ' (');
            out.push(t.vars.map(x => `(${symbol(x.name)} ${x.sort})`).join(' '));
            out.push(') ');
            write(t.body, out);
            out.push(')');
            return;
        }
    }
}

// ------------------------------------------------------------------ structure

const keys = new WeakMap<object, string>();

/** A canonical string of a term (cached): equal keys mean syntactically equal terms. */
export function key(t: Term): string {
    if (t.t === 'var') return t.name;
    if (t.t === 'int') return t.value.toString();
    if (t.t === 'bool') return t.value ? 'true' : 'false';
    let k = keys.get(t);
    if (k === undefined) {
        switch (t.t) {
            case 'app': k = `(${t.fn} ${t.args.map(key).join(' ')})`; break;
            case 'read': k = `[${t.state ?? ''}@${t.map} ${t.keys.map(key).join(' ')}]`; break;
            case 'quant': k = `(${t.q} (${t.vars.map(x => `${x.name}:${x.sort}:${x.type ?? ''}`).join(' ')}) ${key(t.body)})`; break;
        }
        keys.set(t, k);
    }
    return k;
}

/**
 * Syntactic equality of terms (what equal keys mean), by walking both terms: it
 * stops at the first difference, and uses the keys only when both are known already.
 */
export function sameTerm(a: Term, b: Term): boolean {
    if (a === b) return true;
    switch (a.t) {
        case 'var': return b.t === 'var' && a.name === b.name;
        case 'int': return b.t === 'int' && a.value === b.value;
        case 'bool': return b.t === 'bool' && a.value === b.value;
        case 'app': {
            if (b.t !== 'app' || a.fn !== b.fn || a.args.length !== b.args.length) return false;
            const ka = keys.get(a), kb = keys.get(b);
            if (ka !== undefined && kb !== undefined) return ka === kb;
            for (let i = 0; i < a.args.length; i++) if (!sameTerm(a.args[i], b.args[i])) return false;
            return true;
        }
        case 'read': {
            if (b.t !== 'read' || a.map !== b.map || (a.state ?? '') !== (b.state ?? '') || a.keys.length !== b.keys.length) return false;
            for (let i = 0; i < a.keys.length; i++) if (!sameTerm(a.keys[i], b.keys[i])) return false;
            return true;
        }
        case 'quant': return b.t === 'quant' && key(a) === key(b);
    }
}

/** Rebuild an application with new arguments, simplifying connectives and comparisons. */
function rebuild(t: Extract<Term, { t: 'app' }>, args: Term[]): Term {
    switch (t.fn) {
        case 'and': return and(...args);
        case 'or': return or(...args);
        case 'not': return not(args[0]);
        case '=>': return implies(args[0], args[1]);
        case '=': return eq(args[0], args[1]);
        case 'ite': return ite(args[0], args[1], args[2]);
        case '+': case '*': return args.length === 2 ? arith(t.fn, args[0], args[1]) : { ...t, args };
        case '-': return args.length === 2 ? arith('-', args[0], args[1]) : neg(args[0]);
        case '<': case '<=': case '>': case '>=': return cmp(t.fn, args[0], args[1]);
        default: return { ...t, args };
    }
}

/**
 * Bottom-up rewriting: `f` sees each node after its children were rewritten
 * and may return a replacement (or undefined to keep it). Bound variables are
 * passed down so that `f` can tell them from free ones.
 */
export function rewrite(t: Term, f: (t: Term, bound: ReadonlySet<string>) => Term | undefined, bound: ReadonlySet<string> = NO_NAMES): Term {
    let out: Term = t;
    switch (t.t) {
        case 'app': {
            const args = rewriteAll(t.args, f, bound);
            out = args ? rebuild(t, args) : t;
            break;
        }
        case 'read': {
            const ks = rewriteAll(t.keys, f, bound);
            out = ks ? { ...t, keys: ks } : t;
            break;
        }
        case 'quant': {
            const inner = new Set(bound);
            for (const x of t.vars) inner.add(x.name);
            const body = rewrite(t.body, f, inner);
            out = body === t.body ? t : (body.t === 'bool' ? body : { ...t, body });
            break;
        }
        default: break;
    }
    return f(out, bound) ?? out;
}

const NO_NAMES: ReadonlySet<string> = new Set();

/** The rewritten terms, or undefined when none changed (no array is made then). */
function rewriteAll(ts: Term[], f: (t: Term, bound: ReadonlySet<string>) => Term | undefined, bound: ReadonlySet<string>): Term[] | undefined {
    let out: Term[] | undefined;
    for (let i = 0; i < ts.length; i++) {
        const b = rewrite(ts[i], f, bound);
        if (out) out.push(b);
        else if (b !== ts[i]) {
            out = ts.slice(0, i);
            out.push(b);
        }
    }
    return out;
}

/** Replace free variables by terms (quantified variables shadow). Simplifies what became trivial. */
export function substitute(t: Term, map: ReadonlyMap<string, Term>): Term {
    if (map.size === 0) return t;
    return rewrite(t, (x, bound) => (x.t === 'var' && !bound.has(x.name) ? map.get(x.name) : undefined));
}

/** Move the reads of one state to another (`from` undefined: the current state). */
export function rebase(t: Term, states: ReadonlyMap<string | undefined, string | undefined>): Term {
    return rewrite(t, x => {
        if (x.t !== 'read' || !states.has(x.state)) return undefined;
        return read(x.map, x.keys, x.sort, states.get(x.state));
    });
}

/** Names of the free variables of a term. */
export function freeVars(t: Term, out = new Set<string>(), bound: ReadonlySet<string> = new Set()): Set<string> {
    switch (t.t) {
        case 'var': if (!bound.has(t.name)) out.add(t.name); break;
        case 'app': for (const a of t.args) freeVars(a, out, bound); break;
        case 'read': for (const a of t.keys) freeVars(a, out, bound); break;
        case 'quant': {
            const b = new Set(bound);
            for (const x of t.vars) b.add(x.name);
            freeVars(t.body, out, b);
            break;
        }
        default: break;
    }
    return out;
}

/** Every read of a term (including under binders), as [map, state]. */
export function readsOf(t: Term, out: Array<Extract<Term, { t: 'read' }>> = []): Array<Extract<Term, { t: 'read' }>> {
    switch (t.t) {
        case 'app': for (const a of t.args) readsOf(a, out); break;
        case 'read': out.push(t); for (const a of t.keys) readsOf(a, out); break;
        case 'quant': readsOf(t.body, out); break;
        default: break;
    }
    return out;
}

/** The state variables a term reads (in any state). */
export function mapsOf(t: Term, out = new Set<string>()): Set<string> {
    for (const r of readsOf(t)) out.add(r.map);
    return out;
}

/** Whether each compound term contains a quantifier (terms share subterms: each is looked at once). */
const quantified = new WeakMap<Term, boolean>();

/** Whether a term contains a quantifier. */
export function hasQuantifier(t: Term): boolean {
    if (t.t === 'quant') return true;
    if (t.t !== 'app' && t.t !== 'read') return false;
    let q = quantified.get(t);
    if (q === undefined) quantified.set(t, q = (t.t === 'app' ? t.args : t.keys).some(hasQuantifier));
    return q;
}

/**
 * Terms of the verification conditions (many-sorted first-order logic with
 * integers, booleans, references and arrays), printed as SMT-LIB2.
 */

export type Sort = 'Int' | 'Bool' | 'Ref' | { array: [Sort, Sort] };

export type Term =
    | { t: 'var'; name: string; sort: Sort }
    | { t: 'int'; value: bigint }
    | { t: 'bool'; value: boolean }
    | { t: 'app'; fn: string; args: Term[]; sort: Sort }
    | { t: 'quant'; q: 'forall' | 'exists'; vars: Array<{ name: string; sort: Sort }>; body: Term; patterns?: Term[][] }
    /** An array given by a function of its index (Z3's `lambda`). */
    | { t: 'lambda'; v: { name: string; sort: Sort }; body: Term };

export const TRUE: Term = { t: 'bool', value: true };
export const FALSE: Term = { t: 'bool', value: false };
export const NULL: Term = { t: 'var', name: 'null', sort: 'Ref' };

export function sortEq(a: Sort, b: Sort): boolean {
    if (typeof a === 'string' || typeof b === 'string') return a === b;
    return sortEq(a.array[0], b.array[0]) && sortEq(a.array[1], b.array[1]);
}

export function sortOf(t: Term): Sort {
    switch (t.t) {
        case 'var': return t.sort;
        case 'int': return 'Int';
        case 'bool': return 'Bool';
        case 'app': return t.sort;
        case 'quant': return 'Bool';
        case 'lambda': return { array: [t.v.sort, sortOf(t.body)] };
    }
}

export function sortToSmt(s: Sort): string {
    return typeof s === 'string' ? s : `(Array ${sortToSmt(s.array[0])} ${sortToSmt(s.array[1])})`;
}

export const v = (name: string, sort: Sort): Term => ({ t: 'var', name, sort });
export const int = (n: number | bigint): Term => ({ t: 'int', value: BigInt(n) });
export const bool = (b: boolean): Term => (b ? TRUE : FALSE);

function app(fn: string, sort: Sort, ...args: Term[]): Term {
    return { t: 'app', fn, args, sort };
}

export function not(a: Term): Term {
    if (a.t === 'bool') return bool(!a.value);
    if (a.t === 'app' && a.fn === 'not') return a.args[0];
    return app('not', 'Bool', a);
}

export function and(...xs: Term[]): Term {
    const flat: Term[] = [];
    for (const x of xs) {
        if (x.t === 'bool') {
            if (!x.value) return FALSE;
            continue;
        }
        if (x.t === 'app' && x.fn === 'and') flat.push(...x.args);
        else flat.push(x);
    }
    if (flat.length === 0) return TRUE;
    if (flat.length === 1) return flat[0];
    return app('and', 'Bool', ...flat);
}

export function or(...xs: Term[]): Term {
    const flat: Term[] = [];
    for (const x of xs) {
        if (x.t === 'bool') {
            if (x.value) return TRUE;
            continue;
        }
        if (x.t === 'app' && x.fn === 'or') flat.push(...x.args);
        else flat.push(x);
    }
    if (flat.length === 0) return FALSE;
    if (flat.length === 1) return flat[0];
    return app('or', 'Bool', ...flat);
}

export function implies(a: Term, b: Term): Term {
    if (a.t === 'bool') return a.value ? b : TRUE;
    if (b.t === 'bool') return b.value ? TRUE : not(a);
    return app('=>', 'Bool', a, b);
}

export function iff(a: Term, b: Term): Term {
    return app('=', 'Bool', a, b);
}

export function eq(a: Term, b: Term): Term {
    if (sameTerm(a, b)) return TRUE;
    if (a.t === 'int' && b.t === 'int') return bool(a.value === b.value);
    return app('=', 'Bool', a, b);
}

export function ne(a: Term, b: Term): Term {
    return not(eq(a, b));
}

export function ite(c: Term, a: Term, b: Term): Term {
    if (c.t === 'bool') return c.value ? a : b;
    if (sameTerm(a, b)) return a;
    return app('ite', sortOf(a), c, a, b);
}

export function arith(op: '+' | '-' | '*' | 'div' | 'mod', a: Term, b: Term): Term {
    return app(op, 'Int', a, b);
}

export function neg(a: Term): Term {
    if (a.t === 'int') return int(-a.value);
    return app('-', 'Int', a);
}

export function cmp(op: '<' | '<=' | '>' | '>=', a: Term, b: Term): Term {
    return app(op, 'Bool', a, b);
}

export function select(arr: Term, index: Term): Term {
    // β-reduction: (λo. e)[t] is e[o := t].
    if (arr.t === 'lambda') return substitute(arr.body, new Map([[arr.v.name, index]]));
    const s = sortOf(arr);
    if (typeof s === 'string') throw new Error(`select on non-array term of sort ${s}`);
    return app('select', s.array[1], arr, index);
}

export function store(arr: Term, index: Term, value: Term): Term {
    return app('store', sortOf(arr), arr, index, value);
}

/** An uninterpreted function application (declared elsewhere). */
export function call(fn: string, sort: Sort, ...args: Term[]): Term {
    return app(fn, sort, ...args);
}

/** `((as const (Array K V)) value)` */
export function constArray(indexSort: Sort, value: Term): Term {
    return app(`(as const ${sortToSmt({ array: [indexSort, sortOf(value)] })})`, { array: [indexSort, sortOf(value)] }, value);
}

export function lambda(name: string, sort: Sort, body: Term): Term {
    // η-reduction: λo. X[o] is X (saves Z3 an extensionality argument).
    if (body.t === 'app' && body.fn === 'select' && body.args[1].t === 'var' && body.args[1].name === name
        && !freeVars(body.args[0]).has(name)) return body.args[0];
    return { t: 'lambda', v: { name, sort }, body };
}

export function forall(vars: Array<{ name: string; sort: Sort }>, body: Term, patterns?: Term[][]): Term {
    if (body.t === 'bool') return body;
    return { t: 'quant', q: 'forall', vars, body, patterns };
}

export function exists(vars: Array<{ name: string; sort: Sort }>, body: Term): Term {
    if (body.t === 'bool') return body;
    return { t: 'quant', q: 'exists', vars, body };
}

/** SMT-LIB2 symbols: simple ones as is, others quoted. */
export function symbol(name: string): string {
    return /^[A-Za-z_~!@$%^&*+=<>.?/-][A-Za-z0-9_~!@$%^&*+=<>.?/-]*$/.test(name) ? name : `|${name.replace(/\|/g, '')}|`;
}

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
        case 'app':
            if (t.args.length === 0) { out.push(t.fn.startsWith('(') ? t.fn : symbol(t.fn)); return; }
            out.push('(', t.fn.startsWith('(') ? t.fn : symbol(t.fn));
            for (const a of t.args) { out.push(' '); write(a, out); }
            out.push(')');
            return;
        case 'lambda':
            out.push(`(lambda ((${symbol(t.v.name)} ${sortToSmt(t.v.sort)})) `);
            write(t.body, out);
            out.push(')');
            return;
        case 'quant': {
            out.push('(', t.q, ' (');
            out.push(t.vars.map(x => `(${symbol(x.name)} ${sortToSmt(x.sort)})`).join(' '));
            out.push(') ');
            // A pattern over a substituted λ or connective is not a valid trigger: let Z3 choose.
            if (t.patterns && t.patterns.length > 0 && t.patterns.every(p => p.every(validTrigger))) {
                out.push('(! ');
                write(t.body, out);
                for (const p of t.patterns) {
                    out.push(' :pattern (');
                    p.forEach((x, i) => { if (i) out.push(' '); write(x, out); });
                    out.push(')');
                }
                out.push(')');
            } else {
                write(t.body, out);
            }
            out.push(')');
            return;
        }
    }
}

/** Triggers may only contain uninterpreted applications, `select` and variables. */
function validTrigger(t: Term): boolean {
    switch (t.t) {
        case 'var': case 'int': case 'bool': return true;
        case 'lambda': case 'quant': return false;
        case 'app': return !['and', 'or', 'not', '=>', '=', 'ite', '+', '-', '*', '<', '<=', '>', '>=', 'store'].includes(t.fn) && t.args.every(validTrigger);
    }
}

/**
 * Replace free variables (by name); quantified variables shadow. The result is
 * simplified where substitution made it trivial (`x = x`, `true => p`, a
 * quantifier over `true`), which removes most frame conditions of steps that
 * leave a map unchanged.
 */
export function substitute(t: Term, map: Map<string, Term>): Term {
    if (map.size === 0) return t;
    switch (t.t) {
        case 'var': return map.get(t.name) ?? t;
        case 'int': case 'bool': return t;
        case 'app': {
            let changed = false;
            const args = t.args.map(a => { const b = substitute(a, map); if (b !== a) changed = true; return b; });
            return changed ? rebuild(t, args) : t;
        }
        case 'quant': {
            const inner = new Map(map);
            for (const x of t.vars) inner.delete(x.name);
            const body = substitute(t.body, inner);
            if (body.t === 'bool') return body;
            const patterns = t.patterns?.map(p => p.map(x => substitute(x, inner)));
            return body === t.body ? t : { ...t, body, patterns };
        }
        case 'lambda': {
            const inner = new Map(map);
            inner.delete(t.v.name);
            const body = substitute(t.body, inner);
            return body === t.body ? t : lambda(t.v.name, t.v.sort, body);
        }
    }
}

/** Rebuild an application with new arguments, simplifying the boolean connectives and equality. */
function rebuild(t: Extract<Term, { t: 'app' }>, args: Term[]): Term {
    switch (t.fn) {
        case 'and': return and(...args);
        case 'or': return or(...args);
        case 'not': return not(args[0]);
        case '=>': return implies(args[0], args[1]);
        case '=': return t.sort === 'Bool' && args.length === 2 ? (sameTerm(args[0], args[1]) ? TRUE : { ...t, args }) : { ...t, args };
        case 'ite': return ite(args[0], args[1], args[2]);
        default: return { ...t, args };
    }
}

/** Syntactic equality of terms. */
export function sameTerm(a: Term, b: Term): boolean {
    if (a === b) return true;
    if (a.t !== b.t) return false;
    switch (a.t) {
        case 'var': return a.name === (b as typeof a).name;
        case 'int': return a.value === (b as typeof a).value;
        case 'bool': return a.value === (b as typeof a).value;
        case 'app': {
            const o = b as typeof a;
            return a.fn === o.fn && a.args.length === o.args.length && a.args.every((x, i) => sameTerm(x, o.args[i]));
        }
        case 'quant': case 'lambda': return toSmt(a) === toSmt(b);
    }
}

/** Names of the free variables of a term. */
export function freeVars(t: Term, out = new Set<string>(), bound = new Set<string>()): Set<string> {
    switch (t.t) {
        case 'var': if (!bound.has(t.name)) out.add(t.name); break;
        case 'app': for (const a of t.args) freeVars(a, out, bound); break;
        case 'quant': {
            const b = new Set(bound);
            for (const x of t.vars) b.add(x.name);
            freeVars(t.body, out, b);
            break;
        }
        case 'lambda': {
            const b = new Set(bound);
            b.add(t.v.name);
            freeVars(t.body, out, b);
            break;
        }
    }
    return out;
}

/** Whether a term contains an equality between arrays (whose refutation needs extensionality). */
export function comparesArrays(t: Term): boolean {
    switch (t.t) {
        case 'var': case 'int': case 'bool': return false;
        case 'lambda': return comparesArrays(t.body);
        case 'quant': return comparesArrays(t.body);
        case 'app':
            if (t.fn === '=' && typeof sortOf(t.args[0]) !== 'string') return true;
            return t.args.some(comparesArrays);
    }
}

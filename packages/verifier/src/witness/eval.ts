import type { Term } from '../smt/term.js';
import { DTYPE, isMadeFact, LEN } from '../heap/vocabulary.js';
import type { Type } from '../model/program.js';
import type { Heap, Value } from './heap.js';
import { WitnessUnsupported } from './types.js';
import { quantIntBounds } from '../smt/int-range.js';

/** Where an evaluated term finds its locals, its states and its bound variables. */
export interface EvalEnv {
    locals: ReadonlyMap<string, Value>;
    /** The store of a state (undefined: the current one). */
    heap(state: string | undefined): Heap;
    bound?: ReadonlyMap<string, Value>;
    /** Told of every read of the store (what a step read, for the trace). */
    onRead?(map: string, keys: Value[], value: Value, state: string | undefined): void;
}

/** Java's division and remainder (truncating); by zero they give 0 (the program's checks come first). */
export function jdiv(a: bigint, b: bigint): bigint {
    return b === 0n ? 0n : a / b;
}
export function jmod(a: bigint, b: bigint): bigint {
    return b === 0n ? 0n : a % b;
}

/** The value of a term in a concrete state. */
export function evalTerm(t: Term, env: EvalEnv): Value {
    switch (t.t) {
        case 'int': return t.value;
        case 'bool': return t.value;
        case 'var': {
            const b = env.bound?.get(t.name);
            if (b !== undefined) return b;
            if (t.name === 'null') return 0n;
            const l = env.locals.get(t.name);
            if (l === undefined) throw new Error(`witness interpreter: no value for ${t.name}`);
            return l;
        }
        case 'read': {
            const keys = t.keys.map(k => evalTerm(k, env));
            const value = env.heap(t.state).get(t.map, keys);
            env.onRead?.(t.map, keys, value, t.state);
            return value;
        }
        case 'quant': return evalQuant(t, env);
        case 'app': return evalApp(t, env);
    }
}

function int(v: Value): bigint {
    if (typeof v !== 'bigint') throw new Error('witness interpreter: an integer was expected');
    return v;
}

function evalApp(t: Extract<Term, { t: 'app' }>, env: EvalEnv): Value {
    const a = t.args;
    const ev = (x: Term) => evalTerm(x, env);
    switch (t.fn) {
        case 'and': return a.every(x => ev(x) === true);
        case 'or': return a.some(x => ev(x) === true);
        case 'not': return ev(a[0]) !== true;
        case '=>': return ev(a[0]) !== true || ev(a[1]) === true;
        case '=': return isMadeFact(t) || ev(a[0]) === ev(a[1]); // (who made an object: true of every execution)
        case 'distinct': return ev(a[0]) !== ev(a[1]);
        case 'ite': return ev(a[0]) === true ? ev(a[1]) : ev(a[2]);
        case '+': return a.map(x => int(ev(x))).reduce((p, q) => p + q);
        case '*': return a.map(x => int(ev(x))).reduce((p, q) => p * q);
        case '-': return a.length === 1 ? -int(ev(a[0])) : a.slice(1).reduce((p, q) => p - int(ev(q)), int(ev(a[0])));
        case '<': return int(ev(a[0])) < int(ev(a[1]));
        case '<=': return int(ev(a[0])) <= int(ev(a[1]));
        case '>': return int(ev(a[0])) > int(ev(a[1]));
        case '>=': return int(ev(a[0])) >= int(ev(a[1]));
        case 'jdiv': return jdiv(int(ev(a[0])), int(ev(a[1])));
        case 'jmod': return jmod(int(ev(a[0])), int(ev(a[1])));
        case LEN: return env.heap(undefined).len.get(int(ev(a[0]))) ?? 0n;
        case DTYPE: return BigInt(env.heap(undefined).dtype.get(int(ev(a[0]))) ?? 0);
        default: throw new WitnessUnsupported(`the function '${t.fn}' has no concrete meaning`);
    }
}

/** The largest range of integers a quantifier is unrolled over. */
const MAX_QUANT_RANGE = 100_000n;

function evalQuant(t: Extract<Term, { t: 'quant' }>, env: EvalEnv): Value {
    const [v, ...rest] = t.vars;
    const inner = rest.length === 0 ? t.body : { ...t, vars: rest };
    const holds = (x: Value) => evalTerm(inner, { ...env, bound: new Map([...(env.bound ?? []), [v.name, x]]) }) === true;
    const domain = quantDomain(t, v, env);
    return t.q === 'forall' ? domain.every(holds) : domain.some(holds);
}

function quantDomain(t: Extract<Term, { t: 'quant' }>, v: { name: string; sort: string; type?: string }, env: EvalEnv): Value[] {
    if (v.sort === 'Bool') return [false, true];
    const heap = env.heap(undefined);
    if (v.sort === 'Ref') {
        const type = v.type ? typeOfKey(v.type) : undefined;
        const id = type ? heap.vocab.typeId(type) : undefined;
        return [0n, ...heap.allocated().filter(r => id === undefined || heap.dtype.get(r) === id)];
    }
    const { lo, hi } = quantIntBounds(t, v.name, x => { try { const r = evalTerm(x, env); return typeof r === 'bigint' ? r : undefined; } catch { return undefined; } });
    if (lo === undefined || hi === undefined) throw new WitnessUnsupported(`a quantifier over int without bounds the interpreter can find`);
    if (hi - lo > MAX_QUANT_RANGE) throw new WitnessUnsupported(`a quantifier over more than ${MAX_QUANT_RANGE} integers`);
    const out: Value[] = [];
    for (let i = lo; i <= hi; i++) out.push(i);
    return out;
}


/** The type a quantifier's type key (`C:Vector`, `A:int[]`) stands for. */
export function typeOfKey(key: string): Type | undefined {
    const m = /^[CA]:(.*)$/.exec(key);
    return m ? parseType(m[1]) : undefined;
}

function parseType(s: string): Type {
    if (s.endsWith('[]')) return { kind: 'array', element: parseType(s.slice(0, -2)) };
    if (s === 'int') return { kind: 'int' };
    if (s === 'boolean') return { kind: 'boolean' };
    return { kind: 'class', name: s };
}

/** Helper for callers that evaluate a term they expect to be a boolean. */
export function holds(t: Term, env: EvalEnv): boolean {
    return evalTerm(t, env) === true;
}

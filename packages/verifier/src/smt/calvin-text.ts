import type { Term } from './term.js';

/**
 * A term of the verifier written back as Calvin (for hover: inferred loop
 * invariants, E* candidates): program variables by their names, fields as
 * `o.f`, array elements as `a[i]`, lengths as `a.length`; a value in another
 * state (a snapshot, such as the loop's entry) as `(e at <state>)`.
 */
export function calvinText(t: Term): string {
    return print(t, 0);
}

const PRECEDENCE: Record<string, number> = {
    '=>': 1, or: 2, and: 3, '=': 4, distinct: 4, '<': 5, '<=': 5, '>': 5, '>=': 5, '+': 6, '-': 6, '*': 7, jdiv: 7, jmod: 7, not: 8,
};
const INFIX: Record<string, string> = { '=>': '==>', or: '||', and: '&&', '=': '==', '<': '<', '<=': '<=', '>': '>', '>=': '>=', '+': '+', '-': '-', '*': '*', jdiv: '/', jmod: '%' };

/** `l~i@12:5~3` → `i`; `l~read_count~4` → `count`; `l~this~0` → `this`. */
export function localName(name: string): string {
    const m = /^l~(.*)~\d+$/.exec(name);
    if (!m) return name;
    const base = m[1].replace(/@\d+:\d+$/, '');
    const read = /^(?:read|final)_(\w+)$/.exec(base);
    if (read) return read[1];
    const created = /^new_(\w+)$/.exec(base);
    if (created) return `new ${created[1]}`;
    if (base === 'new_array') return 'new array';
    return base;
}

function mapName(map: string): string {
    const i = map.indexOf(':');
    const rest = i >= 0 ? map.slice(i + 1) : map;
    return rest.split('.').pop() ?? rest;
}

function print(t: Term, outer: number): string {
    switch (t.t) {
        case 'var': return localName(t.name);
        case 'int': return t.value.toString();
        case 'bool': return t.value ? 'true' : 'false';
        case 'read': {
            const at = (s: string) => (t.state ? `(${s} at ${t.state.replace(/~\d+$/, '').replace(/~$/, '')})` : s);
            if (t.map.startsWith('g:')) return at(t.map.slice(2));
            if (t.map.startsWith('f:')) return at(`${print(t.keys[0], 9)}.${mapName(t.map)}`);
            if (t.map.startsWith('e:')) return at(`${print(t.keys[0], 9)}[${print(t.keys[1], 0)}]`);
            if (t.map === 'holder') return at(`${print(t.keys[0], 9)}.holder`);
            return at(`${t.map}(${t.keys.map(k => print(k, 0)).join(', ')})`);
        }
        case 'quant':
            return `(\\${t.q} ${t.vars.map(v => `${v.sort === 'Int' ? 'int' : v.sort === 'Bool' ? 'boolean' : 'Object'} ${localName(v.name)}`).join(', ')}; ${print(t.body, 0)})`;
        case 'app': {
            if (t.fn === 'len') return `${print(t.args[0], 9)}.length`;
            if (t.fn === 'not') {
                const a = t.args[0];
                if (a.t === 'app' && a.fn === '=') return wrap(`${print(a.args[0], 5)} != ${print(a.args[1], 5)}`, 4, outer);
                return wrap(`!${print(a, 8)}`, 8, outer);
            }
            if (t.fn === 'ite') return wrap(`${print(t.args[0], 2)} ? ${print(t.args[1], 2)} : ${print(t.args[2], 2)}`, 1, outer);
            if (t.fn === '-' && t.args.length === 1) return `-${print(t.args[0], 9)}`;
            const op = INFIX[t.fn];
            if (op) {
                const p = PRECEDENCE[t.fn];
                return wrap(t.args.map(a => print(a, p + 1)).join(` ${op} `), p, outer);
            }
            return `${t.fn}(${t.args.map(a => print(a, 0)).join(', ')})`;
        }
    }
}

function wrap(s: string, p: number, outer: number): string {
    return p < outer ? `(${s})` : s;
}

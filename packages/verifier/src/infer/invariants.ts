import type { Clause, Expr, FieldModel, Range } from '../model/program.js';
import { atomExpr, atomKey, atomPath, atomText, pathField, pathKey, pathText, pathExpr, type Atom, type Namer, type Path } from './atoms.js';
import type { AssertionSite } from './facts.js';
import { linesRef } from '../report/lines.js';

/**
 * Invariant candidates from the program's assertions (issue 13: "the
 * invariants the proof needs and the code implies"). An assertion about
 * values read from shared locations is lifted to the locations: `int c =
 * config; assert c == 42;` under `if (ready)` proposes `ready ==> config ==
 * 42` and `config == 42`; `assert a.bal >= 0` for an object `a` proposes the
 * class invariant `bal >= 0`; two reads of one location compared (`a <= b`
 * after `a = ticks; b = ticks;`) propose that the environment only moves it
 * one way (`ticks <= ticks'`). Every candidate is an ordinary annotation the
 * checks must prove (Init, and every step of every thread); the ones they
 * refute are dropped (Houdini), so a candidate never makes a proof.
 */

export interface Candidate {
    kind: 'invariant' | 'environment';
    /** The class whose invariant or environment clause it is (undefined: top level). */
    owner?: string;
    /** Unique key (refutations name it). */
    key: string;
    text: string;
    expr: Expr;
    origin: string;
    /** The fields it is about (where an annotation would be written). */
    fields: string[];
    /** The assertion it comes from. */
    range: Range;
    /** A conditional candidate `P ==> Q`: the key of Q (when Q holds, this one says nothing more). */
    implies?: string;
}

const BOOL = { kind: 'boolean' } as const;

/** The candidates of every assertion (each at most once). */
export function assertionCandidates(assertions: AssertionSite[], fields: Map<string, FieldModel>, namer: (cls: string | undefined) => Namer, disabled?: Set<string>): Candidate[] {
    const out = new Map<string, Candidate>();
    for (const a of assertions) {
        for (const part of [...conjuncts(a.expr), ...(a.implicit ? conjuncts(a.expr).flatMap(atMostLength) : [])]) {
            for (const c of candidatesOf(part, a, fields, namer)) {
                if (disabled?.has(`inv:${c.key}`) || disabled?.has(`env:${c.key}`) || out.has(c.key)) continue;
                out.set(c.key, c);
            }
        }
    }
    return [...out.values()];
}

/**
 * An index in bounds, `i < a.length`, also proposes `i <= a.length`: a count
 * of the elements in use (`items[n] = v; n = n + 1;`) is an index only below
 * the length, but never exceeds it (the checks keep whichever holds).
 */
function atMostLength(e: Expr): Expr[] {
    return e.kind === 'binary' && e.op === '<' && e.right.kind === 'length' ? [{ ...e, op: '<=' }] : [];
}

/** `x <= x`, `x == x`: two reads of one location compared say nothing as an invariant. */
function trivial(q: Expr, n: Namer): boolean {
    return q.kind === 'binary' && ['<=', '>=', '=='].includes(q.op) && exprText(q.left, n) === exprText(q.right, n);
}

function conjuncts(e: Expr): Expr[] {
    return e.kind === 'binary' && e.op === '&&' ? [...conjuncts(e.left), ...conjuncts(e.right)] : [e];
}

/** The shared location an expression denotes, if it is one (a read, or a local holding a value read from one). */
function locationOf(e: Expr, a: AssertionSite): { path: Path; seq?: number } | undefined {
    if (e.kind === 'var') {
        const p = a.prov.get(e.id);
        return p ? { path: p.path, seq: p.seq } : undefined;
    }
    if (e.kind === 'global') return { path: { base: { k: 'global', field: e.field }, fields: [] } };
    if (e.kind === 'field') {
        const r = e.receiver.kind === 'this' ? (a.thisPath ?? { base: { k: 'this' as const }, fields: [] })
            : e.receiver.kind === 'var' ? (a.vars.get(e.receiver.id) ?? { base: { k: 'local' as const, id: e.receiver.id }, fields: [] })
                : locationOf(e.receiver, a)?.path;
        return r ? { path: { base: r.base, fields: [...r.fields, e.field] } } : undefined;
    }
    return undefined;
}

function candidatesOf(e: Expr, a: AssertionSite, fields: Map<string, FieldModel>, namer: (cls: string | undefined) => Namer): Candidate[] {
    const out: Candidate[] = [];
    const line = linesRef([a.range]);
    // two reads of one location, compared: the direction the other threads move it
    if (e.kind === 'binary' && ['<', '<=', '>', '>='].includes(e.op)) {
        const l = locationOf(e.left, a), r = locationOf(e.right, a);
        if (l?.seq !== undefined && r?.seq !== undefined && pathKey(l.path) === pathKey(r.path) && l.seq !== r.seq && global(l.path)) {
            const earlierIsSmaller = (l.seq < r.seq) === (e.op === '<' || e.op === '<=');
            const f = pathField(l.path);
            const field = f ? fields.get(f) : undefined;
            if (field && field.type.kind === 'int') {
                const n = namer(undefined);
                const loc = pathExpr(l.path, n, a.range);
                const primed = { ...loc, primed: true } as Expr;
                const text = `${pathText(l.path, n)} ${earlierIsSmaller ? '<=' : '>='} ${pathText(l.path, n)}'`;
                out.push({
                    kind: 'environment', owner: field.owner, key: `env-mono:${text}`, text, fields: [field.id], range: a.range,
                    expr: { kind: 'binary', op: earlierIsSmaller ? '<=' : '>=', left: loc, right: primed, type: BOOL, range: a.range },
                    origin: `inferred from the assertion at ${line}, which compares two reads of ${field.name}`,
                });
            }
        }
    }
    // the assertion itself, about the locations its values come from
    const paths: Path[] = [];
    const ok = collect(e, a, paths);
    if (!ok || paths.length === 0) return out;
    const objects = new Set(paths.map(p => p.base.k === 'global' ? '' : `${pathKey({ base: p.base, fields: p.fields.slice(0, -1) })}`));
    if (paths.every(global)) {
        const n = namer(undefined);
        const q = render(e, a, n, undefined);
        if (!q || trivial(q, n)) return out;
        const fs = [...new Set(paths.map(p => pathField(p)!))];
        const qText = exprText(q, n);
        // about static fields of one class only: that class's invariant (its methods assume it too)
        const roots = new Set(paths.map(p => fields.get((p.base as { field: string }).field)?.owner ?? ''));
        const owner = roots.size === 1 && !roots.has('') ? [...roots][0] : undefined;
        out.push({ kind: 'invariant', owner, key: `top:${qText}`, text: qText, expr: q, fields: fs, range: a.range, origin: `inferred from the ${what(a)} at ${line}` });
        // under the conditions the thread tested before it
        const inQ = new Set(paths.map(pathKey));
        const conds = a.atoms.filter(x => x.k !== 'held' && x.k !== 'eqTid' && global(atomPath(x)) && !inQ.has(pathKey(atomPath(x))));
        if (conds.length > 0) {
            const p = conds.map(x => atomExpr(x, n, a.range)).reduce((x, y) => ({ kind: 'binary', op: '&&', left: x, right: y, type: BOOL, range: a.range }));
            const pText = conds.map(x => atomText(x, n)).join(' && ');
            const text = `${pText} ==> ${qText}`;
            out.push({
                kind: 'invariant', owner, key: `top:${text}`, text, fields: [...fs, ...conds.map(x => pathField(atomPath(x))!)], range: a.range,
                expr: { kind: 'binary', op: '==>', left: p, right: q, type: BOOL, range: a.range },
                origin: `inferred from the assertion at ${line} (${conds.map(x => atomText(x, n)).join(' && ')} tested before it)`,
                implies: `top:${qText}`,
            });
        }
        return out;
    }
    // about one object: a class invariant of its class
    if (objects.size === 1 && paths.every(p => p.base.k !== 'global' && p.fields.length === 1)) {
        const f = fields.get(paths[0].fields[0]);
        if (!f?.owner || f.isStatic) return out;
        const n = namer(f.owner);
        const obj: Path = { base: paths[0].base, fields: [] };
        const q = render(e, a, n, obj);
        if (!q || trivial(q, n)) return out;
        const text = exprText(q, n);
        const qFields = [...new Set(paths.map(p => p.fields[0]))];
        out.push({ kind: 'invariant', owner: f.owner, key: `${f.owner}:${text}`, text, expr: q, fields: qFields, range: a.range, origin: `inferred from the ${what(a)} at ${line}` });
        // under the conditions the thread tested before it on the same object (`s.ready` before
        // `assert s.port > 1024`: `ready ==> port > 1024`), as for globals
        const inQ = new Set(paths.map(pathKey));
        const conds = a.atoms.flatMap((x): Atom[] => {
            if (x.k !== 'eq' && x.k !== 'ne') return [];
            const p = atomPath(x);
            if (p.fields.length !== 1 || inQ.has(pathKey(p)) || pathKey({ base: p.base, fields: [] }) !== pathKey(obj) || fields.get(p.fields[0])?.owner !== f.owner) return [];
            return [{ ...x, loc: { base: { k: 'this' }, fields: p.fields } }];
        });
        if (conds.length > 0) {
            const cond = conds.map(x => atomExpr(x, n, a.range)).reduce((x, y) => ({ kind: 'binary', op: '&&', left: x, right: y, type: BOOL, range: a.range }));
            const condText = conds.map(x => atomText(x, n)).join(' && ');
            const implied = `${condText} ==> ${text}`;
            out.push({
                kind: 'invariant', owner: f.owner, key: `${f.owner}:${implied}`, text: implied, fields: [...qFields, ...conds.map(x => pathField(atomPath(x))!)], range: a.range,
                expr: { kind: 'binary', op: '==>', left: cond, right: q, type: BOOL, range: a.range },
                origin: `inferred from the assertion at ${line} (${condText} tested before it)`,
                implies: `${f.owner}:${text}`,
            });
        }
    }
    return out;
}

function what(a: AssertionSite): string {
    return a.implicit ? 'array access' : 'assertion';
}

function global(p: Path): boolean {
    return p.base.k === 'global';
}

/** Whether an expression can be lifted (only values, operators and locations), collecting the locations. */
function collect(e: Expr, a: AssertionSite, paths: Path[], depth = 0): boolean {
    if (depth > 8) return false;
    if (e.kind === 'var' && !a.prov.has(e.id) && a.defs.has(e.id)) return collect(a.defs.get(e.id)!, a, paths, depth + 1);
    switch (e.kind) {
        case 'int': case 'bool': case 'null': return true;
        case 'var': case 'global': case 'field': {
            const l = locationOf(e, a);
            if (!l) return false;
            paths.push(l.path);
            return true;
        }
        case 'unary': return collect(e.operand, a, paths, depth + 1);
        case 'length': {
            const l = locationOf(e.array, a) ?? (e.array.kind === 'var' && a.defs.has(e.array.id) ? locationOf(a.defs.get(e.array.id)!, a) : undefined);
            if (!l) return false;
            paths.push(l.path);
            return true;
        }
        case 'binary': return e.op !== '/' && e.op !== '%' && collect(e.left, a, paths, depth + 1) && collect(e.right, a, paths, depth + 1);
        default: return false;
    }
}

/** The lifted expression, with the object `obj` (if any) written `this`. */
function render(e: Expr, a: AssertionSite, n: Namer, obj: Path | undefined, depth = 0): Expr | undefined {
    if (depth > 8) return undefined;
    if (e.kind === 'var' && !a.prov.has(e.id) && a.defs.has(e.id)) {
        const d = render(a.defs.get(e.id)!, a, n, obj, depth + 1);
        return d && d.kind === 'binary' ? { ...d, range: d.range } : d;
    }
    switch (e.kind) {
        case 'int': case 'bool': case 'null': return e;
        case 'var': case 'global': case 'field': {
            const l = locationOf(e, a);
            if (!l) return undefined;
            let p = l.path;
            if (obj) {
                if (pathKey({ base: p.base, fields: [] }) !== pathKey(obj)) return undefined;
                p = { base: { k: 'this' }, fields: p.fields };
            }
            if (p.base.k === 'local') return undefined;
            return pathExpr(p, n, a.range);
        }
        case 'unary': { const x = render(e.operand, a, n, obj, depth + 1); return x ? { ...e, operand: x } : undefined; }
        case 'length': {
            const arr = e.array.kind === 'var' && !a.prov.has(e.array.id) && a.defs.has(e.array.id) ? a.defs.get(e.array.id)! : e.array;
            const x = render(arr, a, n, obj, depth + 1);
            return x ? { ...e, array: x } : undefined;
        }
        case 'binary': {
            const l = render(e.left, a, n, obj, depth + 1), r = render(e.right, a, n, obj, depth + 1);
            return l && r ? { ...e, left: l, right: r } : undefined;
        }
        default: return undefined;
    }
}

const PREC: Record<string, number> = { '<==>': 1, '==>': 2, '||': 3, '&&': 4, '==': 5, '!=': 5, '<': 6, '<=': 6, '>': 6, '>=': 6, '+': 7, '-': 7, '*': 8, '/': 8, '%': 8 };

/** Calvin text of a lifted expression. */
export function exprText(e: Expr, n: Namer, outer = 0): string {
    switch (e.kind) {
        case 'int': return e.value;
        case 'bool': return String(e.value);
        case 'null': return 'null';
        case 'this': return 'this';
        case 'tid': return 'tid';
        case 'global': {
            const f = n.field(e.field);
            return `${f?.owner ? `${f.owner}.` : ''}${f?.name ?? e.field}${e.primed ? "'" : ''}`;
        }
        case 'field': return `${exprText(e.receiver, n, 10)}.${n.field(e.field)?.name ?? e.field}${e.primed ? "'" : ''}`;
        case 'length': return `${exprText(e.array, n, 10)}.length`;
        case 'unary': return `${e.op}${exprText(e.operand, n, 9)}`;
        case 'binary': {
            const p = PREC[e.op] ?? 0;
            const text = `${exprText(e.left, n, p)} ${e.op} ${exprText(e.right, n, p + (e.op === '==>' ? 0 : 1))}`;
            return p < outer ? `(${text})` : text;
        }
        default: return '?';
    }
}

export { atomKey };
export type { Clause };

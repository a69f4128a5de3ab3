import type { Expr, FieldModel, Range, Type } from '../model/program.js';

/**
 * The facts the inference works with (pipeline stage 2b, `infer/`): equality
 * atoms over shared locations, the thread's id and monitors. A thread knows a
 * conjunction of atoms at each point of its code; a field's inferred guard is
 * a disjunction of such conjunctions (TAR's havoc map `h_i(x)`, restricted to
 * shared state). The atoms are few and simple on purpose: whether another
 * thread's write can happen while this thread knows a conjunction is decided
 * syntactically, and every atom reads back as Calvin text a user can insert.
 */

/** The root of a path: the object `this`, a local or parameter of the code analysed, or a global (or static field). */
export type Base = { k: 'this' } | { k: 'local'; id: string } | { k: 'global'; field: string };

/** `base.f1.f2…`: a global or static field (no fields), or an instance field reached from the base. */
export interface Path { base: Base; fields: string[] }

export type Const = { k: 'int'; v: bigint } | { k: 'bool'; v: boolean } | { k: 'null' };

export type Atom =
    /** `loc == tid` */
    | { k: 'eqTid'; loc: Path }
    /** `loc == c` */
    | { k: 'eq'; loc: Path; c: Const }
    /** `loc != c` */
    | { k: 'ne'; loc: Path; c: Const }
    /** `obj.holder == tid`: this thread holds obj's monitor. */
    | { k: 'held'; obj: Path }
    /** `loc == v` for a local v (what v was read from still holds its value): internal, never printed. */
    | { k: 'alias'; loc: Path; local: string };

export function baseKey(b: Base): string {
    return b.k === 'this' ? 'this' : b.k === 'local' ? `$${b.id}` : b.field;
}

const pathKeys = new WeakMap<Path, string>();

export function pathKey(p: Path): string {
    let k = pathKeys.get(p);
    if (k === undefined) { k = [baseKey(p.base), ...p.fields].join('.'); pathKeys.set(p, k); }
    return k;
}

export function constKey(c: Const): string {
    return c.k === 'int' ? c.v.toString() : c.k === 'bool' ? String(c.v) : 'null';
}

export function atomKey(a: Atom): string {
    switch (a.k) {
        case 'eqTid': return `${pathKey(a.loc)}==tid`;
        case 'eq': return `${pathKey(a.loc)}==${constKey(a.c)}`;
        case 'ne': return `${pathKey(a.loc)}!=${constKey(a.c)}`;
        case 'held': return `${pathKey(a.obj)}.holder==tid`;
        case 'alias': return `${pathKey(a.loc)}==$${a.local}`;
    }
}

/** The path an atom is about (the monitor's object for `held`). */
export function atomPath(a: Atom): Path {
    return a.k === 'held' ? a.obj : a.loc;
}

/** The field whose value a path denotes (a global or static field for a bare global base). */
export function pathField(p: Path): string | undefined {
    if (p.fields.length > 0) return p.fields[p.fields.length - 1];
    return p.base.k === 'global' ? p.base.field : undefined;
}

/** The path of the object a field path is read from (undefined for globals and static fields). */
export function receiverOf(p: Path): Path | undefined {
    return p.fields.length > 0 ? { base: p.base, fields: p.fields.slice(0, -1) } : undefined;
}

export function samePath(a: Path, b: Path): boolean {
    return pathKey(a) === pathKey(b);
}

/** Whether the path starts with `prefix`. */
function startsWith(p: Path, prefix: Path): boolean {
    return baseKey(p.base) === baseKey(prefix.base) && prefix.fields.length <= p.fields.length && prefix.fields.every((f, i) => p.fields[i] === f);
}

/** Replace the prefix `from` of p by `to` (undefined when p does not start with it). */
export function rebasePath(p: Path, from: Path, to: Path): Path | undefined {
    if (!startsWith(p, from)) return undefined;
    return { base: to.base, fields: [...to.fields, ...p.fields.slice(from.fields.length)] };
}

/** Replace `this` by the object path o (the guard of an instance field, read at an object). */
export function atThis(p: Path, o: Path): Path {
    return p.base.k === 'this' ? { base: o.base, fields: [...o.fields, ...p.fields] } : p;
}

export function mapAtomPath(a: Atom, f: (p: Path) => Path | undefined): Atom | undefined {
    const p = f(atomPath(a));
    if (!p) return undefined;
    return a.k === 'held' ? { k: 'held', obj: p } : { ...a, loc: p } as Atom;
}

/** Whether the path can be written in an annotation about an object (no locals). */
export function printable(p: Path): boolean {
    return p.base.k !== 'local';
}

/**
 * Whether another thread j (j != tid, j > 0: thread ids are positive) can satisfy the atom `theirs`
 * (read with tid := j) in a state where this thread's atom `mine` holds:
 * false when the two contradict.
 */
export function compatible(mine: Atom, theirs: Atom): boolean {
    if (mine.k === 'alias' || theirs.k === 'alias') return true;
    if (!samePath(atomPath(mine), atomPath(theirs))) return true;
    if (mine.k === 'held' || theirs.k === 'held') return !(mine.k === 'held' && theirs.k === 'held');
    // (no thread id is 0 or negative: `loc == -1` excludes every thread)
    const notAnId = (c: Const) => (c.k === 'int' && c.v <= 0n);
    switch (mine.k) {
        case 'eqTid':
            // loc == tid (> 0) against loc == j, loc == 0 (or below)
            if (theirs.k === 'eqTid') return false;
            if (theirs.k === 'eq' && notAnId(theirs.c)) return false;
            return true;
        case 'eq':
            if (theirs.k === 'eq') return constKey(mine.c) === constKey(theirs.c);
            if (theirs.k === 'ne') return constKey(mine.c) !== constKey(theirs.c);
            if (theirs.k === 'eqTid') return !notAnId(mine.c);
            return true;
        case 'ne':
            if (theirs.k === 'eq') return constKey(mine.c) !== constKey(theirs.c);
            return true;
    }
}

// ------------------------------------------------------------------ guards

/** A disjunct of a guard: the single-instance threads it is for (undefined: any thread) and the atoms that hold. */
export interface Disjunct {
    threads?: number[];
    atoms: Atom[];
}

export function disjunctKey(d: Disjunct): string {
    return `${d.threads ? `[${d.threads.join(',')}]` : '*'}:${d.atoms.map(atomKey).sort().join('&')}`;
}

/**
 * Whether another thread j can satisfy the disjunct (with `this` := obj) while
 * this thread (single-instance id `me`, undefined when replicated or unknown)
 * knows `mine`.
 */
export function otherMaySatisfy(d: Disjunct, obj: Path | undefined, mine: Atom[] | AtomIndex, me: number | undefined): boolean {
    if (d.threads && d.threads.every(t => t === me)) return false;
    const index = mine instanceof AtomIndex ? mine : new AtomIndex(mine);
    for (const a of d.atoms) {
        if (!obj && atomPath(a).base.k === 'this') continue; // `this` of no object: no conclusion
        const theirs = obj ? mapAtomPath(a, p => atThis(p, obj))! : a;
        // (only facts about the same location can contradict)
        for (const m of index.about(atomPath(theirs))) if (!compatible(m, theirs)) return false;
    }
    return true;
}

/** A thread's facts by location and by key (lookups in the analysis are per location). */
export class AtomIndex {
    private readonly byPath = new Map<string, Atom[]>();
    readonly keys = new Set<string>();

    constructor(atoms: Iterable<Atom>) {
        for (const a of atoms) {
            this.keys.add(atomKey(a));
            const k = pathKey(atomPath(a));
            const list = this.byPath.get(k);
            if (list) list.push(a); else this.byPath.set(k, [a]);
        }
    }

    about(p: Path): Atom[] {
        return this.byPath.get(pathKey(p)) ?? [];
    }

    private sig?: string;

    /** The set of facts as a string: equal for two indexes of the same facts (an atom's key determines it). */
    get signature(): string {
        return this.sig ??= [...this.keys].sort().join('\n');
    }
}

/** Whether `a` implies `b` (a has every atom of b and at most b's threads). */
export function implies(a: Disjunct, b: Disjunct): boolean {
    if (b.threads && (!a.threads || a.threads.some(t => !b.threads!.includes(t)))) return false;
    const keys = new Set(a.atoms.map(atomKey));
    return b.atoms.every(x => keys.has(atomKey(x)));
}

/** Drop the disjuncts another one implies... the other way round: keep the weakest (a ∨ b = b when a ⇒ b). */
export function simplify(ds: Disjunct[]): Disjunct[] {
    const unique = new Map<string, Disjunct>();
    for (const d of ds) unique.set(disjunctKey(d), d);
    const list = resolve([...unique.values()]);
    return list.filter((d, i) => !list.some((e, j) => j !== i && implies(d, e) && !(implies(e, d) && j > i)));
}

/** `(P && a) || (P && !a)` is P (same threads, all other atoms the same): until no pair is left. */
function resolve(ds: Disjunct[]): Disjunct[] {
    const list = [...ds];
    for (let changed = true; changed;) {
        changed = false;
        outer: for (let i = 0; i < list.length; i++) {
            for (let j = i + 1; j < list.length; j++) {
                const merged = complementary(list[i], list[j]);
                if (!merged) continue;
                list.splice(j, 1);
                list[i] = merged;
                changed = true;
                break outer;
            }
        }
    }
    return list;
}

/** The two disjuncts' common part when they differ in one atom and its negation only. */
function complementary(a: Disjunct, b: Disjunct): Disjunct | undefined {
    if ((a.threads?.join(',') ?? '*') !== (b.threads?.join(',') ?? '*') || a.atoms.length !== b.atoms.length) return undefined;
    const bKeys = new Set(b.atoms.map(atomKey));
    const onlyA = a.atoms.filter(x => !bKeys.has(atomKey(x)));
    if (onlyA.length !== 1) return undefined;
    const aKeys = new Set(a.atoms.map(atomKey));
    const onlyB = b.atoms.filter(x => !aKeys.has(atomKey(x)));
    if (onlyB.length !== 1 || !negates(onlyA[0], onlyB[0])) return undefined;
    return { threads: a.threads, atoms: a.atoms.filter(x => x !== onlyA[0]) };
}

/** Whether one atom is the other's negation (a boolean and its complement, `= c` and `!= c`). */
function negates(x: Atom, y: Atom): boolean {
    if ((x.k !== 'eq' && x.k !== 'ne') || (y.k !== 'eq' && y.k !== 'ne') || !samePath(x.loc, y.loc)) return false;
    const value = (a: Extract<Atom, { k: 'eq' | 'ne' }>) => (a.c.k === 'bool' ? { pos: (a.k === 'eq') === a.c.v, key: 'bool' } : { pos: a.k === 'eq', key: constKey(a.c) });
    const vx = value(x), vy = value(y);
    return vx.key === vy.key && vx.pos !== vy.pos;
}

// ------------------------------------------------------------------ Calvin text and expressions

/** How the inference names things in text and builds typed expressions. */
export interface Namer {
    field(id: string): FieldModel | undefined;
    threadName(id: number): string;
    /** The class an object path's base has (`this` of the class whose field is guarded). */
    thisClass?: string;
}

export function pathText(p: Path, n: Namer): string {
    const base = p.base.k === 'this' ? 'this' : p.base.k === 'local' ? `<${p.base.id}>` : globalText(p.base.field, n);
    return [base, ...p.fields.map(f => n.field(f)?.name ?? f)].join('.');
}

function globalText(id: string, n: Namer): string {
    const f = n.field(id);
    if (!f) return id;
    return f.owner ? `${f.owner}.${f.name}` : f.name;
}

export function constText(c: Const): string {
    return constKey(c);
}

export function atomText(a: Atom, n: Namer): string {
    switch (a.k) {
        case 'eqTid': return `${pathText(a.loc, n)} == tid`;
        case 'eq':
            if (a.c.k === 'bool') return a.c.v ? pathText(a.loc, n) : `!${pathText(a.loc, n)}`;
            return `${pathText(a.loc, n)} == ${constText(a.c)}`;
        case 'ne':
            if (a.c.k === 'bool') return a.c.v ? `!${pathText(a.loc, n)}` : pathText(a.loc, n);
            return `${pathText(a.loc, n)} != ${constText(a.c)}`;
        case 'held': return `${pathText(a.obj, n)}.holder == tid`;
        case 'alias': return `${pathText(a.loc, n)} == <${a.local}>`;
    }
}

export function disjunctText(d: Disjunct, n: Namer, parenthesize: boolean): string {
    const parts: string[] = [];
    if (d.threads) {
        const t = d.threads.map(id => `tid == ${n.threadName(id)}`);
        parts.push(t.length > 1 && (d.atoms.length > 0 || parenthesize) ? `(${t.join(' || ')})` : t.join(' || '));
    }
    for (const a of d.atoms) parts.push(atomText(a, n));
    if (parts.length === 0) return 'true';
    const text = parts.join(' && ');
    return parenthesize && parts.length > 1 ? `(${text})` : text;
}

/** A guard as Calvin text; `b ? P : Q` when two disjuncts differ only in a boolean (time-varying locks). */
export function guardText(ds: Disjunct[], n: Namer): string {
    if (ds.length === 0) return 'false';
    if (ds.length === 2) {
        const cond = splitOnBoolean(ds[0], ds[1]);
        if (cond) {
            const rest = (d: Disjunct) => disjunctText({ threads: d.threads, atoms: d.atoms.filter(a => atomKey(a) !== atomKey(cond.when(d))) }, n, true);
            return `${pathText(cond.loc, n)} ? ${rest(cond.t)} : ${rest(cond.f)}`;
        }
    }
    return ds.map(d => disjunctText(d, n, ds.length > 1)).join(' || ');
}

/** Two disjuncts `b && P` and `!b && Q` (same threads): b, and which is which. */
function splitOnBoolean(a: Disjunct, b: Disjunct): { loc: Path; t: Disjunct; f: Disjunct; when: (d: Disjunct) => Atom } | undefined {
    if ((a.threads?.join(',') ?? '*') !== (b.threads?.join(',') ?? '*')) return undefined;
    for (const x of a.atoms) {
        if (x.k !== 'eq' || x.c.k !== 'bool') continue;
        const y = b.atoms.find(z => z.k === 'eq' && z.c.k === 'bool' && samePath(z.loc, x.loc) && z.c.v !== (x.c as { v: boolean }).v);
        if (!y || a.atoms.length < 2 || b.atoms.length < 2) continue;
        const [t, f, ta, fa] = x.c.v ? [a, b, x, y] : [b, a, y, x];
        return { loc: x.loc, t, f, when: d => (d === t ? ta : fa) };
    }
    return undefined;
}

// typed expressions of the program model (synthesized clauses)

const INT: Type = { kind: 'int' };
const BOOL: Type = { kind: 'boolean' };

export function pathExpr(p: Path, n: Namer, range: Range): Expr {
    let e: Expr;
    if (p.base.k === 'this') e = { kind: 'this', type: { kind: 'class', name: n.thisClass ?? '?' }, range };
    else if (p.base.k === 'global') {
        const f = n.field(p.base.field);
        e = { kind: 'global', field: p.base.field, primed: false, type: f?.type ?? INT, range };
    } else throw new Error('a local in an inferred annotation');
    for (const id of p.fields) {
        const f = n.field(id);
        e = { kind: 'field', receiver: e, field: id, primed: false, type: f?.type ?? INT, range };
    }
    return e;
}

function constExpr(c: Const, type: Type, range: Range): Expr {
    return c.k === 'int' ? { kind: 'int', value: c.v.toString(), type: INT, range }
        : c.k === 'bool' ? { kind: 'bool', value: c.v, type: BOOL, range }
            : { kind: 'null', type, range };
}

const bin = (op: '&&' | '||' | '==' | '!=', left: Expr, right: Expr, range: Range): Expr => ({ kind: 'binary', op, left, right, type: BOOL, range });

export function atomExpr(a: Atom, n: Namer, range: Range): Expr {
    const tid: Expr = { kind: 'tid', type: INT, range };
    switch (a.k) {
        case 'eqTid': return bin('==', pathExpr(a.loc, n, range), tid, range);
        case 'eq': case 'ne': {
            const loc = pathExpr(a.loc, n, range);
            return bin(a.k === 'eq' ? '==' : '!=', loc, constExpr(a.c, loc.type, range), range);
        }
        case 'held': return bin('==', { kind: 'holder', receiver: pathExpr(a.obj, n, range), primed: false, type: INT, range }, tid, range);
        case 'alias': throw new Error('an alias atom in an inferred annotation');
    }
}

export function disjunctExpr(d: Disjunct, n: Namer, range: Range): Expr {
    const parts: Expr[] = [];
    if (d.threads) {
        const ts = d.threads.map(id => bin('==', { kind: 'tid', type: INT, range }, { kind: 'threadId', thread: n.threadName(id), id, type: INT, range }, range));
        parts.push(ts.reduce((x, y) => bin('||', x, y, range)));
    }
    for (const a of d.atoms) parts.push(atomExpr(a, n, range));
    if (parts.length === 0) return { kind: 'bool', value: true, type: BOOL, range };
    return parts.reduce((x, y) => bin('&&', x, y, range));
}

export function guardExpr(ds: Disjunct[], n: Namer, range: Range): Expr {
    if (ds.length === 0) return { kind: 'bool', value: false, type: BOOL, range };
    return ds.map(d => disjunctExpr(d, n, range)).reduce((x, y) => bin('||', x, y, range));
}

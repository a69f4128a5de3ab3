import type { ClassModel, FieldModel, ProgramModel, Type } from '../model/program.js';
import { typeString } from '../model/program.js';
import type { Sort } from '../smt/term.js';

/**
 * The heap model (issue: "fields as maps from references to values"):
 * - a global or static field `x` is the state variable `g:x`;
 * - an instance field `C.f` is the map `f:C.f : Ref -> T`;
 * - array elements are `elems:S : Ref -> (Int -> S)` per element sort, lengths the
 *   immutable function `len : Ref -> Int`;
 * - monitors are the map `holder : Ref -> Int`;
 * - allocation is `alloc : Ref -> Bool`, privacy `owner : Ref -> Int` (the
 *   allocating thread while private, 0 once published), and the immutable
 *   dynamic type `dtype : Ref -> Int`.
 * Integers are mathematical.
 */
export interface StateVar {
    name: string;
    sort: Sort;
    kind: 'global' | 'field' | 'elems' | 'holder' | 'alloc' | 'owner';
    /** The field it models (globals and fields). */
    field?: FieldModel;
}

export function sortOfType(t: Type): Sort {
    switch (t.kind) {
        case 'int': return 'Int';
        case 'boolean': return 'Bool';
        default: return 'Ref';
    }
}

export const HOLDER = 'holder';
export const ALLOC = 'alloc';
export const OWNER = 'owner';
export const LEN = 'len';
export const DTYPE = 'dtype';

export function globalVar(fieldId: string): string { return `g:${fieldId}`; }
export function fieldVar(fieldId: string): string { return `f:${fieldId}`; }
export function elemsVar(sort: Sort): string { return `elems:${typeof sort === 'string' ? sort : 'Arr'}`; }

export class Vocabulary {
    readonly vars = new Map<string, StateVar>();
    readonly fields = new Map<string, FieldModel>();
    readonly classes = new Map<string, ClassModel>();
    private readonly typeIds = new Map<string, number>();

    constructor(readonly program: ProgramModel) {
        for (const f of program.globals) this.addField(f);
        for (const c of program.classes) {
            this.classes.set(c.name, c);
            this.typeId({ kind: 'class', name: c.name });
            for (const f of c.fields) this.addField(f);
        }
        // Only the heap bookkeeping the program can use: a program without objects
        // has no allocation, ownership or monitor maps (smaller, faster VCs).
        const uses = heapFeatures(program);
        if (uses.monitors) this.add({ name: HOLDER, sort: { array: ['Ref', 'Int'] }, kind: 'holder' });
        if (uses.objects) {
            this.add({ name: ALLOC, sort: { array: ['Ref', 'Bool'] }, kind: 'alloc' });
            this.add({ name: OWNER, sort: { array: ['Ref', 'Int'] }, kind: 'owner' });
        }
        for (const s of ['Int', 'Bool', 'Ref'] as const) {
            if (uses.elements.has(s)) this.add({ name: elemsVar(s), sort: { array: ['Ref', { array: ['Int', s] }] }, kind: 'elems' });
        }
    }

    private add(v: StateVar): void {
        this.vars.set(v.name, v);
    }

    private addField(f: FieldModel): void {
        this.fields.set(f.id, f);
        if (f.isStatic) this.add({ name: globalVar(f.id), sort: sortOfType(f.type), kind: 'global', field: f });
        else this.add({ name: fieldVar(f.id), sort: { array: ['Ref', sortOfType(f.type)] }, kind: 'field', field: f });
    }

    /** The state variable holding a field. */
    varOfField(fieldId: string): string {
        const f = this.fields.get(fieldId);
        if (!f) throw new Error(`unknown field ${fieldId}`);
        return f.isStatic ? globalVar(fieldId) : fieldVar(fieldId);
    }

    /** Distinct integers for the dynamic types of objects and arrays. */
    typeId(t: Type): number {
        const key = typeString(t);
        let id = this.typeIds.get(key);
        if (id === undefined) {
            id = this.typeIds.size + 1;
            this.typeIds.set(key, id);
        }
        return id;
    }

    has(name: string): boolean {
        return this.vars.has(name);
    }

    sortOfVar(name: string): Sort {
        const v = this.vars.get(name);
        if (!v) throw new Error(`unknown state variable ${name}`);
        return v.sort;
    }

    /** Every state variable, in a stable order. */
    allVars(): StateVar[] {
        return [...this.vars.values()];
    }

    method(id: string) {
        for (const p of this.program.procedures) if (p.id === id) return p;
        for (const c of this.program.classes) for (const m of c.methods) if (m.id === id) return m;
        return undefined;
    }

    /** All methods and procedures. */
    allMethods() {
        return [...this.program.procedures, ...this.program.classes.flatMap(c => c.methods)];
    }

    /** Number of single-instance threads (replicated instances get ids above it). */
    get singleThreads(): number {
        return this.program.threads.filter(t => t.count === undefined).length;
    }
}

/** `null` is never allocated (true when the program has no objects at all). */
export function nullUnallocated(vocab: Vocabulary, state: (name: string) => import('../smt/term.js').Term): import('../smt/term.js').Term {
    if (!vocab.has(ALLOC)) return { t: 'bool', value: true };
    return { t: 'app', fn: 'not', sort: 'Bool', args: [{ t: 'app', fn: 'select', sort: 'Bool', args: [state(ALLOC), { t: 'var', name: 'null', sort: 'Ref' }] }] };
}

/**
 * Facts true of every heap the language can build: a reference-typed global
 * holds null or a published, allocated object of its type (storing a reference
 * into a global publishes it). `state` reads a state variable.
 */
export function heapFacts(vocab: Vocabulary, state: (name: string) => import('../smt/term.js').Term, only?: Set<string>): import('../smt/term.js').Term[] {
    const out: import('../smt/term.js').Term[] = [];
    for (const v of vocab.allVars()) {
        if (v.kind !== 'global' || v.sort !== 'Ref' || !v.field) continue;
        if (only && !only.has(v.name)) continue;
        const t = v.field.type;
        if (t.kind !== 'class' && t.kind !== 'array') continue;
        const g = state(v.name);
        // A final global initialized with `new` is never null after initialization.
        const neverNull = v.field.isFinal && (v.field.init?.kind === 'new' || v.field.init?.kind === 'newArray');
        out.push({
            t: 'app', fn: 'or', sort: 'Bool', args: [
                neverNull ? { t: 'bool', value: false } : { t: 'app', fn: '=', sort: 'Bool', args: [g, { t: 'var', name: 'null', sort: 'Ref' }] },
                {
                    t: 'app', fn: 'and', sort: 'Bool', args: [
                        { t: 'app', fn: 'select', sort: 'Bool', args: [state(ALLOC), g] },
                        { t: 'app', fn: '=', sort: 'Bool', args: [{ t: 'app', fn: 'select', sort: 'Int', args: [state(OWNER), g] }, { t: 'int', value: 0n }] },
                        { t: 'app', fn: '=', sort: 'Bool', args: [{ t: 'app', fn: DTYPE, sort: 'Int', args: [g] }, { t: 'int', value: BigInt(vocab.typeId(t)) }] },
                    ],
                },
            ],
        });
    }
    return out;
}

/**
 * Which parts of the heap model a program needs: monitors (synchronized code or
 * `holder`), objects (any class or array type, `new`), and array element sorts.
 */
export function heapFeatures(program: ProgramModel): { monitors: boolean; objects: boolean; elements: Set<Sort> } {
    const out = { monitors: false, objects: false, elements: new Set<Sort>() };
    const seen = new Set<object>();
    const visit = (x: unknown): void => {
        if (x === null || typeof x !== 'object' || seen.has(x)) return;
        seen.add(x);
        if (Array.isArray(x)) { x.forEach(visit); return; }
        const o = x as Record<string, unknown>;
        if (o.isSynchronized === true || o.kind === 'sync' || o.kind === 'holder') out.monitors = true;
        if (o.kind === 'class' || o.kind === 'array' || o.kind === 'new' || o.kind === 'newArray') out.objects = true;
        if (o.kind === 'array' && o.element && typeof o.element === 'object') out.elements.add(sortOfType(o.element as Type));
        if (o.kind === 'newArray' && o.element && typeof o.element === 'object') out.elements.add(sortOfType(o.element as Type));
        for (const k of Object.keys(o)) if (k !== 'range' && k !== 'nameRange' && k !== 'endRange') visit(o[k]);
    };
    visit(program);
    if (out.monitors) out.objects = true;
    return out;
}

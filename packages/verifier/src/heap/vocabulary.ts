import type { ClassModel, FieldModel, MethodModel, ProgramModel, Type } from '../model/program.js';
import { typeString } from '../model/program.js';
import * as T from '../smt/term.js';
import type { Sort, Term } from '../smt/term.js';

/**
 * The heap model (pipeline stage 2). Every piece of shared state is a *state
 * variable* read at some keys:
 * - a global or static field `x`: `g:x`, no keys;
 * - an instance field `C.f`: `f:C.f`, keyed by the object;
 * - array elements: `e:S` per element sort S, keyed by the array and the index;
 * - monitors: `holder`, keyed by the object (0 = free, else the holder's id);
 * - allocation: `alloc` (object → allocated?) and privacy: `owner` (the
 *   allocating thread while the object is private to it, 0 once published),
 *   and `linked` (a private object a field or element of another private
 *   object references: it is published with any object that is published,
 *   because it may be reachable from it).
 * Array lengths (`len`) and dynamic types (`dtype`) never change: they are
 * plain functions. Integers are mathematical.
 */
export interface StateVar {
    name: string;
    /** Sorts of the keys (none for a global). */
    keys: Sort[];
    sort: Sort;
    kind: 'global' | 'field' | 'elems' | 'holder' | 'alloc' | 'owner' | 'linked';
    /** The field it models (globals and fields). */
    field?: FieldModel;
    /** The element type (array elements). */
    element?: Type;
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
export const LINKED = 'linked';
export const LEN = 'len';
export const DTYPE = 'dtype';
/**
 * Who made an object, when a field initializer made it with `new`: the
 * object whose field it is (null for a global's) and the field's number
 * (`madeFacts`). Two such objects of different makers or fields differ.
 */
export const MADE_BY = 'made_by';
export const MADE_AT = 'made_at';

export function globalVar(fieldId: string): string { return `g:${fieldId}`; }
export function fieldVar(fieldId: string): string { return `f:${fieldId}`; }
export function elemsVar(sort: Sort): string { return `e:${sort}`; }

/** The key of a static type for instantiating quantifiers over its objects (`C:Vector`, `A:int[]`). */
export function typeKey(t: Type): string | undefined {
    if (t.kind === 'class') return `C:${t.name}`;
    if (t.kind === 'array') return `A:${typeString(t)}`;
    return undefined;
}

export class Vocabulary {
    readonly vars = new Map<string, StateVar>();
    readonly fields = new Map<string, FieldModel>();
    readonly classes = new Map<string, ClassModel>();
    private readonly methods = new Map<string, MethodModel>();
    /**
     * Fields that keep the value their initializer gives every object (final,
     * or written by no thread after initialization: analysis/reach.ts
     * `fieldWriters`); set by the program context.
     */
    stableFields = new Set<string>();
    /**
     * The single-instance threads that may write the elements of each element
     * map (`e:Int`, ...), when only such threads may (analysis/arrays.ts
     * `elementWriters`): none, the elements are stable; one, they are stable
     * for it. Set by the program context.
     */
    elementWriters = new Map<string, number[]>();
    /**
     * Element maps whose arrays threads write only while private to the writer (inferred,
     * ProgramModel.privateElements): a published array's elements never change. Set by the
     * program context.
     */
    privateElements = new Set<string>();
    private readonly typeIds = new Map<string, number>();

    constructor(readonly program: ProgramModel) {
        for (const f of program.globals) this.addField(f);
        for (const c of program.classes) {
            this.classes.set(c.name, c);
            this.typeId({ kind: 'class', name: c.name });
            for (const f of c.fields) this.addField(f);
            for (const m of c.methods) this.methods.set(m.id, m);
        }
        for (const p of program.procedures) this.methods.set(p.id, p);
        const uses = heapFeatures(program);
        if (uses.objects) {
            this.add({ name: ALLOC, keys: ['Ref'], sort: 'Bool', kind: 'alloc' });
            this.add({ name: OWNER, keys: ['Ref'], sort: 'Int', kind: 'owner' });
            this.add({ name: HOLDER, keys: ['Ref'], sort: 'Int', kind: 'holder' });
            this.add({ name: LINKED, keys: ['Ref'], sort: 'Bool', kind: 'linked' });
        }
        for (const [s, element] of uses.elements) this.add({ name: elemsVar(s), keys: ['Ref', 'Int'], sort: s, kind: 'elems', element });
    }

    private add(v: StateVar): void {
        this.vars.set(v.name, v);
    }

    private addField(f: FieldModel): void {
        this.fields.set(f.id, f);
        if (f.isStatic) this.add({ name: globalVar(f.id), keys: [], sort: sortOfType(f.type), kind: 'global', field: f });
        else this.add({ name: fieldVar(f.id), keys: ['Ref'], sort: sortOfType(f.type), kind: 'field', field: f });
    }

    /** The state variable holding a field. */
    varOfField(fieldId: string): string {
        const f = this.fields.get(fieldId);
        if (!f) throw new Error(`unknown field ${fieldId}`);
        return f.isStatic ? globalVar(fieldId) : fieldVar(fieldId);
    }

    /** Distinct integers for the dynamic types of objects and arrays. */
    typeId(t: Type): number {
        const k = typeString(t);
        let id = this.typeIds.get(k);
        if (id === undefined) {
            id = this.typeIds.size + 1;
            this.typeIds.set(k, id);
        }
        return id;
    }

    /** A field's number (its position in the program), for `madeFacts`. */
    fieldNumber(fieldId: string): number {
        return [...this.fields.keys()].indexOf(fieldId) + 1;
    }

    has(name: string): boolean {
        return this.vars.has(name);
    }

    stateVar(name: string): StateVar {
        const v = this.vars.get(name);
        if (!v) throw new Error(`unknown state variable ${name}`);
        return v;
    }

    sortOfVar(name: string): Sort {
        return this.stateVar(name).sort;
    }

    /** Every state variable, in a stable order. */
    allVars(): StateVar[] {
        return [...this.vars.values()];
    }

    method(id: string): MethodModel | undefined {
        return this.methods.get(id);
    }

    /** All methods and procedures. */
    allMethods(): MethodModel[] {
        return [...this.program.procedures, ...this.program.classes.flatMap(c => c.methods)];
    }

    /** Number of single-instance threads (replicated instances get ids above it). */
    get singleThreads(): number {
        return this.program.threads.filter(t => t.count === undefined).length;
    }

    /** A state variable's value at keys, in a state (undefined: current). */
    read(name: string, keys: Term[], state?: string): Term {
        return T.read(name, keys, this.sortOfVar(name), state);
    }
}

// ------------------------------------------------------------------ heap predicates (terms over a state)

export function allocated(o: Term, state?: string): Term {
    return T.read(ALLOC, [o], 'Bool', state);
}

export function ownerOf(o: Term, state?: string): Term {
    return T.read(OWNER, [o], 'Int', state);
}

export function holderOf(o: Term, state?: string): Term {
    return T.read(HOLDER, [o], 'Int', state);
}

export function lengthOf(a: Term): Term {
    return T.call(LEN, 'Int', a);
}

export function dtypeOf(o: Term): Term {
    return T.call(DTYPE, 'Int', o);
}

/**
 * `value`, the object or array a field initializer of `maker` (null: a
 * global's initializer) made with `new`, was made there: every `new` gives an
 * object of its own, so two fields that keep such values hold different ones.
 */
export function madeFacts(vocab: Vocabulary, value: Term, maker: Term, fieldId: string): Term {
    return T.and(T.eq(T.call(MADE_BY, 'Ref', value), maker), T.eq(T.call(MADE_AT, 'Int', value), T.int(vocab.fieldNumber(fieldId))));
}

/** A fact `madeFacts` states (true in every execution: the witness search takes it as true). */
export function isMadeFact(t: Term): boolean {
    return t.t === 'app' && t.fn === '=' && t.args.some(a => a.t === 'app' && (a.fn === MADE_BY || a.fn === MADE_AT));
}

/** o is allocated, published (shared) and of the given dynamic type (class invariants and environment clauses range over these). */
export function publishedOf(vocab: Vocabulary, type: Type, o: Term, state?: string): Term {
    if (!vocab.has(ALLOC)) return T.FALSE;
    return T.and(allocated(o, state), T.eq(ownerOf(o, state), T.int(0)), T.eq(dtypeOf(o), T.int(vocab.typeId(type))));
}

/** o is private to the thread: allocated by it and not published yet. */
export function linkedOf(o: Term, state?: string): Term {
    return T.read(LINKED, [o], 'Bool', state);
}

export function privateTo(o: Term, tid: Term, state?: string): Term {
    return T.and(allocated(o, state), T.eq(ownerOf(o, state), tid));
}

/**
 * Facts true of every heap the language builds, in a state: null is never
 * allocated; a reference-typed global holds null or a published object of its
 * type (storing a reference into a global publishes it); a final global
 * initialized with `new` is never null.
 */
export function heapFacts(vocab: Vocabulary, state: string | undefined, only?: Set<string>): Term[] {
    if (!vocab.has(ALLOC) || (only && !only.has(ALLOC))) return [];
    const out: Term[] = [T.not(allocated(T.NULL, state))];
    for (const sv of vocab.allVars()) {
        if (sv.kind !== 'global' || sv.sort !== 'Ref' || !sv.field) continue;
        if (only && !only.has(sv.name)) continue;
        const t = sv.field.type;
        if (t.kind !== 'class' && t.kind !== 'array') continue;
        const g = vocab.read(sv.name, [], state);
        // a global that keeps its initializer's new object or array is never null (and an array of constant size keeps its length)
        const keeps = sv.field.isFinal || vocab.stableFields.has(sv.field.id);
        const init = sv.field.init;
        const neverNull = keeps && (init?.kind === 'new' || init?.kind === 'newArray');
        out.push(T.or(neverNull ? T.FALSE : T.eq(g, T.NULL), publishedOf(vocab, t, g, state)));
        if (neverNull) out.push(madeFacts(vocab, g, T.NULL, sv.field.id));
        if (keeps && init?.kind === 'newArray' && init.size.kind === 'int') out.push(T.eq(lengthOf(g), T.int(BigInt(init.size.value))));
    }
    return out;
}

/** A reference of static type `type` read from the heap is null or an allocated object of that type. */
export function wellTyped(vocab: Vocabulary, t: Term, type: Type, state?: string): Term {
    if (type.kind !== 'class' && type.kind !== 'array') return T.TRUE;
    if (!vocab.has(ALLOC)) return T.TRUE;
    return T.or(T.eq(t, T.NULL), T.and(allocated(t, state), T.eq(dtypeOf(t), T.int(vocab.typeId(type)))));
}

/**
 * Which parts of the heap model a program needs: objects (any class or array
 * type, `new`, monitors) and the sorts of array elements.
 */
export function heapFeatures(program: ProgramModel): { objects: boolean; elements: Map<Sort, Type> } {
    const out = { objects: false, elements: new Map<Sort, Type>() };
    const seen = new Set<object>();
    const visit = (x: unknown): void => {
        if (x === null || typeof x !== 'object' || seen.has(x)) return;
        seen.add(x);
        if (Array.isArray(x)) { x.forEach(visit); return; }
        const o = x as Record<string, unknown>;
        if (o.isSynchronized === true || o.kind === 'sync' || o.kind === 'holder') out.objects = true;
        if (o.kind === 'class' || o.kind === 'array' || o.kind === 'new' || o.kind === 'newArray') out.objects = true;
        if ((o.kind === 'array' || o.kind === 'newArray') && o.element && typeof o.element === 'object') {
            const el = o.element as Type;
            if (!out.elements.has(sortOfType(el))) out.elements.set(sortOfType(el), el);
        }
        for (const k of Object.keys(o)) if (k !== 'range' && k !== 'nameRange' && k !== 'endRange') visit(o[k]);
    };
    visit(program);
    return out;
}

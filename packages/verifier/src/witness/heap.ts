import type { Sort } from '../smt/term.js';
import { ALLOC, type Vocabulary } from '../heap/vocabulary.js';

/** A concrete value: integers (and references: 0 is null) as BigInt, booleans. */
export type Value = bigint | boolean;

export function defaultOf(sort: Sort): Value {
    return sort === 'Bool' ? false : 0n;
}

function keyOf(keys: readonly Value[]): string {
    return keys.map(String).join(',');
}

/**
 * A concrete store (the state of the real program): every state variable of
 * the heap model (heap/vocabulary.ts) as a finite map from keys to values
 * (absent keys hold the sort's default), the lengths and dynamic types of the
 * allocated objects, and the next fresh reference.
 */
export class Heap {
    private readonly maps = new Map<string, Map<string, { keys: Value[]; value: Value }>>();
    readonly len = new Map<bigint, bigint>();
    readonly dtype = new Map<bigint, number>();
    nextRef = 1n;

    constructor(readonly vocab: Vocabulary) { }

    get(map: string, keys: readonly Value[]): Value {
        const e = this.maps.get(map)?.get(keyOf(keys));
        return e ? e.value : defaultOf(this.vocab.sortOfVar(map));
    }

    set(map: string, keys: readonly Value[], value: Value): void {
        let m = this.maps.get(map);
        if (!m) this.maps.set(map, m = new Map());
        m.set(keyOf(keys), { keys: [...keys], value });
    }

    /** The entries of a state variable that differ from the default. */
    entries(map: string): Array<{ keys: Value[]; value: Value }> {
        const d = defaultOf(this.vocab.sortOfVar(map));
        return [...(this.maps.get(map)?.values() ?? [])].filter(e => e.value !== d);
    }

    /** The allocated objects and arrays. */
    allocated(): bigint[] {
        return [...this.dtype.keys()].filter(r => !this.vocab.has(ALLOC) || this.get(ALLOC, [r]) === true);
    }

    /** A fresh reference (never allocated before). */
    fresh(): bigint {
        return this.nextRef++;
    }

    clone(): Heap {
        const h = new Heap(this.vocab);
        for (const [k, m] of this.maps) h.maps.set(k, new Map(m));
        for (const [k, v] of this.len) h.len.set(k, v);
        for (const [k, v] of this.dtype) h.dtype.set(k, v);
        h.nextRef = this.nextRef;
        return h;
    }
}

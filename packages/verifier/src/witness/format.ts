import { typeString, type Range, type Type } from '../model/program.js';
import type { Vocabulary } from '../heap/vocabulary.js';
import type { Heap, Value } from './heap.js';
import type { Access, StepOutcome } from './machine.js';
import type { WitnessStep } from './types.js';

/** Source text of the program's files (by `Range.file`), for the actions of a trace. */
export type SourceReader = (file: string) => string | undefined;

/** No source text (the verifier reads no file): the actions are written from the operations. */
export const noSource: SourceReader = () => undefined;

/** Names of objects in a trace: the global that holds it after the initializers, else `Class#n` (`int[]#n` for an array). */
export class Namer {
    private readonly names = new Map<bigint, string>();

    constructor(private readonly vocab: Vocabulary, init: Heap) {
        for (const sv of vocab.allVars()) {
            if (sv.kind !== 'global' || sv.sort !== 'Ref' || !sv.field) continue;
            const v = init.get(sv.name, []);
            if (typeof v === 'bigint' && v !== 0n && !this.names.has(v)) this.names.set(v, sv.field.id);
        }
        this.typeNames = new Map();
        const types: Type[] = [{ kind: 'int' }, { kind: 'boolean' }, ...vocab.program.classes.map(c => ({ kind: 'class' as const, name: c.name }))];
        for (const t of types) {
            if (t.kind === 'class') this.typeNames.set(vocab.typeId(t), t.name);
            this.typeNames.set(vocab.typeId({ kind: 'array', element: t }), `${typeString(t)}[]`);
        }
    }

    private readonly typeNames: Map<number, string>;

    object(ref: bigint, heap: Heap): string {
        if (ref === 0n) return 'null';
        const n = this.names.get(ref);
        if (n) return n;
        const type = heap.dtype.get(ref);
        const name = type !== undefined ? this.typeNames.get(type) ?? (heap.len.has(ref) ? 'array' : 'object') : 'object';
        return `${name}#${ref}`;
    }

    location(map: string, keys: Value[], heap: Heap): string {
        const sv = this.vocab.stateVar(map);
        switch (sv.kind) {
            case 'global': return sv.field?.id ?? map;
            case 'field': return `${this.object(keys[0] as bigint, heap)}.${sv.field?.name ?? map}`;
            case 'elems': return `${this.object(keys[0] as bigint, heap)}[${keys[1]}]`;
            case 'holder': return `${this.object(keys[0] as bigint, heap)}.holder`;
            default: return `${map}(${keys.join(', ')})`;
        }
    }

    value(map: string, v: Value, heap: Heap): string {
        if (typeof v === 'boolean') return String(v);
        return this.vocab.sortOfVar(map) === 'Ref' ? this.object(v, heap) : v.toString();
    }

    /** `x: 1 → 0, y: 2` for what a step read and wrote. */
    values(accesses: Access[], heap: Heap): string {
        const written = new Map<string, { old: Value; value: Value; map: string }>();
        const read = new Map<string, { value: Value; map: string }>();
        for (const a of accesses) {
            const loc = this.location(a.map, a.keys, heap);
            if (a.write) {
                const prev = written.get(loc);
                written.set(loc, { old: prev ? prev.old : a.old!, value: a.value, map: a.map });
            } else if (!written.has(loc) && !read.has(loc)) read.set(loc, { value: a.value, map: a.map });
        }
        const parts: string[] = [];
        for (const [loc, r] of read) if (!written.has(loc)) parts.push(`${loc}: ${this.value(r.map, r.value, heap)}`);
        for (const [loc, w] of written) parts.push(`${loc}: ${this.value(w.map, w.old, heap)} → ${this.value(w.map, w.value, heap)}`);
        return parts.join(', ');
    }
}

/** The source text of a range, on one line (the first line of a longer one), shortened. */
export function sourceText(range: Range, source: SourceReader): string {
    const text = source(range.file);
    if (text === undefined) return '';
    const lines = text.split(/\r?\n/);
    const first = lines[range.startLine] ?? '';
    // (the first line of a longer range without its trailing comment: `atomic { // why`)
    const s = range.endLine === range.startLine ? first.slice(range.startChar, range.endChar) : first.slice(range.startChar).replace(/\/\/.*$/, '');
    const one = s.replace(/\s+/g, ' ').trim();
    return one.length > 60 ? `${one.slice(0, 57)}...` : one;
}

/** A step of a trace from what the interpreter did. */
export function stepOf(thread: string, range: Range, action: string, values: string, failing = false): WitnessStep {
    return { thread, file: range.file, line: range.startLine + 1, column: range.startChar + 1, action, values, ...(failing ? { failing } : {}) };
}

/** The action of an interpreter step: the operation's source text (monitors named). */
export function actionOf(s: StepOutcome, namer: Namer, source: SourceReader, heap: Heap): string {
    const p = s.point;
    if (p.k === 'op') {
        const op = p.op;
        if (op.kind === 'enter' || op.kind === 'exit') {
            const h = s.accesses.find(a => a.write && a.map === 'holder');
            const obj = h ? namer.object(h.keys[0] as bigint, heap) : '';
            return `${op.kind === 'enter' ? 'take' : 'release'} the monitor of ${obj}`;
        }
        const text = sourceText(op.range, source);
        if (op.kind === 'read') return `read ${text}`;
        return text || (op.label ?? op.kind);
    }
    if (p.k === 'check') return p.cmd.k === 'assumeState' ? 'assume' : sourceText(p.cmd.check.range, source);
    if (p.k === 'return') return sourceText(p.range, source) || 'return';
    return '';
}

import type { FieldModel, MethodModel, Range, Type } from '../model/program.js';
import type { BoundVar, Sort, Term } from '../smt/term.js';

/**
 * The intermediate language of atomic operations (Plato's `{p}X`, Calvin §4):
 * a sequential, structured program over local variables in which every
 * operation on shared state is an explicit atomic operation. Calls are gone:
 * callees with an abstraction are replaced by their abstraction's actions,
 * the others by their (lowered) bodies.
 *
 * Terms read shared state with `read` terms (smt/term.ts) in the current
 * state; inside an operation, state `OP_PRE` is the state when the operation
 * began (abstraction actions relate it to the state after). Locals are
 * variables named `l~...`.
 */

export const OP_PRE = 'op~pre';

/** A shared location. */
export type Loc =
    | { kind: 'global'; map: string }
    | { kind: 'field'; map: string; obj: Term }
    /** An array element; `via` is the field the array was read from (its writable_if protects the elements). */
    | { kind: 'elem'; map: string; arr: Term; index: Term; via?: { field: FieldModel; obj?: Term } }
    | { kind: 'holder'; obj: Term }
    /** A whole field map (`*.f` in a frame). */
    | { kind: 'all'; map: string };

export interface Access {
    loc: Loc;
    write: boolean;
    /** Synchronization access (volatile field, cas, atomic block, monitor, abstraction step): no stability check. */
    sync: boolean;
    /** The field accessed (undefined for array elements and holder). */
    field?: FieldModel;
    range: Range;
    /** Source text of the access, for messages. */
    text: string;
}

/** Where an inlined body was called from, innermost last. */
export interface CallFrame {
    method: string;
    range: Range;
}

export type CheckCode = 'race' | 'assert' | 'null' | 'bounds' | 'div-zero' | 'invariant' | 'env' | 'abstraction' | 'loop-invariant';

/**
 * An obligation of an inferred annotation (infer/): the inferred guard of
 * `field` (at a write `site`, one `atom` of what the thread was inferred to
 * know there), or the inferred environment clause about `field`. When it
 * fails, the inference is told and weakens that annotation.
 */
export interface InferredRef {
    kind: 'guard' | 'environment' | 'invariant';
    /** The field (guards, monotone flags) or the candidate's key (invariants, monotone counters). */
    field: string;
    site?: string;
    atom?: string;
}

/** A check of the program (implicit or written), before it becomes a VC assertion. */
export interface CheckInfo {
    /** An obligation of an inferred annotation (not the program's: the inference is refuted when it fails). */
    inferred?: InferredRef;
    code: CheckCode;
    range: Range;
    message: string;
    chain: CallFrame[];
    /** Terms whose values explain a failure (name shown → term, in the state of the check). */
    show?: Array<[string, Term]>;
    /**
     * Values another thread's step changed before they were read (filled in by
     * the simulation builder): before and after that environment step.
     */
    changes?: Array<{ name: string; before: Term; after: Term; range: Range }>;
    /** The annotation it comes from, for related information. */
    related?: { range: Range; message: string };
    /** More related locations (the writes a race's message names). */
    also?: Array<{ range: Range; message: string }>;
    /** A method that may return before all steps of its abstraction: the steps, to suggest a `witness step` for the missing one. */
    missingStep?: { steps: Array<{ text: string; changesNothing: boolean }> };
}

/** Commands inside one atomic operation, run in order on the current state. */
export type OpCmd =
    | { k: 'assume'; cond: Term }
    | { k: 'assert'; cond: Term; check: CheckInfo }
    | { k: 'local'; var: string; value: Term }
    | { k: 'havocLocal'; vars: string[] }
    /** One location: `map(keys) := value`. */
    | { k: 'store'; map: string; keys: Term[]; value: Term }
    /** A whole map: `map(params) := value` for all params (value may read the map itself). */
    /**
     * `into`: a publication by a store of a reference into a field or element
     * of this object, which publishes nothing while the object is private to
     * the thread (lower.ts `publishIfRef`).
     */
    | { k: 'update'; map: string; params: BoundVar[]; value: Term; into?: Term }
    /** `map(params) := anything` where `where` holds (an abstraction action's frame). */
    | { k: 'havocMap'; map: string; params: BoundVar[]; where: Term }
    | { k: 'if'; cond: Term; then: OpCmd[]; else: OpCmd[] };

export type OpKind = 'read' | 'write' | 'cas' | 'atomic' | 'enter' | 'exit' | 'alloc' | 'ghost' | 'step' | 'stutter';

export interface AtomicOp {
    id: number;
    kind: OpKind;
    range: Range;
    chain: CallFrame[];
    accesses: Access[];
    body: OpCmd[];
    /** The leading `assume`s that block the thread until they hold (monitor enter, `atomic { assume ...; }`). */
    blocking: number;
    /** `//@ witness step N` written before the statement. */
    witness?: number;
    /** For messages: what the operation is. */
    label?: string;
    /** Runs before the threads start (field initializers): no environment, no checks of the guarantee. */
    init?: boolean;
    /** An inlined abstraction action of a callee: which one (its guarantee was proved with the callee). */
    abstraction?: { method: MethodModel; step: number | 'stutter' };
    /** Locations of objects allocated by this operation (private: never racy, no writable_if). */
    fresh?: Term[];
}

export type Cmd =
    | { k: 'op'; op: AtomicOp }
    | { k: 'local'; var: string; value: Term }
    | { k: 'havocLocal'; vars: string[] }
    | { k: 'assumeLocal'; cond: Term }
    /** A check over locals only (e.g. a Java assert on values already read). */
    | { k: 'checkLocal'; cond: Term; check: CheckInfo }
    /** A check over the shared state where it stands (an annotation assert, an abstraction's requires): after an environment step. */
    | { k: 'checkState'; cond: Term; check: CheckInfo }
    /** An assumption over the shared state where it stands (annotation assume, an abstraction's ensures). */
    | { k: 'assumeState'; cond: Term }
    | { k: 'if'; cond: Term; then: Cmd[]; else: Cmd[] }
    /** `while (true) body`; left only by `break` (or `exit`). */
    | { k: 'loop'; label: string; invariants: LoopInvariant[]; body: Cmd[]; range: Range }
    | { k: 'break'; label: string }
    | { k: 'continue'; label: string }
    /** A block that `exit` leaves (method bodies, for `return`; loop bodies, for `continue`). */
    | { k: 'scope'; label: string; body: Cmd[] }
    /** Leave a scope; `range` marks a `return` of the method being checked (where its postcondition is checked). */
    | { k: 'exit'; label: string; range?: Range }
    /** Remember the current shared state under a name (for `\old`). */
    | { k: 'snapshot'; name: string };

export interface LoopInvariant {
    cond: Term;
    check: CheckInfo;
    /** The invariant as written. */
    text: string;
}

/** Locals declared while lowering: sort and, for references, the static type. */
export interface LocalDecl {
    name: string;
    sort: Sort;
    type?: Type;
}

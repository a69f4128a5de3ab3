import type { FieldModel, Range } from '../model/program.js';
import type { Term } from '../smt/term.js';

/**
 * The intermediate language of atomic operations (Plato's `{p}X`, Calvin §4):
 * a sequential, structured program over local variables in which every
 * operation on shared state is an explicit atomic operation. Calls are gone:
 * callees with an abstraction are replaced by their abstraction's actions,
 * the others by their (lowered) bodies.
 *
 * Term naming: a state variable is referred to by its vocabulary name
 * (heap/vocabulary.ts) and means its current value; `pre~NAME` inside an
 * operation means its value when the operation started; locals are `l~ID`.
 */

export const PRE = 'pre~';
export const preName = (stateVar: string) => PRE + stateVar;

/** A shared location. */
export type Loc =
    | { kind: 'global'; var: string }
    | { kind: 'field'; var: string; obj: Term }
    | { kind: 'elem'; var: string; arr: Term; index: Term }
    | { kind: 'holder'; obj: Term }
    /** A whole field map or array-element map (`*.f` in a frame). */
    | { kind: 'all'; var: string };

export interface Access {
    loc: Loc;
    write: boolean;
    /** Synchronization access (volatile field, cas, atomic block, monitor, abstraction step): no stability check. */
    sync: boolean;
    /** The field accessed (undefined for array elements and holder). */
    field?: FieldModel;
    /** For array elements: the array-typed fields that may reference the array (for their writable_if). */
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

/** A check of the program (implicit or written), before it becomes a VC assertion. */
export interface CheckInfo {
    code: CheckCode;
    range: Range;
    message: string;
    chain: CallFrame[];
    /** Terms whose values explain a failure (name shown → term). */
    show?: Array<[string, Term]>;
    /** The annotation it comes from, for related information. */
    related?: { range: Range; message: string };
}

/** Commands inside one atomic operation. */
export type OpCmd =
    | { k: 'assume'; cond: Term }
    | { k: 'assert'; cond: Term; check: CheckInfo }
    | { k: 'set'; var: string; value: Term }
    | { k: 'havoc'; vars: string[] }
    | { k: 'if'; cond: Term; then: OpCmd[]; else: OpCmd[] };

export type OpKind = 'read' | 'write' | 'cas' | 'atomic' | 'enter' | 'exit' | 'alloc' | 'ghost' | 'step' | 'stutter';

export interface AtomicOp {
    id: number;
    kind: OpKind;
    range: Range;
    chain: CallFrame[];
    accesses: Access[];
    body: OpCmd[];
    /** `//@ witness step N` written before the statement. */
    witness?: number;
    /** For inlined abstraction actions: what it is, for messages. */
    label?: string;
    /** Runs before the threads start (field initializers): no environment, no checks of the guarantee. */
    init?: boolean;
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
    /** `while (true) body`; left only by `break`. */
    | { k: 'loop'; label: string; invariants: LoopInvariant[]; body: Cmd[]; range: Range }
    | { k: 'break'; label: string }
    | { k: 'continue'; label: string }
    /** A block that `exit` leaves (method bodies, for `return`; loop bodies, for `continue`). */
    | { k: 'scope'; label: string; body: Cmd[] }
    /** Leave a scope; `range` marks a `return` of the method being checked (where its postcondition is checked). */
    | { k: 'exit'; label: string; range?: Range }
    /** Remember the current shared state under a prefix (for `\old`). */
    | { k: 'snapshot'; prefix: string };

export interface LoopInvariant {
    cond: Term;
    check: CheckInfo;
}

/** Locals declared while lowering, with their sorts. */
export interface LocalDecl {
    name: string;
    sort: import('../smt/term.js').Sort;
}

export interface LoweredBody {
    cmds: Cmd[];
    locals: Map<string, LocalDecl>;
}

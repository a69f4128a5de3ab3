import type { CheckInfo } from '../il/il.js';
import type { Sort, Term } from '../smt/term.js';

/**
 * The simulation-checking program (Calvin §5): a sequential program of
 * assume/assert/assign/havoc over all variables (shared state, locals, the
 * witness `pc`), with structured control flow and loops that carry
 * invariants. Its verification condition is computed by vc/vcgen.ts.
 */
export type SCmd =
    | { k: 'assume'; cond: Term }
    | { k: 'assert'; cond: Term; check: number }
    | { k: 'assign'; var: string; value: Term }
    | { k: 'havoc'; vars: string[] }
    | { k: 'if'; cond: Term; then: SCmd[]; else: SCmd[] }
    | { k: 'loop'; label: string; invariants: LoopInv[]; body: SCmd[] }
    | { k: 'break'; label: string }
    | { k: 'scope'; label: string; body: SCmd[] }
    | { k: 'exit'; label: string };

/** A loop invariant: user-written (checked, reported) or a Houdini candidate (dropped when it fails). */
export interface LoopInv {
    cond: Term;
    /** Check id asserted on entry and after each iteration. */
    check: number;
    candidate: boolean;
    /** Facts that hold in every state anyway (I, a well-formed heap): assumed at the head, never asserted. */
    assumeOnly?: boolean;
    /** Text for hover ("inferred loop invariants"). */
    text: string;
}

export type CheckKind = 'program' | 'candidate' | 'user-invariant';

export interface Check {
    id: number;
    kind: CheckKind;
    info: CheckInfo;
    /** For checks inside an atomic operation: its id (to group race/env of one step). */
    op?: number;
    /** The written location (for "race reported once"). */
    location?: string;
    /** Candidate invariants: the loop they belong to. */
    loop?: string;
    /**
     * After a failure, execution goes on assuming the check held (implicit
     * runtime checks, assertions: a failure would stop the thread). A race does
     * not stop anything: it is reported and not assumed.
     */
    assumeAfter?: boolean;
}

export interface SeqProgram {
    body: SCmd[];
    /** Sorts of every variable used (state, locals, pc, snapshots). */
    vars: Map<string, Sort>;
    checks: Check[];
    /** Free constants (e.g. tid, fresh post-states of stability checks) with sorts. */
    constants: Map<string, Sort>;
}

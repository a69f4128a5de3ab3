import type { CheckInfo, LocalDecl } from '../il/il.js';
import type { BoundVar, Term } from '../smt/term.js';
import type { Conjunct } from '../spec/environment.js';

/**
 * The simulation-checking program (Calvin §5, pipeline stage 4): a sequential
 * program over the shared state and the locals, with assume/assert, map
 * updates, environment steps and structured control flow. vc/vcgen.ts turns it
 * into a verification condition.
 *
 * Terms read shared state with `read` terms: state undefined is the current
 * state, a name is a snapshot taken by `snapshot` (or a probe's state).
 */
export type SCmd =
    | { k: 'assume'; cond: Term }
    /** `check`: the id of the obligation asserted. */
    | { k: 'assert'; cond: Term; check: number }
    | { k: 'local'; var: string; value: Term }
    /**
     * `scratch`: those of `vars` first assigned inside the loop whose head this is: no
     * iteration reads the value they have there (each defines them before their use).
     */
    | { k: 'havocLocal'; vars: string[]; scratch?: string[] }
    | { k: 'store'; map: string; keys: Term[]; value: Term }
    | { k: 'update'; map: string; params: BoundVar[]; value: Term }
    | { k: 'havocMap'; map: string; params: BoundVar[]; where: Term }
    /** An environment step (E*, or one step of E) on the current state. */
    | { k: 'env'; step: EnvStep }
    /** A hypothetical environment step from the current state into state `name`; the current state does not change. */
    | { k: 'probe'; name: string; step: EnvStep }
    | { k: 'snapshot'; name: string }
    | { k: 'if'; cond: Term; then: SCmd[]; else: SCmd[] }
    /**
     * `while (true) body`, cut: invariants are asserted on entry and after the
     * body; `head` turns the entry state into an arbitrary state at the loop
     * head (havocs), after which the invariants are assumed.
     */
    | { k: 'loop'; label: string; head: SCmd[]; invariants: LoopInv[]; body: SCmd[] }
    | { k: 'break'; label: string }
    | { k: 'scope'; label: string; body: SCmd[] }
    | { k: 'exit'; label: string };

/** An environment step: which state variables may change, by which conjuncts (frames, residuals, built-ins). */
export interface EnvStep {
    /** State variables the step may change; the others keep their values. */
    maps: string[];
    conjuncts: Conjunct[];
    /** State predicates (current-state terms) assumed after the step: I(p). */
    invariants: Term[];
    /** Assume the conjuncts' residual relations (a probe leaves them to the check). */
    assumeResidual: boolean;
}

/** A loop invariant: user-written (checked, reported) or a Houdini candidate (dropped when it fails). */
export interface LoopInv {
    cond: Term;
    /** Obligation id asserted after each iteration (and on entry, unless `entryCheck` is given). */
    check: number;
    /** Obligation id asserted on entry (a written invariant: "does not hold on entry" is its own failure). */
    entryCheck?: number;
    candidate: boolean;
    /** Text for hover ("inferred loop invariants"). */
    text: string;
}

export type ObligationKind = 'program' | 'candidate' | 'user-invariant';

/**
 * One assertion of the simulation-checking program (an *obligation*; a check
 * has many): what it reports when it fails. The VC has an enable literal and an
 * error literal per obligation.
 */
export interface Obligation {
    id: number;
    kind: ObligationKind;
    info: CheckInfo;
    /** For obligations of an atomic operation: its id (to group race/env/invariant failures of one step). */
    op?: number;
    /** Candidates: the loop they belong to. */
    loop?: string;
    /**
     * After a failure, execution goes on assuming the obligation held (implicit
     * runtime checks, assertions: a failure would stop the thread). A race does
     * not stop anything: it is reported and not assumed.
     */
    assumeAfter: boolean;
}

export interface SeqProgram {
    body: SCmd[];
    obligations: Obligation[];
    /** Every local the body uses, with its sort and static type. */
    locals: Map<string, LocalDecl>;
    /** The state variables the check involves (all others are left out of the VC). */
    maps: string[];
    /** Constants of the check besides the locals (tid, pc, ...). */
    constants: Map<string, import('../smt/term.js').Sort>;
    /** Locals that hold a value from the start (a checked method's `this` and parameters): objects in scope from the start. */
    inputs: string[];
}

import { sortOfType } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import { TID, type Invariant } from '../spec/environment.js';
import { Lowerer } from '../lower/lower.js';
import type { Cmd, LocalDecl } from '../il/il.js';
import { Simulator, type AbstractionTarget, type SimSpec } from '../sim/simulate.js';
import type { SeqProgram } from '../sim/seq.js';
import type { Check, ProgramContext } from './program-context.js';

// The stages of one check that need no solver: its lowering (shared with the
// planner, which fingerprints the lowered body) and its simulation-checking program.

/** A check's body in the intermediate language (and the field initializers, for a thread). */
export interface LoweredCheck {
    check: Check;
    init?: Cmd[];
    body: Cmd[];
    locals: Map<string, LocalDecl>;
    /** For a procedure checked against its abstraction. */
    target?: AbstractionTarget;
}

/** The field initializers (the store `Init`), the same for every check of the program. */
export function lowerInit(ctx: ProgramContext): { cmds: Cmd[]; locals: Map<string, LocalDecl> } {
    const init = new Lowerer(ctx.vocab, { kind: 'init', tid: T.int(0) });
    return { cmds: init.lowerInit(), locals: init.declaredLocals };
}

/**
 * Lowering of one check (pipeline stage 1), independent of E* and of the solver.
 * `withInit: false` leaves out a thread's initializers (`init` undefined): the
 * planner makes them canonical once per program, not once per thread.
 */
export function lowerCheck(ctx: ProgramContext, u: Check, withInit = true): LoweredCheck {
    const vocab = ctx.vocab;
    if (u.kind === 'init') {
        const init = lowerInit(ctx);
        return { check: u, body: init.cmds, locals: init.locals };
    }
    if (u.thread) {
        const init = withInit ? lowerInit(ctx) : undefined;
        const lower = new Lowerer(vocab, { kind: 'thread', tid: TID });
        const body = lower.lowerThread(u.thread.body);
        return { check: u, init: init?.cmds, body, locals: new Map([...init?.locals ?? [], ...lower.declaredLocals]) };
    }
    const m = u.method!;
    const lower = new Lowerer(vocab, { kind: 'method', tid: TID });
    const params = m.params.map(p => lower.fresh(p.id, sortOfType(p.type), p.type));
    const thisName = m.isStatic || !m.owner ? undefined : lower.fresh('this', 'Ref', { kind: 'class', name: m.owner });
    const thisTerm = thisName ? T.v(thisName, 'Ref') : undefined;
    const resultVar = m.returnType.kind === 'void' ? undefined : lower.fresh('result', sortOfType(m.returnType), m.returnType);
    const { cmds, exitLabel } = lower.lowerMethodBody(m, thisTerm, params, resultVar);
    return { check: u, body: cmds, locals: lower.declaredLocals, target: { method: m, thisTerm, params, resultVar, exitLabel } };
}

/** The simulation-checking program of a lowered check (pipeline stage 4). */
export function simulationProgram(l: LoweredCheck, spec: SimSpec, invariants: Invariant[]): SeqProgram {
    const sim = new Simulator(spec, l.locals);
    if (l.check.kind === 'init') return sim.initCheck(l.body, invariants);
    if (l.target) return sim.abstraction(l.target, l.body);
    return sim.thread(l.init ?? [], l.body);
}

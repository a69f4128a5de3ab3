import type { ProgramModel, ThreadModel } from '../model/program.js';
import type { Cmd } from '../il/il.js';
import { Lowerer, type InlinedBody } from '../lower/lower.js';
import { programContext, type ProgramContext } from '../driver/program-context.js';
import * as T from '../smt/term.js';
import type { WitnessBounds } from './types.js';

/** One running thread of the bounded program. */
export interface ThreadInstance {
    /** Position in `BoundedProgram.threads`. */
    index: number;
    /** `T1` for a single thread, `Worker[2]` for the second copy of a replicated one. */
    name: string;
    model: ThreadModel;
    tid: number;
    /** The body with real method bodies inlined (the `tid` is this instance's). */
    body: Cmd[];
}

/**
 * The real program within the bounds (issue 14): every single-instance
 * thread and `copies` instances of each replicated one, with the bodies of
 * all called methods inlined (those with an abstraction too), and the field
 * initializers. Loops and context switches are bounded by the search.
 */
export interface BoundedProgram {
    ctx: ProgramContext;
    bounds: WitnessBounds;
    init: Cmd[];
    threads: ThreadInstance[];
    /** The inlined bodies of methods with an abstraction, by their `scope` command. */
    inlined: Map<Cmd, InlinedBody>;
}

export function boundedProgram(program: ProgramModel, bounds: WitnessBounds, ctx: ProgramContext = programContext(program)): BoundedProgram {
    const vocab = ctx.vocab;
    const inlined = new Map<Cmd, InlinedBody>();
    const options = { inlineBodies: { maxDepth: bounds.inlineDepth, onInline: (b: InlinedBody) => { inlined.set(b.scope, b); } } };
    const init = new Lowerer(vocab, { kind: 'init', tid: T.int(0) }, options).lowerInit();
    const threads: ThreadInstance[] = [];
    let nextReplicated = vocab.singleThreads + 1;
    for (const t of program.threads) {
        const copies = t.count === undefined ? 1 : t.count === '*' ? bounds.copies : Math.min(t.count, bounds.copies);
        for (let c = 1; c <= copies; c++) {
            const tid = t.id ?? nextReplicated++;
            const lower = new Lowerer(vocab, { kind: 'thread', tid: T.int(tid) }, options);
            threads.push({ index: threads.length, name: t.count === undefined ? t.name : `${t.name}[${c}]`, model: t, tid, body: lower.lowerThread(t.body) });
        }
    }
    return { ctx, bounds, init, threads, inlined };
}

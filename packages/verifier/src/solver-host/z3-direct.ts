// Z3 (z3-solver's WebAssembly build) driven through its low-level API, for the
// workers that host it (z3-worker.ts, the solver host's engine, and the check
// workers of incremental verification). Never on a server's main thread: a
// crash of the wasm instance ends the thread that runs it.
//
// - One context at a time; a text that starts with `(reset)` gets a new one
//   (Z3 keeps global parameters across `(reset)`, which changed later answers).
// - The SMT-LIB text is copied into `_malloc`'d memory: the generated wrapper
//   passes strings on the wasm stack, where Z3's thread may read them after the
//   call returned (measured: corrupted parses under load).
// - One call at a time, synchronously, on the worker's own thread (issue 15):
//   z3-solver's async call hands each eval to a thread of Z3's and back, which
//   cost a few ms per query and one more thread to start. Nothing interrupts an
//   eval: a query past its hard limit ends with its worker.
// - The Emscripten glue is the copy the build patched for speed (z3-glue.ts),
//   next to the worker's bundle; z3-solver's own copy only if that is missing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { init } from 'z3-solver/build/low-level/index.js';

declare const CALVIN_Z3_BESIDE: boolean | undefined;

/** A query shaped like the verifier's (uninterpreted sort and functions, integers, ite, check-sat-assuming, get-value). */
export const WARM_UP = `(reset)(set-option :produce-models true)(set-option :timeout 10000)(declare-sort Ref 0)(declare-fun f (Ref) Int)(declare-fun g (Ref) Int)
(declare-const a Ref)(declare-const b Ref)(declare-const x Int)(declare-const p Bool)(declare-const q Bool)
(assert (= (g a) (ite (= a b) x (f a))))(assert (=> p (and (> (g a) 0) (< x (f b)))))(assert (=> q (not (= (g a) (f a)))))
(check-sat-assuming (p q))(get-value (x (g a)))(check-sat-assuming (p (not q)))(reset)`;

export interface DirectZ3 {
    eval(text: string): Promise<string>;
    readonly version: string;
    readonly initMs: number;
    /** Which Emscripten glue runs Z3: the build's patched copy (with its WebAssembly invokes), or z3-solver's own. */
    readonly glue: 'patched' | 'stock';
    /** Z3's threads (pthread Workers) started ahead (prespawnThreads). */
    readonly threads: number;
}

/** Where the glue (z3-built.cjs, patched; z3-solver's z3-built.js) and the module (z3-built.wasm) are, and which glue it is. */
function z3Files(): { glue: string; wasm: string; kind: 'patched' | 'stock' } {
    const beside = typeof CALVIN_Z3_BESIDE !== 'undefined' && CALVIN_Z3_BESIDE;
    const here = typeof __dirname === 'string' ? __dirname : undefined;
    // z3-built.cjs and z3-built.wasm ship next to the VS Code extension's bundle (no node_modules there)
    if (beside && here) return { glue: path.join(here, 'z3-built.cjs'), wasm: path.join(here, 'z3-built.wasm'), kind: 'patched' };
    const stockGlue = require.resolve('z3-solver/build/z3-built.js');
    const wasm = path.join(path.dirname(stockGlue), 'z3-built.wasm');
    const patched = here ? path.join(here, 'z3-built.cjs') : undefined;
    return patched && fs.existsSync(patched) ? { glue: patched, wasm, kind: 'patched' } : { glue: stockGlue, wasm, kind: 'stock' };
}

/** WebAssembly.RuntimeError (the project's lib settings have no WebAssembly types). */
const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: new (message?: string) => Error } }).WebAssembly.RuntimeError;

export function messageOf(e: unknown): string {
    return e instanceof Error ? e.message : String(e);
}

/** Failures after which the wasm instance cannot be trusted. */
export function isWasmCrash(e: unknown): boolean {
    if (e instanceof WasmRuntimeError) return true;
    return /Aborted|memory access out of bounds|RuntimeError|unreachable|Memory allocation failed|out of memory|corrupted/i.test(messageOf(e));
}

export { WasmRuntimeError };

/** Emscripten's pool of pthread Workers (exported by z3-solver's glue as Module.PThread). */
interface PThreadPool {
    unusedWorkers: Array<{ unref?(): void }>;
    allocateUnusedWorker(): void;
    loadWasmModuleToWorker(worker: unknown): Promise<void>;
}

/**
 * Z3 starts a thread for the timer of a query's time limit (`:timeout`): a
 * Worker that loads the glue and the module (about 0.15 s, in the first
 * query). It starts here, while the context is made and the first query
 * parsed; Emscripten's
 * pool hands them out when Z3 asks for threads (it makes more when they are
 * busy). Unreferenced: an idle one never keeps the process alive.
 */
export function prespawnThreads(em: { PThread?: Partial<PThreadPool> }, n: number): number {
    const pool = em.PThread;
    if (!pool || typeof pool.allocateUnusedWorker !== 'function' || typeof pool.loadWasmModuleToWorker !== 'function' || !Array.isArray(pool.unusedWorkers)) return 0;
    for (let i = 0; i < n; i++) {
        pool.allocateUnusedWorker();
        const worker = pool.unusedWorkers[pool.unusedWorkers.length - 1];
        void pool.loadWasmModuleToWorker(worker).catch(() => undefined);
        // (after the load has put its listeners on the Worker: a listener references it again)
        worker.unref?.();
    }
    return n;
}

/**
 * Z3's threads in a query with a time limit: the timer's. (More started ahead
 * cost more than they saved: each is a JavaScript realm and an instance of the
 * module, on cores the other solver and the front end need.)
 */
export const PRESTARTED_THREADS = 1;

export async function startZ3(): Promise<DirectZ3> {
    const t0 = performance.now();
    const files = z3Files();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const initModule: unknown = require(files.glue);
    const { Z3, em } = await init(initModule, {
        locateFile: (file: string) => (file.endsWith('.wasm') ? files.wasm : path.join(path.dirname(files.glue), file)),
        // Z3's pthreads must load the glue, not this bundle.
        mainScriptUrlOrBlob: files.glue,
    });
    const threads = prespawnThreads(em, PRESTARTED_THREADS);
    const newContext = () => {
        const cfg = Z3.mk_config();
        const c = Z3.mk_context_rc(cfg);
        Z3.del_config(cfg);
        return c;
    };
    let ctx = newContext();
    const initMs = performance.now() - t0;
    const v = Z3.get_version();
    return {
        version: `${v.major}.${v.minor}.${v.build_number}`,
        initMs,
        glue: files.kind === 'patched' && em.calvinInvokes === true ? 'patched' : 'stock',
        threads,
        async eval(text: string): Promise<string> {
            if (text.startsWith('(reset)')) {
                Z3.del_context(ctx);
                ctx = newContext();
            }
            const bytes = Buffer.from(text, 'utf8');
            const ptr: number = em._malloc(bytes.length + 1);
            if (!ptr) throw new Error('Memory allocation failed (malloc returned 0)');
            try {
                const heap: Uint8Array = em.HEAPU8;
                heap.set(bytes, ptr);
                heap[ptr + bytes.length] = 0;
                const out: unknown = em.ccall('Z3_eval_smtlib2_string', 'string', ['number', 'number'], [ctx, ptr]);
                return typeof out === 'string' ? out : String(out ?? '');
            } catch (e) {
                if (isWasmCrash(e)) throw e;
                // A Z3 exception (the API reported an error): the context stays usable.
                let code = '';
                try { code = ` (Z3 error code ${Z3.get_error_code(ctx)})`; } catch { /* ignore */ }
                throw new Error(`z3 error${code}: ${messageOf(e)}`);
            } finally {
                em._free(ptr);
            }
        },
    };
}

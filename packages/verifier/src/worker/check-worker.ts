// A check worker: runs in a worker_threads Worker started by check-pool.ts. It
// hosts the verifier and its own Z3 (z3-direct.ts), so that everything a check
// costs — lowering, the VC, the solver — stays off the language server's main
// thread. One check at a time; a check can be cancelled: between two queries
// (Z3 in WebAssembly evaluates on this thread, synchronously: the worker
// takes its messages before each query), or by interrupting a native z3's
// query; a query that does not end within the pool's grace period ends with
// the worker (check-pool.ts terminates it and starts another).
//
// Bundled by scripts/bundle.mjs next to z3-worker.cjs, with the same rules for
// z3-solver (never inlined whole).
import { parentPort, workerData } from 'node:worker_threads';
import type { ProgramModel } from '../model/program.js';
import { programContext, type ProgramContext } from '../driver/program-context.js';
import { verifyCheck } from '../driver/verify.js';
import { FallbackBackend } from '../solver-host/fallback.js';
import { sessionPrelude } from '../solver-host/pool.js';
import { NativeEngine } from '../solver-host/native-backend.js';
import { nativeZ3Version } from '../solver-host/choose.js';
import type { SolverBackend, SolverSession } from '../solver-host/types.js';
import { isWasmCrash, messageOf, startZ3, WARM_UP, WasmRuntimeError, type DirectZ3 } from '../solver-host/z3-direct.js';
import type { CheckWorkerData, CheckWorkerToHost, HostToCheckWorker } from './check-protocol.js';
import { WitnessSearch } from '../witness/search.js';

const port = parentPort;
if (!port) throw new Error('check-worker must run in a worker thread');

function send(message: CheckWorkerToHost): void {
    port!.postMessage(message);
}

/** Programs by version (the last few), with their contexts. */
const programs = new Map<string, { model: ProgramModel; ctx?: ProgramContext }>();
const KEEP_PROGRAMS = 4;

class Cancelled extends Error { }

/** The solver this worker evaluates SMT-LIB text on: its own Z3 in wasm, or a native z3 process. */
interface WorkerSolver {
    name: 'z3-wasm' | 'z3-native';
    /** Before each query (wasm: a turn of the event loop, so that a cancellation gets in). */
    beforeQuery?(): Promise<void>;
    eval(text: string, timeLimitMs: number): Promise<string>;
    interrupt(): void;
    initMs: number;
    version: string;
    glue?: 'patched' | 'stock';
    threads?: number;
}

async function startSolver(data: CheckWorkerData | undefined): Promise<WorkerSolver> {
    if (data?.solver === 'z3-native' && data.z3Path) {
        const t0 = performance.now();
        const engine = new NativeEngine(data.z3Path, true);
        await engine.ready();
        return {
            name: 'z3-native', initMs: performance.now() - t0, version: data.z3Version ?? nativeZ3Version(data.z3Path) ?? '?',
            eval: (text, timeLimitMs) => engine.eval(text, timeLimitMs),
            interrupt: () => engine.abort(),
        };
    }
    return startWasm();
}

/** Z3 in WebAssembly on this thread. */
async function startWasm(): Promise<WorkerSolver> {
    // Z3 evaluates synchronously on this thread (z3-direct.ts): a turn of the event loop before each
    // query lets a cancellation in.
    const z3: DirectZ3 = await startZ3();
    await z3.eval(WARM_UP);
    return {
        name: 'z3-wasm', initMs: z3.initMs, version: z3.version, glue: z3.glue, threads: z3.threads,
        beforeQuery: () => new Promise(resolve => setImmediate(resolve)),
        eval: async text => z3.eval(text),
        interrupt: () => undefined, // (nothing runs between two synchronous evals)
    };
}

/** Sessions on the worker's solver; `cancelled` makes every later eval fail at once. */
function backend(z3: WorkerSolver, state: { cancelled: boolean }): SolverBackend {
    return {
        name: z3.name,
        dispose: async () => undefined,
        openSession: async ({ timeLimitMs, resourceLimit }) => {
            let first = true;
            const session: SolverSession = {
                eval: async (text: string) => {
                    if (state.cancelled) throw new Cancelled('cancelled');
                    if (z3.beforeQuery) {
                        await z3.beforeQuery();
                        if (state.cancelled) throw new Cancelled('cancelled');
                    }
                    const full = first ? sessionPrelude(timeLimitMs, resourceLimit) + text : text;
                    first = false;
                    const out = await z3.eval(full, timeLimitMs);
                    if (state.cancelled) throw new Cancelled('cancelled');
                    return out;
                },
                close: () => undefined,
            };
            return session;
        },
    };
}

/** Z3 in WebAssembly on this thread, started the first time a native z3 gives up on a query. */
let wasmFallback: Promise<WorkerSolver> | undefined;

/**
 * The sessions of a job: on a native z3, with Z3 in WebAssembly for the queries
 * it gives up on (solver-host/fallback.ts), as the CLI does.
 */
function jobBackend(z3: WorkerSolver, state: { cancelled: boolean }): SolverBackend {
    const own = backend(z3, state);
    if (z3.name !== 'z3-native') return own;
    return new FallbackBackend(own, async () => {
        wasmFallback ??= startWasm().catch(e => { wasmFallback = undefined; throw e; });
        return backend(await wasmFallback, state);
    });
}

/** A job that threw: cancelled, a crash of the solver (the worker exits; the pool starts another), or an error. */
function failed(e: unknown, state: { cancelled: boolean }, id: number): void {
    if (state.cancelled || e instanceof Cancelled) send({ type: 'cancelled', id });
    else if (isWasmCrash(e)) {
        send({ type: 'failure', id, kind: 'crash', message: `z3 crashed: ${messageOf(e)}` });
        process.exit(70);
    } else send({ type: 'failure', id, kind: 'error', message: messageOf(e) });
}

async function main(): Promise<void> {
    const z3 = await startSolver(workerData as CheckWorkerData | undefined);
    let current: { id: number; state: { cancelled: boolean } } | undefined;
    const queue: HostToCheckWorker[] = [];
    let busy = false;

    const run = async (m: Extract<HostToCheckWorker, { type: 'check' }>) => {
        const program = programs.get(m.version);
        if (!program) {
            send({ type: 'failure', id: m.id, kind: 'error', message: `unknown program version ${m.version}` });
            return;
        }
        const state = { cancelled: false };
        current = { id: m.id, state };
        if (m.witness) {
            // a witness search: the real program, on this worker's Z3, with the check's time limit
            const w = m.witness;
            try {
                // (a search of its own per job: its sessions obey this job's cancellation)
                const search = new WitnessSearch(program.model, {
                    solver: jobBackend(z3, state), bounds: w.bounds, timeLimitMs: m.options.timeLimitMs, source: f => w.sources[f],
                    // (between its phases the worker takes its messages: a cancellation stops the search there)
                    checkpoint: async () => {
                        await new Promise(resolve => setImmediate(resolve));
                        if (state.cancelled) throw new Cancelled('cancelled');
                    },
                });
                const witness = await search.find(w.diagnostic);
                send(state.cancelled ? { type: 'cancelled', id: m.id } : { type: 'witness', id: m.id, witness });
            } catch (e) {
                failed(e, state, m.id);
            } finally {
                current = undefined;
            }
            return;
        }
        program.ctx ??= programContext(program.model);
        try {
            const result = await verifyCheck(program.ctx, m.key, { solver: jobBackend(z3, state), timeLimitMs: m.options.timeLimitMs, checkBudgetMs: m.options.checkBudgetMs, resourceLimit: m.options.resourceLimit, houdiniSeed: m.options.houdiniSeed, untilRefuted: m.options.untilRefuted });
            if (state.cancelled) send({ type: 'cancelled', id: m.id });
            else if (!result) send({ type: 'failure', id: m.id, kind: 'error', message: `no check ${m.key}` });
            else send({ type: 'result', id: m.id, result });
        } catch (e) {
            failed(e, state, m.id);
        } finally {
            current = undefined;
        }
    };

    const pump = async () => {
        if (busy) return;
        busy = true;
        try {
            for (let m = queue.shift(); m; m = queue.shift()) {
                if (m.type === 'check') await run(m);
            }
        } finally {
            busy = false;
        }
    };

    port!.on('message', (m: HostToCheckWorker) => {
        switch (m.type) {
            case 'program':
                programs.set(m.version, { model: m.model });
                while (programs.size > KEEP_PROGRAMS) programs.delete(programs.keys().next().value!);
                return;
            case 'cancel':
                if (current?.id === m.id) {
                    current.state.cancelled = true;
                    z3.interrupt();
                } else {
                    const i = queue.findIndex(x => x.type === 'check' && x.id === m.id);
                    if (i >= 0) { queue.splice(i, 1); send({ type: 'cancelled', id: m.id }); }
                }
                return;
            case 'debug':
                if (m.what === 'crash') setImmediate(() => { throw new WasmRuntimeError('memory access out of bounds (simulated)'); });
                else setImmediate(() => { for (;;) { /* hang */ } });
                return;
            case 'check':
                queue.push(m);
                void pump();
                return;
        }
    });
    send({ type: 'ready', initMs: z3.initMs, z3Version: z3.version, solver: z3.name, ...(z3.glue ? { glue: z3.glue } : {}), ...(z3.threads !== undefined ? { threads: z3.threads } : {}) });
}

main().catch(e => {
    send({ type: 'fatal', message: `check worker failed to start: ${e instanceof Error ? e.stack ?? e.message : String(e)}` });
    process.exit(71);
});


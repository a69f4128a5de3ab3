// The z3 worker: runs in a worker_threads Worker started by wasm-backend.ts.
// One long-lived Z3 context (low-level API, no finalizers), SMT-LIB text in,
// solver output out, one async call at a time.
//
// Bundled by scripts/bundle.mjs to packages/cli/out/z3-worker.cjs (z3-solver
// external, loaded from node_modules) and to client/out/z3-worker.cjs (z3-solver's
// JS wrapper inlined, z3-built.js/.wasm loaded from next to the bundle:
// CALVIN_Z3_BESIDE is defined true there). z3-solver must never be inlined
// whole: its pthreads load the script that contains z3-built.js.
import * as path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { init } from 'z3-solver';
import type { HostToWorker, WorkerStartData, WorkerToHost } from './protocol.js';

declare const CALVIN_Z3_BESIDE: boolean | undefined;

const WARM_UP = `(reset)(set-option :produce-models true)(set-option :timeout 10000)(declare-sort Ref 0)(declare-fun f (Ref) Int)(declare-fun g (Ref) Int)
(declare-const a Ref)(declare-const b Ref)(declare-const x Int)(declare-const p Bool)(declare-const q Bool)
(assert (= (g a) (ite (= a b) x (f a))))(assert (=> p (and (> (g a) 0) (< x (f b)))))(assert (=> q (not (= (g a) (f a)))))
(check-sat-assuming (p q))(get-value (x (g a)))(check-sat-assuming (p (not q)))(reset)`;

const port = parentPort;
if (!port) throw new Error('z3-worker must run in a worker thread');
const startData = workerData as WorkerStartData;

/** WebAssembly.RuntimeError (the project's lib settings have no WebAssembly types). */
const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: new (message?: string) => Error } }).WebAssembly.RuntimeError;

function send(message: WorkerToHost): void {
    port!.postMessage(message);
}

function messageOf(e: unknown): string {
    return e instanceof Error ? e.message : String(e);
}

/** Failures after which the wasm instance cannot be trusted. */
function isWasmCrash(e: unknown): boolean {
    if (e instanceof WasmRuntimeError) return true;
    return /Aborted|memory access out of bounds|RuntimeError|unreachable|Memory allocation failed|out of memory|corrupted/i.test(messageOf(e));
}

async function main(): Promise<void> {
    const t0 = performance.now();
    const beside = typeof CALVIN_Z3_BESIDE !== 'undefined' && CALVIN_Z3_BESIDE;
    const overrides = beside
        ? {
            // z3-built.js and z3-built.wasm ship next to this bundle (the .vsix has no node_modules).
            locateFile: (file: string) => path.join(__dirname, file),
            // Z3's pthreads must load z3-built.js, not this bundle.
            mainScriptUrlOrBlob: path.join(__dirname, 'z3-built.js'),
        }
        : {};
    const { Z3, em } = await init(overrides);
    const newContext = () => {
        const cfg = Z3.mk_config();
        const c = Z3.mk_context_rc(cfg);
        Z3.del_config(cfg);
        return c;
    };
    let ctx = newContext();
    const initMs = performance.now() - t0;

    /**
     * eval_smtlib2_string through the async path, but with the text in _malloc'd
     * memory: the generated wrapper passes a 'string' to ccall, which lives on the
     * wasm stack and can be overwritten before Z3's thread has parsed it.
     * (z3-solver 5.2 does not export stringToUTF8/lengthBytesUTF8, so the bytes
     * are copied with Buffer + HEAPU8.)
     */
    async function evalText(text: string): Promise<string> {
        // `(reset)` in Z3 4.15 keeps state that changes later answers (measured: a quantified
        // query before a quantifier-free one turned its `sat` into `unknown`); a query that
        // starts with (reset) gets a new context instead (about a millisecond).
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
            const out: unknown = await em.async_call(() =>
                em.ccall('async_Z3_eval_smtlib2_string', 'void', ['number', 'number'], [ctx, ptr]));
            return typeof out === 'string' ? out : String(out ?? '');
        } finally {
            em._free(ptr);
        }
    }

    let prewarmMs = 0;
    if (startData?.prewarm) {
        const t1 = performance.now();
        // a query shaped like the verifier's (uninterpreted sort and functions, integers,
        // ite, check-sat-assuming, get-value): the first real query does not pay for it
        await evalText(WARM_UP);
        prewarmMs = performance.now() - t1;
    }

    // One async call at a time: evals are queued (the host sends one at a time
    // anyway; the queue keeps this worker correct on its own).
    const queue: HostToWorker[] = [];
    let busy = false;

    async function pump(): Promise<void> {
        if (busy) return;
        busy = true;
        try {
            for (let m = queue.shift(); m; m = queue.shift()) {
                if (m.type === 'eval') {
                    try {
                        const output = await evalText(m.text);
                        send({ type: 'result', id: m.id, output });
                    } catch (e) {
                        if (isWasmCrash(e)) {
                            send({ type: 'failure', id: m.id, kind: 'crash', message: `z3 crashed: ${messageOf(e)}` });
                            process.exit(70);
                        }
                        // A Z3 exception (the API reported an error): the context stays usable.
                        let code = '';
                        try { code = ` (Z3 error code ${Z3.get_error_code(ctx)})`; } catch { /* ignore */ }
                        send({ type: 'failure', id: m.id, kind: 'error', message: `z3 error${code}: ${messageOf(e)}` });
                    }
                } else if (m.type === 'debug-crash') {
                    // Die like a wasm abort: an uncaught RuntimeError ends the worker.
                    setImmediate(() => { throw new WasmRuntimeError('memory access out of bounds (simulated by debug-crash)'); });
                    return;
                } else if (m.type === 'debug-hang') {
                    // A busy loop that never yields: only terminate() ends it.
                    for (;;) { /* hang */ }
                }
            }
        } finally {
            busy = false;
        }
    }

    port!.on('message', (m: HostToWorker) => {
        if (m.type === 'interrupt') {
            if (busy) Z3.interrupt(ctx);
            return;
        }
        queue.push(m);
        void pump();
    });

    const v = Z3.get_version();
    send({ type: 'ready', z3Version: `${v.major}.${v.minor}.${v.build_number}`, initMs, prewarmMs });
}

main().catch(e => {
    send({ type: 'fatal', message: `z3 worker failed to start: ${e instanceof Error ? e.stack ?? e.message : String(e)}` });
    process.exit(71);
});

// The z3 worker: runs in a worker_threads Worker started by wasm-backend.ts.
// One long-lived Z3 (z3-direct.ts: low-level API, no finalizers), SMT-LIB text
// in, solver output out, one eval at a time, on this thread (synchronous: an
// eval that runs past its time limit is ended by the host, which terminates
// this worker).
//
// Bundled by scripts/bundle.mjs to packages/cli/out/z3-worker.cjs (z3-solver
// external, loaded from node_modules) and to client/out/z3-worker.cjs (z3-solver's
// JS wrapper inlined, z3-built.js/.wasm loaded from next to the bundle:
// CALVIN_Z3_BESIDE is defined true there). z3-solver must never be inlined
// whole: its pthreads load the script that contains z3-built.js.
import { parentPort, workerData } from 'node:worker_threads';
import type { HostToWorker, WorkerStartData, WorkerToHost } from './protocol.js';
import { isWasmCrash, messageOf, startZ3, WARM_UP, WasmRuntimeError } from './z3-direct.js';

const port = parentPort;
if (!port) throw new Error('z3-worker must run in a worker thread');
const startData = workerData as WorkerStartData;

function send(message: WorkerToHost): void {
    port!.postMessage(message);
}

async function main(): Promise<void> {
    const z3 = await startZ3();
    let prewarmMs = 0;
    if (startData?.prewarm) {
        const t1 = performance.now();
        // the first real query does not pay for the warm-up of Z3's code
        await z3.eval(WARM_UP);
        prewarmMs = performance.now() - t1;
    }

    // One eval at a time: evals are queued (the host sends one at a time
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
                        const output = await z3.eval(m.text);
                        send({ type: 'result', id: m.id, output });
                    } catch (e) {
                        if (isWasmCrash(e)) {
                            send({ type: 'failure', id: m.id, kind: 'crash', message: `z3 crashed: ${messageOf(e)}` });
                            process.exit(70);
                        }
                        send({ type: 'failure', id: m.id, kind: 'error', message: messageOf(e) });
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
        queue.push(m);
        void pump();
    });

    send({ type: 'ready', z3Version: z3.version, initMs: z3.initMs, prewarmMs, glue: z3.glue, threads: z3.threads });
}

main().catch(e => {
    send({ type: 'fatal', message: `z3 worker failed to start: ${e instanceof Error ? e.stack ?? e.message : String(e)}` });
    process.exit(71);
});

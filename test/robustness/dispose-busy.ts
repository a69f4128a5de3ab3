// Run by solver.test.ts in a process of its own (nothing else keeps its event loop
// alive): create the wasm backend, keep the main thread busy until the worker has
// surely finished starting (three times a measured start), then dispose of it.
// Prints "settled" when dispose() settles, "never settled" when the event loop
// emptied while it waited (the bug: the worker's late 'ready' unreferenced it).
import { createBackend } from '../../packages/verifier/src/index.js';

const workerScript = process.argv[2];
const minBusyMs = Number(process.argv[3] ?? 600);

const probe = createBackend('z3-wasm', { workers: 1, workerScript });
const t0 = Date.now();
(await probe.openSession({ timeLimitMs: 1000 })).close();
const startMs = Date.now() - t0;
await probe.dispose();

const backend = createBackend('z3-wasm', { workers: 1, workerScript });
const busyMs = Math.max(minBusyMs, 3 * startMs);
const until = Date.now() + busyMs;
while (Date.now() < until) { /* busy, as the front end of a large file is */ }
let settled = false;
process.on('beforeExit', () => {
    if (settled) return;
    process.stdout.write(`never settled (busy ${busyMs} ms)\n`);
    process.exitCode = 3;
});
const t1 = Date.now();
void backend.dispose().then(() => {
    settled = true;
    process.stdout.write(`settled in ${Date.now() - t1} ms (busy ${busyMs} ms)\n`);
});

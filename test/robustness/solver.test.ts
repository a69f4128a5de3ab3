// No silent exit (issue 10): disposing of the solver while a worker is still
// starting settles every pending request (before, the start promise never
// settled and Node exited 0 with nothing printed).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { createBackend, SolverFailure } from '../../packages/verifier/src/index.js';
import { ROOT } from '../util/paths.js';

const WORKER = path.join(ROOT, 'packages/cli/out/z3-worker.cjs');

describe('disposing of the solver in every state settles what waits for it', () => {
    for (const delayMs of [0, 5, 50]) {
        it(`a session requested while the worker starts is rejected when the backend is disposed after ${delayMs} ms`, { timeout: 30_000 }, async () => {
            const backend = createBackend('z3-wasm', { workers: 1, workerScript: WORKER });
            const session = backend.openSession({ timeLimitMs: 1000 });
            const waiting = backend.openSession({ timeLimitMs: 1000 }); // queued behind the first
            const settled = Promise.allSettled([session, waiting]);
            await new Promise(r => setTimeout(r, delayMs));
            await backend.dispose();
            const outcomes = await settled;
            for (const o of outcomes) {
                if (o.status === 'fulfilled') continue; // it started in time: fine, it is usable until closed
                assert.ok(o.reason instanceof SolverFailure, String(o.reason));
            }
            // settled, one way or the other (a hang would time the test out)
            assert.equal(outcomes.length, 2);
        });
    }
});

describe('disposing of the solver after the main thread was busy', () => {
    // The worker finishes starting while the main thread is busy (the front end of a large
    // file), so its 'ready' message arrives after dispose() began. Before, that message
    // unreferenced the worker being terminated: the event loop emptied, dispose() never
    // settled and `calvin check` lost its report. In a process of its own, so that
    // nothing else keeps the event loop alive.
    it('dispose() settles when the main thread was busy (>= 600 ms) right after the backend was created', { timeout: 60_000 }, () => {
        const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/robustness/dispose-busy.ts'), WORKER, '600'], { cwd: ROOT, encoding: 'utf8', timeout: 50_000 });
        assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
        assert.match(r.stdout, /^settled in \d+ ms/);
    });
});

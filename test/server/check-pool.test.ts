// The check pool with real check workers (the bundle the server runs) and Z3
// in WebAssembly, which a check worker calls synchronously on its own thread
// (issue 15): a cancellation must still stop a running check between two
// queries, not wait for the pool's grace period.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { model } from '../util/model.js';
import { EXAMPLES, ROOT } from '../util/paths.js';
import { CheckPool, type CheckJob, type JobOutcome } from '../../packages/verifier/src/worker/check-pool.js';
import type { ProgramModel } from '../../packages/verifier/src/model/program.js';

const SCRIPT = path.join(ROOT, 'packages/cli/out/check-worker.cjs');

describe('check pool: real check workers, Z3 in WebAssembly', () => {
    it('a running check that is cancelled stops at its next query (well within the grace period), and the worker goes on', { timeout: 60_000 }, async () => {
        assert.ok(fs.existsSync(SCRIPT), `${SCRIPT} is missing: run \`npm run build\` first`);
        const program: ProgramModel = await model(fs.readFileSync(path.join(EXAMPLES, 'vector_ok.calvin'), 'utf8'));
        const job = (key: string, onStart?: () => void): CheckJob => ({
            version: '1', model: program, key, name: key, kind: 'thread', range: program.threads[0].nameRange,
            options: { timeLimitMs: 10_000, checkBudgetMs: 10_000 }, priority: 1, onStart,
        });
        const pool = new CheckPool(SCRIPT, 1, { kind: 'z3-wasm' });
        try {
            // (warm: the worker's start and its first check are not what is measured)
            const warm = await pool.submit(job('thread:Reader')).done;
            assert.equal(warm.kind, 'result');
            // the Writer: its VC, then Houdini's and the obligations' queries (several hundred ms)
            let started!: () => void;
            const running = new Promise<void>(resolve => { started = resolve; });
            const { id, done } = pool.submit(job('thread:Writer', () => started()));
            await running;
            await new Promise(resolve => setTimeout(resolve, 60));
            const t0 = Date.now();
            pool.cancel(id);
            const outcome = await done;
            const ms = Date.now() - t0;
            // a worker that never looked at its messages would have finished the check (a result) or,
            // past the grace period of 1 s, been terminated
            assert.equal(outcome.kind, 'cancelled');
            assert.ok(ms < 900, `cancelled after ${ms} ms`);
            const next = await pool.submit(job('thread:Reader')).done;
            assert.equal(next.kind, 'result');
            assert.equal(next.kind === 'result' && next.result.status, 'verified');
        } finally {
            await pool.dispose();
        }
    });

    // Background work (witness searches) must not hold the workers a check waits for: after an
    // edit, the checks of the new text would otherwise wait for searches of up to 10 s per query.
    describe('a background job yields its worker to a job that waits', () => {
        const setup = async () => {
            const program: ProgramModel = await model(fs.readFileSync(path.join(EXAMPLES, 'vector_ok.calvin'), 'utf8'));
            const job = (key: string, extra: Partial<CheckJob> = {}): CheckJob => ({
                version: '1', model: program, key, name: key, kind: 'thread', range: program.threads[0].nameRange,
                options: { timeLimitMs: 10_000, checkBudgetMs: 60_000 }, priority: 1, ...extra,
            });
            const pool = new CheckPool(SCRIPT, 1, { kind: 'z3-wasm' });
            const warm = await pool.submit(job('thread:Reader')).done;
            assert.equal(warm.kind, 'result');
            return { pool, job };
        };

        /**
         * The Writer as a background job; at its first start, `first` gets its id and a function
         * that submits the Reader as a check. The Reader must end first, and the Writer start
         * over and end with its whole result.
         */
        const yielding = async (first: (pool: CheckPool, id: number, submitReader: () => void) => void) => {
            const { pool, job } = await setup();
            try {
                const order: string[] = [];
                let starts = 0, readerEnd = 0, restart = 0;
                let reader: Promise<JobOutcome> | undefined;
                const submitReader = () => { reader = pool.submit(job('thread:Reader')).done.then(o => { order.push('Reader'); readerEnd = Date.now(); return o; }); };
                const { id, done } = pool.submit(job('thread:Writer', {
                    priority: 3, background: true,
                    onStart: () => { if (starts++ === 0) first(pool, id, submitReader); else restart = Date.now(); },
                }));
                const w = await done.then(o => { order.push('Writer'); return o; });
                assert.ok(reader, 'the check was submitted');
                const r = await reader;
                assert.deepEqual(order, ['Reader', 'Writer']);
                assert.equal(starts, 2, 'the background job started over');
                // (not at once: a background job waits for a second without other jobs, as between keystrokes)
                assert.ok(restart - readerEnd >= 900, `started over ${restart - readerEnd} ms after the check`);
                assert.equal(w.kind === 'result' && w.result.status, 'verified');
                assert.equal(r.kind === 'result' && r.result.status, 'verified');
            } finally {
                await pool.dispose();
            }
        };

        it('stopped at its next query, it runs again after the waiting check (with its whole result)', { timeout: 60_000 }, () =>
            // the Writer (several hundred ms of queries) has just started: a check arrives
            yielding((_pool, _id, submitReader) => submitReader()));

        it('a background job that does not stop ends with its worker; it runs again on the next one', { timeout: 60_000 }, () =>
            yielding((pool, id, submitReader) => {
                // the worker hangs at its next turn (as in a long synchronous query); then a check arrives
                pool.debug(id, 'hang');
                setTimeout(submitReader, 500);
            }));
    });
});

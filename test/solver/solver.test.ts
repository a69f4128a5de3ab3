// The solver host (packages/verifier/src/solver): SMT-LIB sessions on Z3 in
// worker threads (z3-wasm) and on a native z3 process (z3-native).
// The wasm tests use the built worker packages/cli/out/z3-worker.cjs
// (`npm run build`, which `npm ci` runs); the native tests need `z3` on PATH
// (`apt-get install z3`): skipped when it is missing, except in CI (where it is
// installed by .ci/run), where they fail and say why.
import { needs } from '../util/external.js';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
    createBackend, nativeZ3Available, SolverFailure,
    type DebuggableSession, type SolverBackend, type SolverFailureKind,
} from '../../packages/verifier/src/solver-host/index.js';
import { NativeEngine } from '../../packages/verifier/src/solver-host/native-backend.js';
import { findNativeZ3 } from '../../packages/verifier/src/solver-host/find-z3.js';
import { ROOT } from '../util/paths.js';
import { firstLine, HARD_QUERY, makeVc, WORKER_SCRIPT } from './vcs.js';

const NOT_BUILT = `${path.relative(ROOT, WORKER_SCRIPT)} is missing: run \`npm run build\` first`;
const NO_Z3 = 'no `z3` executable on PATH: install it (`apt-get install z3` on Debian/Ubuntu) to test the z3-native backend';

/**
 * Every backend a test creates. A test that times out never reaches its own
 * dispose (e.g. a solver that hangs for good): this file's last hook stops them,
 * so that a broken backend fails the tests instead of keeping the run alive.
 */
const live = new Set<SolverBackend>();
after(async () => {
    await Promise.all([...live].map(b => b.dispose()));
});

function track(backend: SolverBackend): SolverBackend {
    live.add(backend);
    return backend;
}

function wasm(options: { workers?: number; prewarm?: boolean; workerScript?: string } = {}): SolverBackend {
    assert.ok(fs.existsSync(WORKER_SCRIPT), NOT_BUILT);
    return track(createBackend('z3-wasm', { workerScript: WORKER_SCRIPT, ...options }));
}

function native(options: { workers?: number; prewarm?: boolean } = {}): SolverBackend {
    assert.ok(nativeZ3Available(), NO_Z3);
    return track(createBackend('z3-native', options));
}

/** Runs `body` with a backend and always disposes it. */
async function withBackend<T>(make: () => SolverBackend, body: (b: SolverBackend) => Promise<T>): Promise<T> {
    const backend = track(make());
    try {
        return await body(backend);
    } finally {
        await backend.dispose();
    }
}

async function solveOnce(backend: SolverBackend, text: string, timeLimitMs = 10_000): Promise<string> {
    const s = await backend.openSession({ timeLimitMs });
    try {
        return await s.eval(text);
    } finally {
        s.close();
    }
}

/** Asserts that `p` rejects with a SolverFailure of `kind`; returns it. */
async function rejectsWith(p: Promise<unknown>, kind: SolverFailureKind): Promise<SolverFailure> {
    try {
        const value = await p;
        assert.fail(`expected a SolverFailure('${kind}'), got the result ${JSON.stringify(value)}`);
    } catch (e) {
        if (!(e instanceof SolverFailure)) throw e;
        assert.equal(e.kind, kind, `expected a '${kind}' failure, got '${e.kind}': ${e.message}`);
        return e;
    }
}

const SAT_WITH_MODEL = '(declare-const x Int)\n(declare-const y Int)\n(assert (= (+ x y) 10))\n(assert (> x 7))\n(assert (> y 1))\n(check-sat)\n(get-value (x y))\n';
const UNSAT = '(declare-const x Int)\n(assert (> x 2))\n(assert (< x 1))\n(check-sat)\n';
/** A quick, deterministic unknown: the skip tactic decides nothing. (Soft-timeout unknowns are tested below.) */
const UNKNOWN = '(declare-const x Int)\n(declare-const y Int)\n(assert (> x 0))\n(assert (> (+ x y) 2))\n(check-sat-using skip)\n';

/** Every test has a time limit: a solver that never answers fails the test instead of hanging the run. */
const T = { timeout: 30_000 };

/** The behaviour both backends must share. */
function commonTests(make: (options?: { workers?: number; prewarm?: boolean }) => SolverBackend): void {
    describe('answers', () => {
        let backend: SolverBackend;
        before(() => { backend = make(); });
        after(async () => { await backend?.dispose(); });

        it('sat with get-value output', T, async () => {
            assert.equal(await solveOnce(backend, SAT_WITH_MODEL), 'sat\n((x 8)\n (y 2))\n');
        });
        it('unsat', T, async () => {
            assert.equal(await solveOnce(backend, UNSAT), 'unsat\n');
        });
        it('unknown', T, async () => {
            assert.equal(await solveOnce(backend, UNKNOWN), 'unknown\n');
        });
        it('several evals in one session share its state (incremental, push/pop)', T, async () => {
            const s = await backend.openSession({ timeLimitMs: 5000 });
            try {
                assert.equal(await s.eval('(declare-const x Int)\n(assert (> x 2))\n'), '');
                assert.equal(await s.eval('(push 1)\n(assert (< x 1))\n(check-sat)\n(pop 1)\n'), 'unsat\n');
                assert.equal(await s.eval('(check-sat)\n(get-value ((> x 2)))\n'), 'sat\n(((> x 2) true))\n');
            } finally {
                s.close();
            }
        });
        it('SMT errors come back as text, and the session goes on', T, async () => {
            const s = await backend.openSession({ timeLimitMs: 5000 });
            try {
                const out = await s.eval('(assert (> nothing 0))\n(check-sat)\n');
                assert.match(out, /^\(error "[^"]*unknown constant nothing"\)\nsat\n$/);
                assert.equal(await s.eval('(declare-const x Int)(assert (> x 0))(check-sat)'), 'sat\n');
            } finally {
                s.close();
            }
        });
        it('incomplete input gives an error text, not a hang', T, async () => {
            const s = await backend.openSession({ timeLimitMs: 5000 });
            try {
                assert.match(await s.eval('(declare-const x Int)\n(assert (> x 0)\n'), /^\(error "/);
                assert.equal(await s.eval('(declare-const y Int)(assert (> y 0))(check-sat)'), 'sat\n');
            } finally {
                s.close();
            }
        });
        it('sessions are independent: a declaration of session 1 is unknown in session 2', T, async () => {
            const s1 = await backend.openSession({ timeLimitMs: 5000 });
            try {
                assert.equal(await s1.eval('(declare-const only_in_s1 Int)\n(assert (> only_in_s1 5))\n(check-sat)\n'), 'sat\n');
            } finally {
                s1.close();
            }
            const s2 = await backend.openSession({ timeLimitMs: 5000 });
            try {
                assert.match(await s2.eval('(assert (> only_in_s1 0))\n'), /unknown constant only_in_s1/);
                // No assertion survives either: x < 0 alone is satisfiable.
                assert.equal(await s2.eval('(declare-const only_in_s1 Int)\n(assert (< only_in_s1 0))\n(check-sat)\n'), 'sat\n');
            } finally {
                s2.close();
            }
        });
        it('an eval after close rejects', T, async () => {
            const s = await backend.openSession({ timeLimitMs: 5000 });
            s.close();
            await rejectsWith(s.eval('(check-sat)'), 'error');
        });
        it('rejects a bad time limit', T, async () => {
            await rejectsWith(backend.openSession({ timeLimitMs: 0 }), 'error');
            await rejectsWith(backend.openSession({ timeLimitMs: Number.NaN }), 'error');
        });
    });

    describe('queueing', () => {
        it('with one worker, queued sessions get the solver in FIFO order', { timeout: 30_000 }, async () => {
            await withBackend(() => make({ workers: 1 }), async backend => {
                const order: number[] = [];
                const runs = Array.from({ length: 6 }, (_, i) => backend.openSession({ timeLimitMs: 5000 }).then(async s => {
                    order.push(i);
                    try {
                        return firstLine(await s.eval(makeVc(i).text));
                    } finally {
                        s.close();
                    }
                }));
                const answers = await Promise.all(runs);
                assert.deepEqual(order, [0, 1, 2, 3, 4, 5]);
                assert.deepEqual(answers, Array.from({ length: 6 }, (_, i) => makeVc(i).expected));
            });
        });
        it('with one worker, a second session waits until the first is closed', { timeout: 30_000 }, async () => {
            await withBackend(() => make({ workers: 1 }), async backend => {
                const s1 = await backend.openSession({ timeLimitMs: 5000 });
                let granted = false;
                const p2 = backend.openSession({ timeLimitMs: 5000 }).then(s => { granted = true; return s; });
                await new Promise(r => setTimeout(r, 300));
                assert.equal(granted, false, 'the second session got the only solver while the first was open');
                s1.close();
                const s2 = await p2;
                assert.equal(await s2.eval(UNSAT), 'unsat\n');
                s2.close();
            });
        });
        it('two workers run two sessions in parallel', { timeout: 30_000 }, async () => {
            await withBackend(() => make({ workers: 2 }), async backend => {
                const slow = await backend.openSession({ timeLimitMs: 2000 });
                const fast = await backend.openSession({ timeLimitMs: 5000 });
                const t0 = performance.now();
                // Z3's own timeout ends the slow query after ~2 s with unknown.
                const slowRun = slow.eval(HARD_QUERY).then(out => ({ out, ms: performance.now() - t0 }), e => ({ out: String(e), ms: performance.now() - t0 }));
                const fastOut = await fast.eval(SAT_WITH_MODEL);
                const fastMs = performance.now() - t0;
                const { ms: slowMs } = await slowRun;
                slow.close();
                fast.close();
                assert.equal(fastOut, 'sat\n((x 8)\n (y 2))\n');
                assert.ok(slowMs > 1500, `the hard query ended early (${slowMs.toFixed(0)} ms); this test needs it to run for ~2 s`);
                assert.ok(fastMs < slowMs - 500, `the fast query (${fastMs.toFixed(0)} ms) did not run beside the slow one (${slowMs.toFixed(0)} ms)`);
            });
        });
        it('dispose rejects sessions still waiting', { timeout: 30_000 }, async () => {
            const backend = make({ workers: 1 });
            const s1 = await backend.openSession({ timeLimitMs: 5000 });
            const waiting = rejectsWith(backend.openSession({ timeLimitMs: 5000 }), 'error');
            await backend.dispose();
            await waiting;
            await rejectsWith(s1.eval('(check-sat)'), 'error');
        });
        it('works without pre-warming (the solver starts on first use)', { timeout: 30_000 }, async () => {
            await withBackend(() => make({ prewarm: false }), async backend => {
                assert.equal(await solveOnce(backend, UNSAT), 'unsat\n');
            });
        });
    });

    describe('limits and failures', () => {
        it('a hard query with a short limit ends as unknown or a timeout failure, never a hang', { timeout: 30_000 }, async () => {
            await withBackend(() => make(), async backend => {
                const s = await backend.openSession({ timeLimitMs: 500 });
                const t0 = performance.now();
                let outcome: string;
                try {
                    outcome = firstLine(await s.eval(HARD_QUERY));
                } catch (e) {
                    assert.ok(e instanceof SolverFailure && e.kind === 'timeout', `unexpected failure: ${String(e)}`);
                    outcome = 'timeout';
                }
                const ms = performance.now() - t0;
                s.close();
                assert.ok(outcome === 'unknown' || outcome === 'timeout', `expected unknown or a timeout, got ${outcome}`);
                assert.ok(ms < 500 + 1000 + 1000, `took ${ms.toFixed(0)} ms with a 500 ms limit`);
                // The solver is usable afterwards.
                assert.equal(await solveOnce(backend, UNSAT), 'unsat\n');
            });
        });
        it('an eval that switches off the soft timeout is stopped at the hard limit (timeout); the solver is usable afterwards', { timeout: 30_000 }, async () => {
            await withBackend(() => make({ workers: 1 }), async backend => {
                const s = await backend.openSession({ timeLimitMs: 500 });
                const t0 = performance.now();
                await rejectsWith(s.eval('(set-option :timeout 0)\n' + HARD_QUERY), 'timeout');
                const ms = performance.now() - t0;
                s.close();
                assert.ok(ms >= 500 && ms < 500 + 1000 + 500, `stopped after ${ms.toFixed(0)} ms with a 500 ms limit`);
                const vc = makeVc(7);
                assert.equal(firstLine(await solveOnce(backend, vc.text)), vc.expected);
            });
        });
        it('the soft timeout reports reason-unknown "timeout" (canceled)', { timeout: 30_000 }, async () => {
            await withBackend(() => make(), async backend => {
                const out = await solveOnce(backend, HARD_QUERY + '(get-info :reason-unknown)\n', 400);
                assert.match(out, /^unknown\n\(:reason-unknown "(timeout|canceled)"\)\n$/);
            });
        });
        it('a crash rejects the eval with kind crash; the next session works', { timeout: 30_000 }, async () => {
            await withBackend(() => make({ workers: 1 }), async backend => {
                const s = await backend.openSession({ timeLimitMs: 5000 }) as DebuggableSession;
                assert.equal(await s.eval('(declare-const x Int)(assert (> x 0))(check-sat)'), 'sat\n');
                // A session queued behind the crashing one proceeds afterwards.
                const queued = backend.openSession({ timeLimitMs: 5000 });
                const failure = await rejectsWith(s.debug('crash'), 'crash');
                assert.match(failure.message, /died|crash/);
                // The session is dead: its state is gone.
                await rejectsWith(s.eval('(check-sat)'), 'error');
                s.close();
                const next = await queued;
                try {
                    assert.match(await next.eval('(assert (> x 0))'), /unknown constant x/);
                    assert.equal(await next.eval(SAT_WITH_MODEL), 'sat\n((x 8)\n (y 2))\n');
                } finally {
                    next.close();
                }
                assert.equal(await solveOnce(backend, UNSAT), 'unsat\n');
            });
        });
        it('a hang with a 1 s limit rejects with kind timeout within ~3 s; the next session works', { timeout: 30_000 }, async () => {
            await withBackend(() => make({ workers: 1 }), async backend => {
                const s = await backend.openSession({ timeLimitMs: 1000 }) as DebuggableSession;
                const t0 = performance.now();
                await rejectsWith(s.debug('hang'), 'timeout');
                const ms = performance.now() - t0;
                assert.ok(ms >= 1000 && ms < 3000, `the hang was ended after ${ms.toFixed(0)} ms`);
                await rejectsWith(s.eval('(check-sat)'), 'error');
                s.close();
                const t1 = performance.now();
                assert.equal(await solveOnce(backend, SAT_WITH_MODEL), 'sat\n((x 8)\n (y 2))\n');
                assert.ok(performance.now() - t1 < 5000, 'the restarted solver took more than 5 s');
            });
        });
        it('recovers from repeated crashes and hangs', { timeout: 60_000 }, async () => {
            await withBackend(() => make({ workers: 1 }), async backend => {
                for (let round = 0; round < 3; round++) {
                    const s = await backend.openSession({ timeLimitMs: 500 }) as DebuggableSession;
                    await rejectsWith(s.debug(round % 2 === 0 ? 'crash' : 'hang'), round % 2 === 0 ? 'crash' : 'timeout');
                    s.close();
                    const vc = makeVc(100 + round);
                    assert.equal(firstLine(await solveOnce(backend, vc.text)), vc.expected);
                }
            });
        });
    });
}

describe('z3-wasm backend', () => {
    commonTests(options => wasm(options));

    it(`answers 500 small VCs (fresh session each, ~50 Int variables) without a crash, in under 60 s`, { timeout: 90_000 }, async () => {
        await withBackend(() => wasm({ workers: 1 }), async backend => {
            const t0 = performance.now();
            const wrong: string[] = [];
            for (let i = 0; i < 500; i++) {
                const vc = makeVc(1000 + i);
                const answer = firstLine(await solveOnce(backend, vc.text));
                if (answer !== vc.expected) wrong.push(`#${i}: ${answer} (expected ${vc.expected})`);
            }
            const ms = performance.now() - t0;
            assert.deepEqual(wrong, [], 'wrong answers');
            assert.ok(ms < 60_000, `500 queries took ${(ms / 1000).toFixed(1)} s`);
        });
    });

    it('reports a missing worker script when a session is opened', T, async () => {
        await withBackend(() => createBackend('z3-wasm', { workerScript: path.join(os.tmpdir(), 'no-such-dir', 'z3-worker.cjs') }), async backend => {
            const failure = await rejectsWith(backend.openSession({ timeLimitMs: 1000 }), 'error');
            assert.match(failure.message, /worker script not found/);
        });
    });

    it('the .vsix layout works: client/out/z3-worker.cjs + z3-built.cjs/.wasm, without node_modules', { timeout: 30_000 }, async () => {
        const out = path.join(ROOT, 'client/out');
        const files = ['z3-worker.cjs', 'z3-built.cjs', 'z3-built.wasm'];
        for (const f of files) assert.ok(fs.existsSync(path.join(out, f)), `client/out/${f} is missing: run \`npm run build\` first`);
        // A directory from which no node_modules is reachable.
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-z3-vsix-'));
        try {
            for (let d = dir; ; d = path.dirname(d)) {
                assert.ok(!fs.existsSync(path.join(d, 'node_modules')), `${d}/node_modules exists: the test needs a temp dir without node_modules above it`);
                if (path.dirname(d) === d) break;
            }
            for (const f of files) fs.copyFileSync(path.join(out, f), path.join(dir, f));
            await withBackend(() => createBackend('z3-wasm', { workerScript: path.join(dir, 'z3-worker.cjs') }), async backend => {
                assert.equal(await solveOnce(backend, SAT_WITH_MODEL), 'sat\n((x 8)\n (y 2))\n');
            });
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe('z3-native backend', needs('z3', 'apt-get install -y z3'), () => {
    it('a z3 executable is on PATH', T, () => {
        assert.ok(nativeZ3Available(), NO_Z3);
    });

    commonTests(options => native(options));

    it('gives the same answers as z3-wasm on the same queries', { timeout: 60_000 }, async () => {
        const queries = [SAT_WITH_MODEL, UNSAT, UNKNOWN, ...Array.from({ length: 60 }, (_, i) => makeVc(5000 + i, 30 + (i % 40)).text)];
        const run = (make: () => SolverBackend) => withBackend(make, async b => {
            const answers: string[] = [];
            for (const q of queries) answers.push(firstLine(await solveOnce(b, q)));
            return answers;
        });
        const fromWasm = await run(() => wasm());
        const fromNative = await run(() => native());
        assert.deepEqual(fromNative, fromWasm);
        assert.deepEqual(fromWasm.slice(3), Array.from({ length: 60 }, (_, i) => makeVc(5000 + i, 30 + (i % 40)).expected));
    });

    it('an engine interrupted in a query (a check worker cancelled) starts its next z3 at once, and answers the next query', { timeout: 60_000 }, async () => {
        const engine = new NativeEngine(findNativeZ3()!, true);
        try {
            await engine.ready();
            const hard = engine.eval(HARD_QUERY, 30_000);
            // (the query is on its way: the process gets it before any answer can come back)
            await new Promise(resolve => setTimeout(resolve, 50));
            engine.abort();
            await assert.rejects(hard, (e: unknown) => e instanceof SolverFailure && /interrupted/.test(e.message));
            // pre-warmed: the next process is already starting, before any eval asks for it
            assert.equal((engine as unknown as { instance?: { alive: boolean } }).instance?.alive, true);
            assert.equal(firstLine(await engine.eval(SAT_WITH_MODEL, 10_000)), 'sat');
        } finally {
            await engine.dispose();
        }
    });

    it('createBackend says how to install z3 when it is not on PATH', T, () => {
        const saved = process.env.PATH;
        process.env.PATH = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-empty-path-'));
        try {
            assert.equal(nativeZ3Available(), false);
            assert.throws(() => createBackend('z3-native'), (e: unknown) =>
                e instanceof SolverFailure && e.kind === 'error' && /no `z3` executable on PATH/.test(e.message) && /apt-get install z3/.test(e.message));
        } finally {
            fs.rmSync(process.env.PATH, { recursive: true, force: true });
            process.env.PATH = saved;
        }
    });
});

// The witness search (issue 14) with the real Z3 (WebAssembly worker): every
// error the checker reports on a buggy example or corpus program gets a
// concrete interleaving of the real program that the interpreter replays to
// the failure — except the listed ones, which no execution reaches (the
// modular check relied on an annotation, or the bounds are too small), and
// which must then be "not confirmed". Correct programs get no witness for any
// failure anywhere, and a correct program whose check fails because of a
// too-weak annotation gets "not confirmed" naming the annotation.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createBackend, nativeZ3Available, type SolverBackend, type VDiagnostic } from '../../packages/verifier/src/index.js';
import { WitnessSearch, witnessCodeFlows, witnessJson, witnessText, type WitnessBounds, type WitnessResult } from '../../packages/verifier/src/witness/index.js';
import { EXAMPLES, ROOT } from '../util/paths.js';
import { checked, programOfFile, programOfText, where } from './util.js';

const CORPUS = path.join(ROOT, 'test/corpus');

/**
 * Diagnostics with no witness within the default bounds, and why (also in
 * the README). Each must be "not confirmed"; every other error must be
 * confirmed.
 */
export const NOT_CONFIRMED: Record<string, Record<string, string>> = {
    'mutex_bad_abstraction.calvin': {
        '12:3 abstraction': "the only thread calls acquire() while m is 0, so its cas always succeeds: the failure needs another thread holding m, which this program does not have (a bug of the method as a library, allowed by its environment clause)",
    },
    'time_varying_wrong_lock.calvin': {
        '38:7 race': "x is written only by Workers holding c, so no write of x can happen while a Worker reads it under c: the read is racy only by the writable_if of x (the real bug is the write at 38:3, which is confirmed)",
    },
    'abstraction_ensures.calvin': {
        '38:1 abstraction': 'the only call passes a level of -150, which normalize() resets: the postcondition fails only for levels in -10..-1, which no execution produces',
    },
    'abstraction_step_in_one_branch.calvin': {
        '13:1 abstraction': 'the only call is set(3): k > 0, so the step always happens',
    },
    'bounds_index.calvin': {
        '21:7 bounds': 'the index reaches the length only after 5 records: 5 copies of Recorder, 4 context switches (confirmed with those bounds below)',
    },
    'invariant_step.calvin': {
        '17:5 invariant': 'balance stays a multiple of 20 that is at least 0 (100, 80, ..., 0), so `b >= 10` means b >= 20 and no execution makes it negative',
    },
    'stable_fields_written.calvin': {
        '19:7 null': '(an @allow) cfg.data is never null in any execution',
        '20:13 null': '(an @allow) cfg.data is never null in any execution',
    },
    'call_step_every_object_env.calvin': {
        '40:11 env': 'drawOne() only advances a ticket: the step its abstraction allows (every next down by one) never happens',
        '40:11 invariant': 'drawOne() only advances a ticket: next never goes below 1',
    },
    'trylock_once_early_return.calvin': {
        '23:3 abstraction': "the only thread's only tryLock() finds m free and succeeds: the failure needs another thread holding m",
    },
};

/** A diagnostic's key in NOT_CONFIRMED: `line:col code`, with the access for races on the same position. */
function keyOf(d: VDiagnostic, table: Record<string, string>): string | undefined {
    const k = where(d);
    if (table[k]) return k;
    const access = /^(read|write) of (\S+)/.exec(d.message);
    const k2 = access ? `${k} ${access[1]} of ${access[2]}` : undefined;
    return k2 && table[k2] ? k2 : undefined;
}

function buggy(dir: string): string[] {
    return fs.readdirSync(dir).filter(f => f.endsWith('.calvin') && !f.endsWith('_ok.calvin') && f !== 'unchecked_dead_code.calvin').sort().map(f => path.join(dir, f));
}

function correct(dir: string): string[] {
    return fs.readdirSync(dir).filter(f => f.endsWith('_ok.calvin') || f === 'unchecked_dead_code.calvin').sort().map(f => path.join(dir, f));
}

let solver: SolverBackend;
/** The checks that give the diagnostics (and the inferred program): a native z3 when there is one (the verdicts do not depend on it, test/solver/backends.test.ts), with Z3 in WebAssembly for the queries it gives up on as the CLI has, to keep the test short. */
let checker: SolverBackend;
before(() => {
    solver = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') });
    checker = nativeZ3Available() ? createBackend('z3-native', { workers: 2, fallback: true, workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }) : solver;
});
after(async () => { await solver.dispose(); if (checker !== solver) await checker.dispose(); });

/** Checks a confirmed witness's shape: numbered steps with positions, the last one failing. */
function assertWellFormed(w: WitnessResult, text: string, d: VDiagnostic): void {
    assert.equal(w.status, 'confirmed');
    if (w.status !== 'confirmed') return;
    assert.ok(w.steps.length > 0);
    const lines = text.split('\n');
    for (const s of w.steps) {
        assert.ok(s.line >= 1 && s.line <= lines.length, `step line ${s.line}`);
        assert.ok(s.column >= 1);
        assert.ok(s.thread.length > 0);
        // (an action is source text without comments: the corpus's markers are comments)
        assert.ok(!s.action.includes('//'), `step action without a comment: ${s.action}`);
    }
    assert.ok(w.steps[w.steps.length - 1].failing, 'the last step is where it fails');
    // the failing step is at the diagnostic, or (a race) one of the two pending accesses is, or (a callee's step) a call led there
    const failing = w.steps.filter(s => s.failing);
    assert.ok(failing.length >= 1 && failing.length <= 2);
    if (['assert', 'null', 'bounds', 'div-zero', 'race', 'loop-invariant'].includes(d.code) && !/initial/.test(d.message)) {
        assert.ok(failing.some(s => s.line === d.range.startLine + 1), `a failing step on line ${d.range.startLine + 1}: ${witnessText(w)}`);
    }
}

function suite(title: string, files: string[]) {
    describe(title, () => {
        for (const file of files) {
            const name = path.basename(file);
            it(name, async () => {
                const { program: source, text } = await programOfFile(file);
                const { program, errors: diagnostics } = await checked(source, checker);
                assert.ok(diagnostics.length > 0, 'a buggy program has errors');
                const search = new WitnessSearch(program, { solver, source: () => text, log: m => assert.fail(m) });
                const table = NOT_CONFIRMED[name] ?? {};
                const seen = new Set<string>();
                for (const d of diagnostics) {
                    const w = await search.find(d);
                    const k = keyOf(d, table);
                    if (k) {
                        seen.add(k);
                        assert.equal(w.status, 'not-confirmed', `${name} ${where(d)} was expected not to be confirmed (${table[k]}), got:\n${witnessText(w)}`);
                        // (a loop cut at 3 iterations is searched again with 6 and 9, within a time budget)
                        if (w.status === 'not-confirmed') assert.match(w.reason, /not confirmed within the bounds \((3|6|9) loop iterations, 3 context switches, 2 copies/);
                    } else {
                        assert.equal(w.status, 'confirmed', `${name} ${where(d)} (${d.message}): ${w.status === 'not-confirmed' ? w.reason : ''}`);
                        assertWellFormed(w, text, d);
                    }
                }
                assert.deepEqual([...seen].sort(), Object.keys(table).sort(), 'every listed exception is a diagnostic the checker reports');
            });
        }
    });
}

describe('witnesses (issue 14)', () => {
    suite('buggy examples: every error has a witness that replays', buggy(EXAMPLES));
    suite('buggy corpus programs: every error has a witness that replays', buggy(CORPUS));

    describe('larger bounds confirm what the default bounds do not', () => {
        const cases: Array<[string, string, Partial<WitnessBounds>]> = [
            ['bounds_index.calvin', '21:7 bounds', { copies: 5, switches: 4 }],
            ['loop_invariant_preserve.calvin', '14:22 loop-invariant', { loops: 5 }],
        ];
        for (const [file, key, bounds] of cases) {
            it(`${file} ${key} with ${JSON.stringify(bounds)}`, async () => {
                const full = path.join(CORPUS, file);
                const { program: source, text } = await programOfFile(full);
                const { program, errors } = await checked(source, checker);
                const d = errors.find(x => where(x) === key)!;
                assert.ok(d, `the checker reports ${key}`);
                const w = await new WitnessSearch(program, { solver, source: () => text, bounds, log: m => assert.fail(m) }).find(d);
                assertWellFormed(w, text, d);
                assert.deepEqual(w.bounds, { loops: 3, switches: 3, copies: 2, inlineDepth: 8, ...bounds });
            });
        }
    });

    it('a loop cut at the default bound is searched again with a larger one; a bound the caller chose is kept', async () => {
        // i exceeds the length only at the fifth head of the loop
        const { program: source, text } = await programOfFile(path.join(CORPUS, 'loop_invariant_preserve.calvin'));
        const { program, errors } = await checked(source, checker);
        const d = errors.find(x => where(x) === '14:22 loop-invariant')!;
        assert.ok(d, 'the checker reports 14:22 loop-invariant');
        const deepened = await new WitnessSearch(program, { solver, source: () => text, log: m => assert.fail(m) }).find(d);
        assertWellFormed(deepened, text, d);
        assert.deepEqual(deepened.bounds, { loops: 6, switches: 3, copies: 2, inlineDepth: 8 });
        const kept = await new WitnessSearch(program, { solver, source: () => text, bounds: { loops: 3 }, log: m => assert.fail(m) }).find(d);
        assert.equal(kept.status, 'not-confirmed');
        if (kept.status === 'not-confirmed') assert.match(kept.reason, /^not confirmed within the bounds \(3 loop iterations,/);
    });

    describe('correct programs: no failure of any kind is reachable within the bounds', () => {
        // Searches every failure condition at once (a race at every access, every check, every
        // invariant and environment clause at every step, every abstraction). Heavier programs use
        // smaller bounds to keep the test short (the search itself is the same).
        const smaller: Record<string, Partial<WitnessBounds>> = {
            'time_varying_ok.calvin': { switches: 2, loops: 2 },
            'vector_ok.calvin': { switches: 2, loops: 1 },
            'prodcons_buffer_ok.calvin': { switches: 2, loops: 1 },
            'monitor_reentrant_ok.calvin': { switches: 2, loops: 1 },
            'abstraction_three_steps_ok.calvin': { switches: 2 },
            'array_owned_ok.calvin': { switches: 2, loops: 1 },
            'flag_retry_ok.calvin': { loops: 2 },
            'textbook_bounded_buffer_ok.calvin': { copies: 1, switches: 2, loops: 1 },
        };
        for (const file of [...correct(EXAMPLES), ...correct(CORPUS)]) {
            const name = path.basename(file);
            it(name, async () => {
                const { program: source, text } = await programOfFile(file);
                const { program } = await checked(source, checker);
                const w = await new WitnessSearch(program, { solver, source: () => text, bounds: smaller[name], timeLimitMs: 30_000, log: m => assert.fail(m) }).searchAnyFailure();
                assert.equal(w.status, 'not-confirmed', w.status === 'confirmed' ? witnessText(w) : '');
                if (w.status === 'not-confirmed') assert.match(w.reason, /^not confirmed within the bounds/);
            });
        }
    });

    it('a race of two writes shows the second with the value the first left', async () => {
        const text = `class Cell {
  volatile int owner = 0;
  //@ environment owner == tid ==> owner' == owner;
  //@ environment owner == tid ==> val' == val;
  int val = 0;
}
final Cell c1 = new Cell();
final Cell c2 = new Cell();
thread A { while (!cas(c1.owner, 0, tid)) { } c2.val = 5; c1.owner = 0; }
thread B { while (!cas(c2.owner, 0, tid)) { } c2.val = 2; c2.owner = 0; }
`;
        const { program, errors: ds } = await checked(await programOfText(text), checker);
        assert.deepEqual(ds.map(where), ['9:47 race']);
        const w = await new WitnessSearch(program, { solver, source: () => text, log: m => assert.fail(m) }).find(ds[0]);
        assertWellFormed(w, text, ds[0]);
        if (w.status !== 'confirmed') return;
        const [first, second] = w.steps.slice(-2);
        const wrote = /c2\.val: -?\d+ → (-?\d+)/.exec(first.values)?.[1];
        assert.ok(wrote, first.values);
        assert.match(second.values, new RegExp(`c2\\.val: ${wrote} → `), 'the second write starts from the value of the first');
    });

    it('a guarded write in a branch of an atomic block that the step does not take is no witness', async () => {
        // The checker cannot tell when the write happens (its condition reads n, which the block
        // wrote before): it asks for the guard on every path. The branch writes slot only while
        // slot is 0, so the guard always holds: the search must not show a step that skips it.
        const text = `volatile int n = 0;
//@ writable_if slot == 0 || slot == tid;
volatile int slot = 0;
thread W[*] {
  atomic {
    n = n + 1;
    if (n > 0 && slot == 0) { slot = tid; }
  }
}
`;
        const { program, errors: ds } = await checked(await programOfText(text), checker);
        assert.deepEqual(ds.map(where), ['7:31 race']);
        const w = await new WitnessSearch(program, { solver, source: () => text, log: m => assert.fail(m) }).find(ds[0]);
        assert.equal(w.status, 'not-confirmed', w.status === 'confirmed' ? witnessText(w) : '');
    });

    describe('a correct program whose check fails because an annotation is too weak', () => {
        it('names the writable_if the failing assertion relied on', async () => {
            const text = `// x's writable_if does not say which values Writer stores: Reader's assertion holds in every execution.
//@ writable_if tid == Writer;
volatile int x = 0;
thread Writer { x = 5; }
thread Reader {
  int y = x;
  assert y >= 0;
}
`;
            // (as written: the inference would prove it)
            const { program, errors: ds } = await checked(await programOfText(text), checker, { infer: false });
            assert.deepEqual(ds.map(where), ['7:3 assert']);
            const w = await new WitnessSearch(program, { solver, source: () => text }).find(ds[0]);
            assert.equal(w.status, 'not-confirmed');
            if (w.status === 'not-confirmed') {
                assert.match(w.reason, /^not confirmed within the bounds \(3 loop iterations, 3 context switches, 2 copies of each replicated thread\)/);
                assert.match(w.reason, /annotation that is too weak \(or need larger bounds\): writable_if 'tid == Writer' of x/);
            }
        });

        it('names the environment clause a lock-protected read relied on', async () => {
            const text = `class Mutex {
  //@ environment m == tid ==> m' == m;
  static volatile int m = 0;
  /*@ abstraction { step [m] m == 0 && m' == tid; } */
  static void acquire() { while (!cas(m, 0, tid)) { } }
  /*@ abstraction { requires m == tid; step [m] m' == 0; } */
  static void release() { m = 0; }
}
//@ environment Mutex.m == tid ==> x' == x;
int x = 0;
thread T1 { Mutex.acquire(); x = 1; Mutex.release(); }
thread T2 { Mutex.acquire(); int v = x; assert v >= 0; Mutex.release(); }
`;
            // (as written: the inference would prove it)
            const { program, errors: ds } = await checked(await programOfText(text), checker, { infer: false });
            assert.deepEqual(ds.map(where), ['12:41 assert']);
            const w = await new WitnessSearch(program, { solver, source: () => text }).find(ds[0]);
            assert.equal(w.status, 'not-confirmed');
            if (w.status === 'not-confirmed') assert.match(w.reason, /environment 'Mutex\.m == tid ==> x' == x'/);
        });
    });

    describe('cancellation', () => {
        it('a checkpoint that throws (a cancelled job in a check worker) stops the search between its phases, before its query', async () => {
            const { program: source, text } = await programOfFile(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'));
            const { program, errors } = await checked(source, checker);
            let sessions = 0, checkpoints = 0;
            const counting: SolverBackend = { name: solver.name, dispose: async () => undefined, openSession: o => { sessions++; return solver.openSession(o); } };
            const stopAt = async (n: number) => {
                sessions = 0; checkpoints = 0;
                const search = new WitnessSearch(program, { solver: counting, source: () => text, checkpoint: async () => { if (++checkpoints === n) throw new Error('cancelled'); } });
                return search.find(errors.find(x => x.code === 'assert')!);
            };
            // uncancelled, the search passes its checkpoints and confirms the failure
            const full = await stopAt(Infinity);
            assert.equal(full.status, 'confirmed');
            const phases = checkpoints;
            assert.ok(phases >= 5, `${phases} checkpoints`);
            // cancelled at any checkpoint before the query: no witness, and no query asked
            for (let n = 1; n <= 4; n++) {
                const w = await stopAt(n);
                assert.equal(w.status, 'not-confirmed');
                assert.equal(sessions, 0, `stopped at checkpoint ${n}`);
            }
        });
    });

    describe('a budget shared by the searches of a program (the CLI\'s)', () => {
        it('a search after the deadline asks nothing and says why; one before it has the time left, at most the time limit', async () => {
            const { program: source, text } = await programOfFile(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'));
            const { program, errors } = await checked(source, checker);
            const limits: number[] = [];
            const counting: SolverBackend = { name: solver.name, dispose: async () => undefined, openSession: o => { limits.push(o.timeLimitMs); return solver.openSession(o); } };
            const d = errors.find(x => x.code === 'assert')!;
            const over = await new WitnessSearch(program, { solver: counting, source: () => text, deadline: Date.now() - 1, budgetMs: 20_000 }).find(d);
            assert.equal(over.status, 'not-confirmed');
            if (over.status === 'not-confirmed') assert.equal(over.reason, 'not searched: the witness searches of this program used up their time (20 s)');
            assert.deepEqual(limits, [], 'no query');
            // (one loop iteration: no quick stage before the stages, whose limits are asserted here)
            const within = await new WitnessSearch(program, { solver: counting, source: () => text, bounds: { loops: 1 }, timeLimitMs: 10_000, deadline: Date.now() + 60_000, budgetMs: 60_000 }).find(d);
            assert.equal(within.status, 'confirmed');
            assert.ok(limits.length > 0 && limits.every(l => l === 10_000), `${limits}`);
            limits.length = 0;
            const short = await new WitnessSearch(program, { solver: counting, source: () => text, bounds: { loops: 1 }, timeLimitMs: 10_000, deadline: Date.now() + 5_000, budgetMs: 5_000 }).find(d);
            assert.equal(short.status, 'confirmed');
            // (a native z3's session may take 1.3 times its limit with the fallback: the limit leaves room for that)
            assert.ok(limits.length > 0 && limits.every(l => l <= 5_000 / 1.3), `${limits}`);
        });
    });

    describe('the quick stage', () => {
        it('with loops that may run more than once, the search first tries one iteration and one copy, natively only, with a short limit', async () => {
            const { program: source, text } = await programOfFile(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'));
            const { program, errors } = await checked(source, checker);
            const sessions: Array<{ timeLimitMs: number; fallback?: boolean }> = [];
            const counting: SolverBackend = { name: solver.name, dispose: async () => undefined, openSession: o => { sessions.push(o); return solver.openSession(o); } };
            const w = await new WitnessSearch(program, { solver: counting, source: () => text, timeLimitMs: 10_000 }).find(errors.find(x => x.code === 'assert')!);
            assert.equal(w.status, 'confirmed');
            // (a witness within one iteration is one within the bounds asked for: they are the ones shown)
            if (w.status === 'confirmed') assert.deepEqual(w.bounds, { loops: 3, switches: 3, copies: 2, inlineDepth: 8 });
            assert.deepEqual(sessions[0], { timeLimitMs: 2000, fallback: false });
        });
    });

    describe('output', () => {
        /** The witness of simple_lock_unlocked's failing assertion. */
        const unlockedAssertWitness = async (): Promise<WitnessResult> => {
            const { program: source, text } = await programOfFile(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'));
            const { program, errors } = await checked(source, checker);
            return new WitnessSearch(program, { solver, source: () => text }).find(errors.find(x => x.code === 'assert')!);
        };

        it('text: numbered steps with thread, file:line, action and values; JSON: status, bounds, steps', async () => {
            const w = await unlockedAssertWitness();
            assert.equal(w.status, 'confirmed');
            const shown = witnessText(w);
            assert.match(shown, /^ {4}witness: T1: assertion 'x > 0' may fail\n/);
            assert.match(shown, /\n {6}\d\. T2 +simple_lock_unlocked\.calvin:29 +x = 0; +\(x: 1 → 0\)\n/);
            assert.match(shown, /simple_lock_unlocked\.calvin:24 +assert x > 0; +<-$/);
            const json = witnessJson(w);
            assert.equal(json.status, 'confirmed');
            assert.deepEqual(json.bounds, { loops: 3, switches: 3, copies: 2, inlineDepth: 8 });
            const last = json.steps[json.steps.length - 1];
            assert.deepEqual({ thread: last.thread, line: last.line, column: last.column, action: last.action }, { thread: 'T1', line: 24, column: 3, action: 'assert x > 0;' });
            assert.ok(json.steps.some(s => s.thread === 'T2' && s.action === 'x = 0;' && s.values === 'x: 1 → 0'));
        });

        it('SARIF: a codeFlow with one threadFlow per thread and a global executionOrder (SARIF 2.1.0 §3.36-3.38)', async () => {
            const w = await unlockedAssertWitness();
            assert.equal(w.status, 'confirmed');
            if (w.status !== 'confirmed') return;
            const flows = witnessCodeFlows(w, f => f.replace(/^.*\//, ''));
            assert.equal(flows.length, 1);
            const flow = flows[0];
            assert.deepEqual(Object.keys(flow).sort(), ['message', 'threadFlows']);
            assert.deepEqual(flow.threadFlows.map(t => t.id).sort(), ['T1', 'T2']);
            const orders: number[] = [];
            for (const t of flow.threadFlows) {
                assert.deepEqual(Object.keys(t).sort(), ['id', 'locations', 'message']);
                for (const l of t.locations) {
                    assert.deepEqual(Object.keys(l).sort(), ['executionOrder', 'importance', 'location']);
                    assert.deepEqual(Object.keys(l.location).sort(), ['message', 'physicalLocation']);
                    assert.equal(l.location.physicalLocation.artifactLocation.uri, 'simple_lock_unlocked.calvin');
                    assert.ok(Number.isInteger(l.location.physicalLocation.region.startLine) && l.location.physicalLocation.region.startLine >= 1);
                    assert.ok(['important', 'essential'].includes(l.importance));
                    orders.push(l.executionOrder);
                }
                // within a thread, locations are in execution order
                const own = t.locations.map(l => l.executionOrder);
                assert.deepEqual(own, [...own].sort((a, b) => a - b));
            }
            assert.deepEqual(orders.sort((a, b) => a - b), w.steps.map((_, i) => i + 1));
        });
    });
});

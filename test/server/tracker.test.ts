// The check tracker and the scheduler of the language server's verification
// (server/src/verification), on their own: no server, no editor, no solver.
// The tracker is pure state over real check plans; the scheduler runs with
// mocked timers and a pool that records what it is given.
import { describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../language/src/index.js';
import { planChecks, type CheckPlan, type ProgramModel, type CheckResult } from '../../packages/verifier/src/index.js';
import { CheckTracker } from '../../server/src/verification/tracker.js';
import { CheckScheduler, type JobPool } from '../../server/src/verification/scheduler.js';

const URI = 'file:///ws/lock.calvin';

async function model(text: string): Promise<ProgramModel> {
    const { shared, Calvin } = createCalvinCoreServices();
    const res = await buildProgram(shared, [{ uri: URI, text }]);
    const doc = res.documents[0];
    assert.deepEqual((doc.diagnostics ?? []).filter(d => d.severity === 1).map(d => d.message), []);
    return toProgramModel(programOf(doc, shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem);
}

const LOCK = `class Mutex {
  //@ environment m == tid ==> m' == m;
  static volatile int m = 0;
  /*@ abstraction { step [m] m == 0 && m' == tid; } */
  static void acquire() { while (!cas(m, 0, tid)) { } }
  /*@ abstraction { requires m == tid; step [m] m' == 0; } */
  static void release() { m = 0; }
}
//@ environment Mutex.m == tid ==> x' == x;
int x = 0;
thread T1 { Mutex.acquire(); x = x + 1; Mutex.release(); }
thread T2 { Mutex.acquire(); x = 0; Mutex.release(); }
`;

function result(plan: CheckPlan, status: CheckResult['status'], line = 0): CheckResult {
    const r = { file: URI, startLine: line, startChar: 2, endLine: line, endChar: 3 };
    return {
        key: plan.key, name: plan.name, kind: plan.kind, range: plan.range, status, timeMs: 1, solverMs: 1, queries: 1,
        diagnostics: status === 'failed' ? [{ range: r, severity: 'error', code: 'race', message: 'race', related: [] }] : [],
        environment: [], invariant: [], inferredLoopInvariants: [], loopInvariants: [], accesses: [], envStar: '',
    };
}

const never = () => undefined;

describe('check tracker', () => {
    it('a first plan runs every check; the same plan again runs nothing and keeps the results', async () => {
        const m = await model(LOCK);
        const plans = planChecks(m, { timeLimitMs: 1000 });
        const t = new CheckTracker();
        const { program } = t.enter([URI]);
        const first = t.applyPlan(program, m, plans, never, 'run');
        assert.deepEqual(first.run.map(c => c.plan.key).sort(), plans.map(p => p.key).sort());
        for (const c of first.run) t.accept(c, result(c.plan, c.plan.name === 'T1' ? 'failed' : 'verified', 10), 'run');
        const again = t.applyPlan(program, m, planChecks(m, { timeLimitMs: 1000 }), never, 'run');
        assert.deepEqual([again.run, again.cancel, again.keep].map(x => x.length), [0, 0, 0]);
        assert.deepEqual(t.status(URI).checks.map(c => [c.name, c.state, c.cached]),
            [['initialization', 'verified', false], ['Mutex.acquire', 'verified', false], ['Mutex.release', 'verified', false], ['T1', 'failed', false], ['T2', 'verified', false]].filter(([n]) => plans.some(p => p.name === n)));
        assert.deepEqual(t.shownIn(URI, 'with').map(d => d.code), ['race']);
    });

    it('an edited thread runs alone; its running job is cancelled, a result from the cache is taken as it is', async () => {
        const m = await model(LOCK);
        const t = new CheckTracker();
        const { program } = t.enter([URI]);
        const first = t.applyPlan(program, m, planChecks(m, { timeLimitMs: 1000 }), never, 'run');
        first.run.forEach((c, i) => { c.job = { id: i + 1, fingerprint: c.plan.fingerprint, plan: c.plan }; });
        const edited = await model(LOCK.replace('Mutex.acquire(); x = 0;', 'Mutex.acquire(); x = 2;'));
        const plans = planChecks(edited, { timeLimitMs: 1000 });
        const d = t.applyPlan(program, edited, plans, never, 'run');
        assert.deepEqual(d.run.map(c => c.plan.name), ['T2']);
        assert.equal(d.cancel.length, 1);
        assert.equal(d.keep.length, plans.length - 1, 'the other jobs compute the right results still');
        // the same edit, planned again with T2's result in the cache
        const cached = t.applyPlan(program, edited, plans, p => (p.name === 'T2' ? result(p, 'verified') : undefined), 'run');
        assert.deepEqual(cached.run, []);
        const t2 = t.status(URI).checks.find(c => c.name === 'T2')!;
        assert.deepEqual(t2, { name: 'T2', key: 'thread:T2', kind: 'thread', range: t2.range, extent: t2.extent, state: 'verified', cached: true, timeMs: 1 });
        assert.ok(t2.extent, 'the thread\'s whole declaration (the gutter)');
    });

    it('with verifyOn = save, a changed check goes stale instead of running', async () => {
        const m = await model(LOCK);
        const t = new CheckTracker();
        const { program } = t.enter([URI]);
        const d = t.applyPlan(program, m, planChecks(m, { timeLimitMs: 1000 }), never, 'plan-only');
        assert.deepEqual(d.run, []);
        assert.ok(t.status(URI).checks.every(c => c.state === 'stale'));
    });

    it('shown diagnostics move with an edit until their check runs again; a deleted file takes its program along', async () => {
        const m = await model(LOCK);
        const t = new CheckTracker();
        const { program } = t.enter([URI, 'file:///ws/other.calvin']);
        const d = t.applyPlan(program, m, planChecks(m, { timeLimitMs: 1000 }), never, 'run');
        const t1 = d.run.find(c => c.plan.name === 'T1')!;
        t.accept(t1, result(t1.plan, 'failed', 10), 'run');
        t.edited(URI, { start: { line: 0, character: 0 }, oldEnd: { line: 0, character: 0 }, newEnd: { line: 2, character: 0 } });
        assert.deepEqual(t.shownIn(URI, 'with').map(x => x.range.start.line), [12]);
        d.run[0].job = { id: 7, fingerprint: d.run[0].plan.fingerprint, plan: d.run[0].plan };
        assert.deepEqual(t.deleted(URI), { others: ['file:///ws/other.calvin'], cancel: [7] });
        assert.equal(t.programOf('file:///ws/other.calvin'), undefined);
    });

    it('halting a program stops its checks (job ids to cancel) and may hide their diagnostics', async () => {
        const m = await model(LOCK);
        const t = new CheckTracker();
        const { program } = t.enter([URI]);
        const d = t.applyPlan(program, m, planChecks(m, { timeLimitMs: 1000 }), never, 'run');
        const t1 = d.run.find(c => c.plan.name === 'T1')!;
        t.accept(t1, result(t1.plan, 'failed', 10), 'run');
        d.run[1].job = { id: 3, fingerprint: '', plan: d.run[1].plan };
        assert.deepEqual(t.halt(program, 'stale', 'keep'), [3]);
        assert.equal(t.shownIn(URI, 'with').length, 1);
        t.halt(program, 'error', 'hide');
        assert.deepEqual(t.shownIn(URI, 'with'), []);
        assert.ok(t.status(URI).checks.every(c => c.state === 'error'));
    });
});

describe('check tracker: witness searches', () => {
    it('the searches for an older text of the program are stopped (and no longer pending); a dropped program stops its searches', async () => {
        const m = await model(LOCK);
        const t = new CheckTracker();
        const { program } = t.enter([URI]);
        const d = t.applyPlan(program, m, planChecks(m, { timeLimitMs: 1000 }), never, 'run');
        const [t1, t2] = [d.run.find(c => c.plan.name === 'T1')!, d.run.find(c => c.plan.name === 'T2')!];
        t.accept(t1, result(t1.plan, 'failed', 10), 'run');
        t.accept(t2, result(t2.plan, 'failed', 11), 'run');
        const done = { status: 'not-confirmed', bounds: { loops: 3, switches: 3, copies: 2 }, reason: 'r', timeMs: 1 } as const;
        Object.assign(t1, { witnessEdits: program.edits, witnessJobs: [21, 22], witnesses: new Map<string, unknown>([['a', 'pending'], ['b', done]]) });
        Object.assign(t2, { witnessEdits: program.edits, witnessJobs: [23], witnesses: new Map([['c', 'pending']]) });
        // the same text: the searches go on
        assert.deepEqual(t.staleWitnessJobs(program), []);
        t.edited(URI, { start: { line: 0, character: 0 }, oldEnd: { line: 0, character: 0 }, newEnd: { line: 1, character: 0 } });
        assert.deepEqual(t.staleWitnessJobs(program).sort(), [21, 22, 23]);
        assert.deepEqual([...t1.witnesses.keys()], ['b']);
        assert.deepEqual([...t2.witnesses.keys()], []);
        assert.deepEqual(t.staleWitnessJobs(program), [], 'once');
        t2.witnessJobs.push(24);
        assert.deepEqual(t.deleted(URI).cancel, [24]);
    });
});

class RecordingPool implements JobPool {
    readonly submitted: Array<{ key: string; priority: number }> = [];
    readonly cancelled: number[] = [];
    readonly moved: Array<[number, number]> = [];
    active: number[] = [];
    submit(job: { key: string; priority: number }) {
        this.submitted.push({ key: job.key, priority: job.priority });
        return { id: this.submitted.length, done: new Promise<never>(() => undefined) };
    }
    cancel(id: number) { this.cancelled.push(id); }
    reprioritize(id: number, priority: number) { this.moved.push([id, priority]); }
    resize() { /* nothing */ }
    dispose() { /* nothing */ }
}

describe('check scheduler', () => {
    it('plans once per quiet period after the last edit, with every document asked for; plans run one after another', async () => {
        mock.timers.enable({ apis: ['setTimeout', 'Date'] });
        try {
            const batches: string[][] = [];
            let release!: () => void;
            const s = new CheckScheduler({
                debounceMs: 200, makePool: () => new RecordingPool(), onError: e => { throw e; }, now: () => Date.now(),
                plan: async uris => { batches.push(uris); if (batches.length === 1) await new Promise<void>(r => { release = r; }); },
            });
            s.edited();
            mock.timers.tick(50);
            s.schedule(['a']); // (the front end's rebuild after the edit)
            mock.timers.tick(50);
            s.edited();
            s.schedule(['b']);
            assert.ok(s.waiting);
            mock.timers.tick(150);
            s.edited(); // a keystroke while waiting: the quiet period starts again
            mock.timers.tick(199);
            assert.deepEqual(batches, []);
            mock.timers.tick(1);
            await new Promise(r => setImmediate(r));
            assert.deepEqual(batches, [['a', 'b']]);
            s.edited();
            s.schedule(['c']);
            mock.timers.tick(200);
            await new Promise(r => setImmediate(r));
            assert.deepEqual(batches, [['a', 'b']], 'the second plan waits for the first');
            release();
            await new Promise(r => setImmediate(r));
            assert.deepEqual(batches, [['a', 'b'], ['c']]);
        } finally {
            mock.timers.reset();
        }
    });

    it('plans at once what no recent edit asked for (the first build, a save), and a late rebuild without waiting again', async () => {
        mock.timers.enable({ apis: ['setTimeout', 'Date'] });
        try {
            const batches: string[][] = [];
            const s = new CheckScheduler({ debounceMs: 200, makePool: () => new RecordingPool(), onError: e => { throw e; }, now: () => Date.now(), plan: async uris => { batches.push(uris); } });
            s.schedule(['a', 'b']);
            mock.timers.tick(0);
            await new Promise(r => setImmediate(r));
            assert.deepEqual(batches, [['a', 'b']]);
            s.edited();
            mock.timers.tick(150);
            s.schedule(['a']); // the rebuild ended 150 ms after the keystroke: 50 ms more
            mock.timers.tick(49);
            await new Promise(r => setImmediate(r));
            assert.equal(batches.length, 1);
            mock.timers.tick(1);
            await new Promise(r => setImmediate(r));
            assert.deepEqual(batches, [['a', 'b'], ['a']]);
            s.edited();
            mock.timers.tick(300);
            s.schedule(['b']); // a rebuild that took longer than the quiet period
            mock.timers.tick(0);
            await new Promise(r => setImmediate(r));
            assert.deepEqual(batches, [['a', 'b'], ['a'], ['b']]);
        } finally {
            mock.timers.reset();
        }
    });

    it('makes its pool when the first check runs, and forwards cancellation and priorities', () => {
        let made = 0;
        const pool = new RecordingPool();
        const s = new CheckScheduler({ debounceMs: 10, plan: async () => undefined, makePool: () => { made++; return pool; }, onError: () => undefined });
        s.cancel([1]);
        assert.equal(made, 0);
        const job = (key: string, priority: number) => ({ version: '1', model: {} as ProgramModel, key, name: key, kind: 'thread' as const, range: { file: URI, startLine: 0, startChar: 0, endLine: 0, endChar: 0 }, options: { timeLimitMs: 100 }, priority });
        const a = s.submit(job('a', 2));
        s.submit(job('b', 0));
        assert.equal(made, 1);
        s.reprioritize(a.id, 0);
        s.cancel([a.id]);
        assert.deepEqual(pool.submitted, [{ key: 'a', priority: 2 }, { key: 'b', priority: 0 }]);
        assert.deepEqual(pool.moved, [[1, 0]]);
        assert.deepEqual(pool.cancelled, [1]);
    });

    it('a failing plan is reported, and the next one runs', async () => {
        mock.timers.enable({ apis: ['setTimeout'] });
        try {
            const errors: unknown[] = [];
            const batches: string[][] = [];
            const s = new CheckScheduler({
                debounceMs: 5, makePool: () => new RecordingPool(), onError: e => errors.push(e),
                plan: async uris => { batches.push(uris); if (uris[0] === 'bad') throw new Error('boom'); },
            });
            s.schedule(['bad']);
            mock.timers.tick(5);
            await new Promise(r => setImmediate(r));
            s.schedule(['good']);
            mock.timers.tick(5);
            await new Promise(r => setImmediate(r));
            assert.deepEqual(batches, [['bad'], ['good']]);
            assert.equal(errors.length, 1);
        } finally {
            mock.timers.reset();
        }
    });
});

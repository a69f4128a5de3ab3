// Unit tests of the inference of protection (packages/verifier/src/infer/):
// the facts each thread knows at its writes, the guards they give, and the
// text inserted into a file. No solver: the checker's side is tested in
// test/corpus (inferred/) and test/verifier/infer-check.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { model } from '../util/model.js';
import { inferAnnotations } from '../../packages/verifier/src/infer/index.js';
import { withAnnotations } from '../../packages/verifier/src/infer/insert.js';
import { stripProtection } from '../util/strip.js';
import { EXAMPLES } from '../util/paths.js';


async function guards(text: string): Promise<Record<string, string>> {
    const inf = inferAnnotations(await model(text));
    return Object.fromEntries(inf.annotations.filter(a => a.kind === 'writable_if').map(a => [a.field, a.text]));
}

describe('inferred guards of the examples without their protection annotations', () => {
    const expected: Record<string, Record<string, string>> = {
        'simple_lock_ok.calvin': { x: 'Mutex.m == tid', 'Mutex.m': 'Mutex.m == 0 || Mutex.m == tid' },
        'simple_lock_unlocked.calvin': { x: 'tid == T1 || (tid == T2 && Mutex.m == tid)', 'Mutex.m': '(tid == T2 && Mutex.m == 0) || (tid == T2 && Mutex.m == tid)' },
        'producer_consumer_ok.calvin': {
            flag: '(tid == Producer && flag == 0) || (tid == Consumer && flag == 1)',
            data: 'tid == Producer && flag == 0',
            copy: 'tid == Consumer && flag == 1',
        },
        'producer_consumer_nowait.calvin': { flag: 'tid == Producer || tid == Consumer', data: 'tid == Producer', copy: 'tid == Consumer' },
        'time_varying_ok.calvin': { b: 'a.held == tid && c.held == tid', x: 'b ? c.held == tid : a.held == tid', 'Lock.held': 'this.held == 0 || this.held == tid' },
        'vector_ok.calvin': { 'Vector.elementCount': 'this.holder == tid', 'Vector.elementData': 'this.holder == tid' },
    };
    for (const [file, want] of Object.entries(expected)) {
        it(file, async () => {
            const text = stripProtection(fs.readFileSync(path.join(EXAMPLES, file), 'utf8'));
            assert.deepEqual(await guards(text), want);
        });
    }
});

describe('inference', () => {
    it('a flag hand-off: the facts after a spin loop hold at the writes while the other thread cannot write the flag', async () => {
        assert.deepEqual(await guards(`
volatile boolean ready = false;
int data = 0;
thread P { data = 42; ready = true; }
thread C { while (!ready) { } int d = data; }
`), { ready: 'tid == P && !ready', data: 'tid == P && !ready' });
    });

    it('a monitor: synchronized blocks on a global and synchronized methods give this.holder == tid', async () => {
        assert.deepEqual(await guards(`
class Counter { int n = 0; synchronized void inc() { n++; } }
final Counter c = new Counter();
final Counter d = new Counter();
thread A { c.inc(); synchronized (d) { d.n = 5; } }
thread B[*] { d.inc(); }
`), { 'Counter.n': 'this.holder == tid' });
    });

    it('a lock taken with cas(m, 0, tid) and inlined lock/unlock methods', async () => {
        assert.deepEqual(await guards(`
class Lock {
  volatile int owner = 0;
  void lock() { while (!cas(owner, 0, tid)) { } }
  void unlock() { owner = 0; }
}
final Lock lk = new Lock();
int count = 0;
thread W[*] { lk.lock(); count = count + 1; lk.unlock(); }
`), { count: 'lk.owner == tid', 'Lock.owner': 'this.owner == 0 || this.owner == tid' });
    });

    it('the lock value of cas(m, 0, 1) does not identify the holder: no protection', async () => {
        const inf = inferAnnotations(await model(`
volatile int locked = 0;
int count = 0;
thread A { while (!cas(locked, 0, 1)) { } count = count + 1; locked = 0; }
thread B { while (!cas(locked, 0, 1)) { } count = count + 1; locked = 0; }
`));
        assert.deepEqual(inf.annotations.find(a => a.field === 'count')?.text, 'tid == A || tid == B');
    });

    it('a replicated writer without facts leaves a field unprotected', async () => {
        const inf = inferAnnotations(await model(`
int hits = 0;
thread W[*] { hits = hits + 1; }
`));
        // (only the guess that the counter grows, which the racing increments refute in the checks)
        assert.deepEqual(inf.annotations.map(a => [a.kind, a.text]), [['environment', "hits <= hits'"]]);
        assert.deepEqual([...inf.unprotected.keys()], ['hits']);
    });

    it('a write inside atomic is said to be inside atomic, not "holding nothing" (it excludes only other atomic blocks)', async () => {
        const inf = inferAnnotations(await model(`
int x = 0;
int y = 0;
thread A[*] { atomic { x = x + 1; } y = y + 1; }
thread B { int r = x; }
`));
        const held = (field: string) => inf.program.unprotected?.find(u => u.field === field)?.sites.map(s => s.held);
        assert.deepEqual(held('x'), ['inside atomic']);
        assert.deepEqual(held('y'), ['holding nothing']);
    });

    it('what the user wrote wins: fields with a writable_if or an environment clause get nothing', async () => {
        assert.deepEqual(await guards(`
//@ environment m == tid ==> m' == m;
volatile int m = 0;
//@ writable_if m == tid;
int x = 0;
int y = 0;
thread T[*] { while (!cas(m, 0, tid)) { } x = 1; y = 2; m = 0; }
`), { y: 'm == tid' });
    });

    it('a write to an object private to the thread is no write the guard must allow (its publication is)', async () => {
        assert.deepEqual(await guards(`
class Msg { int seq = 0; }
volatile Msg box = null;
thread S { Msg m = new Msg(); m.seq = 1; box = m; }
thread R { Msg r = box; if (r != null) { synchronized (r) { r.seq = 3; } } }
`), { box: 'tid == S', 'Msg.seq': 'this.holder == tid' });
    });

    it('a refuted atom is not proposed again at that write', async () => {
        const text = `
volatile int flag = 0;
int data = 0;
thread P { while (flag != 0) { } data = 1; flag = 1; }
thread C { while (flag != 1) { } data = 2; flag = 0; }
`;
        const first = inferAnnotations(await model(text));
        const site = first.guards.get('data')!.sites.find(s => s.range.startLine === 3)!;
        const excluded = new Map([[`${site.range.file}:${site.range.startLine}:${site.range.startChar}`, new Set(['flag==0'])]]);
        const second = inferAnnotations(await model(text), { excluded });
        assert.equal(first.guards.get('data')!.text, '(tid == P && flag == 0) || (tid == C && flag == 1)');
        assert.equal(second.guards.get('data')!.text, 'tid == P || (tid == C && flag == 1)');
    });
});

describe('inserting inferred annotations into a file', () => {
    it('above the declaration with its indentation, or on a line of its own', () => {
        const text = 'class C { int n = 0; }\n  int x = 0;\n';
        const out = withAnnotations(text, [
            { kind: 'writable_if', field: 'C.n', text: 'this.holder == tid', before: { file: 'f', startLine: 0, startChar: 10, endLine: 0, endChar: 20 }, origin: '' },
            { kind: 'writable_if', field: 'x', text: 'tid == T', before: { file: 'f', startLine: 1, startChar: 2, endLine: 1, endChar: 12 }, origin: '' },
        ]);
        assert.equal(out, 'class C { \n  //@ writable_if this.holder == tid;\n  int n = 0; }\n  //@ writable_if tid == T;\n  int x = 0;\n');
    });

    it('above the annotation comment that declares a ghost field, never inside it', () => {
        const text = 'class R {\n    //@ ghost static int owner = 0;\n}\n';
        const out = withAnnotations(text, [
            { kind: 'writable_if', field: 'R.owner', text: 'tid == T', before: { file: 'f', startLine: 1, startChar: 14, endLine: 1, endChar: 34 }, origin: '' },
            { kind: 'environment', field: 'R.owner', text: "owner == tid ==> owner' == owner", before: { file: 'f', startLine: 1, startChar: 14, endLine: 1, endChar: 34 }, origin: '' },
        ]);
        assert.equal(out, "class R {\n    //@ environment owner == tid ==> owner' == owner;\n    //@ writable_if tid == T;\n    //@ ghost static int owner = 0;\n}\n");
    });
});

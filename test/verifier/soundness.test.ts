// Unit tests of the mechanisms behind issue 9 (verdicts users can trust):
// array ownership, publication per object, stable fields with known initial
// values, the state-dependent witness, and the messages of loop-invariant and
// abstraction failures. Programs are built by the real front end; the checks
// run the real Z3.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { model } from '../util/model.js';
import { arrayOwnership } from '../../packages/verifier/src/analysis/arrays.js';
import { programContext, checksOf } from '../../packages/verifier/src/driver/program-context.js';
import { lowerCheck } from '../../packages/verifier/src/driver/stages.js';
import type { Cmd, OpCmd } from '../../packages/verifier/src/il/il.js';
import { createBackend, diagnosticText, verifyProgram, type SolverBackend } from '../../packages/verifier/src/index.js';
import { ROOT } from '../util/paths.js';


describe('array ownership (analysis/arrays.ts)', () => {
    it('a field that only ever holds new arrays, read only to index, measure, compare, copy and pass to inlined methods, owns them', async () => {
        const o = arrayOwnership(await model(`
class V {
  int[] data = new int[4];
  void grow() { int[] b = new int[data.length * 2]; fill(data, b); data = b; }
  int get(int i) { int[] d = data; if (d == null) { return 0; } return d[i]; }
}
void fill(int[] from, int[] to) { for (int i = 0; i < from.length && i < to.length; i++) { to[i] = from[i]; } }
final V v = new V();
thread T { v.grow(); int x = v.get(0); }
`));
        assert.deepEqual([...o.owners], ['V.data']);
        assert.deepEqual([...o.elementWriters.get('V.data')!.ids], [1]);
    });
    for (const [what, decl, body, reason] of [
        ['a parameter stored into it', 'void set(int[] a) { data = a; }', 'v.set(new int[2]);', /not allocated for it/],
        ['its array returned', 'int[] get() { return data; }', 'int[] x = v.get();', /escapes: it is returned/],
        ['its array stored into another field', 'int[] other = null; void copy() { other = data; }', 'v.copy();', /escapes: it is stored into V.other/],
        ['a new array stored twice', 'int[] other = null; void twice() { int[] b = new int[2]; data = b; other = b; }', 'v.twice();', /also used elsewhere/],
        ['a new array stored in a loop', 'void loop() { int[] b = new int[2]; while (nondet()) { data = b; } }', 'v.loop();', /more than once/],
        ['its array passed to a method with an abstraction', '/*@ abstraction { step [] true; } */ void use(int[] a) { int k = a.length; } void go() { use(data); }', 'v.go();', /has an abstraction/],
        ['its array chosen by a conditional', 'void pick(boolean c) { int[] a = c ? data : null; }', 'v.pick(true);', /conditional/],
    ] as const) {
        it(`does not own its arrays when ${what}`, async () => {
            const o = arrayOwnership(await model(`
class V {
  int[] data = new int[4];
  ${decl}
}
final V v = new V();
thread T { ${body} }
`));
            assert.ok(!o.owners.has('V.data'));
            assert.match(o.notOwned.get('V.data')!, reason);
        });
    }
    it('the threads that write the elements, through the field, a copy or an inlined parameter; a replicated writer is anyone', async () => {
        const o = arrayOwnership(await model(`
final int[] A = new int[2];
final int[] B = new int[2];
final int[] C = new int[2];
void zero(int[] a) { a[0] = 0; }
thread T1 { A[0] = 1; int[] c = B; c[1] = 2; }
thread T2 { zero(B); int k = C[0]; }
thread R[*] { C[1] = 3; }
`));
        assert.deepEqual([...o.elementWriters.get('A')!.ids], [1]);
        assert.deepEqual([...o.elementWriters.get('B')!.ids].sort(), [1, 2]);
        assert.equal(o.elementWriters.get('C')!.any, true);
    });
});

describe('lowering: publication per object', () => {
    const ops = (cmds: Cmd[]): Array<{ label?: string; body: OpCmd[] }> => {
        const out: Array<{ label?: string; body: OpCmd[] }> = [];
        const walk = (cs: Cmd[]) => {
            for (const c of cs) {
                if (c.k === 'op') out.push(c.op);
                else if (c.k === 'if') { walk(c.then); walk(c.else); } else if (c.k === 'loop' || c.k === 'scope') walk(c.body);
            }
        };
        walk(cmds);
        return out;
    };
    it('storing into a private object links the value; storing into a shared location publishes it and the linked objects', async () => {
        const m = await model(`
class N { N next = null; }
N head = null;
thread T { N a = new N(); N b = new N(); a.next = b; head = a; }
`);
        const ctx = programContext(m);
        const t = lowerCheck(ctx, checksOf(ctx).find(u => u.kind === 'thread')!);
        const writes = ops(t.body).filter(o => o.label?.startsWith('write of'));
        const text = (b: OpCmd[]) => JSON.stringify(b, (_, v) => (typeof v === 'bigint' ? String(v) : v));
        // a.next = b: publishes only when a is shared, links b otherwise
        assert.match(text(writes[0].body), /"map":"linked"/);
        // head = a: publishes a and the linked objects
        assert.match(text(writes[1].body), /"map":"owner"/);
        assert.match(text(writes[1].body), /linked/);
    });
});

describe('checks with the real Z3', () => {
    let solver: SolverBackend;
    before(() => { solver = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await solver?.dispose(); });
    const check = async (text: string) => verifyProgram(await model(text), { solver });
    const errors = (r: Awaited<ReturnType<typeof check>>) => r.diagnostics.filter(d => d.severity !== 'info').map(d => `${d.range.startLine + 1}:${d.code}`).sort();

    it('a loop invariant that fails on entry and one that is not preserved say which', async () => {
        const r = await check(`
int n = 0;
thread T {
  int i = 5;
  //@ loop_invariant i >= 6;
  while (i < 10) { i = i + 1; }
  int k = 0;
  //@ loop_invariant k % 2 == 0;
  while (k < 10) { k = k + 1; }
}
`);
        assert.deepEqual(errors(r), ['5:loop-invariant', '8:loop-invariant']);
        const [entry, preserve] = r.diagnostics.filter(d => d.code === 'loop-invariant').sort((a, b) => a.range.startLine - b.range.startLine);
        assert.match(diagnosticText(entry), /^loop invariant 'i >= 6' may not hold when the loop is entered \[i = 5\]/);
        assert.match(diagnosticText(preserve), /^loop invariant 'k % 2 == 0' may not be preserved by an iteration of the loop \[k = -?\d+\]/);
    });

    it('a violated writable_if shows the thread and the holder of the monitor, by name', async () => {
        const r = await check(`
class Acc {
  //@ writable_if this.holder == tid;
  int bal = 0;
}
final Acc a = new Acc();
thread Teller { a.bal = 5; }
thread Audit { synchronized (a) { int b = a.bal; } }
`);
        const d = r.diagnostics.find(x => x.code === 'race' && x.message.includes('violates'))!;
        assert.match(diagnosticText(d), /tid = 1 \(Teller\)/);
        assert.match(diagnosticText(d), /a\.holder = (0 \(free\)|2 \(Audit\)|[3-9]\d*\b)/); // (a holder that is no thread of the program is shown as a number)
    });

    it('a read while a step that changes nothing holds observes it: the method returns having taken it, with no `witness step`', async () => {
        const r = await check(`
//@ environment ready ==> ready';
//@ writable_if tid == S;
volatile boolean ready = false;
/*@ abstraction { requires ready; step [] ready; } */
void peek() { boolean r = ready; }
thread S { ready = true; }
thread W { while (!ready) { } peek(); }
`);
        assert.deepEqual(errors(r), []);
        // a path with no operation at all takes no step: the hint names the step that never happened
        const none = await check(`
//@ environment ready ==> ready';
//@ writable_if tid == S;
volatile boolean ready = false;
/*@ abstraction { requires ready; step [] ready; } */
void peek() { int r = 0; }
thread S { ready = true; }
thread W { while (!ready) { } peek(); }
`);
        assert.deepEqual(errors(none), ['6:abstraction']);
        assert.match(diagnosticText(none.diagnostics.find(d => d.code === 'abstraction')!), /step 1 \('ready'\) never happened/);
    });

    it('a read observes any step that allows "nothing changes", whatever its frame; a step that must change is not observed', async () => {
        const r = await check(`
//@ writable_if tid == T;
int x = 0;
/*@ abstraction { step [x] x' == x; } */
void same() { int k = x; }
/*@ abstraction { step [x] true; } */
void any() { int k = x; }
/*@ abstraction { step [x] x' == x + 1; } */
void inc() { int k = x; }
thread T { same(); any(); inc(); }
`);
        assert.deepEqual(errors(r), ['9:abstraction']);
        const text = (line: number) => diagnosticText(r.diagnostics.find(d => d.range.startLine + 1 === line)!);
        // a step that must change x: no statement that only reads can perform it
        assert.doesNotMatch(text(9), /witness/);
    });

    it('a failing ensures shows \\result and the parameters; a step the abstraction does not allow shows the locations before and after', async () => {
        const r = await check(`
//@ writable_if tid == T;
int x = 0;
//@ writable_if tid == T;
int y = 0;
/*@ ensures \\result == v + 1; */
int next(int v) { return v + 2; }
/*@ abstraction { step [x] x' == y; } */
void copy() { y = 3; x = y; }
thread T { int r = next(4); copy(); }
`);
        assert.deepEqual(errors(r), ['7:abstraction', '9:abstraction']);
        const text = (line: number) => diagnosticText(r.diagnostics.find(d => d.range.startLine + 1 === line)!);
        assert.match(text(7), /^the postcondition '\\result == v \+ 1' of 'next' may not hold when it returns here \[/);
        const value = (name: string) => Number(new RegExp(`[[ ]${name.replace(/\\/g, '\\\\')} = (-?\\d+)`).exec(text(7))?.[1]);
        assert.equal(value('\\result'), value('v') + 2);
        // the write of y (outside the frame [x]): y before and after, and x, which the step's predicate reads
        assert.match(text(9), /^the write of y is not a step the abstraction of 'copy' allows here \(its steps: 1: x' == y\) \[pc = 1, y before = -?\d+, y = 3, x before = -?\d+, x = -?\d+/);
    });

    it('a table a global\'s initializer builds is read without races; the method it calls is checked there, not reported unchecked', async () => {
        const r = await check(`
int[] mk() {
  int[] a = new int[2];
  a[0] = 5;
  return a;
}
int[] unused() { return null; }
final int[] data = mk();
//@ invariant data != null && data.length == 2;
thread R[*] { int x = data[0]; }
`);
        // (no thread writes int elements: they keep the values the initializers gave them)
        assert.deepEqual(errors(r), []);
        assert.deepEqual(r.diagnostics.filter(d => d.code === 'unchecked').map(d => d.message.split(':')[0]), ["'unused' is not checked"]);
        // the same write in a thread makes the elements' reads races
        const w = await check(`
final int[] data = new int[2];
thread W { data[0] = 5; }
thread R[*] { int x = data[0]; }
`);
        assert.deepEqual(errors(w), ['4:race']);
    });

    it('a write in a method with only requires/ensures says that they make an abstraction without steps', async () => {
        const r = await check(`
//@ writable_if tid == T;
int count = 0;
//@ ensures count == \\old(count) + 1;
void bump() { count = count + 1; }
/*@ abstraction { ensures count == \\old(count) + 1; } */
void bump2() { count = count + 1; }
thread T { bump(); bump2(); }
`);
        assert.deepEqual(errors(r), ['5:abstraction', '7:abstraction']);
        const text = (line: number) => diagnosticText(r.diagnostics.find(d => d.range.startLine + 1 === line)!);
        assert.match(text(5), /^the write of count changes shared state, but the abstraction of 'bump' allows no step \(requires\/ensures alone make an abstraction without steps: write an `abstraction \{ \.\.\. step \[\.\.\.\] \.\.\.; \}` that says how it changes shared state\) \[/);
        // an abstraction block written without steps: the message does not explain what was written
        assert.match(text(7), /^the write of count changes shared state, but the abstraction of 'bump2' allows no step \[/);
    });

    it('a class invariant broken at publication shows the published object\'s locations', async () => {
        const r = await check(`
class Node {
  //@ invariant v > 0;
  int v = 1;
}
Node head = null;
thread T { Node n = new Node(); n.v = -4; head = n; }
`);
        assert.deepEqual(errors(r), ['7:invariant']);
        assert.match(diagnosticText(r.diagnostics.find(d => d.code === 'invariant')!), /^the write of head may break the invariant 'v > 0' \[.*n\.v = -4/);
    });

    it("a race on a location the user's environment clause frames names the clause, not 'no environment clause'", async () => {
        const r = await check(`
//@ environment slot == tid ==> slot' == slot;
int slot = 0;
thread Taker[*] { if (cas(slot, 0, tid)) { int s = slot; } }
thread Thief { if (slot == 0) { slot = tid; } }
`);
        assert.deepEqual(errors(r), ['5:race', '5:race']);
        for (const d of r.diagnostics.filter(x => x.code === 'race')) {
            assert.match(d.message, /may race: another thread may write it here \(the environment clause 'slot == tid ==> slot' == slot' does not keep it stable here\)$/);
        }
    });

    it('a guard broken by a reference that is not null shows that it is not null', async () => {
        const r = await check(`
class Config { final int port = 80; }
class Lazy {
  //@ writable_if this.holder == tid && inst == null;
  volatile Config inst = null;
  void init() { synchronized (this) { inst = new Config(); } }
}
final Lazy lazy = new Lazy();
thread Client[*] { lazy.init(); }
`);
        const d = r.diagnostics.find(x => x.code === 'race')!;
        assert.match(diagnosticText(d), /violates its writable_if 'this\.holder == tid && inst == null' \[tid = \d+, lazy\.holder = \d+, lazy\.inst = not null\]$/);
    });

    it('x++ on a racy field reports its read and its write, as x = x + 1 does', async () => {
        const r = await check(`
int count = 0;
thread A { count++; }
thread B { count = count + 1; }
`);
        const races = r.diagnostics.filter(d => d.code === 'race').map(d => `${d.range.startLine + 1}:${d.range.startChar}:${d.message.split(' ')[0]}`).sort();
        assert.deepEqual(races, ['3:11:read', '3:11:write', '4:11:write', '4:19:read']);
        // apart: the read's range is the whole statement, the write's the location
        const [read, write] = ['read', 'write'].map(k => r.diagnostics.find(d => d.range.startLine === 2 && d.message.startsWith(k))!);
        assert.ok(read.range.endChar > write.range.endChar);
    });

    it('a statement that writes is the next step when it satisfies it: a failed try of tryLock is its step, and a stutter of lock', async () => {
        const r = await check(`
class L {
  //@ environment m == tid ==> m' == m;
  //@ environment m != tid ==> m' != tid;
  static volatile int m = 0;
  /*@ abstraction { requires m != tid; step [m] (m == 0 && m' == tid) || m' == m; ensures \\result == (m == tid); } */
  static boolean tryLock() { return cas(m, 0, tid); }
  /*@ abstraction { requires m != tid; step [m] m == 0 && m' == tid; } */
  static void lock() { while (!L.tryLock()) { } }
}
thread T { L.lock(); }
`);
        assert.deepEqual(errors(r), []);
        assert.ok(r.checks.every(u => u.status === 'verified'), r.checks.map(u => `${u.name}:${u.status}`).join(' '));
    });
});

// The concrete interpreter of the witness search (issue 14): the ground truth
// every witness is replayed on. Its semantics is the checker's atomicity
// (language.md §3): one step per shared read or write, cas, atomic blocks and
// monitor enter/exit as single steps, reentrant monitors, blocking assumes.
// No solver here: schedules are written by hand, and a schedule that does not
// reach the failure it claims is rejected.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { boundedProgram } from '../../packages/verifier/src/witness/program.js';
import { Machine, type Point } from '../../packages/verifier/src/witness/machine.js';
import { SymProgram, type SymEvent } from '../../packages/verifier/src/witness/symbolic.js';
import { replay } from '../../packages/verifier/src/witness/replay.js';
import { DEFAULT_BOUNDS } from '../../packages/verifier/src/witness/types.js';
import { programOfText } from './util.js';

async function machineOf(text: string) {
    const program = await programOfText(text);
    const bp = boundedProgram(program, DEFAULT_BOUNDS);
    const init = Machine.initial(bp);
    return { bp, init, m: new Machine(bp, init.heap), vocab: bp.ctx.vocab };
}

const thread = (bp: ReturnType<typeof boundedProgram>, name: string) => bp.threads.findIndex(t => t.name === name);
const opLabel = (p: Point) => (p.k === 'op' ? p.op.label : p.k);

describe('witness interpreter (issue 14)', () => {
    it('runs the field initializers: constants, objects, arrays of default elements', async () => {
        const { init, vocab } = await machineOf(`
class C { int f = 7; int[] a = new int[3]; }
int x = 2 + 3;
final C c = new C();
thread T { }
`);
        assert.equal(init.heap.get(vocab.varOfField('x'), []), 5n);
        const c = init.heap.get(vocab.varOfField('c'), []) as bigint;
        assert.ok(c > 0n);
        assert.equal(init.heap.get(vocab.varOfField('C.f'), [c]), 7n);
        const a = init.heap.get(vocab.varOfField('C.a'), [c]) as bigint;
        assert.equal(init.heap.len.get(a), 3n);
        assert.equal(init.heap.get('e:Int', [a, 2n]), 0n);
    });

    it('x++ is a read and a write: an interleaving loses an update', async () => {
        const { bp, m, vocab } = await machineOf(`
int x = 0;
thread A { x++; }
thread B { x++; }
`);
        const [a, b] = [thread(bp, 'A'), thread(bp, 'B')];
        assert.equal(opLabel(m.pending(a)), 'read of x');
        for (const t of [a, b, a, b]) assert.equal(m.step(t).status, 'ok');
        assert.equal(m.heap.get(vocab.varOfField('x'), []), 1n);
        assert.equal(m.pending(a).k, 'end');
    });

    it('cas is one step; a monitor blocks another thread and is reentrant for its holder', async () => {
        const { bp, m, vocab } = await machineOf(`
class L {
  int n = 0;
  synchronized void outer() { inner(); }
  synchronized void inner() { n = n + 1; }
}
final L l = new L();
volatile int flag = 0;
thread A { boolean ok = cas(flag, 0, 1); l.outer(); }
thread B { boolean ok = cas(flag, 0, 2); l.inner(); }
`);
        const [a, b] = [thread(bp, 'A'), thread(bp, 'B')];
        assert.equal(m.step(a).status, 'ok'); // cas succeeds
        assert.equal(m.step(b).status, 'ok'); // cas fails
        assert.equal(m.heap.get(vocab.varOfField('flag'), []), 1n);
        // the null check of the receiver is a point of its own
        const skipChecks = (t: number) => { while (m.pending(t).k === 'check') assert.equal(m.step(t).status, 'ok'); };
        skipChecks(a);
        const enter = m.step(a);
        assert.equal(opLabel(enter.point), 'monitor enter');
        skipChecks(a);
        assert.equal(opLabel(m.pending(a)), 'monitor enter');
        assert.equal(m.step(a).status, 'ok'); // reentrant enter of inner()
        skipChecks(b);
        assert.equal(opLabel(m.pending(b)), 'monitor enter');
        assert.equal(m.step(b).status, 'blocked'); // A holds l
        while (m.pending(a).k !== 'end') assert.equal(m.step(a).status, 'ok');
        assert.equal(m.step(b).status, 'ok');
        while (m.pending(b).k !== 'end') assert.equal(m.step(b).status, 'ok');
        const l = m.heap.get(vocab.varOfField('l'), []) as bigint;
        assert.equal(m.heap.get(vocab.varOfField('L.n'), [l]), 2n);
        assert.equal(m.heap.get('holder', [l]), 0n);
    });

    it('an atomic block with an assume waits until it holds', async () => {
        const { bp, m } = await machineOf(`
int lock = 0;
thread A { atomic { /*@ assume lock == 0; */ lock = tid; } }
thread B { atomic { /*@ assume lock == 0; */ lock = tid; } }
`);
        const [a, b] = [thread(bp, 'A'), thread(bp, 'B')];
        assert.equal(m.step(a).status, 'ok');
        assert.equal(m.step(b).status, 'blocked');
    });

    it('a failed check stops the thread with the check; the values it names are shown', async () => {
        const { bp, m } = await machineOf(`
int[] a = new int[2];
thread T { int i = 2; a[i] = 1; }
`);
        const t = thread(bp, 'T');
        assert.equal(opLabel(m.pending(t)), 'read of a');
        assert.equal(m.step(t).status, 'ok');
        const s = m.step(t);
        assert.equal(s.status, 'failed');
        assert.equal(s.failed?.code, 'bounds');
        assert.deepEqual(s.shown?.map(x => `${x.name}=${x.value}`), ['index=2', 'length=2']);
    });

    it('follows the simulation of a method by its abstraction', async () => {
        const { bp, m } = await machineOf(`
volatile int hits = 0;
/*@ abstraction { step [hits] hits' == hits + 1; } */
void recordHit() { atomic { hits = hits + 2; } }
thread T { recordHit(); }
`);
        const t = thread(bp, 'T');
        assert.equal(m.pending(t).k, 'call');
        m.step(t);
        assert.equal(m.step(t).status, 'ok'); // the atomic block: neither the step nor a stutter
        assert.equal(m.simulationFailures.length, 1);
        assert.equal(m.simulationFailures[0].call.body.method.name, 'recordHit');
    });

    it('replay accepts a schedule that reaches the failure and rejects one that does not', async () => {
        const program = await programOfText(`
int x = 0;
thread T1 { x++; assert x > 0; }
thread T2 { x = -5; }
`);
        const bp = boundedProgram(program, DEFAULT_BOUNDS);
        const init = Machine.initial(bp);
        const sp = new SymProgram(bp, init.heap);
        const ev = (t: string, label: string) => sp.events.find(e => e.thread.name === t && (e.point.k === 'op' ? e.point.op.label : e.point.k) === label)!;
        const check = sp.events.find(e => e.thread.name === 'T1' && e.point.k === 'check')!;
        const assertion = check.asserts[0];
        const cand = { kind: 'check' as const, event: check, assert: assertion };
        const [r1, w1, r2] = sp.byThread[0].filter(e => e.point.k === 'op');
        const w2 = ev('T2', 'write of x');
        const run = (events: SymEvent[]) => replay(bp, init, { events, nondet: [[], []] }, cand, () => undefined);
        // T1 increments, T2 stores -5, T1 reads it: the assertion fails
        const good = run([r1, w1, w2, r2, check]);
        assert.ok(good.ok, good.ok ? '' : good.why);
        if (good.ok) assert.deepEqual(good.steps.map(s => `${s.thread}:${s.line}:${s.values}`), ['T1:3:x: 0', 'T1:3:x: 0 → 1', 'T2:4:x: 1 → -5', 'T1:3:x: -5', 'T1:3:']);
        // without T2's write the assertion holds: the schedule does not reach the failure
        const bad = run([r1, w1, r2, check]);
        assert.equal(bad.ok, false);
        // a schedule that skips T1's read does not follow the program
        const wrong = run([w1, check]);
        assert.equal(wrong.ok, false);
        if (!wrong.ok) assert.match(wrong.why, /not where the trace goes next/);
    });
});

describe('lowering option inlineBodies (the real program)', () => {
    const text = `
class Mutex {
  static volatile int m = 0;
  /*@ abstraction { step [m] m == 0 && m' == tid; } */
  static void acquire() { while (!cas(m, 0, tid)) { } }
  /*@ abstraction { requires m == tid; step [m] m' == 0; } */
  static void release() { m = 0; }
}
/*@ abstraction { requires n >= 0; stutter [] true; } */
void down(int n) { if (n > 0) { down(n - 1); } }
thread T { Mutex.acquire(); Mutex.release(); down(5); }
`;
    const kinds = (cmds: import('../../packages/verifier/src/il/il.js').Cmd[], out: string[] = []): string[] => {
        for (const c of cmds) {
            if (c.k === 'op') out.push(c.op.kind);
            else if (c.k === 'checkState' || c.k === 'assumeLocal') out.push(c.k);
            else if (c.k === 'if') { kinds(c.then, out); kinds(c.else, out); }
            else if (c.k === 'loop' || c.k === 'scope') kinds(c.body, out);
        }
        return out;
    };

    it('is off by default: calls to methods with an abstraction become its steps', async () => {
        const program = await programOfText(text);
        const { Lowerer } = await import('../../packages/verifier/src/lower/lower.js');
        const { programContext } = await import('../../packages/verifier/src/driver/program-context.js');
        const T = await import('../../packages/verifier/src/smt/term.js');
        const body = new Lowerer(programContext(program).vocab, { kind: 'thread', tid: T.int(1) }).lowerThread(program.threads[0].body);
        const k = kinds(body);
        assert.ok(k.includes('step'));
        assert.ok(!k.includes('cas'));
    });

    it('inlines the real bodies, checks requires at the call, and cuts recursion at the depth bound', async () => {
        const program = await programOfText(text);
        const bp = boundedProgram(program, { ...DEFAULT_BOUNDS, inlineDepth: 3 });
        const k = kinds(bp.threads[0].body);
        assert.ok(!k.includes('step') && !k.includes('stutter'));
        assert.ok(k.includes('cas') && k.includes('write'));
        assert.equal(k.filter(x => x === 'checkState').length, 1 + 3); // release's requires, down's at each inlined level
        assert.equal(k.filter(x => x === 'assumeLocal').length, 1); // the fourth nested call is beyond the bound
        assert.deepEqual([...bp.inlined.values()].map(b => b.method.name), ['acquire', 'release', 'down', 'down', 'down']);
    });
});

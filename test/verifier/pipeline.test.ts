// Unit tests of the verifier's pipeline stages (issue 3), on small programs
// built by the real front end; the solver stages run the real Z3 (WebAssembly
// worker): lowering, heap model, specifications, E* closure, the
// simulation-checking program, VCs, the solver loop, findings.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { model } from '../util/model.js';
import type { ProgramModel } from '../../packages/verifier/src/model/program.js';
import { heapFacts, Vocabulary } from '../../packages/verifier/src/heap/vocabulary.js';
import { Lowerer } from '../../packages/verifier/src/lower/lower.js';
import type { AtomicOp, Cmd } from '../../packages/verifier/src/il/il.js';
import { threadReach } from '../../packages/verifier/src/analysis/reach.js';
import { allInvariants, environmentOf, existsOtherThread, TID } from '../../packages/verifier/src/spec/environment.js';
import { checksOf, programContext } from '../../packages/verifier/src/driver/program-context.js';
import { verifyCheck } from '../../packages/verifier/src/driver/verify.js';
import * as T from '../../packages/verifier/src/smt/term.js';
import type { Term } from '../../packages/verifier/src/smt/term.js';
import { Formulas } from '../../packages/verifier/src/encode/formulas.js';
import { closure } from '../../packages/verifier/src/closure/closure.js';
import { createBackend, diagnosticText, verifyProgram, type SolverBackend, type SolverSession } from '../../packages/verifier/src/index.js';
import type { DebuggableSession } from '../../packages/verifier/src/solver-host/index.js';
import { EXAMPLES, ROOT } from '../util/paths.js';
import { inferAnnotations } from '../../packages/verifier/src/infer/index.js';


const LOCK = `
class Mutex {
  //@ environment m == tid ==> m' == m;
  static volatile int m = 0;
  /*@ abstraction { step [m] m == 0 && m' == tid; } */
  static void acquire() { while (!cas(m, 0, tid)) { } }
  /*@ abstraction { requires m == tid; step [m] m' == 0; } */
  static void release() { m = 0; }
}
/*@ environment Mutex.m == tid ==> x' == x;
    invariant Mutex.m == 0 ==> x >= 0; */
int x = 0;
thread T1 { Mutex.acquire(); x++; assert x > 0; Mutex.release(); }
thread T2 { Mutex.acquire(); x = 0; Mutex.release(); }
`;

const VECTOR = `
class Vector {
  //@ writable_if this.holder == tid;
  int count = 0;
  //@ writable_if this.holder == tid;
  int[] data = new int[4];
  //@ invariant this.holder == 0 ==> (data != null && 0 <= count && count <= data.length);
  synchronized int last() {
    for (int i = count - 1; i >= 0; i--) { if (data[i] == 7) { return i; } }
    return -1;
  }
  synchronized void clear() { count = 0; data = new int[4]; }
}
final Vector v = new Vector();
thread Reader[*] { int k = v.last(); }
thread Clearer { v.clear(); }
`;

function ops(cmds: Cmd[], out: AtomicOp[] = []): AtomicOp[] {
    for (const c of cmds) {
        if (c.k === 'op') out.push(c.op);
        else if (c.k === 'if') { ops(c.then, out); ops(c.else, out); }
        else if (c.k === 'loop' || c.k === 'scope') ops(c.body, out);
    }
    return out;
}

function lowerThread(m: ProgramModel, name: string): AtomicOp[] {
    const lower = new Lowerer(new Vocabulary(m), { kind: 'thread', tid: TID });
    return ops(lower.lowerThread(m.threads.find(t => t.name === name)!.body));
}

describe('stage 1: lowering to atomic operations', () => {
    it('x++ is a read and a write (two steps); calls with an abstraction become their steps', async () => {
        assert.deepEqual(lowerThread(await model(LOCK), 'T1').map(o => o.kind), ['step', 'read', 'write', 'read', 'step']);
    });
    it('a synchronized method is inlined between monitor enter and exit; a final field is read without a step', async () => {
        const kinds = lowerThread(await model(VECTOR), 'Reader').map(o => o.kind);
        assert.equal(kinds[0], 'enter');
        assert.ok(kinds.includes('exit'));
        // `v` is final: no read step for it; count, data and data[i] are read in steps
        assert.equal(kinds.filter(k => k === 'read').length, 3);
    });
    it('implicit checks are asserted preconditions of the step that needs them', async () => {
        const read = lowerThread(await model(VECTOR), 'Reader').find(o => o.accesses.some(a => a.loc.kind === 'elem'))!;
        const codes = read.body.filter(c => c.k === 'assert').map(c => (c as { check: { code: string } }).check.code);
        assert.deepEqual(codes, ['null', 'bounds']);
    });
    it('an atomic block is one step with a blocking assume; cas is one step', async () => {
        const m = await model(`volatile int m = 0;\nthread A { atomic { //@ assume m == 0;\n m = tid; } }\nthread B { boolean ok = cas(m, 0, tid); }\n`);
        const a = lowerThread(m, 'A');
        assert.equal(a.length, 1);
        assert.equal(a[0].kind, 'atomic');
        assert.equal(a[0].blocking, 1);
        assert.deepEqual(lowerThread(m, 'B').map(o => o.kind), ['cas']);
    });
});

describe('stage 2: heap model', () => {
    it('a program without objects has only its globals', async () => {
        const vocab = new Vocabulary(await model(LOCK));
        assert.deepEqual(vocab.allVars().map(v => v.name).sort(), ['g:Mutex.m', 'g:x']);
    });
    it('objects bring allocation, ownership and monitors; arrays their elements; fields are maps keyed by objects', async () => {
        const vocab = new Vocabulary(await model(VECTOR));
        for (const v of ['holder', 'alloc', 'owner', 'e:Int', 'f:Vector.count', 'f:Vector.data', 'g:v']) assert.ok(vocab.has(v), v);
        assert.deepEqual(vocab.stateVar('e:Int').keys, ['Ref', 'Int']);
        assert.deepEqual(vocab.stateVar('f:Vector.count').keys, ['Ref']);
    });
    it('a final global initialized with new is a published, non-null object', async () => {
        const vocab = new Vocabulary(await model(VECTOR));
        const facts = heapFacts(vocab, undefined).map(T.toSmt).join(' ');
        assert.match(facts, /\(and \(alloc \|g:v\|\) \(= \(owner \|g:v\|\) 0\) \(= \(dtype \|g:v\|\) 1\)\)/);
        assert.ok(!facts.includes('(= |g:v| null)'), facts);
    });
});

describe('stage 3: specifications', () => {
    it('E(T1) has the environment clauses, with their origins, and the derived writable_if conjuncts', async () => {
        const m = await model(LOCK);
        const spec = programContext(m).spec;
        const reach = threadReach(m, m.threads[0]);
        const env = environmentOf(spec, new Set(['Mutex']), true, new Set([...reach.fields, 'Mutex.m']));
        const entries = env.map(c => `${c.text} (${c.origin})`);
        assert.ok(entries.includes("m == tid ==> m' == m (environment of class Mutex)"), entries.join(' | '));
        assert.ok(entries.includes("Mutex.m == tid ==> x' == x (environment of the program)"), entries.join(' | '));
        // x is written by T1 and T2 only: inferred protection
        assert.ok(entries.some(e => e.startsWith("x' != x ==>") && e.includes('inferred protection of x')), entries.join(' | '));
    });
    it('environment clauses of the form A ==> e\' == e are frames (no residual relation)', async () => {
        const m = await model(LOCK);
        const env = environmentOf(programContext(m).spec, new Set(['Mutex']), true, new Set(['x']));
        for (const c of env.filter(c => c.kind === 'env')) {
            assert.equal(c.residual, undefined, c.text);
            assert.equal(c.frames.length, 1, c.text);
        }
    });
    it('the other thread in a guard is eliminated when the guard names it (o.holder == j)', () => {
        const h = T.read('holder', [T.v('o', 'Ref')], 'Int');
        const t = existsOtherThread(TID, j => T.eq(h, j));
        assert.ok(!T.hasQuantifier(t), T.toSmt(t));
        assert.equal(T.toSmt(t), '(and (> (holder o) 0) (not (= (holder o) tid)))');
    });
    it('a class invariant holds for every published object of its class', async () => {
        const inv = allInvariants(new Vocabulary(await model(VECTOR)));
        assert.equal(inv.length, 1);
        assert.equal(inv[0].className, 'Vector');
        assert.match(T.toSmt(inv[0].term), /^\(forall \(\(o!inv Ref\)\) \(=> \(and \(alloc o!inv\)/);
    });
});

describe('stage 6: verification conditions are quantifier-free', () => {
    it('quantifiers over objects: instantiated where assumed, skolemized where checked', () => {
        const vocab = new Vocabulary({ files: [], classes: [], globals: [], procedures: [], threads: [], invariants: [], environments: [] });
        const f = new Formulas(vocab);
        const o = T.v('o', 'Ref');
        const body = T.cmp('>=', T.call('g', 'Int', o), T.int(0));
        const all = T.forall([{ name: 'o', sort: 'Ref', type: 'C:A' }], body);
        const ground = new Map([['C:A', [T.v('a1', 'Ref'), T.v('a2', 'Ref')]]]);
        assert.equal(T.toSmt(f.ground(all, 'assume', ground)), '(and (>= (g a1) 0) (>= (g a2) 0))');
        const checked = T.toSmt(f.ground(all, 'assert', ground));
        assert.match(checked, /^\(>= \(g o!\d+\) 0\)$/);
        // an existential in a check: some object in scope
        assert.equal(T.toSmt(f.ground(T.exists([{ name: 'o', sort: 'Ref', type: 'C:A' }], body), 'assert', ground)), '(or (>= (g a1) 0) (>= (g a2) 0))');
    });
    it('a universal assumed before a check is instantiated at the object checked (late instances)', () => {
        const vocab = new Vocabulary({ files: [], classes: [], globals: [], procedures: [], threads: [], invariants: [], environments: [] });
        const f = new Formulas(vocab);
        f.lateInstances = true;
        const o = T.v('o', 'Ref');
        const g = (x: Term) => T.call('g', 'Int', x);
        const h = (x: Term) => T.call('h', 'Int', x);
        const ground = new Map([['C:A', [T.v('a1', 'Ref')]]]);
        // assume: every A has g >= h (a step over every object); check: every A has g >= 0
        const step = T.forall([{ name: 'o', sort: 'Ref', type: 'C:A' }], T.cmp('>=', g(o), h(o)));
        const assumed = T.toSmt(f.ground(step, 'assume', ground));
        assert.match(assumed, /^\(and \(>= \(g a1\) \(h a1\)\) U\)$/);
        const checked = T.toSmt(f.ground(T.forall([{ name: 'o', sort: 'Ref', type: 'C:A' }], T.cmp('>=', g(o), T.int(0))), 'assert', ground));
        assert.equal(checked, '(>= (g o!CA) 0)');
        assert.deepEqual(f.late.map(t => T.toSmt(t)), ['(=> U (>= (g o!CA) (h o!CA)))']);
        // a second check shares the checked object: nothing more to instantiate
        assert.equal(T.toSmt(f.ground(T.forall([{ name: 'o', sort: 'Ref', type: 'C:A' }], T.cmp('<=', g(o), T.int(9))), 'assert', ground)), '(<= (g o!CA) 9)');
        assert.equal(f.late.length, 1);
        // a check of two objects at once takes two
        const two = T.forall([{ name: 'o', sort: 'Ref', type: 'C:A' }, { name: 'p', sort: 'Ref', type: 'C:A' }], T.cmp('>=', g(o), g(T.v('p', 'Ref'))));
        assert.equal(T.toSmt(f.ground(two, 'assert', ground)), '(>= (g o!CA) (g o!CA1))');
        // another type is not instantiated
        f.ground(T.forall([{ name: 'o', sort: 'Ref', type: 'C:B' }], T.cmp('>=', g(o), T.int(0))), 'assert', ground);
        assert.equal(f.late.filter(t => T.toSmt(t).includes('o!CB')).length, 0);
    });
    it('an assumption never takes a given arbitrary object for one it says exists', () => {
        const vocab = new Vocabulary({ files: [], classes: [], globals: [], procedures: [], threads: [], invariants: [], environments: [] });
        const f = new Formulas(vocab);
        const fixed = T.v('o!A', 'Ref');
        f.fixedSkolem = () => fixed;
        const o = T.v('o', 'Ref');
        const all = T.forall([{ name: 'o', sort: 'Ref', type: 'C:A' }], T.cmp('>=', T.call('g', 'Int', o), T.int(0)));
        // (forall o. g(o) >= 0) ==> p, assumed: some object has g < 0, or p
        const assumed = T.toSmt(f.ground(T.implies(all, T.v('p', 'Bool')), 'assume', new Map()));
        assert.doesNotMatch(assumed, /o!A/);
        assert.match(assumed, /^\(=> \(>= \(g o!\d+\) 0\) p\)$/);
        // checked, the universal is checked at the given object
        assert.equal(T.toSmt(f.ground(all, 'assert', new Map())), '(>= (g o!A) 0)');
    });
    it('a state defined from the previous one is instantiated only where it is read', () => {
        const vocab = new Vocabulary({ files: [], classes: [{ name: 'C', fields: [{ id: 'C.f', name: 'f', isStatic: false, isVolatile: false, isFinal: false, isGhost: false, type: { kind: 'int' }, writableIf: [], range: R, nameRange: R }], methods: [], invariants: [], environments: [], range: R }], globals: [], procedures: [], threads: [], invariants: [], environments: [] });
        const f = new Formulas(vocab);
        const s0 = f.arbitrary('f:C.f', '0');
        const s1 = f.macro('f:C.f', '1', ([k]) => T.ite(T.eq(k, T.v('a', 'Ref')), T.int(5), f.at(s0, 'f:C.f', [k])));
        const defs = f.definitions([T.eq(f.at(s1, 'f:C.f', [T.v('b', 'Ref')]), T.int(3))]);
        assert.deepEqual(defs, ['(assert (= (|f:C.f!1| b) (ite (= b a) 5 (|f:C.f!0| b))))']);
    });
});

const R = { file: 'file:///test/p.calvin', startLine: 0, startChar: 0, endLine: 0, endChar: 0 };

describe('stages 4-8 with the real Z3', () => {
    let solver: SolverBackend;
    before(() => { solver = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await solver?.dispose(); });

    it('E*: E is reflexive and transitive for the lock; for writable_if guards, derived conjuncts replace it', async () => {
        const m = await model(VECTOR);
        const spec = programContext(m).spec;
        const env = environmentOf(spec, new Set(['Vector']), true, new Set(['Vector.count', 'Vector.data', 'v']));
        const session = await solver.openSession({ timeLimitMs: 10_000 });
        try {
            const c = await closure(spec, env, allInvariants(spec.vocab), T.cmp('>', TID, T.int(0)), session);
            assert.equal(c.exact, false);
            const kept = c.conjuncts.map(x => x.text);
            assert.ok(kept.includes("this.holder == tid ==> count' == count"), kept.join(' | '));
            assert.ok(kept.includes("this.holder == tid ==> data' == data"), kept.join(' | '));
            assert.ok(c.dropped.some(x => x.kind === 'writable'), 'the writable_if conjuncts are not transitive');
        } finally {
            session.close();
        }
        const lock = await verifyProgram(await model(LOCK), { solver });
        assert.ok(lock.checks.filter(u => u.kind !== 'init').every(u => u.envStar === 'E is reflexive and transitive: E* = E'), lock.checks.map(u => u.envStar).join('\n'));
    });

    it('a read-only loop needs no invariant for the shared state (the head is one E* step from the entry); Houdini infers the rest', async () => {
        const r = await verifyProgram(await model(VECTOR), { solver });
        assert.deepEqual(r.diagnostics.filter(d => d.severity !== 'info'), []);
        const reader = r.checks.find(u => u.name === 'Reader')!;
        assert.equal(reader.status, 'verified');
        assert.ok(reader.inferredLoopInvariants.length > 0);
    });

    it('Houdini from the invariants a previous run kept: the same verdict in fewer queries; from too few, again from all candidates', async () => {
        const keyOf = (ctx: ReturnType<typeof programContext>, name: string) => checksOf(ctx).find(u => u.name === name)!.key;
        const run = async (text: string, seed?: string[]) => {
            const ctx = programContext(await model(text));
            return (await verifyCheck(ctx, keyOf(ctx, 'Reader'), { solver, ...(seed ? { houdiniSeed: seed } : {}) }))!;
        };
        const full = await run(VECTOR);
        assert.equal(full.status, 'verified');
        assert.ok(full.inferredLoopInvariants.length > 0 && full.queries > 2, `${full.queries} queries`);
        const seeded = await run(VECTOR, full.inferredLoopInvariants);
        assert.equal(seeded.status, 'verified');
        assert.deepEqual(seeded.diagnostics, full.diagnostics);
        assert.ok(seeded.queries < full.queries, `${seeded.queries} queries with the seed, ${full.queries} without`);
        // no invariant: the bounds check fails from the seed, so Houdini runs again from all candidates
        const empty = await run(VECTOR, []);
        assert.equal(empty.status, 'verified');
        assert.ok(empty.queries > full.queries, `${empty.queries} queries from an empty seed, ${full.queries} without`);
        // a bug: the same failures as without seed
        const buggy = VECTOR.replace('for (int i = count - 1;', 'for (int i = count;');
        const plain = await run(buggy);
        assert.equal(plain.status, 'failed');
        const withSeed = await run(buggy, full.inferredLoopInvariants);
        assert.deepEqual(withSeed.diagnostics, plain.diagnostics);
        assert.equal(withSeed.status, 'failed');
        // only a run whose Houdini kept what it keeps from all candidates says what they were (a later
        // run may start from it): a run from all of them, or one that ran again from all; not one
        // verified from a seed (it kept what it keeps from the seed, possibly less)
        assert.ok(full.candidates && full.candidates.length > full.inferredLoopInvariants.length, JSON.stringify(full.candidates));
        assert.deepEqual(empty.candidates, full.candidates);
        assert.equal(seeded.candidates, undefined);
    });

    it('one procedure\'s queries report all its failing checks, with counterexample values', async () => {
        const m = await model(`
class Box {
  int v;
}
final Box b = new Box();
Box none;
int[] a = new int[2];
thread Setter { b.v = 5; }
thread T[*] {
  int k = b.v;
  a[k] = 1;
  int q = 10 / k;
  int w = none.v;
}
`);
        const r = await verifyProgram(m, { solver });
        const t = r.checks.find(u => u.name === 'T')!;
        const codes = t.diagnostics.map(d => `${d.range.startLine + 1}:${d.code}`).sort();
        // v is written by Setter only: T's read races; a's elements are anyone's
        assert.deepEqual(codes, ['10:race', '11:bounds', '11:race', '12:div-zero', '13:null']);
        // the values the check mentions, and the other thread's step that made k out of bounds (v is 0 in Init)
        assert.match(diagnosticText(t.diagnostics.find(d => d.code === 'bounds')!), /\[k = -?\d+, length = 2; another thread changed v from 0 to -?\d+ just before it was read\]$/);
        assert.match(diagnosticText(t.diagnostics.find(d => d.code === 'div-zero')!), /\[k = 0\]$/);
        // a reference is shown as null or not null (its identity means nothing)
        assert.match(diagnosticText(t.diagnostics.find(d => d.code === 'null')!), /\[none = null\]$/);
        assert.ok(t.queries <= 8, `${t.queries} queries`);
        assert.equal(r.checks.find(u => u.name === 'Setter')!.status, 'verified');
    });

    it('a failure inside an inlined method is reported there, with the call chain as related information', async () => {
        const r = await verifyProgram(await model(`
int d = 0;
int divide(int n) { return n / d; }
thread T { int r = divide(4); }
`), { solver });
        const dz = r.diagnostics.find(d => d.code === 'div-zero')!;
        assert.equal(dz.range.startLine, 2);
        assert.deepEqual(dz.related.map(x => [x.range.startLine, x.message]), [[3, 'called here (divide)']]);
    });

    it('a failure reached through two call chains: the first chain, then the outermost call of the other', async () => {
        const r = await verifyProgram(await model(`
void check(int v) {
  assert v > 0;
}
void mid(int v) {
  check(v);
}
thread A { mid(0); }
thread B { check(-1); }
`), { solver });
        const a = r.diagnostics.filter(d => d.code === 'assert');
        assert.equal(a.length, 1);
        // (which thread's check comes first is not fixed: either chain may be the first)
        const notes = a[0].related.map(x => `${x.range.startLine + 1} ${x.message}`);
        assert.ok(
            JSON.stringify(notes) === JSON.stringify(['6 called here (check)', '8 called here (mid)', '9 also reached through this call (check)'])
            || JSON.stringify(notes) === JSON.stringify(['9 called here (check)', '8 also reached through this call (mid)']), notes.join('; '));
    });

    it('a step that may break two invariants is one diagnostic that names both', async () => {
        const r = await verifyProgram(await model(`
volatile int lo = 0;
volatile int hi = 0;
//@ invariant lo <= hi;
//@ invariant hi <= lo + 10;
thread Mover { int l = lo; hi = l + 20; }
thread Lowerer { int h = hi; atomic { lo = h; hi = h; } }
`), { solver });
        const inv = r.diagnostics.filter(d => d.code === 'invariant');
        assert.equal(inv.length, 1);
        assert.match(inv[0].message, /^the write of hi may break the invariant '(lo <= hi|hi <= lo \+ 10)' and the invariant '(lo <= hi|hi <= lo \+ 10)'$/);
        assert.ok(inv[0].message.includes("'lo <= hi'") && inv[0].message.includes("'hi <= lo + 10'"));
    });

    it('a racy step is reported once, as race (its env and invariant failures are not repeated)', async () => {
        const r = await verifyProgram(await model(LOCK.replace('thread T1 { Mutex.acquire(); x++; assert x > 0; Mutex.release(); }', 'thread T1 { x = -1; }')), { solver });
        const t1 = r.checks.find(u => u.name === 'T1')!;
        assert.deepEqual(t1.diagnostics.map(d => d.code), ['race']);
    });
});

describe('stage 7: one round trip per query', () => {
    let real: SolverBackend;
    before(() => { real = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await real?.dispose(); });

    /** The real backend, recording every text each session evaluates. */
    function recording(texts: string[][]): SolverBackend {
        return {
            name: real.name,
            dispose: async () => { /* the real backend is disposed after the tests */ },
            openSession: async (o: { timeLimitMs: number }) => {
                const s = await real.openSession(o);
                const mine: string[] = [];
                texts.push(mine);
                return { eval: (text: string) => { mine.push(text); return s.eval(text); }, close: () => s.close() };
            },
        };
    }

    // A loop for Houdini (several rounds: its candidates about i and n fail one after another), and a failing assertion.
    const PROGRAM = `
int n = 0;
thread T {
  int i = 0;
  while (i < 10) { i = i + 1; }
  n = i;
  assert n == 10;
  assert n == 11;
}
`;

    it('each Houdini step and each failure: the query and the values of its error literals in one eval', async () => {
        const texts: string[][] = [];
        const r = await verifyProgram(await model(PROGRAM), { solver: recording(texts), timeLimitMs: 10_000 });
        assert.deepEqual(r.diagnostics.filter(d => d.severity !== 'info').map(d => [d.range.startLine, d.code, d.message]), [[7, 'assert', "assertion 'n == 11' may fail"]]);
        const check = r.checks.find(u => u.name === 'T')!;
        const session = texts.find(t => t.some(x => x.includes('check-sat-assuming') && x.includes('en!')))!;
        const queries = session.filter(x => x.includes('check-sat-assuming'));
        assert.equal(queries.length, check.queries);
        assert.ok(queries.length >= 3, `Houdini took rounds: ${queries.length} queries`);
        // every query asks for the values with it; no get-value of error literals on its own
        assert.ok(queries.every(q => /\(echo "calvin-values"\)\n\(get-value \(err!/.test(q)), queries.join('\n'));
        assert.deepEqual(session.filter(x => x.includes('(get-value (err!') && !x.includes('check-sat-assuming')), []);
    });
});

describe('stage 6: no needless names in a verification condition', () => {
    let real: SolverBackend;
    before(() => { real = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await real?.dispose(); });

    /** The texts each check sends to the real solver that declare its VC, by check. */
    async function vcs(program: string): Promise<{ diagnostics: string[]; vcs: string[] }> {
        const texts: string[] = [];
        const solver: SolverBackend = {
            name: real.name,
            dispose: async () => { /* disposed after the tests */ },
            openSession: async (o: { timeLimitMs: number }) => {
                const s = await real.openSession(o);
                return { eval: (text: string) => { if (text.includes('(declare-sort Ref')) texts.push(text); return s.eval(text); }, close: () => s.close() };
            },
        };
        const r = await verifyProgram(await model(program), { solver, timeLimitMs: 10_000 });
        return { diagnostics: r.diagnostics.filter(d => d.severity !== 'info').map(d => `${d.range.startLine}:${d.code}`), vcs: texts };
    }

    // A monitor-protected counter in a final global, used in a loop: every environment step
    // between the operations leaves the global as it was, and each iteration reads it anew.
    const PROGRAM = `
class Counter {
  //@ writable_if this.holder == tid;
  int n = 0;
  //@ invariant this.holder == 0 ==> n >= 0;
  synchronized void inc() { n = n + 1; }
  void incTwice() { inc(); inc(); }
}
final Counter c = new Counter();
thread T[*] {
  int i = 0;
  while (i < 3) { c.incTwice(); i = i + 1; }
}
`;

    it('a step that leaves a global as it was gives it no new name', async () => {
        const r = await vcs(PROGRAM);
        assert.deepEqual(r.diagnostics, []);
        // (a new name would be a new key at which every field, monitor and owner is defined anew)
        const renamed = r.vcs.flatMap(t => t.match(/\(define-fun \|g:c![^|]*\| \(\) Ref \|?[^ ()|]+\|?\)/g) ?? []);
        assert.deepEqual(renamed, []);
    });

    it('E*: every candidate frame is checked at the one arbitrary object of its class', async () => {
        // two protected fields, an invariant relating them: E's frames are not syntactically
        // transitive, the closure asks the solver about a candidate per field and guard atom
        const r = await vcs(PROGRAM.replace('  int n = 0;\n', '  int n = 0;\n  //@ writable_if this.holder == tid;\n  int m = 0;\n').replace('n >= 0', 'n >= m'));
        assert.deepEqual(r.diagnostics, []);
        const script = r.vcs.find(t => t.includes('(declare-const e!0 Bool)'));
        assert.ok(script, 'the closure\'s script');
        assert.ok((script.match(/\(declare-const ce!\d+ Bool\)/g) ?? []).length >= 4, 'several candidate checks');
        // (an object of its own for each candidate would be one more object to instantiate the
        // invariant and every frame at, in each of the four states)
        const objects = (script.match(/\(declare-const [^ ]+ Ref\)/g) ?? []).map(d => d.split(' ')[1]).filter(n => !n.startsWith('|g:'));
        assert.deepEqual(objects, ['null', 'o!Counter']);
    });

    it('the value a loop head gives a temporary of its body is no object to instantiate invariants at', async () => {
        const r = await vcs(PROGRAM);
        const thread = r.vcs.filter(t => t.includes('l~i@'));
        assert.ok(thread.length > 0, 'the thread\'s VC');
        // the loop head havocs the temporary of the read of c in c.incTwice(); its value there is read
        // nowhere, so no instance of Counter's invariant (nor any definition) names it
        assert.deepEqual(thread.flatMap(t => t.split('\n').filter(l => l.includes('l~final_c~'))), []);
    });
});

describe('stage 7: a check that refutes inferred annotations ends there (untilRefuted)', () => {
    let solver: SolverBackend;
    before(() => { solver = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await solver?.dispose(); });

    const refs = (r: { diagnostics: Array<{ inferred?: unknown }> }) => r.diagnostics.filter(d => d.inferred).map(d => JSON.stringify(d.inferred)).sort();

    // vector_race: a Writer that refutes inferred invariants (found in Houdini's queries) and has races of
    // its own; simple_lock_ok: an initialization check (no loop: found among the program's obligations)
    // that refutes an inferred invariant; producer_consumer_ok: inferred guards that every check proves
    for (const file of ['vector_race.calvin', 'simple_lock_ok.calvin', 'producer_consumer_ok.calvin']) {
        it(`${file}: every check reports what a full run refutes, and nothing else; without refutations, the full run's result`, async () => {
            const inference = inferAnnotations(await model(fs.readFileSync(path.join(EXAMPLES, file), 'utf8')));
            assert.ok(inference.annotations.length > 0);
            let refuting = 0;
            for (const u of checksOf(programContext(inference.program))) {
                // (a context each: checks of one context share their E* decisions and their queries)
                const full = (await verifyCheck(programContext(inference.program), u.key, { solver }))!;
                const early = (await verifyCheck(programContext(inference.program), u.key, { solver, untilRefuted: true }))!;
                assert.deepEqual(refs(early), refs(full), u.key);
                if (refs(full).length === 0) {
                    assert.equal(early.refutedOnly, undefined, u.key);
                    assert.deepEqual(early.diagnostics, full.diagnostics, u.key);
                    assert.equal(early.status, full.status, u.key);
                    continue;
                }
                refuting++;
                assert.equal(early.refutedOnly, true, u.key);
                assert.equal(full.refutedOnly, undefined, u.key);
                assert.equal(early.status, 'failed', u.key);
                assert.deepEqual(early.diagnostics.filter(d => !d.inferred), [], `${u.key}: only refutations`);
                assert.ok(early.queries <= full.queries, `${u.key}: ${early.queries} queries, ${full.queries} in full`);
            }
            assert.equal(refuting > 0, file !== 'producer_consumer_ok.calvin', `${refuting} refuting checks`);
        });
    }
});

describe('stage 7: a crashing or hanging solver makes the check unknown', () => {
    let real: SolverBackend;
    before(() => { real = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await real?.dispose(); });

    /** The real backend whose sessions crash (or hang) on the first query of the thread T1's check. */
    function failing(what: 'crash' | 'hang'): SolverBackend {
        let sessions = 0;
        return {
            name: real.name,
            dispose: async () => { /* the real backend is disposed after the tests */ },
            openSession: async (o: { timeLimitMs: number }) => {
                const s = await real.openSession(o) as DebuggableSession;
                const mine = ++sessions;
                let failed = false;
                const session: SolverSession = {
                    // sessions: 1 initialization, 2 acquire, 3 release, 4 T1, 5 T2
                    eval: (text: string) => { if (mine === 4 && !failed) { failed = true; return s.debug(what); } return s.eval(text); },
                    close: () => s.close(),
                };
                return session;
            },
        };
    }

    for (const what of ['crash', 'hang'] as const) {
        it(`${what}: unknown for that check (a warning at the thread), the worker restarts, the other checks are verified`, { timeout: 60_000 }, async () => {
            const r = await verifyProgram(await model(LOCK), { solver: failing(what), timeLimitMs: 2000 });
            const statuses = r.checks.map(u => `${u.name}:${u.status}`).join(' ');
            assert.equal(statuses, 'initialization:verified Mutex.acquire:verified Mutex.release:verified T1:unknown T2:verified');
            const unknown = r.diagnostics.filter(d => d.code === 'unknown');
            assert.equal(unknown.length, 1);
            assert.equal(unknown[0].severity, 'warning');
            assert.match(unknown[0].message, what === 'crash' ? /thread T1 is not verified: the solver crashed/ : /thread T1 is not verified: it ran out of time/);
        });
    }

    it('the same program with a working solver: everything verified, no diagnostics', async () => {
        const r = await verifyProgram(await model(LOCK), { solver: real, timeLimitMs: 10_000 });
        assert.deepEqual(r.diagnostics.filter(d => d.severity !== 'info'), []);
        assert.ok(r.checks.every(u => u.status === 'verified'));
    });
});

describe('E* without the solver', () => {
    let solver: SolverBackend;
    before(() => { solver = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await solver?.dispose(); });

    it('whenever E is transitive by its syntax, Z3 agrees that E* = E (all examples and corpus programs)', { timeout: 10 * 60_000 }, async () => {
        const { specifications } = await import('../../packages/verifier/src/driver/verify.js');
        const { syntacticallyTransitive } = await import('../../packages/verifier/src/closure/closure.js');
        const fs = await import('node:fs');
        const dirs = [path.join(ROOT, 'examples'), path.join(ROOT, 'test/corpus')];
        let syntactic = 0;
        for (const dir of dirs) {
            for (const f of fs.readdirSync(dir).filter((x: string) => x.endsWith('.calvin'))) {
                const m = await model(fs.readFileSync(path.join(dir, f), 'utf8'));
                for (const u of specifications(m)) {
                    if (!syntacticallyTransitive(u.env)) continue;
                    syntactic++;
                    const session = await solver.openSession({ timeLimitMs: 10_000 });
                    try {
                        const c = await closure(u.spec, u.env, u.inv, u.tidConstraint, session, undefined, { syntactic: false });
                        assert.ok(c.exact, `${f} ${u.name}: transitive by syntax, but Z3 drops ${c.dropped.map(d => d.text).join('; ')}`);
                    } finally {
                        session.close();
                    }
                }
            }
        }
        assert.ok(syntactic > 10, `only ${syntactic} checks with a syntactically transitive E`);
    });
});

// Unit tests of the verifier's pipeline stages (issue 3), on small programs
// built by the real front end, solved by the real Z3 (WebAssembly worker).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../language/src/index.js';
import type { ProgramModel } from '../../packages/verifier/src/model/program.js';
import { Vocabulary } from '../../packages/verifier/src/heap/vocabulary.js';
import { Lowerer } from '../../packages/verifier/src/lower/lower.js';
import type { Cmd } from '../../packages/verifier/src/il/il.js';
import { threadReach } from '../../packages/verifier/src/analysis/reach.js';
import { environmentOf, inferGuards } from '../../packages/verifier/src/spec/environment.js';
import * as T from '../../packages/verifier/src/smt/term.js';
import { grounding } from '../../packages/verifier/src/vc/ground.js';
import { vcgen } from '../../packages/verifier/src/vc/vcgen.js';
import { createBackend, verifyProgram, type SolverBackend, type SolverSession } from '../../packages/verifier/src/index.js';
import type { DebuggableSession } from '../../packages/verifier/src/solver/index.js';
import { ROOT } from '../util/paths.js';

async function model(text: string): Promise<ProgramModel> {
    const { shared, Calvin } = createCalvinCoreServices();
    const res = await buildProgram(shared, [{ uri: 'file:///test/p.calvin', text }]);
    const doc = res.documents[0];
    const errors = (doc.diagnostics ?? []).filter(d => d.severity === 1);
    assert.deepEqual(errors.map(e => e.message), []);
    return toProgramModel(programOf(doc, shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem);
}

const LOCK = `
class Mutex {
  //@ environment m == tid ==> m' == m;
  static volatile int m = 0;
  /*@ abstraction { step [m] m == 0 && m' == tid; } */
  static void acquire() { while (!cas(m, 0, tid)) { } }
  /*@ abstraction { requires m == tid; step [m] m' == 0; } */
  static void release() { m = 0; }
}
//@ environment Mutex.m == tid ==> x' == x;
int x = 0;
thread T1 { Mutex.acquire(); x++; Mutex.release(); }
thread T2 { Mutex.acquire(); x = 0; Mutex.release(); }
`;

function ops(cmds: Cmd[]): string[] {
    const out: string[] = [];
    for (const c of cmds) {
        if (c.k === 'op') out.push(c.op.kind);
        else if (c.k === 'if') out.push(...ops(c.then), ...ops(c.else));
        else if (c.k === 'loop' || c.k === 'scope') out.push(...ops(c.body));
    }
    return out;
}

describe('stage 1: lowering to atomic operations', () => {
    it('x++ is a read and a write (two steps); calls become their abstractions', async () => {
        const m = await model(LOCK);
        const vocab = new Vocabulary(m);
        const lower = new Lowerer(vocab, { kind: 'thread', tid: T.v('tid', 'Int') });
        const body = lower.lowerThread(m.threads[0].body);
        // acquire's step, the read and the write of x, release's step
        assert.deepEqual(ops(body), ['step', 'read', 'write', 'step']);
    });
});

describe('stage 2: heap model', () => {
    it('a program without objects has no allocation, ownership or monitor maps', async () => {
        const vocab = new Vocabulary(await model(LOCK));
        assert.deepEqual(vocab.allVars().map(v => v.name).sort(), ['g:Mutex.m', 'g:x']);
    });
    it('a class with a synchronized method and an array field has them', async () => {
        const vocab = new Vocabulary(await model('class C { int[] a = new int[2]; synchronized void f() { a[0] = 1; } }\nfinal C c = new C();\nthread T { c.f(); }\n'));
        for (const v of ['holder', 'alloc', 'owner', 'elems:Int', 'f:C.a']) assert.ok(vocab.has(v), v);
    });
});

describe('stage 3: specifications', () => {
    it('E(T1) has the environment clauses and the built-in assumptions that apply', async () => {
        const m = await model(LOCK);
        const vocab = new Vocabulary(m);
        const env = environmentOf({ vocab, guards: inferGuards(m, vocab) }, threadReach(m, m.threads[0]), true);
        const texts = env.map(c => c.text);
        assert.ok(texts.includes("m == tid ==> m' == m"), texts.join(' | '));
        assert.ok(texts.includes("Mutex.m == tid ==> x' == x"), texts.join(' | '));
    });
});

describe('stage 6: verification conditions', () => {
    it('a ground VC instantiates assumed heap quantifiers and skolemizes checked ones', () => {
        const o = T.v('o', 'Ref');
        const f = T.v('f', { array: ['Ref', 'Int'] });
        const a = T.v('a', 'Ref');
        const assumed = T.forall([{ name: 'o', sort: 'Ref' }], T.cmp('>=', T.select(f, o), T.int(0)));
        const checked = T.forall([{ name: 'o', sort: 'Ref' }], T.cmp('>', T.select(f, o), T.int(-1)));
        const g = grounding([assumed, T.eq(T.select(f, a), T.int(3)), checked]);
        const inst = T.toSmt(g.rewrite(assumed, true));
        assert.ok(!inst.includes('forall') && inst.includes('(select f a)') && inst.includes('(select f null)'), inst);
        const sk = T.toSmt(g.rewrite(checked, false));
        assert.ok(!sk.includes('forall') && /gsk!\d+/.test(sk), sk);
        assert.equal(g.constants.size, 1);
    });
    it('each check has its own error variable', async () => {
        const { Simulator } = await import('../../packages/verifier/src/sim/simulate.js');
        void Simulator;
        const vc = vcgen({ body: [{ k: 'assert', cond: T.cmp('>', T.v('x', 'Int'), T.int(0)), check: 0 }, { k: 'assert', cond: T.cmp('<', T.v('x', 'Int'), T.int(9)), check: 1 }], vars: new Map([['x', 'Int']]), checks: [0, 1].map(id => ({ id, kind: 'program' as const, info: { code: 'assert' as const, range: { file: '', startLine: 0, startChar: 0, endLine: 0, endChar: 0 }, chain: [], message: `check ${id}` } })), constants: new Map() });
        assert.equal(vc.errors.size, 2);
        assert.ok(vc.script.includes('(or err!0 err!1 false)'));
    });
});

describe('stage 7: a crashing or hanging solver makes the check unknown', () => {
    let real: SolverBackend;
    before(() => { real = createBackend('z3-wasm', { workerScript: path.join(ROOT, 'packages/cli/out/z3-worker.cjs') }); });
    after(async () => { await real?.dispose(); });

    /** The real backend whose sessions crash (or hang) on their first query. */
    function failing(what: 'crash' | 'hang'): SolverBackend {
        let failed = false;
        return {
            name: real.name,
            dispose: async () => { /* the real backend is disposed after the tests */ },
            openSession: async (o: { timeLimitMs: number }) => {
                const s = await real.openSession(o) as DebuggableSession;
                const session: SolverSession = {
                    eval: (text: string) => { if (!failed) { failed = true; return s.debug(what); } return s.eval(text); },
                    close: () => s.close(),
                };
                return session;
            },
        };
    }

    for (const what of ['crash', 'hang'] as const) {
        it(`${what}: unknown for the checks that needed that query, the worker restarts, the other checks are verified`, async () => {
            const m = await model(LOCK);
            const r = await verifyProgram(m, { solver: failing(what), timeLimitMs: 3000 });
            const statuses = r.units.map(u => `${u.name}:${u.status}`).join(' ');
            // The first query is the E* decision of the two Mutex methods (they share it).
            assert.equal(statuses, 'Mutex.acquire:unknown Mutex.release:unknown T1:verified T2:verified');
            const unknown = r.diagnostics.filter(d => d.code === 'unknown');
            assert.equal(unknown.length, 2);
            for (const d of unknown) {
                assert.equal(d.severity, 'warning');
                assert.match(d.message, what === 'crash' ? /crashed/ : /ran out of time/);
            }
        });
    }

    it('the same program with a working solver: everything verified, no diagnostics', async () => {
        const r = await verifyProgram(await model(LOCK), { solver: real, timeLimitMs: 10_000 });
        assert.deepEqual(r.diagnostics.filter(d => d.severity !== 'info'), []);
        assert.ok(r.units.every(u => u.status === 'verified'));
    });
});

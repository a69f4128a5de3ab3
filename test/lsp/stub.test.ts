// The "Insert abstraction stub" quick fix on its own (server/src/quickfix/stub.ts):
// the text it proposes for a method, and that the program with the stubs in
// place has no front-end diagnostic. Whether the checker accepts a stub is
// tested end to end in incremental.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AstUtils } from 'langium';
import * as ast from '@calvin/language';
import { BUILTIN_URI, buildProgram, createCalvinCoreServices, methodSpec, programOf } from '@calvin/language';
import { ProgramIndex } from '../../server/src/quickfix/facts.js';
import { abstractionStub, stubText } from '../../server/src/quickfix/stub.js';
import { diagnosticsOf } from '../util/frontend.js';

interface Stubs {
    /** The stub of each method (`C.m` or `p`), as inserted above it at the top level. */
    byMethod: Map<string, string>;
    /** The program with every method's stub in place of its missing abstraction. */
    withStubs: string;
}

async function stubs(text: string): Promise<Stubs> {
    const { shared } = createCalvinCoreServices();
    const res = await buildProgram(shared, [{ uri: 'file:///ws/stub.calvin', text }]);
    const doc = res.documents[0];
    assert.deepEqual((doc.diagnostics ?? []).map(d => d.message), [], 'the program itself is clean');
    const documents = shared.workspace.LangiumDocuments;
    const builtin = documents.getDocument(BUILTIN_URI)!.parseResult.value;
    const holder = AstUtils.streamAst(builtin).find((n): n is ast.GhostField => ast.isGhostField(n) && n.name === 'holder');
    const index = new ProgramIndex(programOf(doc, documents.all).map(d => d.parseResult.value as ast.Program), holder);
    const byMethod = new Map<string, string>();
    const inserts: Array<{ offset: number; text: string }> = [];
    for (const m of AstUtils.streamAst(doc.parseResult.value).filter(ast.isMethodDecl)) {
        if (methodSpec(m).abstraction) continue;
        const stub = stubText(abstractionStub(m, index), '');
        byMethod.set(ast.isClassDecl(m.$container) ? `${m.$container.name}.${m.name}` : m.name, stub);
        inserts.push({ offset: m.$cstNode!.offset, text: stub + '\n' });
    }
    let withStubs = text;
    for (const i of inserts.sort((a, b) => b.offset - a.offset)) withStubs = withStubs.slice(0, i.offset) + i.text + withStubs.slice(i.offset);
    return { byMethod, withStubs };
}

/** The stub text of an abstraction with these items. */
const abstraction = (...items: string[]) => ['/*@ abstraction {', ...items.map(i => `      ${i}`), '    } */'].join('\n');

const BUF = `
class Buf {
  //@ writable_if this.holder == tid;
  int[] data = new int[4];
  final int size = 4;
  int n = 0;
  synchronized void put0(int v) { data[0] = v; }
  synchronized void set(int i, int v) { data[i] = v; }
  synchronized void inc(int i) { data[i]++; }
  synchronized void atN(int v) { data[n] = v; }
  synchronized void clear() { for (int i = 0; i < data.length; i++) { data[i] = 0; } }
  synchronized void last(int v) { data[size - 1] = v; }
  synchronized void viaLocal(int v) { int j = 2; data[j] = v; }
  synchronized void moved(int i) { i = i + 1; data[i] = 0; }
  synchronized void walk(int i) { while (i < 4) { data[i] = 0; i++; } }
  synchronized void count(int v) { n = v; }
}
int[] G = new int[2];
void two(int k) { G[k] = 1; G[k+1] = 2; }
void fill(int[] a) { a[0] = 1; }
void zap(Buf b) { b.data[0] = 0; }
void fillAt(int[] b, int j) { b[j] = 7; }
void callers(Buf b, int k) { b.set(k, 3); b.set(b.n, 4); fillAt(G, k); }
thread T {
  Buf b = new Buf();
  b.put0(1); b.set(1, 2); b.inc(1); b.atN(3); b.clear(); b.last(1); b.viaLocal(1); b.moved(1); b.walk(0); b.count(1);
  two(0); fill(G); zap(b); callers(b, 1);
}
`;

describe('abstraction stub: writes of array elements', () => {
    it("frames an element write as 'a[i]' with its new value when the index is known and stable", async () => {
        const { byMethod } = await stubs(BUF);
        assert.equal(byMethod.get('Buf.put0'), abstraction('requires this.holder != tid;', "step [data[0]] data[0]' == v;"));
        assert.equal(byMethod.get('Buf.set'), abstraction('requires this.holder != tid;', "step [data[i]] data[i]' == v;"));
        assert.equal(byMethod.get('Buf.inc'), abstraction('requires this.holder != tid;', "step [data[i]] data[i]' == data[i] + 1;"));
        // a final field and a local with a stable value are known indices
        assert.equal(byMethod.get('Buf.last'), abstraction('requires this.holder != tid;', "step [data[size - 1]] data[size - 1]' == v;"));
        assert.equal(byMethod.get('Buf.viaLocal'), abstraction('requires this.holder != tid;', "step [data[2]] data[2]' == v;"));
        assert.equal(byMethod.get('two'), abstraction("step [G[k]] G[k]' == 1;", "step [G[k+1]] G[k+1]' == 2;"));
        assert.equal(byMethod.get('fill'), abstraction('requires a != null;', "step [a[0]] a[0]' == 1;"));
        assert.equal(byMethod.get('zap'), abstraction('requires b != null;', "step [b.data[0]] b.data[0]' == 0;"));
    });

    it("frames all the elements ('a[*]') when the index reads shared state, changes, or varies in a loop", async () => {
        const { byMethod } = await stubs(BUF);
        assert.equal(byMethod.get('Buf.atN'), abstraction('requires this.holder != tid;', 'step [data[*]] true;'));
        assert.equal(byMethod.get('Buf.clear'), abstraction('requires this.holder != tid;', 'stutter [data[*]] true;'));
        // the parameter no longer holds the value the method was called with
        assert.equal(byMethod.get('Buf.moved'), abstraction('requires this.holder != tid;', 'step [data[*]] true;'));
        assert.equal(byMethod.get('Buf.walk'), abstraction('requires this.holder != tid;', 'stutter [data[*]] true;'));
    });

    it("maps a callee's element writes to the caller's arrays and arguments", async () => {
        const { byMethod } = await stubs(BUF);
        assert.equal(byMethod.get('callers'), abstraction(
            'requires b != null;',
            "step [b.data[k]] b.data[k]' == 3;",
            'step [b.data[*]] true;',
            "step [G[k]] G[k]' == 7;",
        ));
    });

    it('keeps field writes as they were', async () => {
        const { byMethod } = await stubs(BUF);
        assert.equal(byMethod.get('Buf.count'), abstraction('requires this.holder != tid;', "step [n] n' == v;"));
    });

    it('the program with every stub inserted has no front-end diagnostic', async () => {
        const { withStubs } = await stubs(BUF);
        assert.deepEqual((await diagnosticsOf(withStubs)).map(d => `${d.line}:${d.column} ${d.message}`), []);
    });

    it("a callee's element frames become the caller's: its index when stable there, else all the elements", async () => {
        const src = `
class Table {
  //@ writable_if this.holder == tid;
  int[] slots = new int[4];
  /*@ abstraction { requires 0 <= i && i < 4; step [slots[i]] slots[i]' == v; } */
  synchronized void set(int i, int v) { slots[i] = v; }
  /*@ abstraction { step [slots[*]] true; } */
  synchronized void reset() { slots[0] = 0; }
}
int n = 0;
void use(Table t, int k) { t.set(k, 1); t.set(n, 2); t.reset(); }
thread T { Table t = new Table(); use(t, 1); }
`;
        const { byMethod, withStubs } = await stubs(src);
        assert.equal(byMethod.get('use'), abstraction(
            'requires t != null;',
            "step [t.slots[k]] t.slots[k]' == 1;",
            "step [t.slots[*]] t.slots[n]' == 2;",
            'step [t.slots[*]] true;',
        ));
        assert.deepEqual((await diagnosticsOf(withStubs)).map(d => `${d.line}:${d.column} ${d.message}`), []);
    });
});

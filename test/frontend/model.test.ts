// The verifier's model of abstraction frames (language/src/model/to-model.ts):
// element entries `a[e]` and `a[*]` become `{ kind: 'elems', array, index }`,
// the array and the index as the model writes any other expression.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../language/src/index.js';
import type { FrameEntry, MethodModel, ProgramModel } from '../../packages/verifier/src/model/program.js';

async function model(text: string): Promise<ProgramModel> {
    const { shared, Calvin } = createCalvinCoreServices();
    const res = await buildProgram(shared, [{ uri: 'file:///frames.calvin', text }]);
    const doc = res.documents[0];
    assert.deepEqual((doc.diagnostics ?? []).map(d => d.message), []);
    return toProgramModel(programOf(doc, shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem);
}

/** A model value without its source ranges (they are compared elsewhere). */
function shape(x: unknown): unknown {
    if (Array.isArray(x)) return x.map(shape);
    if (x === null || typeof x !== 'object') return x;
    return Object.fromEntries(Object.entries(x).filter(([k, v]) => k !== 'range' && v !== undefined).map(([k, v]) => [k, shape(v)]));
}

const INT = { kind: 'int' };
const INTS = { kind: 'array', element: INT };
const param = (m: MethodModel, name: string) => {
    const p = m.params.find(x => x.name === name);
    assert.ok(p, `no parameter ${name} in ${m.id}`);
    return { kind: 'var', id: p.id, name, type: p.type };
};

const SRC = `
class Buf {
  //@ writable_if this.holder == tid;
  int[] data = new int[4];
  /*@ abstraction { stutter [this.data[*]] true; step [data[i]] data[i]' == v; } */
  synchronized void set(int i, int v) { data[i] = v; }
}
int[] G = new int[2];
/*@ abstraction { step [G[k + 1], a[*], b.data[0], G] true; } */
void two(int k, int[] a, Buf b) { }
thread T { Buf b = new Buf(); b.set(0, 1); two(0, G, b); }
`;

describe('model of element frames', () => {
    it("step [data[i]]: the field data of this, indexed by the parameter i; [this.data[*]]: no index", async () => {
        const m = await model(SRC);
        const set = m.classes.find(c => c.name === 'Buf')!.methods.find(x => x.name === 'set')!;
        const data = { kind: 'field', receiver: { kind: 'this', type: { kind: 'class', name: 'Buf' } }, field: 'Buf.data', primed: false, type: INTS };
        assert.deepEqual(shape(set.abstraction!.steps[0].frame), [{ kind: 'elems', array: data, index: param(set, 'i') }]);
        assert.deepEqual(shape(set.abstraction!.stutter!.frame), [{ kind: 'elems', array: data }]);
        const all = set.abstraction!.stutter!.frame[0] as Extract<FrameEntry, { kind: 'elems' }>;
        assert.ok(!('index' in all) || all.index === undefined, 'a[*] has no index');
    });

    it('globals, array parameters and fields of parameters; other entries as before', async () => {
        const m = await model(SRC);
        const two = m.procedures.find(x => x.name === 'two')!;
        const global = { kind: 'global', field: 'G', primed: false, type: INTS };
        assert.deepEqual(shape(two.abstraction!.steps[0].frame), [
            { kind: 'elems', array: global, index: { kind: 'binary', op: '+', left: param(two, 'k'), right: { kind: 'int', value: '1', type: INT }, type: INT } },
            { kind: 'elems', array: param(two, 'a') },
            { kind: 'elems', array: { kind: 'field', receiver: param(two, 'b'), field: 'Buf.data', primed: false, type: INTS }, index: { kind: 'int', value: '0', type: INT } },
            { kind: 'global', field: 'G' },
        ]);
    });
});

describe('texts of annotation clauses', () => {
    it('a clause over several lines reads on one line, without the JML continuation @', async () => {
        const m = await model(`
int t = 20;
/*@ invariant -40 <= t
  @        && t <= 50;
  @*/
/*@ abstraction {
  @   step [t] t' == v
  @            && v >= 0;
  @ } */
void set(int v) { t = v; }
thread T { set(1); }
`);
        assert.deepEqual(m.invariants.map(c => c.text), ['-40 <= t && t <= 50']);
        assert.equal(m.procedures.find(p => p.name === 'set')!.abstraction!.steps[0].text, "t' == v && v >= 0");
    });
});

// NodeScope (language/src/scoping/calvin-scope.ts): a scope over AST nodes that
// describes a node only when it is found (issue 15) must answer as Langium's
// scope over the same nodes' descriptions does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stream, StreamScope, type AstNode, type AstNodeDescription } from 'langium';
import { NodeScope } from '../../language/src/scoping/calvin-scope.js';

const node = (name?: string, id = name): AstNode => ({ $type: 'X', name, id } as unknown as AstNode);
const describeNode = (n: AstNode, name: string): AstNodeDescription => ({ node: n, name, type: n.$type, path: (n as unknown as { id: string }).id } as unknown as AstNodeDescription);
const nameOf = (n: AstNode) => (n as unknown as { name?: string }).name;
const view = (d: AstNodeDescription | undefined) => d && `${d.name}@${d.path}`;

describe('NodeScope', () => {
    const nodes = [node('a', 'a1'), node('b'), node(undefined, 'anonymous'), node('a', 'a2'), node('c')];
    const outerNodes = [node('a', 'outer-a'), node('d')];
    const outer = new StreamScope(stream(outerNodes).map(n => describeNode(n, nameOf(n)!)));
    for (const concatOuterScope of [true, false]) {
        it(`answers as Langium's StreamScope over the nodes' descriptions (concatOuterScope ${concatOuterScope})`, () => {
            const langium = new StreamScope(stream(nodes).map(n => { const name = nameOf(n); return name ? describeNode(n, name) : undefined; }).nonNullable(), outer, { concatOuterScope });
            const mine = new NodeScope(nodes, nameOf, describeNode, outer, concatOuterScope);
            for (const name of ['a', 'b', 'c', 'd', 'e', '']) {
                assert.equal(view(mine.getElement(name)), view(langium.getElement(name)), name);
                assert.deepEqual(mine.getElements(name).map(view).toArray(), langium.getElements(name).map(view).toArray(), name);
            }
            assert.deepEqual(mine.getAllElements().map(view).toArray(), langium.getAllElements().map(view).toArray());
        });
    }

    it('describes only the node it finds, once', () => {
        const described: string[] = [];
        const mine = new NodeScope(nodes, nameOf, (n, name) => { described.push(name); return describeNode(n, name); });
        assert.equal(view(mine.getElement('c')), 'c@c');
        assert.equal(mine.getElement('c'), mine.getElement('c'));
        assert.equal(mine.getElement('zzz'), undefined);
        assert.deepEqual(described, ['c']);
    });
});

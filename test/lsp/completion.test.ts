// Keyword completion in annotations (over stdio): what language.md §4 allows
// there. Quantifiers anywhere an annotation expression may start, `\old` and
// `\result` in ensures; never `cas`, `new` or `nondet` (annotations are
// side-effect free); in code the other way round.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { fileUri, LspClient } from '../util/lsp-client.js';

const TEXT = [
    'int x = 0;',                                  // 0
    '/*@ ensures x == ; */',                       // 1
    'int f() { return x; }',                       // 2
    'thread T {',                                  // 3
    '  //@ assert x == ',                          // 4
    '  int y = ;',                                 // 5
    '  //@ assert (',                              // 6
    '  //@ assert \\fo',                           // 7
    '  //@ assume x == 0 && ',                     // 8
    '}',                                           // 9
].join('\n') + '\n';

describe('completion of keywords in annotations', () => {
    let dir: string;
    let client: LspClient;
    let uri: string;

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-completion-'));
        uri = fileUri(path.join(dir, 'a.calvin'));
        client = await LspClient.start({});
        const published = client.waitForVersion(uri, 1);
        await client.open(uri, TEXT);
        await published;
    });

    after(async () => {
        await client?.shutdown();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    const items = async (line: number, character: number): Promise<lsp.CompletionItem[]> => {
        const r = await client.request<lsp.CompletionList | lsp.CompletionItem[]>('textDocument/completion', { textDocument: { uri }, position: { line, character } });
        return Array.isArray(r) ? r : r.items;
    };
    const end = (line: number) => TEXT.split('\n')[line].length;

    for (const [what, line, character] of [
        ['an assert', 4, end(4)], ['an ensures', 1, 17], ['the right of && in an assume', 8, end(8)],
    ] as Array<[string, number, number]>) {
        it(`in ${what}: the quantifiers, with their parenthesis; no cas, new nor nondet`, async () => {
            const got = await items(line, character);
            const labels = got.map(i => i.label);
            for (const k of ['\\forall', '\\exists', 'x', 'tid', 'true']) assert.ok(labels.includes(k), `${k} missing from ${labels}`);
            for (const k of ['cas', 'new', 'nondet']) assert.ok(!labels.includes(k), `${k} offered in an annotation: ${labels}`);
            const forall = got.find(i => i.label === '\\forall')!;
            assert.equal((forall.textEdit as lsp.TextEdit).newText, '(\\forall ');
            assert.equal(labels.filter(l => l === '\\forall').length, 1);
        });
    }

    it('\\old and \\result in an ensures clause only', async () => {
        const inEnsures = (await items(1, 17)).map(i => i.label);
        for (const k of ['\\old', '\\result']) assert.ok(inEnsures.includes(k), `${k} missing from ${inEnsures}`);
        const inAssert = (await items(4, end(4))).map(i => i.label);
        for (const k of ['\\old', '\\result']) assert.ok(!inAssert.includes(k), `${k} offered in an assert: ${inAssert}`);
    });

    it("after a quantifier's own parenthesis: the quantifier keywords, inserted as they are", async () => {
        const got = await items(6, end(6));
        const forall = got.filter(i => i.label === '\\forall');
        assert.equal(forall.length, 1, JSON.stringify(got.map(i => i.label)));
        assert.equal((forall[0].textEdit as lsp.TextEdit).newText, '\\forall');
    });

    it('a word typed after a backslash completes to the backslash words, replacing the backslash too', async () => {
        const got = await items(7, end(7));
        assert.deepEqual(got.map(i => i.label), ['\\forall']);
        assert.deepEqual((got[0].textEdit as lsp.TextEdit).range, { start: { line: 7, character: 13 }, end: { line: 7, character: 16 } });
    });

    it('in code: cas, new and nondet, and no annotation-only word', async () => {
        const labels = (await items(5, 10)).map(i => i.label);
        for (const k of ['cas', 'new', 'nondet', 'x', 'tid']) assert.ok(labels.includes(k), `${k} missing from ${labels}`);
        for (const k of ['\\forall', '\\exists', '\\old', '\\result']) assert.ok(!labels.includes(k), `${k} offered in code: ${labels}`);
    });
});

// Hover texts of the verifier over stdio: an access's exemption says why
// (ghost state is not "volatile"), a final field is not offered
// `writable_if false`, a clause in another file is named with its file, and
// I(p) does not list a simple bound that another one implies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { EXAMPLES } from '../util/paths.js';
import { checkDiagnostics, fileUri, LspClient } from '../util/lsp-client.js';

const PROGRAM = [
    'class Object { }',                          // 0
    'final Object lk = new Object();',           // 1
    '//@ ghost int g = 0;',                      // 2
    'final int k = 5;',                          // 3
    'int n = 1;',                                // 4
    'int x = 0;',                                // 5
    'thread T1 {',                               // 6
    '  synchronized (lk) {',                     // 7
    '    //@ set g = 1;',                        // 8
    '    int v = n;',                            // 9
    '    assert v > 0;',                         // 10
    '    assert v >= 0;',                        // 11
    '    x = k;',                                // 12
    '  }',                                       // 13
    '}',                                         // 14
    'thread T2 {',                               // 15
    '  synchronized (lk) { n = 2; x = 1; }',     // 16
    '}',                                         // 17
].join('\n') + '\n';

describe('hover texts of the verifier', () => {
    let client: LspClient;
    let dir: string;
    let uri: string;
    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-hover-'));
        client = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
        uri = fileUri(path.join(dir, 'a.calvin'));
        await client.open(uri, PROGRAM);
        checkDiagnostics(await client.checksDone(uri, 120_000, 3), []);
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    const hover = async (u: string, line: number, character: number): Promise<string> => {
        const h = await client.request<lsp.Hover | null>('textDocument/hover', { textDocument: { uri: u }, position: { line, character } });
        assert.ok(h, `no hover at ${line}:${character}`);
        return (h.contents as lsp.MarkupContent).value;
    };

    it('a ghost field written by set: ghost state, not a volatile access', async () => {
        const md = await hover(uri, 8, 12);
        assert.match(md, /\*write of `g`\* in check T1: ghost state \(specification only, updated by `set` in one atomic step\): exempt from the stability check\./);
        assert.doesNotMatch(md, /volatile/);
        // (a ghost field without writable_if has no protection to list: no empty paragraph for it)
        assert.doesNotMatch(md, /\n\n\n/, JSON.stringify(md));
    });

    it('a final field: no inferred writable_if false', async () => {
        const md = await hover(uri, 3, 10);
        assert.match(md, /`final`: immutable after its initializer, never racy/);
        assert.doesNotMatch(md, /writable_if false|Inferred protection/);
    });

    it('I(p) leaves out the bounds another one implies (n > 0 and n >= 0, also under a condition)', async () => {
        const md = await hover(uri, 6, 8);
        const invariant = /\*\*I\(T1\)\*\*, kept by every step of thread T1:\n```calvin\n([^`]*)```/.exec(md)?.[1];
        assert.ok(invariant, md);
        assert.deepEqual(invariant.trim().split('\n').map(l => l.replace(/;\s+\/\/.*$/, ';')), ['n > 0;', '// and 3 facts implied by these']);
    });

    it('a clause in another file is shown with its file name, in the environment step at a failure', async () => {
        // simple_lock_unlocked with its class and x in a.calvin, its threads in b.calvin
        const lines = fs.readFileSync(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'), 'utf8').split('\n');
        const a = lines.slice(0, 20).join('\n') + '\n';
        const b = lines.slice(20).map(l => l.replace(/\s*\/\/ @.*$/, '')).join('\n');
        const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-hover-ws-'));
        fs.writeFileSync(path.join(ws, 'a.calvin'), a);
        fs.writeFileSync(path.join(ws, 'b.calvin'), b);
        const other = await LspClient.start({ rootPath: ws, initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false, infer: false } });
        try {
            const bUri = fileUri(path.join(ws, 'b.calvin'));
            await other.open(bUri, b);
            const diags = await other.checksDone(bUri, 120_000, 2);
            const assertion = diags.find(d => d.code === 'assert');
            assert.ok(assertion, JSON.stringify(diags));
            const h = await other.request<lsp.Hover>('textDocument/hover', { textDocument: { uri: bUri }, position: assertion.range.start });
            const md = (h.contents as lsp.MarkupContent).value;
            assert.match(md, /`Mutex\.m == tid ==> x' == x` — environment of the program \(a\.calvin:18\)/);
            assert.doesNotMatch(md, /\(line \d+\)/);
        } finally {
            await other.shutdown();
            fs.rmSync(ws, { recursive: true, force: true });
        }
    });
});

// Hover texts of the verifier over stdio: an access's exemption says why
// (ghost state is not "volatile"), a final field is not offered
// `writable_if false`, a clause in another file is named with its file, the
// lines an inferred annotation comes from are named with their file when they
// are in another one (in hover and in a race quick fix's reason), and I(p)
// does not list a simple bound that another one implies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { EXAMPLES } from '../util/paths.js';
import { checkDiagnostics, defaultCapabilities, fileUri, LspClient } from '../util/lsp-client.js';

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

    it('the lines an inferred annotation comes from, and a race fix\'s reason, name their file when it is another one', async () => {
        // the fields and a procedure in a.calvin, the threads that write them in b.calvin
        const a = [
            'class Lock {',                                  // 0
            '  static volatile int m = 0;',                  // 1
            '  static void acquire() { while (!cas(m, 0, tid)) { } }', // 2
            '  static void release() { m = 0; }',            // 3
            '}',                                             // 4
            'class Object { }',                              // 5
            'final Object lk = new Object();',               // 6
            'int count = 0;',                                // 7
            'int hits = 0;',                                 // 8
            'void bump() { hits = hits + 3; }',              // 9
        ].join('\n') + '\n';
        const b = [
            'thread T1 {',                                   // 0
            '  Lock.acquire();',                             // 1
            '  count = count + 1;',                          // 2
            '  Lock.release();',                             // 3
            '}',                                             // 4
            'thread T2 {',                                   // 5
            '  Lock.acquire();',                             // 6
            '  count = count + 1;',                          // 7
            '  Lock.release();',                             // 8
            '}',                                             // 9
            'thread P { synchronized (lk) { hits = hits + 1; } }', // 10
            'thread Q { bump(); }',                          // 11
        ].join('\n') + '\n';
        const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-hover-lines-'));
        fs.writeFileSync(path.join(ws, 'a.calvin'), a);
        fs.writeFileSync(path.join(ws, 'b.calvin'), b);
        const capabilities = defaultCapabilities();
        capabilities.textDocument!.codeAction = { disabledSupport: true, codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix'] } } };
        const other = await LspClient.start({ rootPath: ws, capabilities, initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
        try {
            const aUri = fileUri(path.join(ws, 'a.calvin'));
            const bUri = fileUri(path.join(ws, 'b.calvin'));
            await other.open(aUri, a);
            await other.open(bUri, b);
            const diags = await other.checksDone(bUri, 120_000, 4);
            const text = async (u: string, line: number, character: number) =>
                ((await other.request<lsp.Hover>('textDocument/hover', { textDocument: { uri: u }, position: { line, character } })).contents as lsp.MarkupContent).value;
            // at the field (a.calvin): the writes are lines of b.calvin
            const field = await text(aUri, 7, 5);
            assert.match(field, /inferred from the writes at b\.calvin:3 and b\.calvin:8, all holding Lock\.m/);
            assert.match(field, /every write of count \(b\.calvin:3, b\.calvin:8\)/);
            // at a thread (b.calvin): the same writes are its own lines, the lock's writes are a.calvin's
            const thread = await text(bUri, 0, 8);
            assert.match(thread, /inferred writable_if of count \(inferred from the writes at lines 3 and 8, all holding Lock\.m\) \(a\.calvin:8\)/);
            assert.match(thread, /inferred writable_if of Lock\.m \(inferred from the writes at a\.calvin:3 and a\.calvin:4\) \(a\.calvin:2\)/);
            assert.doesNotMatch(field + thread, /\u27e6/);
            // the race at P's write (b.calvin): one side of it is in a.calvin
            const race = diags.find(d => d.code === 'race' && d.range.start.line === 10);
            assert.ok(race, JSON.stringify(diags));
            const actions = await other.request<lsp.CodeAction[]>('textDocument/codeAction', { textDocument: { uri: bUri }, range: race.range, context: { diagnostics: [race] } });
            const why = actions.find(x => x.title === 'Add writable_if to hits')?.disabled?.reason;
            assert.equal(why, 'hits is written holding the monitor of lk at line 11 and written without it at a.calvin:10', JSON.stringify(actions));
        } finally {
            await other.shutdown();
            fs.rmSync(ws, { recursive: true, force: true });
        }
    });
});

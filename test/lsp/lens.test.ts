// Code lenses over stdio: each lens sits over what its check is about (a
// thread's or a method's name, the initialization's invariant), never over a
// statement in a body; calvin/checkStatus gives each check the lens's range.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { checkDiagnostics, fileUri, LspClient } from '../util/lsp-client.js';

// the only invariant is the one Calvin infers from the assertion (x > 0)
const INFERRED = [
    'class Object { }',                     // 0
    'final Object lk = new Object();',      // 1
    'int x = 1;',                           // 2
    'thread T1 {',                          // 3
    '  synchronized (lk) {',                // 4
    '    int v = x;',                       // 5
    '    assert v > 0;',                    // 6
    '  }',                                  // 7
    '}',                                    // 8
    'thread T2 {',                          // 9
    '  synchronized (lk) { x = 2; }',       // 10
    '}',                                    // 11
].join('\n') + '\n';

describe('code lenses sit over declarations', () => {
    let client: LspClient;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-lens-'));
    before(async () => {
        client = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    const lensLines = async (uri: string) => {
        const lenses = await client.request<lsp.CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
        return lenses.map(l => [l.range.start.line, l.command?.title ?? ''] as [number, string]).sort((a, b) => a[0] - b[0]);
    };

    it('with only an inferred invariant, the initialization lens is over the field it is about, not over the assertion it comes from', async () => {
        const uri = fileUri(path.join(dir, 'inferred.calvin'));
        await client.open(uri, INFERRED);
        checkDiagnostics(await client.checksDone(uri, 120_000, 3), []);
        assert.deepEqual(client.status.get(uri)?.checks.map(c => c.name), ['initialization', 'T1', 'T2']);
        const lenses = await lensLines(uri);
        assert.deepEqual(lenses.map(([line]) => line), [2, 3, 9], JSON.stringify(lenses));
        assert.match(lenses[0][1], /^✓ verified in \d+ ms \(1 inferred\) \(initialization\)$/);
        // calvin/checkStatus (the notification and the request) puts the check where its lens is
        const init = client.status.get(uri)!.checks.find(c => c.kind === 'init')!;
        assert.deepEqual(init.range.start, { line: 2, character: 0 }, JSON.stringify(init));
        const asked = await client.request<{ checks: Array<{ kind: string; range: lsp.Range }> }>('calvin/checkStatus', { uri });
        assert.deepEqual(asked.checks.find(c => c.kind === 'init')?.range.start, { line: 2, character: 0 });
    });

    it('with an inferred invariant about a field of another file, the check is in the field\'s file, at the field, in the lens and the status', async () => {
        const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-lens-ws-'));
        const a = INFERRED.split('\n').slice(0, 3).join('\n') + '\n';   // the class, lk and x
        const b = INFERRED.split('\n').slice(3).join('\n');              // the threads, with the assertion
        fs.writeFileSync(path.join(ws, 'a.calvin'), a);
        fs.writeFileSync(path.join(ws, 'b.calvin'), b);
        const other = await LspClient.start({ rootPath: ws, initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
        try {
            const aUri = fileUri(path.join(ws, 'a.calvin'));
            const bUri = fileUri(path.join(ws, 'b.calvin'));
            await other.open(aUri, a);
            await other.open(bUri, b);
            checkDiagnostics(await other.checksDone(bUri, 120_000, 2), []);
            checkDiagnostics(await other.checksDone(aUri, 120_000, 1), []);
            assert.deepEqual(other.status.get(bUri)?.checks.map(c => c.name), ['T1', 'T2']);
            const init = other.status.get(aUri)?.checks.find(c => c.kind === 'init');
            assert.deepEqual(init?.range.start, { line: 2, character: 0 }, JSON.stringify(other.status.get(aUri)));
            const lenses = await other.request<lsp.CodeLens[]>('textDocument/codeLens', { textDocument: { uri: aUri } });
            assert.deepEqual(lenses.map(l => [l.range.start.line, l.command?.title.endsWith('(initialization)')]), [[2, true]]);
        } finally {
            await other.shutdown();
            fs.rmSync(ws, { recursive: true, force: true });
        }
    });

    it('with a written invariant, the initialization lens is over it', async () => {
        const uri = fileUri(path.join(dir, 'written.calvin'));
        const text = INFERRED.replace('int x = 1;\n', '//@ invariant x >= 1;\nint x = 1;\n');
        await client.open(uri, text);
        checkDiagnostics(await client.checksDone(uri, 120_000, 3), []);
        const lenses = await lensLines(uri);
        assert.equal(lenses.find(([, t]) => t.endsWith('(initialization)'))?.[0], 2, JSON.stringify(lenses));
    });
});

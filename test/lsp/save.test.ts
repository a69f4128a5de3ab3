// verifyOn = save, over stdio: a file that did not change says so. Before its
// first save its checks are "not checked yet" (nothing changed); a save of the
// text already checked neither plans nor says "checking" again; an edit and
// its save still run exactly what changed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { checkDiagnostics, fileUri, LspClient, type CheckStatusParams } from '../util/lsp-client.js';

const TEXT = [
    'class Object { }',
    'final Object lk = new Object();',
    '//@ writable_if lk.holder == tid;',
    'int x = 1;',
    'thread T1 {',
    '  synchronized (lk) { x = x + 1; }',
    '}',
    'thread T2 {',
    '  synchronized (lk) { x = 2; }',
    '}',
].join('\n') + '\n';

describe('verifyOn = save: an unchanged file', () => {
    let client: LspClient;
    let dir: string;
    let uri: string;
    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-save-'));
        const file = path.join(dir, 'a.calvin');
        fs.writeFileSync(file, TEXT);
        uri = fileUri(file);
        client = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'save', maxWorkers: 1, diskCache: false, infer: false } });
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    const titles = async () => (await client.request<lsp.CodeLens[]>('textDocument/codeLens', { textDocument: { uri } })).map(l => l.command?.title ?? '');
    const save = () => client.notify('textDocument/didSave', { textDocument: { uri }, text: TEXT });
    const since = (n: number): CheckStatusParams[] => client.statusLog.slice(n).filter(p => p.uri === uri);
    const quiet = () => new Promise(r => setTimeout(r, 1500));

    it('before its first save, its checks are "not checked yet", not "changed"', async () => {
        await client.open(uri, TEXT);
        assert.ok(await client.until(() => (client.status.get(uri)?.checks.length ?? 0) === 2, 30_000), JSON.stringify(client.status.get(uri)));
        await quiet();
        assert.deepEqual(client.status.get(uri)?.checks.map(c => c.state), ['stale', 'stale']);
        assert.deepEqual(await titles(), ['… not checked yet: checked on save', '… not checked yet: checked on save']);
    });

    it('the first save checks it', async () => {
        await save();
        checkDiagnostics(await client.checksDone(uri, 120_000, 2), []);
        for (const t of await titles()) assert.match(t, /^✓ verified in \d+ ms$/);
    });

    it('saving it again, unchanged, plans nothing and says nothing (no "checking", no state change)', async () => {
        const n = client.statusLog.length;
        const published = client.published.length;
        const lenses = await titles();
        await save();
        await quiet();
        assert.deepEqual(since(n).map(p => [p.pending, p.checks.map(c => c.state)]), []);
        assert.equal(client.published.slice(published).filter(p => p.uri === uri).length, 0);
        assert.deepEqual(await titles(), lenses);
    });

    it('an edit is "changed" until its save, which runs only the check it changed', async () => {
        const edited = TEXT.replace('x = 2;', 'x = 3;');
        await client.change(uri, edited, 2);
        assert.ok(await client.until(() => client.status.get(uri)?.checks.some(c => c.state === 'stale') === true, 20_000));
        const [t1, t2] = await titles();
        assert.match(t1, /^✓ verified in \d+ ms$/);
        assert.equal(t2, '… changed: checked on save');
        const n = client.statusLog.length;
        await client.notify('textDocument/didSave', { textDocument: { uri }, text: edited });
        checkDiagnostics(await client.checksDone(uri, 120_000, 2), []);
        const ran = new Set(since(n).flatMap(p => p.checks.filter(c => c.state === 'running' || c.state === 'queued').map(c => c.name)));
        assert.deepEqual([...ran], ['T2']);
        // and a save of that text again: nothing
        const m = client.statusLog.length;
        await client.notify('textDocument/didSave', { textDocument: { uri }, text: edited });
        await quiet();
        assert.deepEqual(since(m), []);
    });
});

// Closing a document: the editor discards its unsaved text. The server then
// checks a workspace file as saved on disk, and forgets a document that does
// not exist on disk (an untitled one) with its diagnostics. The bundled server
// over stdio, a real LSP client, real Z3.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { fileUri, LspClient } from '../util/lsp-client.js';

const SAVED = `//@ writable_if tid == T1;
int x = 0;
thread T1 { x = 1; }
thread T2 { int y = 0; }
`;
const RACY = SAVED.replace('int y = 0;', 'x = 2;');

describe('closing a document', () => {
    let client: LspClient;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-close-'));
    before(async () => {
        fs.writeFileSync(path.join(dir, 'a.calvin'), SAVED);
        client = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', diskCache: false } });
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it('with unsaved edits: the file is checked as saved again (no result of the discarded text stays)', async () => {
        const uri = fileUri(path.join(dir, 'a.calvin'));
        await client.open(uri, SAVED, 1);
        assert.deepEqual((await client.checksDone(uri)).map(d => d.code), []);
        const racy = client.waitForDiagnostics(uri, p => p.version === 2 && p.diagnostics.some(d => d.code === 'race'), 30_000);
        await client.change(uri, RACY, 2);
        await racy;
        const cleared = client.waitForDiagnostics(uri, p => p.diagnostics.length === 0, 30_000);
        await client.close(uri);
        await cleared;
        assert.deepEqual((await client.checksDone(uri)).map(d => d.code), []);
        assert.ok(client.status.get(uri)!.checks.every(c => c.state === 'verified'), JSON.stringify(client.status.get(uri)));
    });

    it('an untitled document: its diagnostics and checks go with it, and it can be opened again at once', async () => {
        const uri = 'untitled:Untitled-1';
        const racy = client.waitForDiagnostics(uri, p => p.diagnostics.some(d => d.code === 'race'), 30_000);
        await client.open(uri, RACY, 1);
        await racy;
        assert.ok((await client.checksDone(uri)).some(d => d.code === 'race'));
        assert.ok((client.status.get(uri)?.checks.length ?? 0) > 0);
        const cleared = client.waitForDiagnostics(uri, p => p.diagnostics.length === 0, 10_000);
        await client.close(uri);
        await cleared;
        const status = await client.request<{ checks: unknown[] }>('calvin/checkStatus', { uri });
        assert.deepEqual(status.checks, []);
        // opened again right away (before its rebuild): requests wait for it instead of failing
        const again = client.waitForDiagnostics(uri, p => p.version === 1 && p.diagnostics.some(d => d.code === 'race'), 30_000);
        await client.open(uri, RACY, 1);
        const [symbols, references] = await Promise.all([
            client.request<lsp.DocumentSymbol[]>('textDocument/documentSymbol', { textDocument: { uri } }),
            // (a request that waits for the workspace, not for the document)
            client.request<lsp.Location[]>('textDocument/references', { textDocument: { uri }, position: { line: 1, character: 4 }, context: { includeDeclaration: true } }),
        ]);
        assert.deepEqual(symbols.map(x => x.name).filter(n => n === 'T1' || n === 'T2'), ['T1', 'T2']);
        assert.deepEqual(references.map(r => r.range.start.line).sort(), [1, 2, 3]);
        await again;
        // closed and opened again without a pause: the reopened text stays checked
        const clean = client.waitForDiagnostics(uri, p => p.version === 2 && p.diagnostics.length === 0, 30_000);
        await client.close(uri);
        await client.open(uri, SAVED, 2);
        await clean;
        assert.deepEqual((await client.checksDone(uri)).map(d => d.code), []);
        assert.ok(client.latest.get(uri)?.version === 2, JSON.stringify(client.latest.get(uri)));
        await client.close(uri);
        await client.settled(uri, 300);
        assert.deepEqual(client.errorLogs(), []);
    });
});

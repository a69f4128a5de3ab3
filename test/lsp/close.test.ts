// Closing a document: the editor discards its unsaved text. The server then
// checks a workspace file as saved on disk. The bundled server over stdio, a
// real LSP client, real Z3.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
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
});

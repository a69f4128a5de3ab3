// Verification diagnostics in the language server (issue 3): the real bundled
// server over stdio with the verifier on (`verifyOn: 'change'`) and the real Z3.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES } from '../util/paths.js';
import { fileUri, LspClient } from '../util/lsp-client.js';

const FILE = path.join(EXAMPLES, 'simple_lock_invariant.calvin');
const URI = fileUri(FILE);
const TEXT = fs.readFileSync(FILE, 'utf8');

const summary = (ds: Array<{ range: { start: { line: number } }; code?: unknown; severity?: number }>) =>
    ds.map(d => `${d.range.start.line + 1}:${String(d.code)}:${d.severity}`).sort();

describe('language server: verification diagnostics', () => {
    let client: LspClient;
    before(async () => {
        client = await LspClient.start({ initializationOptions: { verifyOn: 'change', timeLimitMs: 10_000, maxWorkers: 1 } });
    });
    after(async () => { await client?.shutdown(); });

    it('is never clean while verifying, then shows exactly the verifier findings', async () => {
        await client.open(URI, TEXT);
        // The front end found nothing; while the verification runs the file says so.
        const first = await client.waitForDiagnostics(URI, p => p.diagnostics.length > 0, 20_000);
        assert.deepEqual(summary(first.diagnostics), ['1:verifying:3'], JSON.stringify(first.diagnostics));
        const done = await client.waitForDiagnostics(URI, p => !p.diagnostics.some(d => d.code === 'verifying'), 120_000);
        // The marked bug of the example (line 33, `@expect invariant`), nothing else.
        assert.deepEqual(summary(done.diagnostics), ['33:invariant:1'], JSON.stringify(done.diagnostics));
        const d = done.diagnostics[0];
        assert.equal(d.source, 'calvin');
        assert.match(d.message, /invariant 'Mutex\.m == 0 ==> x >= 0'/);
        assert.ok(d.relatedInformation && d.relatedInformation.length > 0, 'related information points at the invariant');
    });

    it('re-verifies after an edit that fixes the bug', async () => {
        const fixed = TEXT.replace('x = -1;', 'x = 1;');
        assert.notEqual(fixed, TEXT);
        await client.change(URI, fixed, 2);
        await client.waitForDiagnostics(URI, p => p.diagnostics.some(d => d.code === 'verifying'), 20_000);
        const done = await client.waitForDiagnostics(URI, p => !p.diagnostics.some(d => d.code === 'verifying'), 120_000);
        assert.deepEqual(done.diagnostics, []);
        client.assertAlive();
    });
});

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

    it('says it is verifying in its status, never as a diagnostic, then shows exactly the verifier findings', async () => {
        const seen = client.statusLog.length;
        await client.open(URI, TEXT);
        // while the verification runs the status says so (pending); no diagnostic stands for progress
        assert.ok(await client.until(() => client.statusLog.slice(seen).some(p => p.uri === URI && p.pending === true), 20_000), 'a pending status');
        const diagnostics = await client.checksDone(URI, 120_000, 5);
        assert.ok(client.published.filter(p => p.uri === URI).every(p => p.diagnostics.every(d => d.code !== 'verifying')), 'no "verifying" diagnostic');
        // The marked bug of the example (line 33, `@expect invariant`), nothing else.
        assert.deepEqual(summary(diagnostics), ['33:invariant:1'], JSON.stringify(diagnostics));
        const d = diagnostics[0];
        assert.equal(d.source, 'calvin');
        assert.match(d.message, /invariant 'Mutex\.m == 0 ==> x >= 0'/);
        assert.ok(d.relatedInformation && d.relatedInformation.length > 0, 'related information points at the invariant');
    });

    it('hides its findings as soon as the front end reports an error, and shows them again once it is fixed', async () => {
        const mark = client.published.length;
        const broken = TEXT.replace('x = -1;', 'x = -1');
        assert.notEqual(broken, TEXT);
        await client.change(URI, broken, 2);
        await client.waitForDiagnostics(URI, p => p.version === 2 && p.diagnostics.some(d => d.code === 'syntax'), 20_000);
        await client.settled(URI, 500);
        const mine = client.published.slice(mark).filter(p => p.uri === URI && p.version === 2);
        assert.ok(mine.length > 0);
        // (every publication about the broken text: never the verifier's result of the previous one beside the error)
        assert.deepEqual(mine.map(p => summary(p.diagnostics).filter(x => !x.includes(':syntax:'))), mine.map(() => []), JSON.stringify(mine));
        await client.change(URI, TEXT, 3);
        assert.deepEqual(summary(await client.waitForDiagnostics(URI, p => p.version === 3 && p.diagnostics.length > 0, 60_000).then(p => p.diagnostics)), ['33:invariant:1']);
    });

    it('re-verifies after an edit that fixes the bug', async () => {
        const fixed = TEXT.replace('x = -1;', 'x = 1;');
        assert.notEqual(fixed, TEXT);
        const done = await client.editAndVerify(URI, fixed, 4);
        assert.deepEqual(done, []);
        client.assertAlive();
    });
});

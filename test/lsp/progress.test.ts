// Work-done progress of a run of checks over a workspace with a failing
// program (whose witness search runs after its check): one progress, its
// count never going back, ended once every check is final. The bundled
// server over stdio, a real LSP client, real Z3.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EXAMPLES } from '../util/paths.js';
import { defaultCapabilities, fileUri, LspClient } from '../util/lsp-client.js';

describe('work-done progress of a workspace run', () => {
    let client: LspClient;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-progress-'));
    const names = ['simple_lock_ok', 'vector_race', 'producer_consumer_ok'];
    before(async () => {
        for (const n of names) fs.copyFileSync(path.join(EXAMPLES, `${n}.calvin`), path.join(dir, `${n}.calvin`));
        const capabilities = defaultCapabilities();
        capabilities.window = { workDoneProgress: true };
        client = await LspClient.start({ rootPath: dir, capabilities, initializationOptions: { verifyOn: 'change', diskCache: false } });
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it('ends once every check is final, and its count never goes back', async () => {
        const uri = fileUri(path.join(dir, 'vector_race.calvin'));
        await client.open(uri, fs.readFileSync(path.join(dir, 'vector_race.calvin'), 'utf8'));
        await client.checksDone(uri, 120_000, 3);
        const progress = () => client.others.filter(o => o.method === '$/progress').map(o => (o.params as { value: { kind: string; message?: string } }).value);
        assert.ok(await client.until(() => progress().some(v => v.kind === 'end'), 30_000), JSON.stringify(progress()));
        const values = progress();
        assert.equal(values.filter(v => v.kind === 'begin').length, values.filter(v => v.kind === 'end').length, JSON.stringify(values));
        let last = -1;
        for (const v of values) {
            if (v.kind === 'begin') last = -1;
            const m = /^(\d+)\/\d+ checks$/.exec(v.message ?? '');
            if (!m) continue;
            assert.ok(Number(m[1]) >= last, `the count went back: ${JSON.stringify(values)}`);
            last = Number(m[1]);
        }
    });
});

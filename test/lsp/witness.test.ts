// Witnesses in the editor (issue 14), end to end: the bundled server over
// stdio, a real LSP client, the real Z3. After a check fails, its errors get
// a concrete interleaving in the background (calvin/checkStatus says when it
// is ready) without delaying the diagnostics; the steps are the diagnostic's
// related information (any LSP editor lists them); "Show interleaving" opens
// them as a Markdown document with links to the lines.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { EXAMPLES } from '../util/paths.js';
import { fileUri, LspClient } from '../util/lsp-client.js';

describe('witnesses in the editor', () => {
    let client: LspClient;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-witness-'));
    const uri = fileUri(path.join(dir, 'simple_lock_unlocked.calvin'));
    before(async () => {
        client = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it('the diagnostics come first; then the witnesses, listed as related information once ready', async () => {
        await client.open(uri, fs.readFileSync(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'), 'utf8'));
        const first = await client.checksDone(uri, 120_000, 5);
        assert.ok(first.some(d => d.code === 'assert'));
        // before its witness, a diagnostic gives the modular check's values
        assert.ok(first.some(d => / \[.* = .*\]/.test(d.message)), JSON.stringify(first.map(d => d.message)));
        // (the status says when every witness search of a check has finished)
        const ready = () => {
            const st = client.status.get(uri) as { checks: Array<{ name: string; witnesses?: string }> } | undefined;
            return st !== undefined && st.checks.some(c => c.witnesses === 'ready') && st.checks.every(c => c.witnesses !== 'pending');
        };
        assert.ok(await client.until(ready, 120_000), JSON.stringify(client.status.get(uri)));
        assert.ok(await client.until(() => (client.latest.get(uri)?.diagnostics ?? []).every(d => d.severity !== 1 || (d.data as { witness?: unknown })?.witness !== undefined), 30_000));
        const diags = client.latest.get(uri)!.diagnostics.filter(d => d.severity === 1);
        for (const d of diags) {
            const w = (d.data as { witness: { status: string; steps: Array<{ line: number; thread: string }> } }).witness;
            assert.equal(w.status, 'confirmed', JSON.stringify(d));
            // with it, they are left out (the witness's steps give the real program's values)
            assert.doesNotMatch(d.message, / \[.* = .*\]/);
            const steps = (d.relatedInformation ?? []).filter(r => r.message.startsWith('witness '));
            assert.equal(steps.length, w.steps.length, 'every step is a related location');
            assert.match(steps[0].message, /^witness 1\. (T1|T2): /);
            assert.match(steps[steps.length - 1].message, /<- here$/);
            for (const s of steps) assert.equal(s.location.uri, uri);
        }
    });

    it("'Show interleaving' gives the trace as Markdown, with a link per step", async () => {
        const assertion = client.latest.get(uri)!.diagnostics.find(d => d.code === 'assert')!;
        const actions = await client.request<lsp.CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range: assertion.range, context: { diagnostics: [assertion] } });
        const show = actions.find(a => /^Show interleaving \(\d+ steps\)$/.test(a.title));
        assert.ok(show?.command, JSON.stringify(actions.map(a => a.title)));
        const r = await client.request<{ markdown: string; steps: Array<{ uri: string; line: number; text: string }> }>('workspace/executeCommand', { command: show.command.command, arguments: show.command.arguments });
        assert.match(r.markdown, /^# Interleaving: assertion 'x > 0' may fail/);
        assert.match(r.markdown, /\| # \| thread \| where \| step \| values \|/);
        assert.match(r.markdown, /\| \d+ \| T2 \| \[simple_lock_unlocked\.calvin:29\]\(file:\/\/[^)]*#L29\) \| `x = 0;` \| x: \d+ → 0 \|/);
        assert.ok(r.steps.length > 0 && r.steps.every(s => s.uri === uri && s.line >= 0));
    });
});

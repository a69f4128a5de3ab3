// Inferred protection in the editor (issue 13), end to end: the bundled server
// over stdio, a real LSP client, the real Z3. A program without protection
// annotations verifies; the hover of a field shows the guard Calvin inferred
// and where it comes from; the code lens says how many inferred annotations a
// check used; "Insert all inferred annotations" gives a program that verifies
// with inference off; a race without common protection names both sides.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { applyEdits, COUNTER } from '../util/lsp-edits.js';
import { checkDiagnostics, fileUri, LspClient } from '../util/lsp-client.js';


const NO_COMMON = `int hits = 0;
final Object a = new Object();
final Object b = new Object();
class Object { }
thread P { synchronized (a) { hits = hits + 1; } }
thread Q { synchronized (b) { hits = hits + 2; } }
`;


describe('inferred protection in the editor', () => {
    let client: LspClient;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-infer-'));
    before(async () => {
        client = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it('a lock-protected counter without annotations verifies; the lens says how many inferred annotations it used', async () => {
        const uri = fileUri(path.join(dir, 'counter.calvin'));
        await client.open(uri, COUNTER);
        checkDiagnostics(await client.checksDone(uri, 120_000, 2), []);
        const lenses = await client.request<lsp.CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
        const t1 = lenses.find(l => l.range.start.line === 13)?.command?.title ?? '';
        assert.match(t1, /^✓ verified in \d+ ms \(\d+ inferred\)$/, JSON.stringify(lenses.map(l => l.command?.title)));
    });

    it('the hover of a field shows the inferred guard and the writes it comes from', async () => {
        const uri = fileUri(path.join(dir, 'counter.calvin'));
        const hover = await client.request<lsp.Hover>('textDocument/hover', { textDocument: { uri }, position: { line: 11, character: 5 } });
        const md = (hover.contents as lsp.MarkupContent).value;
        assert.match(md, /\*\*Inferred protection\*\*/);
        assert.match(md, /`writable_if Lock\.m == tid;`/);
        assert.match(md, /inferred from the writes at lines 16 and 22, all holding Lock\.m/);
    });

    it("'Insert all inferred annotations' gives a program that verifies with inference off", async () => {
        const uri = fileUri(path.join(dir, 'counter.calvin'));
        const actions = await client.request<lsp.CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] } });
        const all = actions.find(a => /^Insert all inferred annotations \(\d+\)$/.test(a.title));
        assert.ok(all?.edit?.changes?.[uri], JSON.stringify(actions.map(a => a.title)));
        const annotated = applyEdits(COUNTER, all.edit.changes[uri]);
        // (every write of count adds 1 under the lock: the counter only grows)
        assert.match(annotated, /\/\/@ writable_if Lock\.m == tid;\n\/\/@ environment count <= count';\nint count = 0;/);
        assert.match(annotated, /\/\/@ writable_if Lock\.m == 0 \|\| Lock\.m == tid;\n {2}\/\/@ environment Lock\.m != tid ==> Lock\.m' != tid;\n {2}static volatile int m = 0;/);
        // the field's own action inserts its annotation only
        const at = await client.request<lsp.CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 11, character: 5 }, end: { line: 11, character: 5 } }, context: { diagnostics: [] } });
        assert.ok(at.some(a => a.title === 'Insert the 2 inferred annotations for count'), JSON.stringify(at.map(a => a.title)));

        const off = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false, infer: false } });
        try {
            const u2 = fileUri(path.join(dir, 'counter-annotated.calvin'));
            await off.open(u2, annotated);
            checkDiagnostics(await off.checksDone(u2, 120_000, 2), []);
            // without the annotations and with inference off, the races are back (the annotations made the difference)
            const u3 = fileUri(path.join(dir, 'counter-plain.calvin'));
            await off.open(u3, COUNTER);
            assert.ok((await off.checksDone(u3, 120_000, 2)).some(d => d.code === 'race'));
        } finally {
            await off.shutdown();
        }
    });

    it('a race without common protection names both writes and what each holds, with their locations', async () => {
        const uri = fileUri(path.join(dir, 'nocommon.calvin'));
        await client.open(uri, NO_COMMON);
        const ds = await client.checksDone(uri, 120_000, 2);
        const race = ds.find(d => d.code === 'race' && d.range.start.line === 4);
        assert.ok(race, JSON.stringify(ds));
        assert.match(race.message, /hits is written by P, holding the monitor of a and by Q, holding the monitor of b: no common protection/);
        const related = (race.relatedInformation ?? []).map(r => [r.location.range.start.line, r.message]);
        assert.deepEqual(related.filter(([, m]) => String(m).startsWith('written here')).map(([l]) => l).sort(), [4, 5]);
    });
});

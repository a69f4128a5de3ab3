// The editor experience of issue 12, end to end: the bundled server over
// stdio, a real LSP client, the real Z3. Quick fixes that lead to verified
// programs (and none that pretend to repair a race without a shared lock), the
// environment step as Markdown, code lens counts, and diagnostics that keep
// their own range across edits.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { moveRange, removes } from '../../server/src/verification/positions.js';
import { EXAMPLES } from '../util/paths.js';
import { applyEdits, COUNTER } from '../util/lsp-edits.js';
import { checkDiagnostics, defaultCapabilities, fileUri, LspClient } from '../util/lsp-client.js';



async function actionsFor(client: LspClient, uri: string, d: lsp.Diagnostic): Promise<lsp.CodeAction[]> {
    return client.request<lsp.CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range: d.range, context: { diagnostics: [d] } });
}

const RACES = [
    { code: 'race', range: [15, 2, 15, 7] as [number, number, number, number], message: 'write of count may race' },
    { code: 'race', range: [15, 10, 15, 15] as [number, number, number, number], message: 'read of count may race' },
    { code: 'race', range: [21, 2, 21, 7] as [number, number, number, number], message: 'write of count may race' },
    { code: 'race', range: [21, 10, 21, 15] as [number, number, number, number], message: 'read of count may race' },
];

describe('quick fixes lead to correct programs', () => {
    let client: LspClient;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-editor-'));
    before(async () => {
        const capabilities = defaultCapabilities();
        capabilities.textDocument!.codeAction = { disabledSupport: true, codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'refactor.rewrite'] } } };
        client = await LspClient.start({ capabilities, initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false, infer: false } });
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it("'Add writable_if' on an unannotated lock-protected counter adds the lock's environment clause and verifies in one step", async () => {
        const uri = fileUri(path.join(dir, 'counter.calvin'));
        await client.open(uri, COUNTER);
        const diags = await client.checksDone(uri, 120_000, 2);
        checkDiagnostics(diags, RACES);
        const actions = await actionsFor(client, uri, diags.find(d => d.range.start.line === 15 && d.range.start.character === 10)!);
        // count = count + 1 loses updates under a race: no volatile
        assert.deepEqual(actions.map(a => a.title), ["Add 'writable_if Lock.m == tid' to count (and 'environment m == tid ==> m' == m')"]);
        const fixed = applyEdits(COUNTER, actions[0].edit!.changes![uri]);
        assert.match(fixed, /  \/\/@ environment m == tid ==> m' == m;\n  static volatile int m = 0;/);
        assert.match(fixed, /\/\/@ writable_if Lock\.m == tid;\nint count = 0;/);
        checkDiagnostics(await client.editAndVerify(uri, fixed, 2), []);
        assert.deepEqual(client.status.get(uri)?.checks.map(c => [c.name, c.state]), [['T1', 'verified'], ['T2', 'verified']]);
    });

    it("a spin lock storing a constant (cas(locked, 0, 1)) is offered the holder's id, and then verifies", async () => {
        const uri = fileUri(path.join(dir, 'constant.calvin'));
        const text = COUNTER.replace('cas(m, 0, tid)', 'cas(m, 0, 1)');
        await client.open(uri, text);
        checkDiagnostics(await client.checksDone(uri, 120_000, 2), RACES);
        const d = client.latest.get(uri)!.diagnostics[0];
        const actions = await actionsFor(client, uri, d);
        assert.deepEqual(actions.map(a => a.title), ["Store the holder's id in m (cas(m, 0, tid)) and add 'writable_if Lock.m == tid' to count"]);
        const fixed = applyEdits(text, actions[0].edit!.changes![uri]);
        assert.match(fixed, /while \(!cas\(m, 0, tid\)\)/);
        checkDiagnostics(await client.editAndVerify(uri, fixed, 2), []);
    });

    it('no fix pretends to repair a race whose accesses share no lock: the list says why (simple_lock_unlocked)', async () => {
        const uri = fileUri(path.join(dir, 'unlocked.calvin'));
        await client.open(uri, fs.readFileSync(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'), 'utf8'));
        const diags = await client.checksDone(uri, 120_000, 5);
        checkDiagnostics(diags, [
            { code: 'race', range: [22, 2, 22, 3], message: 'write of x may race' },
            { code: 'race', range: [22, 2, 22, 6], message: 'read of x may race' },
            { code: 'assert', range: [23, 2, 23, 15], message: /^assertion 'x > 0' may fail \[x = 0; another thread changed x from 1 to 0 just before it was read\]$/ },
            { code: 'race', range: [23, 9, 23, 10], message: 'read of x may race' },
        ]);
        // the read the other thread's step changed: in related information (it moves with the text), not as a line number
        const assertion = diags.find(d => d.code === 'assert')!;
        assert.deepEqual(assertion.relatedInformation?.map(r => [r.location.range.start.line, r.message]), [[23, 'x read here, just after another thread changed it']]);
        for (const race of diags.filter(d => d.code === 'race')) {
            const actions = await actionsFor(client, uri, race);
            assert.deepEqual(actions.map(a => [a.title, a.disabled?.reason, a.edit !== undefined]), [
                ['Add writable_if to x', 'x is written holding Mutex.m at line 29 and written without it at line 23', false],
            ]);
        }
        // the code lens counts what is shown, and says how long the check took
        const lenses = await client.request<lsp.CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
        assert.match(lenses.find(l => l.range.start.line === 21)?.command?.title ?? '', /^✗ 4 problems in \d+ ms$/);
        // "Show the environment step": Markdown, with the values and the clauses that let the step happen; no prompt
        const actions = await actionsFor(client, uri, assertion);
        const show = actions.find(a => a.title === 'Show the environment step');
        assert.ok(show?.command, JSON.stringify(actions));
        const result = await client.request<{ markdown: string }>('workspace/executeCommand', { command: show.command.command, arguments: show.command.arguments });
        assert.match(result.markdown, /^### assertion 'x > 0' may fail/);
        assert.match(result.markdown, /\| `x` \| `0` \|/);
        assert.match(result.markdown, /`x` from `1` to `0` \(written by T1, T2\)/);
        assert.match(result.markdown, /- `Mutex\.m == tid ==> x' == x` — environment of the program \(line 18\)/);
        assert.ok(!client.others.some(o => o.method === 'window/showMessageRequest'), 'no prompt');
        // the hover at the failure shows the same document
        const hover = await client.request<lsp.Hover>('textDocument/hover', { textDocument: { uri }, position: assertion.range.start });
        assert.match((hover.contents as lsp.MarkupContent).value, /### assertion 'x > 0' may fail/);
    });

    it('a client without codeAction.disabledSupport gets no disabled action and none that changes nothing', async () => {
        const other = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false, infer: false } });
        try {
            const uri = fileUri(path.join(dir, 'unlocked2.calvin'));
            await other.open(uri, fs.readFileSync(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'), 'utf8'));
            const races = (await other.checksDone(uri, 120_000, 5)).filter(d => d.code === 'race');
            assert.equal(races.length, 3);
            for (const race of races) {
                // LSP: a code action has an edit or a command; `disabled` only for clients that declare disabledSupport
                const actions = await actionsFor(other, uri, race);
                assert.deepEqual(actions.map(a => a.title), [], JSON.stringify(actions));
            }
            // all of them at once (and the request without a context's diagnostics) likewise
            const all = await other.request<lsp.CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range: races[0].range, context: { diagnostics: races } });
            assert.deepEqual(all.filter(a => a.disabled !== undefined || (a.edit === undefined && a.command === undefined)), []);
        } finally {
            await other.shutdown();
        }
    });

    it('messages quoting a multi-line clause are on one line', async () => {
        const uri = fileUri(path.join(dir, 'multiline.calvin'));
        const text = 'int x = 1;\n/*@ invariant x >= 0\n      && x <= 10; */\nint y = 0;\nthread T { x = 11; }\n';
        await client.open(uri, text);
        const diags = await client.checksDone(uri, 120_000, 1);
        checkDiagnostics(diags, [{ code: 'invariant', range: [4, 11, 4, 18], message: "the write of x may break the invariant 'x >= 0 && x <= 10'" }]);
        for (const d of diags) assert.doesNotMatch(d.message, /\n|\\n/);
    });
});

describe('diagnostics keep their own range across edits', () => {
    const r = (a: number, b: number, c: number, d: number) => ({ start: { line: a, character: b }, end: { line: c, character: d } });
    it('moves a range after an edit, never stretches it over inserted lines', () => {
        // lines inserted before: moved whole
        assert.deepEqual(moveRange(r(5, 2, 5, 3), { start: { line: 1, character: 0 }, oldEnd: { line: 1, character: 0 }, newEnd: { line: 3, character: 0 } }), r(7, 2, 7, 3));
        // text inserted at its start: pushed along
        assert.deepEqual(moveRange(r(5, 2, 5, 3), { start: { line: 5, character: 2 }, oldEnd: { line: 5, character: 2 }, newEnd: { line: 6, character: 0 } }), r(6, 0, 6, 1));
        // lines inserted inside it: its start and its length stay
        assert.deepEqual(moveRange(r(5, 2, 5, 9), { start: { line: 5, character: 4 }, oldEnd: { line: 5, character: 4 }, newEnd: { line: 8, character: 1 } }), r(5, 2, 5, 9));
        // an edit after it: unchanged
        assert.deepEqual(moveRange(r(5, 2, 5, 3), { start: { line: 5, character: 3 }, oldEnd: { line: 6, character: 0 }, newEnd: { line: 9, character: 0 } }), r(5, 2, 5, 3));
    });

    it('a range whose text an edit removed or replaced is gone (its diagnostic would sit on other code)', () => {
        // the line deleted
        assert.ok(removes(r(5, 2, 5, 3), { start: { line: 5, character: 0 }, oldEnd: { line: 6, character: 0 }, newEnd: { line: 5, character: 0 } }));
        // `x = 2;` replaced by `int z = 5;`
        assert.ok(removes(r(5, 2, 5, 3), { start: { line: 5, character: 2 }, oldEnd: { line: 5, character: 7 }, newEnd: { line: 5, character: 12 } }));
        // an insertion, an edit of part of it, an edit elsewhere: it stays
        assert.ok(!removes(r(5, 2, 5, 3), { start: { line: 5, character: 2 }, oldEnd: { line: 5, character: 2 }, newEnd: { line: 5, character: 5 } }));
        assert.ok(!removes(r(5, 2, 5, 9), { start: { line: 5, character: 4 }, oldEnd: { line: 5, character: 6 }, newEnd: { line: 5, character: 5 } }));
        assert.ok(!removes(r(5, 2, 5, 3), { start: { line: 7, character: 0 }, oldEnd: { line: 8, character: 0 }, newEnd: { line: 7, character: 0 } }));
    });
});

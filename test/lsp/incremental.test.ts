// Incremental verification in the language server (issue 4), end to end: the
// bundled server over stdio, a real LSP client, the real Z3 in check workers.
// What is asserted comes from `calvin/checkStatus` (docs/protocol.md) and the
// published diagnostics, compared exactly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { EXAMPLES } from '../util/paths.js';
import { cliDiagnostics, publishedKeys } from '../util/cli-diagnostics.js';
import { checkDiagnostics, defaultCapabilities, fileUri, LspClient, type CheckStatusParams } from '../util/lsp-client.js';

const SIMPLE_LOCK = fs.readFileSync(path.join(EXAMPLES, 'simple_lock_ok.calvin'), 'utf8');

function tempWorkspace(files: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-ide-'));
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return dir;
}

function replaceOnce(text: string, from: string, to: string): string {
    const i = text.indexOf(from);
    assert.ok(i >= 0 && text.indexOf(from, i + 1) < 0, `'${from}' must occur exactly once`);
    return text.slice(0, i) + to + text.slice(i + from.length);
}

/** The edit of the "Insert abstraction stub" action at the method name on the first line containing `needle`. */
async function stubEdit(client: LspClient, uri: string, text: string, needle: string, method: string): Promise<lsp.TextEdit> {
    const lines = text.split('\n');
    const line = lines.findIndex(l => l.includes(needle));
    const pos = { line, character: lines[line].indexOf(method) };
    const actions = await client.request<lsp.CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range: { start: pos, end: pos }, context: { diagnostics: [] } });
    const stub = actions.find(a => a.title === `Insert abstraction stub for '${method}'`);
    assert.ok(stub?.edit?.changes?.[uri], JSON.stringify(actions.map(a => a.title)));
    return stub.edit.changes[uri][0];
}

/** The checks that were queued or running in these status notifications. */
function ran(log: CheckStatusParams[], uri: string): string[] {
    const names = new Set<string>();
    for (const p of log) if (p.uri === uri) for (const c of p.checks) if (c.state === 'queued' || c.state === 'running') names.add(c.name);
    return [...names].sort();
}

function states(client: LspClient, uri: string): Array<[string, string, boolean]> {
    return (client.status.get(uri)?.checks ?? []).map(c => [c.name, c.state, c.cached]);
}

/** Send an edit and wait until its checks have finished. */
async function edit(client: LspClient, uri: string, text: string, version: number): Promise<lsp.Diagnostic[]> {
    // the status says pending for this text until its checks are planned and done (never a diagnostic)
    return client.editAndVerify(uri, text, version);
}

const ALL_VERIFIED = (cached: boolean): Array<[string, string, boolean]> => [
    ['initialization', 'verified', cached], ['Mutex.acquire', 'verified', cached], ['Mutex.release', 'verified', cached],
    ['T1', 'verified', cached], ['T2', 'verified', cached],
];

describe('incremental verification: caching', () => {
    const dir = tempWorkspace({ 'lock.calvin': SIMPLE_LOCK });
    const uri = fileUri(path.join(dir, 'lock.calvin'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('verifies a workspace, then reopens it from the disk cache without running anything', async () => {
        const first = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1 } });
        try {
            await first.open(uri, SIMPLE_LOCK);
            checkDiagnostics(await first.checksDone(uri, 120_000, 5), []);
            assert.deepEqual(states(first, uri), ALL_VERIFIED(false));
            assert.deepEqual(ran(first.statusLog, uri), ['Mutex.acquire', 'Mutex.release', 'T1', 'T2', 'initialization']);
        } finally {
            await first.shutdown();
        }
        assert.ok(fs.existsSync(path.join(dir, '.calvin-cache', '.gitignore')), 'the cache ignores itself for git');

        const second = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1 } });
        try {
            await second.open(uri, SIMPLE_LOCK);
            checkDiagnostics(await second.checksDone(uri, 60_000, 5), []);
            assert.deepEqual(states(second, uri), ALL_VERIFIED(true));
            assert.deepEqual(ran(second.statusLog, uri), [], 'nothing runs when every fingerprint is cached');

            // A comment and whitespace edit: every fingerprint stays, nothing runs.
            let log = second.statusLog.length;
            const commented = `// a comment\n\n${SIMPLE_LOCK.replace('x++;', 'x++;   // more')}`;
            checkDiagnostics(await edit(second, uri, commented, 2), []);
            assert.deepEqual(ran(second.statusLog.slice(log), uri), []);
            // the checks moved down with the text
            const t1 = second.status.get(uri)!.checks.find(c => c.name === 'T1')!;
            assert.equal(t1.range.start.line, SIMPLE_LOCK.split('\n').findIndex(l => l.startsWith('thread T1')) + 2);

            // An edit inside release's body: only release's own check runs (the threads use its abstraction).
            log = second.statusLog.length;
            const released = replaceOnce(commented, '    m = 0;', '    int unused = 1;\n    m = 0;');
            checkDiagnostics(await edit(second, uri, released, 3), []);
            assert.deepEqual(ran(second.statusLog.slice(log), uri), ['Mutex.release']);
            assert.deepEqual(states(second, uri).map(([n, s]) => [n, s]), ALL_VERIFIED(false).map(([n, s]) => [n, s]));

            // An edit in T2: only T2 runs.
            log = second.statusLog.length;
            const t2 = replaceOnce(released, '  x = 0;', '  x = 0;\n  int y = x;');
            checkDiagnostics(await edit(second, uri, t2, 4), []);
            assert.deepEqual(ran(second.statusLog.slice(log), uri), ['T2']);

            // A change to an environment clause: every check whose E(p) contains it runs again.
            log = second.statusLog.length;
            const env = replaceOnce(t2, "//@ environment m == tid ==> m' == m;", "//@ environment m == tid ==> m' == m && true;");
            checkDiagnostics(await edit(second, uri, env, 5), []);
            assert.deepEqual(ran(second.statusLog.slice(log), uri), ['Mutex.acquire', 'Mutex.release', 'T1', 'T2']);
        } finally {
            await second.shutdown();
        }
    });
});

describe('incremental verification: the workspace', () => {
    const names = fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin')).sort();
    const dir = tempWorkspace(Object.fromEntries(names.map(n => [n, fs.readFileSync(path.join(EXAMPLES, n), 'utf8')])));
    const uris = new Map(names.map(n => [n, fileUri(path.join(dir, n))]));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("verifies the files nobody opened, the open one first, with the CLI's diagnostics", async () => {
        // (WebAssembly: a native z3 ends most of the workspace's checks before the file is opened)
        const client = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false, solver: 'wasm' } });
        try {
            // Once the workspace's checks are queued, the last file in its order is opened.
            const opened = names.at(-1)!;
            const openedUri = uris.get(opened)!;
            assert.ok(await client.until(() => client.status.get(openedUri)?.checks.some(c => c.state === 'queued') ?? false, 60_000), 'the workspace is queued');
            const openedAt = client.statusLog.length;
            await client.open(openedUri, fs.readFileSync(path.join(dir, opened), 'utf8'));
            const final = (c: { state: string }) => c.state !== 'stale' && c.state !== 'queued' && c.state !== 'running';
            const quiet = () => [...uris.values()].every(u => {
                const d = client.latest.get(u);
                const checks = client.status.get(u)?.checks ?? [];
                return d !== undefined && !client.status.get(u)?.pending && checks.length > 0 && checks.every(final);
            });
            assert.ok(await client.until(quiet, 180_000), 'every file of the workspace is verified');
            assert.deepEqual(publishedKeys(client, uris), cliDiagnostics(dir).keys);

            // The open file's checks moved ahead of the workspace's: between its opening and the
            // end of the last of them, only the checks already running or ending then ended too.
            const openedDone = client.statusLog.findIndex(p => p.uri === openedUri && p.checks.length > 0 && p.checks.every(final));
            const doneBefore = new Set<string>();
            for (const p of client.statusLog.slice(0, openedAt)) {
                if (p.uri !== openedUri) for (const c of p.checks) if (final(c)) doneBefore.add(`${p.uri} ${c.key}`);
            }
            const othersDone = new Set<string>();
            for (const p of client.statusLog.slice(openedAt, openedDone)) {
                if (p.uri !== openedUri) for (const c of p.checks) if (final(c) && !doneBefore.has(`${p.uri} ${c.key}`)) othersDone.add(`${p.uri} ${c.key}`);
            }
            const all = names.reduce((n, f) => n + (client.status.get(uris.get(f)!)?.checks.length ?? 0), 0);
            assert.ok(othersDone.size <= 2, `${othersDone.size} of the workspace's ${all} checks ended before the open file's: ${[...othersDone].join(', ')}`);
        } finally {
            await client.shutdown();
        }
    });
});

describe('incremental verification: a deleted file', () => {
    it('leaves its program and shows nothing; the files it used are verified on their own', async () => {
        const [lib, main] = SIMPLE_LOCK.split(/(?=\/\*@ environment Mutex\.m)/);
        const dir = tempWorkspace({ 'lib.calvin': lib, 'main.calvin': main });
        const libUri = fileUri(path.join(dir, 'lib.calvin'));
        const mainUri = fileUri(path.join(dir, 'main.calvin'));
        const client = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
        try {
            checkDiagnostics(await client.checksDone(mainUri, 120_000, 2), []);
            checkDiagnostics(await client.checksDone(libUri, 120_000, 2), []);
            assert.deepEqual(states(client, libUri).map(([n, st]) => [n, st]), [['Mutex.acquire', 'verified'], ['Mutex.release', 'verified']]);
            const log = client.statusLog.length;
            fs.rmSync(path.join(dir, 'main.calvin'));
            await client.notify('workspace/didChangeWatchedFiles', { changes: [{ uri: mainUri, type: 3 }] });
            assert.ok(await client.until(() => client.latest.get(mainUri)?.diagnostics.length === 0
                && client.statusLog.slice(log).some(p => p.uri === libUri), 20_000),
                `the deleted file has no diagnostics (${JSON.stringify(client.latest.get(mainUri)?.diagnostics.map(d => d.code))}), the library is planned again (${client.statusLog.slice(log).filter(p => p.uri === libUri).length} notifications)`);
            // (its checks run again: their program, hence E(p), is another one now)
            checkDiagnostics(await client.checksDone(libUri, 60_000, 2), []);
            assert.deepEqual(states(client, libUri).map(([n, st]) => [n, st]), [['Mutex.acquire', 'verified'], ['Mutex.release', 'verified']]);
            checkDiagnostics(client.latest.get(mainUri)!.diagnostics, []);
            assert.deepEqual(client.errorLogs(), []);
        } finally {
            await client.shutdown();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe('incremental verification: calvin.verifyOn = save', () => {
    it('verifies a file when it is saved, not when it is opened or edited', async () => {
        const text = fs.readFileSync(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'), 'utf8');
        const client = await LspClient.start({ initializationOptions: { verifyOn: 'save', maxWorkers: 1, diskCache: false } });
        try {
            const uri = fileUri(path.join(os.tmpdir(), 'calvin-save', 'simple_lock_unlocked.calvin'));
            await client.open(uri, text);
            await client.waitForDiagnostics(uri, () => true, 20_000);
            // nothing is verified before a save: front-end diagnostics only, and no check runs
            await new Promise(r => setTimeout(r, 1500));
            checkDiagnostics(client.latest.get(uri)!.diagnostics, []);
            assert.deepEqual(ran(client.statusLog, uri), []);

            await client.notify('textDocument/didSave', { textDocument: { uri } });
            const saved = await client.checksDone(uri, 120_000, 5);
            // (x++ without the lock: its read and its write race)
            assert.deepEqual(saved.map(d => d.code).sort(), ['assert', 'race', 'race', 'race']);

            // an edit is not verified until the next save; the findings stay on their lines
            const log = client.statusLog.length;
            const edited = `// edited\n${text}`;
            await client.change(uri, edited, 2);
            await new Promise(r => setTimeout(r, 1500));
            assert.deepEqual(ran(client.statusLog.slice(log), uri), []);
            assert.deepEqual(client.latest.get(uri)!.diagnostics.map(d => [d.code, d.range.start.line]).sort(),
                saved.map(d => [d.code, d.range.start.line + 1]).sort());

            // T1 takes the lock: its check is stale (not run, not shown as verified) until the save
            const fixed = replaceOnce(edited, '  x++;               // @expect race @allow env invariant\n  assert x > 0;      // @expect race assert\n',
                '  Mutex.acquire();\n  x++;\n  assert x > 0;\n  Mutex.release();\n');
            await client.change(uri, fixed, 3);
            assert.ok(await client.until(() => states(client, uri).some(([n, st]) => n === 'T1' && st === 'stale'), 20_000), JSON.stringify(states(client, uri)));
            await new Promise(r => setTimeout(r, 1500));
            assert.deepEqual(ran(client.statusLog.slice(log), uri), []);
            const stale = states(client, uri).filter(([, st]) => st === 'stale').map(([n]) => n).sort();
            assert.ok(states(client, uri).every(([, st]) => st === 'stale' || st === 'verified'), JSON.stringify(states(client, uri)));
            const lenses = await client.request<lsp.CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
            assert.ok(lenses.some(l => l.command?.title === '… changed: checked on save'), JSON.stringify(lenses.map(l => l.command?.title)));

            const before = client.statusLog.length;
            await client.notify('textDocument/didSave', { textDocument: { uri } });
            assert.ok(await client.until(() => states(client, uri).some(([n, st]) => n === 'T1' && st === 'verified'), 60_000), JSON.stringify(states(client, uri)));
            checkDiagnostics(await client.checksDone(uri, 60_000, 5), []);
            // exactly the stale checks ran
            assert.deepEqual(ran(client.statusLog.slice(before), uri), stale);
        } finally {
            await client.shutdown();
        }
    });
});

describe('incremental verification: typing, manual runs, progress', () => {
    const VECTOR = fs.readFileSync(path.join(EXAMPLES, 'vector_ok.calvin'), 'utf8');

    it('never shows a result computed for a text the user has already changed', async () => {
        const client = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
        try {
            const uri = fileUri(path.join(os.tmpdir(), 'calvin-typing', 'vector_ok.calvin'));
            await client.open(uri, VECTOR);
            assert.ok(await client.until(() => states(client, uri).some(([n, st]) => n === 'Writer' && st === 'running'), 60_000), 'Writer runs');
            // Type into Writer's body, a keystroke every 80 ms (the debounce never ends) for 3 s.
            const log = client.statusLog.length;
            let text = VECTOR;
            for (let i = 0; i < 38; i++) {
                text = replaceOnce(text, 'thread Writer[*] {\n', `thread Writer[*] {\n  int k${i} = ${i};\n`);
                await client.change(uri, text, i + 2);
                await new Promise(r => setTimeout(r, 80));
            }
            const typing = client.statusLog.slice(log).filter(p => p.uri === uri).flatMap(p => p.checks).filter(c => c.name === 'Writer').map(c => c.state);
            assert.ok(!typing.includes('verified') && !typing.includes('failed'), `Writer while typing: ${typing.join(', ')}`);
            checkDiagnostics(await client.checksDone(uri, 120_000, 3), []);
            assert.deepEqual(states(client, uri).map(([n, st]) => [n, st]), [['initialization', 'verified'], ['Writer', 'verified'], ['Reader', 'verified']]);
        } finally {
            await client.shutdown();
        }
    });

    it('runs a check on request with verifyOn = never, never while the file has errors, and reports work-done progress', async () => {
        const capabilities = defaultCapabilities();
        capabilities.window = { workDoneProgress: true };
        const client = await LspClient.start({ capabilities, initializationOptions: { verifyOn: 'never', maxWorkers: 1, diskCache: false } });
        try {
            const uri = fileUri(path.join(os.tmpdir(), 'calvin-never', 'simple_lock_ok.calvin'));
            await client.open(uri, SIMPLE_LOCK);
            assert.ok(await client.until(() => (client.status.get(uri)?.checks.length ?? 0) === 5, 20_000), 'the checks are planned');
            assert.ok(states(client, uri).every(([, st]) => st === 'stale'));
            const lenses = await client.request<lsp.CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
            assert.ok(lenses.some(l => l.command?.title === '… not checked (calvin.verifyOn is never)'), JSON.stringify(lenses.map(l => l.command?.title)));

            const t1 = await client.request<{ state: string } | null>('calvin/verifyCheck', { uri, key: 'thread:T1' }, 60_000);
            assert.equal(t1?.state, 'verified');
            assert.deepEqual(states(client, uri).find(([n]) => n === 'T1'), ['T1', 'verified', false]);
            // work-done progress: as many ends as begins
            await client.until(() => client.others.filter(o => o.method === '$/progress' && (o.params as { value: { kind: string } }).value.kind === 'end').length > 0, 10_000);
            const kinds = client.others.filter(o => o.method === '$/progress').map(o => (o.params as { value: { kind: string } }).value.kind);
            assert.equal(kinds.filter(k => k === 'begin').length, 1, kinds.join(', '));
            assert.equal(kinds.filter(k => k === 'end').length, 1, kinds.join(', '));

            // a syntax error: no run on an outdated program, nothing shown as verified
            await client.change(uri, SIMPLE_LOCK.replace('x++;', 'x++'), 2);
            await client.waitForDiagnostics(uri, p => p.diagnostics.some(d => d.code === 'syntax'), 20_000);
            await new Promise(r => setTimeout(r, 500));
            assert.equal(await client.request('calvin/verifyCheck', { uri, key: 'thread:T2' }, 60_000), null);
        } finally {
            await client.shutdown();
        }
    });
});

describe('incremental verification: diagnostics follow the text', () => {
    it('a failure moves with a whitespace edit on its line, without running anything', async () => {
        const text = fs.readFileSync(path.join(EXAMPLES, 'vector_race.calvin'), 'utf8');
        const client = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
        try {
            const uri = fileUri(path.join(os.tmpdir(), 'calvin-follow', 'vector_race.calvin'));
            await client.open(uri, text);
            const before = await client.checksDone(uri, 120_000, 3);
            const line = text.split('\n').findIndex(l => l.includes('if (elementData[i] == elem)'));
            const bounds = before.find(d => d.code === 'bounds');
            assert.equal(bounds?.range.start.line, line, JSON.stringify(before));
            const log = client.statusLog.length;
            const shifted = replaceOnce(text, '      if (elementData[i] == elem)', '        if (elementData[i] == elem)');
            const after = await edit(client, uri, shifted, 2);
            assert.deepEqual(ran(client.statusLog.slice(log), uri), []);
            const moved = after.find(d => d.code === 'bounds');
            assert.deepEqual(moved?.range, { start: { line, character: bounds!.range.start.character + 2 }, end: { line, character: bounds!.range.end.character + 2 } });
            assert.deepEqual(after.map(d => [d.code, d.range.start.line]).sort(), before.map(d => [d.code, d.range.start.line]).sort());
        } finally {
            await client.shutdown();
        }
    });
});

// Checks that Z3 in WebAssembly does not finish quickly (the tests below use it: a native z3 4.8 gives up at once, "incomplete"): cubes (Fermat) are beyond its nonlinear arithmetic in seconds.
const SLOW = `/*@ abstraction { requires a > 0 && b > 0 && c > 0; } */
void slow(int a, int b, int c) {
  //@ assert a * a * a + b * b * b != c * c * c;
}
`;

describe('incremental verification: cancellation and time-outs', () => {
    let client: LspClient;
    const dir = tempWorkspace({});
    const uri = fileUri(path.join(dir, 'slow.calvin'));
    before(async () => {
        client = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, timeLimitMs: 20_000, diskCache: false, solver: 'wasm' } });
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it('an edit while a slow check runs cancels it at once, and its result is never shown', async () => {
        await client.open(uri, SLOW);
        assert.ok(await client.until(() => client.status.get(uri)?.checks.some(c => c.name === 'slow' && c.state === 'running') ?? false, 30_000), 'the slow check runs');
        await new Promise(r => setTimeout(r, 1000));
        const log = client.statusLog.length;
        const published = client.published.length;
        const t0 = Date.now();
        // Now the assertion is easy: a failure, found in well under a second once the worker is free.
        const easy = SLOW.replace('a * a * a + b * b * b != c * c * c', 'a + b != c');
        await client.change(uri, easy, 2);
        const diags = await client.waitForDiagnostics(uri, p => p.diagnostics.some(d => d.code === 'assert'), 15_000);
        const latency = Date.now() - t0;
        // One worker: had the slow check not been stopped, the new one would wait for its 20 s limit.
        assert.ok(latency < 8_000, `the new result took ${latency} ms`);
        checkDiagnostics(diags.diagnostics, [{ code: 'assert', range: [2, 6, 2, 23], message: "assertion 'a + b != c' may fail" }]);
        // Stay past the old check's time limit: its 'unknown' must never appear.
        await new Promise(r => setTimeout(r, 3000));
        const after = client.statusLog.slice(log).filter(p => p.uri === uri).flatMap(p => p.checks).filter(c => c.name === 'slow').map(c => c.state);
        assert.ok(!after.includes('unknown') && !after.includes('verified'), `states after the edit: ${after.join(', ')}`);
        assert.ok(!client.published.slice(published).some(p => p.diagnostics.some(d => d.code === 'unknown')), 'no stale unknown was published');
        assert.deepEqual(states(client, uri), [['slow', 'failed', false]]);
    });

    it('a check that runs out of time is unknown, with a warning at its name and a re-run quick fix', async () => {
        await client.notify('workspace/didChangeConfiguration', { settings: { calvin: { verifyOn: 'change', maxWorkers: 1, timeLimitMs: 1500, diskCache: false, solver: 'wasm' } } });
        await edit(client, uri, SLOW + '\n', 3);
        const diags = client.latest.get(uri)!.diagnostics;
        checkDiagnostics(diags, [{ code: 'unknown', severity: 2, range: [1, 5, 1, 9], message: /ran out of time/ }]);
        assert.deepEqual(states(client, uri), [['slow', 'unknown', false]]);
        const lenses = await client.request<lsp.CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
        assert.deepEqual(lenses.map(l => l.command?.title), ['? time-out — raise calvin.timeLimitMs']);
        const actions = await client.request<lsp.CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range: diags[0].range, context: { diagnostics: diags } });
        const rerun = actions.find(a => a.title.startsWith('Re-run with a longer time limit'));
        assert.ok(rerun?.command, JSON.stringify(actions.map(a => a.title)));
        assert.deepEqual(rerun.command.arguments, [uri, 'abstraction:slow', 6000]);
    });

    it('a query the solver gives up on (its resource limit) is unknown too, never verified', async () => {
        await client.notify('workspace/didChangeConfiguration', { settings: { calvin: { verifyOn: 'change', maxWorkers: 1, timeLimitMs: 10_000, resourceLimit: 1, diskCache: false, solver: 'wasm' } } });
        await edit(client, uri, SIMPLE_LOCK, 4);
        const diags = client.latest.get(uri)!.diagnostics.filter(d => d.severity === 2);
        assert.ok(diags.length > 0 && diags.every(d => d.code === 'unknown' && /the solver could not decide it \(its resource limit of 1 was reached\)/.test(d.message)), JSON.stringify(diags));
        assert.ok(states(client, uri).every(([, s]) => s === 'unknown'), JSON.stringify(states(client, uri)));
        const lenses = await client.request<lsp.CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
        assert.ok(lenses.every(l => l.command?.title?.startsWith('? not decided — click to check again')), JSON.stringify(lenses.map(l => l.command?.title)));
    });
});

describe('incremental verification: inferred annotations', () => {
    it('a check that writes nothing waits for those that may refute the inference: after a refutation it runs once, for the new plan', async () => {
        // vector_ok without its protection, the Reader declared first: the inference proposes
        // invariants from the array accesses, which the Writer refutes (issue 15)
        const text = fs.readFileSync(path.join(EXAMPLES, 'vector_ok.calvin'), 'utf8')
            .replace(/^thread Writer\[\*\] \{[\s\S]*?^\}\n\n(thread Reader\[\*\] \{[\s\S]*?^\}\n)/m, (_m, reader: string) => `${reader}\nthread Writer[*] {\n  v.addElement(7);\n  v.removeAllElements();\n}\n`);
        assert.ok(text.indexOf('thread Reader') < text.indexOf('thread Writer'), text);
        const dir = tempWorkspace({ 'vector.calvin': text });
        const uri = fileUri(path.join(dir, 'vector.calvin'));
        const client = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
        try {
            await client.open(uri, text);
            checkDiagnostics(await client.checksDone(uri, 120_000, 3), []);
            const runs = (name: string) => {
                let n = 0, before = '';
                for (const p of client.statusLog) {
                    if (p.uri !== uri) continue;
                    const state = p.checks.find(c => c.name === name)?.state ?? '';
                    if (state === 'running' && before !== 'running') n++;
                    before = state;
                }
                return n;
            };
            assert.equal(runs('Writer'), 2, 'the Writer refutes inferred invariants, then runs for the new plan');
            assert.equal(runs('Reader'), 1, 'the Reader runs once, after the refutation');
        } finally {
            await client.shutdown();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe('incremental verification: a method without abstraction', () => {
    it("a bug put into an inlined method re-runs the threads that inline it, and its diagnostic appears there", async () => {
        const text = `int x = 0;
void bump() { x = x + 1; }
thread A { bump(); }
thread B { int y = 2; }
`;
        const dir = tempWorkspace({ 'inl.calvin': text });
        const uri = fileUri(path.join(dir, 'inl.calvin'));
        // (inference off: invariants proposed from the new assertion would add the initialization check)
        const client = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false, infer: false } });
        try {
            await client.open(uri, text);
            checkDiagnostics(await client.checksDone(uri, 120_000, 2), []);
            const log = client.statusLog.length;
            const buggy = replaceOnce(text, 'x = x + 1;', 'x = x + 1; assert x > 5;');
            const diags = await edit(client, uri, buggy, 2);
            checkDiagnostics(diags, [{ code: 'assert', range: [1, 25, 1, 38], message: /assertion 'x > 5' may fail/ }]);
            assert.deepEqual(ran(client.statusLog.slice(log), uri), ['A']);
        } finally {
            await client.shutdown();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe('hover and quick fixes from the verifier', () => {
    let client: LspClient;
    const dir = tempWorkspace({});
    before(async () => {
        // inference off: what is shown here is what the program says (inference has its own tests, test/lsp/inference.test.ts)
        client = await LspClient.start({ initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false, infer: false } });
    });
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it("shows T1's environment assumption with where each conjunct comes from", async () => {
        const uri = fileUri(path.join(dir, 'simple_lock_ok.calvin'));
        await client.open(uri, SIMPLE_LOCK);
        await client.checksDone(uri, 120_000, 5);
        const line = SIMPLE_LOCK.split('\n').findIndex(l => l.startsWith('thread T1'));
        const hover = await client.request<lsp.Hover>('textDocument/hover', { textDocument: { uri }, position: { line, character: 7 } });
        const md = (hover.contents as lsp.MarkupContent).value;
        const block = /\*\*E\(T1\)\*\*[^`]*```calvin\n([\s\S]*?)```/.exec(md)?.[1] ?? '';
        const lines = block.split('\n');
        // grouped by location, the origin after each conjunct; no tautology, no internal name
        assert.ok(lines.includes("Mutex.m == tid ==> x' == x;  // environment of the program (line 24)"), md);
        assert.ok(lines.includes("m == tid ==> m' == m;  // environment of class Mutex (line 5)"), md);
        assert.equal(lines[lines.indexOf("Mutex.m == tid ==> x' == x;  // environment of the program (line 24)") - 1], '// x', md);
        assert.equal(lines[lines.indexOf("m == tid ==> m' == m;  // environment of class Mutex (line 5)") - 1], '// Mutex.m', md);
        assert.doesNotMatch(md, /\\exists/, 'the inferred protections every other thread has are left out');
        assert.ok(md.split('\n').length <= 20, `T1's hover has ${md.split('\n').length} lines:\n${md}`);
        assert.match(md, /\*\*I\(T1\)\*\*[\s\S]*Mutex\.m == 0 ==> x >= 0;/);
        assert.match(md, /\*\*Guarantee\*\*/);
        assert.match(md, /Check T1 \(for `tid == 1`\): ✓ verified/);
        // a method's hover shows its own annotations, not the class's clauses above it
        const acquire = SIMPLE_LOCK.split('\n').findIndex(l => l.includes('static void acquire()'));
        const h3 = await client.request<lsp.Hover>('textDocument/hover', { textDocument: { uri }, position: { line: acquire, character: SIMPLE_LOCK.split('\n')[acquire].indexOf('acquire') } });
        const m3 = (h3.contents as lsp.MarkupContent).value;
        assert.match(m3, /step \[m\] m == 0 && m' == tid;/);
        assert.doesNotMatch(m3.split('**E(')[0], /environment m == tid/, m3);
        // on the call: the abstraction inlined there
        const call = SIMPLE_LOCK.split('\n').findIndex((l, i) => i > line && l.includes('Mutex.acquire()'));
        const h2 = await client.request<lsp.Hover>('textDocument/hover', { textDocument: { uri }, position: { line: call, character: SIMPLE_LOCK.split('\n')[call].indexOf('acquire') } });
        assert.match((h2.contents as lsp.MarkupContent).value, /\*\*Inlined here\*\*[\s\S]*step \[m\] m == 0 && m' == tid;/);
    });

    it('inserts an abstraction stub that the checker accepts (Mutex.acquire of simple_lock_ok)', async () => {
        const uri = fileUri(path.join(dir, 'stub.calvin'));
        const stripped = replaceOnce(SIMPLE_LOCK, "  /*@ abstraction {\n        step [m] m == 0 && m' == tid;\n      } */\n", '');
        await client.open(uri, stripped);
        await client.checksDone(uri, 120_000, 4);
        const lines = stripped.split('\n');
        const e = await stubEdit(client, uri, stripped, 'Mutex.acquire()', 'acquire');
        assert.equal(e.newText, "  /*@ abstraction {\n        step [m] m == 0 && m' == tid;\n      } */\n");
        const offset = (p: lsp.Position) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
        const fixed = stripped.slice(0, offset(e.range.start)) + e.newText + stripped.slice(offset(e.range.end));
        checkDiagnostics(await edit(client, uri, fixed, 2), []);
        assert.deepEqual(states(client, uri).map(([n, s]) => [n, s]), ALL_VERIFIED(false).map(([n, s]) => [n, s]));
    });

    it("inserts an abstraction stub for a synchronized method that its own check accepts (vector_ok's addElement)", async () => {
        const uri = fileUri(path.join(dir, 'vector_stub.calvin'));
        const text = fs.readFileSync(path.join(EXAMPLES, 'vector_ok.calvin'), 'utf8');
        await client.open(uri, text);
        await client.checksDone(uri, 120_000, 3);
        const lines = text.split('\n');
        const line = lines.findIndex(l => l.includes('synchronized void addElement('));
        const e = await stubEdit(client, uri, text, 'synchronized void addElement(', 'addElement');
        // the monitor is the method's protection; directly above the method, after the class invariant
        assert.match(e.newText, /requires this\.holder != tid;/);
        assert.match(e.newText, /step \[elementCount\] elementCount' == elementCount \+ 1;/);
        assert.equal(e.range.start.line, line);
        const offset = (p: lsp.Position) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
        const fixed = text.slice(0, offset(e.range.start)) + e.newText + text.slice(offset(e.range.end));
        // (the growth of the array, in a branch and a loop, becomes a stutter that may change
        // elementData arbitrarily: at the caller's state, where the monitor is free, that may break
        // the class invariant. A stub never says that the caller holds the monitor in its steps: no
        // caller could take them, and everything after the call would be proved.)
        checkDiagnostics(await edit(client, uri, fixed, 2), [
            { code: 'invariant', severity: 1, range: [52, 2, 52, 17], message: /the stutter of 'addElement' may break the invariant/ },
        ]);
        assert.ok(states(client, uri).some(([n, st]) => n === 'Vector.addElement' && st === 'verified'), JSON.stringify(states(client, uri)));
    });

    it("offers 'Add writable_if' with the lock's guard and 'Declare volatile' on a race, and the guard fixes it", async () => {
        const uri = fileUri(path.join(dir, 'unguarded.calvin'));
        const text = replaceOnce(replaceOnce(SIMPLE_LOCK, /\/\*@ environment Mutex\.m == tid ==> x' == x;[\s\S]*?\*\/\n/.exec(SIMPLE_LOCK)![0], ''), 'assert x > 0;', '');
        await client.open(uri, text);
        const diags = await client.checksDone(uri, 120_000, 4);
        const race = diags.find(d => d.code === 'race');
        assert.ok(race, JSON.stringify(diags.map(d => [d.code, d.message])));
        const actions = await client.request<lsp.CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range: race.range, context: { diagnostics: [race] } });
        // x++ is a read-modify-write: no volatile (it would lose updates silently)
        assert.deepEqual(actions.map(a => a.title), ["Add 'writable_if Mutex.m == tid' to x"]);
        const [e] = actions[0].edit!.changes![uri];
        const lines = text.split('\n');
        const offset = (p: lsp.Position) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
        const fixed = text.slice(0, offset(e.range.start)) + e.newText + text.slice(offset(e.range.end));
        assert.match(fixed, /\/\/@ writable_if Mutex\.m == tid;\nint x = 0;/);
        checkDiagnostics(await edit(client, uri, fixed, 2), []);
    });

    it('answers code actions on half-typed methods (no body) without an internal error', async () => {
        const uri = fileUri(path.join(dir, 'half.calvin'));
        const text = 'class A { static int f = 0; static void n() static void m() { n(); } } thread T { A.m(); }';
        await client.open(uri, text);
        await client.waitForDiagnostics(uri, p => p.diagnostics.some(d => d.code === 'syntax'), 20_000);
        const errors = client.errorLogs().length;
        for (let c = 0; c <= text.length; c++) {
            const position = { line: 0, character: c };
            const actions = await client.request<unknown>('textDocument/codeAction', { textDocument: { uri }, range: { start: position, end: position }, context: { diagnostics: [] } });
            assert.ok(Array.isArray(actions), `at ${c}: ${JSON.stringify(actions)}`);
        }
        assert.deepEqual(client.errorLogs().slice(errors), []);
    });
});

// Robustness of the language server (issue 10), over stdio with the real LSP
// client: a forged cache shows no verdict, a linked cache is refused, bad
// settings are clamped and said once, huge documents stay responsive, large
// programs are not verified as you type (and say so), a malformed message
// header ends the connection instead of a wait.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, EXAMPLES } from '../util/paths.js';
import { fileUri, LspClient } from '../util/lsp-client.js';
import { ResultCache, userCacheKey } from '../../packages/verifier/src/incremental/cache.js';
import type { StoredResult } from '../../packages/verifier/src/incremental/result-codec.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-robust-server-'));
const savedXdg = process.env.XDG_CACHE_HOME;
// the servers this test starts keep their cache key here, not in the user's home
before(() => { process.env.XDG_CACHE_HOME = path.join(tmp, 'xdg'); });
after(() => {
    if (savedXdg === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedXdg;
    fs.rmSync(tmp, { recursive: true, force: true });
});

const UNLOCKED = fs.readFileSync(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'), 'utf8');

function workspace(name: string, files: Record<string, string>): string {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir, { recursive: true });
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
    return dir;
}

const errorLines = (ds: Array<{ range: { start: { line: number } }; code?: unknown; severity?: number }>) =>
    ds.filter(d => d.severity === 1).map(d => `${d.range.start.line + 1}:${d.code}`).sort();

function cacheEntries(dir: string): string[] {
    const out: string[] = [];
    const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) walk(p);
            else if (e.name.endsWith('.json')) out.push(p);
        }
    };
    if (fs.existsSync(dir)) walk(dir);
    return out;
}

describe('the result cache in a workspace cannot forge a verdict', () => {
    it('entries edited to "verified" are misses: the buggy program is still reported', { timeout: 180_000 }, async () => {
        const dir = workspace('forged', { 'lock.calvin': UNLOCKED });
        const uri = fileUri(path.join(dir, 'lock.calvin'));
        const first = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1 } });
        let expected: string[];
        try {
            await first.open(uri, UNLOCKED);
            expected = errorLines(await first.checksDone(uri, 120_000, 5));
            assert.deepEqual(expected, ['23:race', '23:race', '24:assert', '24:race']);
        } finally {
            await first.shutdown();
        }
        const entries = cacheEntries(path.join(dir, '.calvin-cache'));
        assert.ok(entries.length >= 4, `${entries.length} cache entries`);
        for (const file of entries) {
            const entry = JSON.parse(fs.readFileSync(file, 'utf8'));
            entry.result.status = 'verified';
            entry.result.diagnostics = [];
            fs.writeFileSync(file, JSON.stringify(entry));
        }
        const second = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1 } });
        try {
            await second.open(uri, UNLOCKED);
            assert.deepEqual(errorLines(await second.checksDone(uri, 120_000, 5)), expected);
        } finally {
            await second.shutdown();
        }
    });

    it('authentic entries (signed with the user\'s key) with out-of-range positions or unknown codes are misses: the program is still reported', { timeout: 180_000 }, async () => {
        const dir = workspace('unfit', { 'lock.calvin': UNLOCKED });
        const uri = fileUri(path.join(dir, 'lock.calvin'));
        const options = { rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1 } };
        const first = await LspClient.start(options);
        try {
            await first.open(uri, UNLOCKED);
            assert.deepEqual(errorLines(await first.checksDone(uri, 120_000, 5)), ['23:race', '23:race', '24:assert', '24:race']);
        } finally {
            await first.shutdown();
        }
        // Rewritten as "verified" with one odd diagnostic, and signed again with the key the
        // server uses: only the check of the entry's content can turn them away.
        const key = userCacheKey({ XDG_CACHE_HOME: process.env.XDG_CACHE_HOME });
        assert.ok(key);
        const cacheDir = path.join(dir, '.calvin-cache');
        const entries = cacheEntries(cacheDir);
        assert.ok(entries.length >= 4, `${entries.length} cache entries`);
        const signer = new ResultCache({ dir: cacheDir, root: dir, key });
        entries.forEach((file, i) => {
            const { result } = JSON.parse(fs.readFileSync(file, 'utf8')) as { result: StoredResult };
            const odd = i % 2 === 0
                ? { range: 99_999, severity: 'info', code: 'race', message: 'a position beyond the plan', related: [] }
                : { range: 0, severity: 'info', code: 'looks-fine', message: 'an unknown code', related: [] };
            signer.set({ ...result, status: 'verified', diagnostics: [odd] } as unknown as StoredResult);
        });
        const second = await LspClient.start(options);
        try {
            await second.open(uri, UNLOCKED);
            const ds = await second.checksDone(uri, 120_000, 5);
            assert.deepEqual(errorLines(ds), ['23:race', '23:race', '24:assert', '24:race']);
            assert.ok(!ds.some(d => /beyond the plan|unknown code/.test(d.message)), JSON.stringify(ds));
        } finally {
            await second.shutdown();
        }
    });

    it('a .calvin-cache that links out of the workspace is refused with one warning; nothing is written there', { timeout: 120_000, skip: process.platform === 'win32' }, async () => {
        const dir = workspace('linked', { 'lock.calvin': UNLOCKED });
        const elsewhere = path.join(tmp, 'elsewhere');
        fs.mkdirSync(elsewhere);
        fs.symlinkSync(elsewhere, path.join(dir, '.calvin-cache'));
        const uri = fileUri(path.join(dir, 'lock.calvin'));
        const client = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1 } });
        try {
            await client.open(uri, UNLOCKED);
            assert.deepEqual(errorLines(await client.checksDone(uri, 120_000, 5)), ['23:race', '23:race', '24:assert', '24:race']);
            const warnings = client.logs.filter(l => /runs without its disk cache/.test(l.message));
            assert.equal(warnings.length, 1, client.logs.map(l => l.message).join('\n'));
            assert.deepEqual(fs.readdirSync(elsewhere), []);
        } finally {
            await client.shutdown();
        }
    });
});

describe('settings are validated and clamped', () => {
    it('maxWorkers = 1e9 and a bad timeLimitMs are reported once and replaced; checks still run', { timeout: 120_000 }, async () => {
        const dir = workspace('settings', { 'lock.calvin': UNLOCKED });
        const uri = fileUri(path.join(dir, 'lock.calvin'));
        const client = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', maxWorkers: 1e9, timeLimitMs: 'soon', diskCache: false } });
        try {
            await client.open(uri, UNLOCKED);
            assert.deepEqual(errorLines(await client.checksDone(uri, 120_000, 5)), ['23:race', '23:race', '24:assert', '24:race']);
            await client.notify('workspace/didChangeConfiguration', { settings: { calvin: { maxWorkers: 1e9, timeLimitMs: -5 } } });
            await client.until(() => client.logs.some(l => /timeLimitMs: -5/.test(l.message)), 5_000);
            const messages = client.logs.map(l => l.message);
            const cores = os.availableParallelism?.() ?? os.cpus().length;
            assert.equal(messages.filter(m => m.includes(`calvin.maxWorkers: 1000000000 is out of range (0 for automatic, or 1..${cores}`)).length, 1, messages.join('\n'));
            assert.equal(messages.filter(m => m.includes('calvin.timeLimitMs: "soon" is not a valid value; using 10000')).length, 1, messages.join('\n'));
            // the server's threads: main, libuv's, V8's, and at most one check worker per core (with Z3's threads)
            const threads = Number(/Threads:\s+(\d+)/.exec(fs.readFileSync(`/proc/${client.process.pid}/status`, 'utf8'))?.[1] ?? 0);
            assert.ok(threads < 40 * cores, `${threads} threads`);
        } finally {
            await client.shutdown();
        }
    });
});

describe('huge and large documents', () => {
    it('a 7 MB didChange is refused at once; hover is answered and memory stays bounded', { timeout: 60_000 }, async () => {
        const client = await LspClient.start({ initializationOptions: { verifyOn: 'change' } });
        try {
            const uri = fileUri(path.join(tmp, 'big.calvin'));
            await client.open(uri, 'int x = 0;\nthread T { x = 1; }\n');
            await client.waitForDiagnostics(uri);
            const big = Array.from({ length: 350_000 }, (_, i) => `int g${i} = ${i};`).join('\n');
            assert.ok(big.length > 7_000_000);
            const t0 = Date.now();
            await client.change(uri, big, 2);
            const published = await client.waitForDiagnostics(uri, p => p.version === 2 || p.diagnostics.some(d => /too large/.test(d.message)), 15_000);
            assert.match(published.diagnostics[0].message, /too large for Calvin/);
            await client.request('textDocument/hover', { textDocument: { uri }, position: { line: 1, character: 5 } }, 5_000);
            assert.ok(Date.now() - t0 < 10_000, `${Date.now() - t0} ms`);
            const rssKb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${client.process.pid}/status`, 'utf8'))?.[1] ?? 0);
            assert.ok(rssKb < 1_500_000, `${rssKb} kB`);
        } finally {
            await client.shutdown();
        }
    });

    it('a program too large to verify as you type gets its front-end diagnostics and a warning that says so', { timeout: 120_000 }, async () => {
        const text = `${Array.from({ length: 21_000 }, (_, i) => `int g${i} = ${i};`).join('\n')}\nthread T { g1 = 2; }\n`;
        const dir = workspace('large', { 'large.calvin': text });
        const uri = fileUri(path.join(dir, 'large.calvin'));
        const client = await LspClient.start({ rootPath: dir, initializationOptions: { verifyOn: 'change', diskCache: false } });
        try {
            await client.open(uri, text);
            const p = await client.waitForDiagnostics(uri, x => x.diagnostics.some(d => /Not verified/.test(d.message)), 60_000);
            const w = p.diagnostics.find(d => /Not verified/.test(d.message))!;
            assert.equal(w.severity, 2);
            assert.match(w.message, /this program has 2100\d lines, more than the 20000 Calvin verifies as you type; run 'calvin check' on it/);
        } finally {
            await client.shutdown();
        }
    });
});

describe('the LSP transport', () => {
    it('a malformed Content-Length header ends the server with a message, never a wait', { timeout: 30_000 }, async () => {
        const child = spawn(process.execPath, [CLI, 'lsp'], { stdio: ['pipe', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', d => { stderr += d; });
        child.stdin.write('Content-Length: abc\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}');
        // stdin stays open: the server must not wait for more
        const code = await new Promise<number | null>(resolve => {
            const t = setTimeout(() => { child.kill(); resolve(-1); }, 10_000);
            child.on('exit', c => { clearTimeout(t); resolve(c); });
        });
        assert.equal(code, 1, stderr);
        assert.match(stderr, /malformed message header \(Content-Length value must be a number/);
    });
    it('a body that is not JSON gets a parse error answer, and the server goes on', { timeout: 30_000 }, async () => {
        const client = await LspClient.start();
        try {
            client.process.stdin.write('Content-Length: 5\r\n\r\n{xxx}');
            const r = await client.request('textDocument/hover', { textDocument: { uri: 'file:///none.calvin' }, position: { line: 0, character: 0 } }, 5_000).catch(e => e);
            void r;
            client.assertAlive();
        } finally {
            await client.shutdown();
        }
    });
});

// Neovim as a real third-party LSP client of the Calvin language server:
// headless nvim runs test/nvim/diagnostics.lua, which starts the server with
// vim.lsp.start_client, attaches it to a buffer, waits for diagnostics, edits
// the buffer (incremental didChange) and reports everything as JSON lines.
// Neovim is required in CI (.ci/run installs it); elsewhere the test is skipped
// when `nvim` is missing (`apt-get install -y neovim`).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, EXAMPLES } from '../util/paths.js';
import { needs } from '../util/external.js';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'diagnostics.lua');
const RUN_TIMEOUT_MS = 90_000;

interface NvimDiagnostic {
    lnum: number;
    col: number;
    end_lnum: number;
    end_col: number;
    severity: number;
    message: string;
    source?: string;
    code?: string;
}

interface NvimEvent {
    event: string;
    step?: number;
    ms?: number;
    diagnostics?: NvimDiagnostic[];
    value?: string | null;
    exit?: { code: number; signal: number } | null;
    message?: string;
}

/** Expected: [lnum, col, end_lnum, end_col] (0-based, as vim.diagnostic), code, message substring. */
type Expected = [[number, number, number, number], string, string];

function assertDiagnostics(actual: NvimDiagnostic[] | undefined, expected: Expected[], what: string): void {
    assert.ok(actual, `${what}: no diagnostics reported`);
    const shape = (d: NvimDiagnostic) => ({ range: [d.lnum, d.col, d.end_lnum, d.end_col], code: d.code, severity: d.severity, source: d.source });
    assert.deepEqual(actual.map(shape), expected.map(([range, code]) => ({ range, code, severity: 1, source: 'calvin' })), what);
    expected.forEach(([, , message], i) => assert.ok(actual[i].message.includes(message), `${what}: message ${JSON.stringify(actual[i].message)} should mention ${JSON.stringify(message)}`));
}

describe('Neovim (headless) as an LSP client', needs('nvim', 'apt-get install -y neovim'), () => {
    let dir: string;
    let events: NvimEvent[] = [];
    let status: number | null = null;
    let stderr = '';
    let stdout = '';

    before(async () => {
        const version = spawnSync('nvim', ['--version'], { encoding: 'utf8' });
        if (version.error || version.status !== 0) {
            assert.fail('Neovim (nvim) is not installed or does not run: install it (apt-get install -y neovim); CI installs it in .ci/run.'
                + (version.error ? ` (${version.error.message})` : ` (exit ${version.status}: ${version.stderr})`));
        }
        const m = /NVIM v(\d+)\.(\d+)/.exec(version.stdout);
        assert.ok(m && (Number(m[1]) > 0 || Number(m[2]) >= 7), `Neovim 0.7 or newer is needed, found: ${version.stdout.split('\n')[0]}`);

        // simple_lock_ok with a type error (line 26) and a name error (line 37)
        const source = fs.readFileSync(path.join(EXAMPLES, 'simple_lock_ok.calvin'), 'utf8').split('\n');
        assert.equal(source[25], 'int x = 0;');
        assert.equal(source[36], '  x = 0;');
        assert.equal(source[30], '  assert x > 0;');
        source[25] = 'int x = true;';
        source[36] = '  x = zz;';
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-nvim-'));
        const file = path.join(dir, 'broken_lock.calvin');
        fs.writeFileSync(file, source.join('\n'));

        const child = spawn('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${SCRIPT}`], {
            cwd: dir,
            stdio: ['ignore', 'pipe', 'pipe'],
            env: {
                ...process.env,
                CALVIN_NODE: process.execPath,
                CALVIN_CLI: CLI,
                CALVIN_ROOT: dir,
                CALVIN_FILE: file,
                CALVIN_OPEN_COUNT: '2',
                CALVIN_STEPS: JSON.stringify([
                    { line: 37, text: '  x = 0;', count: 1 },          // fix the name error
                    { line: 26, text: 'int x = 0;', count: 0 },        // fix the type error
                    { line: 31, text: '  assert y > 0;', count: 1 },   // a new name error
                ]),
                CALVIN_HOVER: JSON.stringify({ line: 26, col: 5 }),   // x in `int x = 0;`
                CALVIN_TIMEOUT_MS: '20000',
            },
        });
        child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
        child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
        status = await new Promise<number | null>(resolve => {
            const timer = setTimeout(() => { child.kill('SIGKILL'); resolve(null); }, RUN_TIMEOUT_MS);
            child.on('exit', code => { clearTimeout(timer); resolve(code); });
        });
        events = stdout.split('\n').filter(l => l.startsWith('CALVIN-NVIM ')).map(l => JSON.parse(l.slice('CALVIN-NVIM '.length)) as NvimEvent);
    }, { timeout: RUN_TIMEOUT_MS + 30_000 });

    after(() => {
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    const event = (name: string, step?: number) => events.find(e => e.event === name && (step === undefined || e.step === step));
    const context = () => `\nnvim exit ${status}; events:\n${events.map(e => JSON.stringify(e)).join('\n')}\nstdout:\n${stdout.slice(-2000)}\nstderr:\n${stderr.slice(-2000)}`;

    it('nvim runs the whole script and exits 0', () => {
        assert.deepEqual(events.filter(e => e.event === 'error' || e.event === 'timeout'), [], context());
        assert.equal(status, 0, `nvim did not finish (null: killed after ${RUN_TIMEOUT_MS} ms)${context()}`);
        assert.deepEqual(events.map(e => e.event + (e.step ? e.step : '')), ['opened', 'step1', 'step2', 'step3', 'hover', 'stopped'], context());
    });

    it('opening the file: exactly the type error and the name error', () => {
        assertDiagnostics(event('opened')?.diagnostics, [
            [[25, 8, 25, 12], 'type', 'boolean'],   // int x = true;
            [[36, 6, 36, 8], 'name', "'zz'"],       // x = zz;
        ], `after opening${context()}`);
    });

    it('edits in the buffer update the diagnostics (incremental didChange from Neovim)', () => {
        assertDiagnostics(event('step', 1)?.diagnostics, [[[25, 8, 25, 12], 'type', 'boolean']], `after fixing zz${context()}`);
        assertDiagnostics(event('step', 2)?.diagnostics, [], `after fixing the type error${context()}`);
        assertDiagnostics(event('step', 3)?.diagnostics, [[[30, 9, 30, 10], 'name', "'y'"]], `after writing assert y > 0${context()}`);
    });

    it('hover through Neovim shows the global x', () => {
        const value = event('hover')?.value;
        assert.ok(typeof value === 'string' && value.includes('int x') && value.includes('global'), `hover: ${JSON.stringify(value)}${context()}`);
    });

    it('the server shuts down cleanly when Neovim stops the client', () => {
        assert.deepEqual(event('stopped')?.exit, { code: 0, signal: 0 }, context());
    });
});

describe('Neovim applies "Add writable_if" and gets a verified program', needs('nvim', 'apt-get install -y neovim'), () => {
    it('on an unannotated lock-protected counter, in one step', { timeout: 180_000 }, async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-nvim-fix-'));
        try {
            const file = path.join(dir, 'counter.calvin');
            fs.writeFileSync(file, [
                'class Lock {', '  static volatile int m = 0;', '  static void acquire() { while (!cas(m, 0, tid)) { } }', '  static void release() { m = 0; }', '}',
                'int count = 0;',
                'thread T1 { Lock.acquire(); count = count + 1; Lock.release(); }',
                'thread T2 { Lock.acquire(); count = count + 1; Lock.release(); }', '',
            ].join('\n'));
            const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'quickfix.lua');
            const child = spawn('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${script}`], {
                cwd: dir, stdio: ['ignore', 'pipe', 'pipe'],
                env: { ...process.env, CALVIN_NODE: process.execPath, CALVIN_CLI: CLI, CALVIN_ROOT: dir, CALVIN_FILE: file, CALVIN_TIMEOUT_MS: '90000' },
            });
            let out = '';
            child.stdout.on('data', d => { out += d; });
            child.stderr.on('data', d => { out += d; });
            const code = await new Promise<number | null>(resolve => child.on('exit', c => resolve(c)));
            const events = out.split('\n').filter(l => l.startsWith('CALVIN-NVIM ')).map(l => JSON.parse(l.slice('CALVIN-NVIM '.length)) as { event: string; count?: number; titles?: string[]; text?: string; checks?: Array<{ name: string; state: string }> });
            assert.equal(code, 0, out);
            assert.deepEqual(events.map(e => e.event), ['diagnostics', 'actions', 'verified'], out);
            assert.equal(events[0].count, 4);
            assert.deepEqual(events[1].titles, ["Add 'writable_if Lock.m == tid' to count (and 'environment m == tid ==> m' == m')"]);
            assert.deepEqual(events[2].checks!.map(c => [c.name, c.state]), [['T1', 'verified'], ['T2', 'verified']]);
            assert.match(events[2].text!, /\/\/@ writable_if Lock\.m == tid;\nint count = 0;/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe('Neovim lists the steps of a witness (related information)', needs('nvim', 'apt-get install -y neovim'), () => {
    it('on a buggy example, an error gets its interleaving as related locations', { timeout: 180_000 }, async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-nvim-witness-'));
        try {
            const file = path.join(dir, 'simple_lock_unlocked.calvin');
            fs.copyFileSync(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'), file);
            const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'witness.lua');
            const child = spawn('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${script}`], {
                cwd: dir, stdio: ['ignore', 'pipe', 'pipe'],
                env: { ...process.env, CALVIN_NODE: process.execPath, CALVIN_CLI: CLI, CALVIN_ROOT: dir, CALVIN_FILE: file, CALVIN_TIMEOUT_MS: '90000' },
            });
            let out = '';
            child.stdout.on('data', d => { out += d; });
            child.stderr.on('data', d => { out += d; });
            const code = await new Promise<number | null>(resolve => child.on('exit', c => resolve(c)));
            const events = out.split('\n').filter(l => l.startsWith('CALVIN-NVIM ')).map(l => JSON.parse(l.slice('CALVIN-NVIM '.length)) as { event: string; steps?: Array<{ message: string; line: number }> });
            assert.equal(code, 0, out);
            const w = events.find(e => e.event === 'witness');
            assert.ok(w?.steps && w.steps.length >= 2, out);
            assert.match(w.steps[0].message, /^witness 1\. (T1|T2): /);
            assert.match(w.steps[w.steps.length - 1].message, /<- here$/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

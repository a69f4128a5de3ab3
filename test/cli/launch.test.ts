// The `calvin` command's launcher (packages/cli/src/launch.ts): a check or infer run
// with Z3 in WebAssembly runs with V8's flags for a quick start, set before
// anything compiles; every other run (native z3, the language server, --help)
// runs as it is.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { QUICK_WASM_FLAGS, runsWasm } from '../../packages/cli/src/quick-wasm.js';
import { CLI, EXAMPLES } from '../util/paths.js';

describe('calvin launcher', () => {
    it('guesses the solver as resolveSolver chooses it', () => {
        const none = () => false, some = () => true;
        assert.equal(runsWasm(['check', 'a.calvin'], none), true, 'auto without z3 on PATH: wasm');
        assert.equal(runsWasm(['check', 'a.calvin'], some), false, 'auto with z3 on PATH: native');
        assert.equal(runsWasm(['check', '--solver', 'wasm', 'a.calvin'], some), true);
        assert.equal(runsWasm(['check', '--solver=z3-wasm', 'a.calvin'], some), true);
        assert.equal(runsWasm(['check', '--solver', 'native', 'a.calvin'], none), false);
        assert.equal(runsWasm(['check', '--z3-path', '/opt/z3', 'a.calvin'], none), false);
        assert.equal(runsWasm(['infer', 'a.calvin'], none), true);
        assert.equal(runsWasm(['check', '--no-verify', 'a.calvin'], none), false, 'no solver at all');
        assert.equal(runsWasm(['lsp'], none), false, 'the language server keeps V8\'s tiering');
        assert.equal(runsWasm(['--help'], none), false);
        assert.equal(runsWasm([], none), false);
    });

    it('runs a WebAssembly check with the flags (said in --verbose), in the same process, with the exit code of the check', () => {
        const r = spawnSync(process.execPath, [CLI, 'check', '--verbose', '--solver', 'wasm', path.join(EXAMPLES, 'simple_lock_unlocked.calvin')], { encoding: 'utf8', timeout: 120_000 });
        assert.equal(r.status, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`calvin: solver: Z3 in WebAssembly \\(as configured\\); V8 ${QUICK_WASM_FLAGS.join(' ')}`));
        assert.match(r.stdout, /error \[race\]/);
    });

    it('a run that verifies nothing keeps V8\'s tiering', () => {
        const r = spawnSync(process.execPath, [CLI, 'check', '--verbose', '--solver', 'wasm', '--no-verify', path.join(EXAMPLES, 'simple_lock_ok.calvin')], { encoding: 'utf8', timeout: 60_000 });
        assert.equal(r.status, 0, r.stderr);
        assert.doesNotMatch(r.stderr, /V8 --liftoff-only/);
    });

    it('a signal for the command ends the check: nothing is left running', async () => {
        // a file name of its own, to find the command's process by
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-launch-'));
        const file = path.join(dir, `signalled-${process.pid}.calvin`);
        fs.copyFileSync(path.join(EXAMPLES, 'vector_ok.calvin'), file);
        try {
            const r = spawnSync(process.execPath, [CLI, 'check', '--solver', 'wasm', file], { encoding: 'utf8', timeout: 600, killSignal: 'SIGTERM' });
            assert.equal(r.signal, 'SIGTERM', `status ${r.status}, stderr ${r.stderr}`);
            let left = '';
            for (let i = 0; i < 10; i++) {
                left = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).stdout.split('\n').filter(l => l.includes(file)).join('\n');
                if (!left) break;
                await new Promise(resolve => setTimeout(resolve, 100));
            }
            assert.equal(left, '', 'the check kept running');
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it('runs the z3 on PATH\'s --version once, while the bundle loads, and the choice of solver takes its answer', () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-fake-z3-'));
        try {
            // a z3 too old for `auto` (so that the check runs on Z3 in WebAssembly) that logs every run
            const log = path.join(dir, 'runs.log');
            fs.writeFileSync(path.join(dir, 'z3'), `#!/bin/sh\necho "$@" >> '${log}'\necho "Z3 version 4.7.1 - 64 bit"\n`, { mode: 0o755 });
            const r = spawnSync(process.execPath, [CLI, 'check', '--verbose', path.join(EXAMPLES, 'simple_lock_ok.calvin')], {
                encoding: 'utf8', timeout: 120_000, env: { ...process.env, CALVIN_DEBUG: '1', PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` },
            });
            assert.equal(r.status, 0, r.stderr);
            assert.match(r.stderr, /calvin: z3 --version: the answer of the run started at launch/);
            assert.match(r.stderr, new RegExp(`calvin: solver: Z3 in WebAssembly \\(${path.join(dir, 'z3').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is Z3 4\\.7\\.1, older than 4\\.8\\)`));
            assert.deepEqual(fs.readFileSync(log, 'utf8').trim().split('\n'), ['--version']);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    describe('V8\'s code cache of the command (code-cache.ts)', () => {
        const out = path.dirname(CLI);
        const run = (cli: string, extra: string[] = []) => spawnSync(process.execPath, [cli, 'check', '--format', 'json', '--no-witness', ...extra, path.join(EXAMPLES, 'simple_lock_unlocked.calvin')], {
            encoding: 'utf8', timeout: 120_000, env: { ...process.env, CALVIN_DEBUG: '1' },
        });
        const verdict = (r: ReturnType<typeof run>) => {
            assert.equal(r.status, 1, r.stderr);
            return (JSON.parse(r.stdout) as { diagnostics: Array<{ line: number; code: string; message: string }> }).diagnostics.map(d => `${d.line} ${d.code} ${d.message}`);
        };
        const cacheState = (r: ReturnType<typeof run>, flavor: string) => new RegExp(`code cache calvin-main\\.cjs\\.${flavor}\\.cache: (\\S+)`).exec(r.stderr)?.[1];

        it('the build makes one per flavor of V8\'s flags, and a check uses the one of its flags', () => {
            assert.equal(cacheState(run(CLI, ['--solver', 'wasm']), 'wasm'), 'used');
            // (a run without WebAssembly: --no-verify has the flags of a native run)
            assert.equal(cacheState(run(CLI, ['--no-verify']), 'plain'), 'used');
        });

        it('a cache made from another bundle, or damaged, is not used, and the check gives the same results', () => {
            // a copy of the command inside the repository (its modules resolve from here)
            const dir = fs.mkdtempSync(path.join(out, '..', '.cc-test-'));
            try {
                for (const f of fs.readdirSync(out)) if (f.endsWith('.cjs') || f.endsWith('.cache')) fs.copyFileSync(path.join(out, f), path.join(dir, f));
                const cli = path.join(dir, 'calvin.cjs');
                const expected = verdict(run(cli, ['--solver', 'wasm']));
                const cache = path.join(dir, 'calvin-main.cjs.wasm.cache');
                const bytes = fs.readFileSync(cache);
                // damaged in the middle: its own checksum no longer matches
                const damaged = Buffer.from(bytes);
                for (let i = 0; i < 64; i++) damaged[(damaged.length >> 1) + i] ^= 0xff;
                fs.writeFileSync(cache, damaged);
                let r = run(cli, ['--solver', 'wasm']);
                assert.equal(cacheState(r, 'wasm'), 'none');
                assert.deepEqual(verdict(r), expected);
                // cut short
                fs.writeFileSync(cache, bytes.subarray(0, bytes.length >> 1));
                r = run(cli, ['--solver', 'wasm']);
                assert.equal(cacheState(r, 'wasm'), 'none');
                assert.deepEqual(verdict(r), expected);
                // whole, but of another bundle (one comment more): V8 would take the code of the old one
                fs.writeFileSync(cache, bytes);
                fs.appendFileSync(path.join(dir, 'calvin-main.cjs'), '\n// another build\n');
                r = run(cli, ['--solver', 'wasm']);
                assert.equal(cacheState(r, 'wasm'), 'none');
                assert.deepEqual(verdict(r), expected);
            } finally {
                fs.rmSync(dir, { recursive: true, force: true });
            }
        });
    });
});

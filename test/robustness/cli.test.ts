// Robustness of `calvin check` on hostile and extreme input (issue 10), through
// the real CLI: exact integers, no silent exit, clear errors for deep nesting
// and huge input within a second, paths that are not regular files, internal
// errors that keep the other programs' results, escaped control characters.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, EXAMPLES } from '../util/paths.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-robust-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
    const p = path.join(dir, name);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
    return p;
}

interface Run { status: number | null; stdout: string; stderr: string; ms: number }

function calvin(args: string[], env: Record<string, string> = {}, timeout = 120_000): Run {
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout, maxBuffer: 64 << 20, env: { ...process.env, ...env } });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - t0 };
}

function json(r: Run): { diagnostics: Array<{ file: string; line: number; code: string; severity: string; message: string }> } {
    assert.ok(r.stdout.trim().startsWith('{'), `no JSON on stdout (exit ${r.status}):\n${r.stderr}`);
    return JSON.parse(r.stdout);
}

const codes = (r: Run) => json(r).diagnostics.filter(d => d.severity !== 'info').map(d => `${d.line}:${d.code}`).sort();

/** No stack trace ever reaches the user. */
function noStack(r: Run): void {
    assert.ok(!/\n\s+at .+:\d+:\d+/.test(r.stdout + r.stderr), `a stack trace was printed:\n${r.stdout}\n${r.stderr}`);
}

describe('integers are mathematical, end to end', () => {
    it('a literal beyond 2^53 keeps its value (the assertion that rounding would prove is refuted)', () => {
        const f = write('big.calvin', 'int x = 9007199254740993;\nthread T { assert x == 9007199254740992; }\n');
        const r = calvin(['check', '--format', 'json', f]);
        assert.equal(r.status, 1, r.stderr);
        assert.deepEqual(codes(r), ['2:assert']);
    });
    it('a literal of 10^23 in an annotation and of 40 digits in code are exact, and crash nothing', () => {
        const f = write('huge-literals.calvin', [
            'int x = 0;',
            '//@ invariant x < 100000000000000000000000;',
            'thread T { x = 1; int y = 1234567890123456789012345678901234567890; assert y > 1234567890123456789012345678901234567889; }',
            '',
        ].join('\n'));
        const r = calvin(['check', '--format', 'json', f]);
        assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
        assert.deepEqual(codes(r), []);
        noStack(r);
    });
});

describe('no silent exit', () => {
    it('a thread with a 2,000-term expression and a failing assertion: a clear error, exit 1, at once', () => {
        const f = write('long-sum.calvin', `thread T { int s = ${Array(2000).fill('1').join('+')}; assert false; }\n`);
        const r = calvin(['check', '--format', 'json', f]);
        assert.equal(r.status, 1, r.stderr);
        const ds = json(r).diagnostics;
        assert.ok(ds.length > 0 && ds.every(d => d.code === 'syntax' && /nested too deeply|too long/i.test(d.message)), JSON.stringify(ds));
        assert.ok(r.ms < 10_000, `${r.ms} ms`);
        noStack(r);
    });
    it('an internal error in one program is an error diagnostic; the other programs keep their results (exit 1)', () => {
        write('two/ok.calvin', fs.readFileSync(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'), 'utf8'));
        write('two/faulty.calvin', fs.readFileSync(path.join(EXAMPLES, 'simple_lock_ok.calvin'), 'utf8'));
        const r = calvin(['check', '--format', 'json', path.join(dir, 'two')], { CALVIN_TEST_FAULT: 'faulty' });
        assert.equal(r.status, 1, r.stderr);
        const ds = json(r).diagnostics;
        const faulty = ds.filter(d => d.file.endsWith('faulty.calvin'));
        assert.deepEqual(faulty.map(d => [d.severity, d.code]), [['error', 'unknown']]);
        assert.match(faulty[0].message, /was not checked: internal error \(Error: injected fault \(faulty\)\); please report it/);
        // the other program was verified: its races (the read and the write of x++, the read in the assert) are there
        assert.deepEqual(ds.filter(d => d.file.endsWith('ok.calvin')).map(d => `${d.line}:${d.code}`).sort(), ['23:race', '23:race', '24:assert', '24:race']);
        noStack(r);
    });
    it('a 3,000-line file with one syntax error: the syntax error, exit 1 (the solver, still starting, is disposed of after the report)', () => {
        const lines = Array.from({ length: 3000 }, (_, i) => `int g${i} = ${i}; // a line of a long file`);
        lines[1500] = 'int = 1;';
        const f = write('long-syntax-error.calvin', lines.join('\n') + '\n');
        for (const format of ['json', 'text']) {
            const r = calvin(['check', '--format', format, f]);
            assert.equal(r.status, 1, `${r.stdout}\n${r.stderr}`);
            assert.doesNotMatch(r.stderr, /internal error|nothing was reported/);
            if (format === 'json') assert.deepEqual(codes(r), ['1501:syntax']);
            else assert.match(r.stdout, /long-syntax-error\.calvin:1501:5: error \[syntax\] Syntax error: expected a name but found '='/);
        }
    });
    it('when nothing could be checked, exit 2 with a message', () => {
        const r = calvin(['check', '--format', 'json', path.join(dir, 'two')], { CALVIN_TEST_FAULT: 'two' });
        assert.equal(r.status, 2);
        assert.match(r.stderr, /^calvin: nothing could be checked/m);
        noStack(r);
    });
});

describe('a solver that cannot run', () => {
    it('a z3 that answers --version but dies at once: nothing was checked, exit 2, never 0 with warnings', () => {
        const fake = write('fake-z3/z3', '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "Z3 version 4.8.12 - 64 bit"; exit 0; fi\nexit 3\n');
        fs.chmodSync(fake, 0o755);
        const r = calvin(['check', '--format', 'json', '--solver', 'native', '--z3-path', fake, path.join(EXAMPLES, 'simple_lock_ok.calvin')]);
        assert.equal(r.status, 2, `${r.stdout}\n${r.stderr}`);
        assert.match(r.stderr, /^calvin: nothing could be checked/m);
        const ds = json(r).diagnostics.filter(d => d.severity !== 'info');
        assert.ok(ds.length > 0 && ds.every(d => d.code === 'unknown'), JSON.stringify(ds));
        noStack(r);
    });
});

describe('a check the solver does not decide', () => {
    it('a query Z3 gives up on (its resource limit) is an unknown warning at the check, never "verified"', () => {
        const r = calvin(['check', '--format', 'json', '--resource-limit', '1', path.join(EXAMPLES, 'simple_lock_ok.calvin')]);
        assert.equal(r.status, 0, r.stderr);
        const ds = json(r).diagnostics.filter(d => d.severity !== 'info');
        assert.deepEqual(ds.map(d => `${d.line}:${d.code}:${d.severity}`), ['11:unknown:warning', '19:unknown:warning', '25:unknown:warning', '28:unknown:warning', '35:unknown:warning']);
        assert.ok(ds.every(d => /is not verified: the solver could not decide it \(its resource limit of 1 was reached\)/.test(d.message)), JSON.stringify(ds));
    });
});

describe('deep nesting and huge input: a clear error well under a second of work', () => {
    const cases: Array<[string, string, RegExp]> = [
        ['10,000 nested parentheses in an invariant', `int x = 0;\n//@ invariant ${'('.repeat(10_000)}x >= 0${')'.repeat(10_000)};\nthread T { x = 1; }\n`, /Nested too deeply: more than \d+ levels/],
        ['110 nested parentheses in code', `int x = 0;\nthread T { int y = ${'('.repeat(110)}x${')'.repeat(110)}; }\n`, /Nested too deeply: more than \d+ levels/],
        ['a 100,000-term expression', `thread T { int s = ${Array(100_000).fill('1').join('+')}; assert false; }\n`, /Too long|Nested too deeply/],
        ['1,000 else-ifs', `int x = 0;\nthread T { ${Array.from({ length: 1000 }, (_, i) => `if (x == ${i}) { x = 1; }`).join(' else ')} }\n`, /Nested too deeply: \d+ 'else if's/],
        ['1,000 prefix operators', `boolean b = false;\nthread T { boolean c = ${'!'.repeat(1000)}b; }\n`, /Nested too deeply: 1000 prefix operators/],
    ];
    for (const [what, text, message] of cases) {
        it(what, () => {
            const f = write(`${what.replace(/\W+/g, '-')}.calvin`, text);
            const r = calvin(['check', '--format', 'json', f]);
            assert.equal(r.status, 1, r.stderr);
            const ds = json(r).diagnostics;
            assert.ok(ds.some(d => d.code === 'syntax' && message.test(d.message)), JSON.stringify(ds).slice(0, 500));
            assert.ok(r.ms < 5_000, `${r.ms} ms`);
            noStack(r);
        });
    }
    it('a file larger than the limit is not parsed: one error that says so', () => {
        const f = write('huge.calvin', Array.from({ length: 200_000 }, (_, i) => `int g${i} = ${i};`).join('\n') + '\n');
        assert.ok(fs.statSync(f).size > 2_000_000);
        const r = calvin(['check', '--format', 'json', f]);
        assert.equal(r.status, 1, r.stderr);
        assert.deepEqual(json(r).diagnostics.map(d => [d.line, d.code]), [[1, 'syntax']]);
        assert.match(json(r).diagnostics[0].message, /too large for Calvin \(\d+\.\d MB; the limit is 2\.0 MB\)/);
        assert.ok(r.ms < 5_000, `${r.ms} ms`);
    });
});

describe('paths', () => {
    it('a FIFO named x.calvin is skipped with a warning (never read), the rest is checked', { skip: process.platform === 'win32' }, () => {
        const d = path.join(dir, 'fifo');
        fs.mkdirSync(d);
        fs.copyFileSync(path.join(EXAMPLES, 'simple_lock_ok.calvin'), path.join(d, 'ok.calvin'));
        spawnSync('mkfifo', [path.join(d, 'pipe.calvin')]);
        const r = calvin(['check', '--format', 'json', d], {}, 60_000);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stderr, /calvin: skipped '.*pipe\.calvin': not a regular file \(a FIFO\)/);
        const direct = calvin(['check', path.join(d, 'pipe.calvin')], {}, 20_000);
        assert.equal(direct.status, 2);
        assert.match(direct.stderr, /nothing to check: '.*pipe\.calvin' is not a regular file \(a FIFO\)/);
    });
    it('a symbolic link loop and a directory named x.calvin do not abort the run', { skip: process.platform === 'win32' }, () => {
        const d = path.join(dir, 'links');
        fs.mkdirSync(path.join(d, 'sub.calvin'), { recursive: true });
        fs.copyFileSync(path.join(EXAMPLES, 'simple_lock_ok.calvin'), path.join(d, 'sub.calvin', 'ok.calvin'));
        fs.symlinkSync(path.join(d, 'loop.calvin'), path.join(d, 'loop.calvin'));
        fs.symlinkSync(d, path.join(d, 'back'));
        const r = calvin(['check', '--format', 'json', d]);
        assert.equal(r.status, 0, r.stderr);
        assert.equal(JSON.parse(r.stdout).files, 1);
        assert.match(r.stderr, /skipped '.*loop\.calvin': a symbolic link loop/);
    });
    it('a directory without .calvin files exits 2 with a message', () => {
        fs.mkdirSync(path.join(dir, 'nothing'));
        const r = calvin(['check', path.join(dir, 'nothing')]);
        assert.equal(r.status, 2);
        assert.match(r.stderr, /no \.calvin files under/);
    });
});

describe('resources', () => {
    it('--jobs beyond the cores available is clamped to them, with a warning', () => {
        const cores = os.availableParallelism();
        const r = calvin(['check', '--format', 'json', '--jobs', String(cores + 14), path.join(EXAMPLES, 'simple_lock_ok.calvin')]);
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stderr, `calvin: --jobs ${cores + 14} is more than the ${cores} core${cores === 1 ? '' : 's'} available: using ${cores}\n`);
        assert.deepEqual(codes(r), []);
        const within = calvin(['check', '--format', 'json', '--jobs', '1', path.join(EXAMPLES, 'simple_lock_ok.calvin')]);
        assert.equal(within.status, 0, within.stderr);
        assert.equal(within.stderr, '');
    });
});

describe('identifiers follow Java', () => {
    it('Unicode letters in names (BMP and beyond) are identifiers', () => {
        const ok = write('unicode.calvin', 'int zähler = 0;\nint 变量 = 1;\nthread Tâche { zähler = 变量 + 1; int \u{1D465} = 2; assert zähler > 1; }\n');
        const r = calvin(['check', '--format', 'json', ok]);
        assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
        assert.deepEqual(codes(r), []);
        const racy = write('unicode-race.calvin', 'int zähler = 0;\nthread Α { zähler = 1; }\nthread Β[2] { zähler = 2; }\n');
        const q = calvin(['check', '--format', 'json', racy]);
        assert.equal(q.status, 1);
        assert.ok(json(q).diagnostics.some(d => d.code === 'race' && d.message.includes('zähler')), q.stdout);
    });
});

describe('identifiers follow Java beyond letters', () => {
    it('currency symbols and connectors start names, letter numbers and format characters are parts; a name ignores its format characters', () => {
        const f = write('java-names.calvin', [
            'int €uro = 1;',
            'int $x = 2;',
            'int _ = 3;',
            'int a\u200bb = 4;',                   // a zero-width space: the name is 'ab'
            'int \u2167x = 5;',                     // Ⅷ, a letter number
            'int c\u203fd = 6;',                    // ‿, a connector
            'int e\u00adf = 7;',                    // a soft hyphen: the name is 'ef'
            'thread T { assert €uro + $x + _ + ab + \u2167x + c\u203fd + ef == 28; assert a\u200bb == ab; }',
            'thread U { assert ef + e\u00adf == 15; }',
            '',
        ].join('\n'));
        const r = calvin(['check', '--format', 'json', f]);
        assert.equal(r.status, 1, `${r.stdout}\n${r.stderr}`);
        // the two assertions hold; the third is refuted: the name 'ab' is one variable, written by nobody
        assert.deepEqual(codes(r), ['9:assert']);
        const dup = write('java-names-dup.calvin', 'int ab = 0;\nint a\u200bb = 1;\nthread T { ab = 2; }\n');
        const q = calvin(['check', '--format', 'json', dup]);
        assert.equal(q.status, 1);
        assert.deepEqual(codes(q), ['2:name']);
        assert.match(json(q).diagnostics[0].message, /'ab' is already declared at line 1/);
    });
    it('a name that is a keyword once its invisible characters are removed is an error; bidi controls are no part of a name', () => {
        const f = write('java-names-bad.calvin', 'int x = 0;\nint i\u200bf = 1;\nint y\u202e = 2;\nthread T { x = 1; }\n');
        const r = calvin(['check', '--format', 'json', f]);
        assert.equal(r.status, 1);
        const ds = json(r).diagnostics;
        assert.ok(ds.some(d => d.line === 2 && d.code === 'syntax' && /reads as the keyword 'if' once its invisible characters are removed/.test(d.message)), JSON.stringify(ds));
        assert.ok(ds.some(d => d.line === 3 && d.code === 'syntax' && d.message.includes("Unexpected character '\\u202e'")), JSON.stringify(ds));
    });
});

describe('messages', () => {
    it('control bytes from binary input are escaped', () => {
        const f = write('binary.calvin', 'int x = 0;\nthread T { x\u0001 = 1; int y\u007f = 2; }\n');
        const r = calvin(['check', '--format', 'json', f]);
        const messages = json(r).diagnostics.map(d => d.message);
        assert.ok(messages.some(m => m.includes("'\\x01'")) && messages.some(m => m.includes("'\\x7f'")), messages.join('\n'));
        // eslint-disable-next-line no-control-regex
        assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(r.stdout), 'raw control characters in the output');
    });
    it('control and bidi characters in file names are escaped in the text output and in the warnings', { skip: process.platform === 'win32' }, () => {
        const d = path.join(dir, 'names');
        const evil = 'evil\u001b[31m\u0007\u202egnp';
        const bad = write(`names/${evil}.calvin`, 'int = 1;\n');
        write('names/ok.calvin', fs.readFileSync(path.join(EXAMPLES, 'simple_lock_unlocked.calvin'), 'utf8'));
        spawnSync('mkfifo', [path.join(d, `${evil}-fifo.calvin`)]);
        const r = calvin(['check', d]);
        assert.equal(r.status, 1, r.stderr);
        const shown = 'evil\\x1b[31m\\x07\\u202egnp';
        assert.ok(r.stdout.includes(`${shown}.calvin:1:5: error [syntax]`), r.stdout);
        assert.ok(r.stderr.includes(`calvin: skipped '${path.join(d, shown)}-fifo.calvin': not a regular file (a FIFO)`), r.stderr);
        assert.ok(r.stderr.includes(`calvin: not verified (fix the errors reported first): ${path.join(d, shown)}.calvin`), r.stderr);
        // eslint-disable-next-line no-control-regex
        assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/.test(r.stdout + r.stderr), 'raw control or bidi characters in the output');
        // the JSON report keeps the real name (JSON escapes what it must)
        assert.ok(json(calvin(['check', '--format', 'json', bad])).diagnostics.every(x => x.file === bad));
        // a message quoting source text escapes a bidi control too
        const src = write('names/bidi-source.calvin', 'int x = 0; // \u202e comment\nthread T { x = 1\u202e; }\n');
        const t = calvin(['check', src]);
        assert.equal(t.status, 1);
        assert.match(t.stdout, /bidi-source\.calvin:2:17: error \[syntax\] Unexpected character '\\u202e'/);
        assert.ok(!/[\u202a-\u202e]/.test(t.stdout + t.stderr), t.stdout);
    });
});

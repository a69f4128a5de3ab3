// Non-vacuity ("smoke") test of the verifier: a verification condition whose
// assumptions contradict each other proves everything. For every correct
// program of the examples and the corpus, an `assert false;` is added at the
// end of each thread whose end can be reached; the checker must report every
// one of them (the end of the thread is reachable in the VC), and nothing else.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, EXAMPLES, ROOT } from '../util/paths.js';

const CORPUS = path.join(ROOT, 'test/corpus');
const OUT = path.join(ROOT, 'test/.tmp/vacuity');

/** The program with `assert false;` before the closing brace of each thread whose end is reachable; the lines of those asserts. */
function withSmoke(text: string): { text: string; lines: number[] } {
    const lines = text.split('\n');
    const out: string[] = [];
    const smoke: number[] = [];
    let depth = 0;
    let thread: { depth: number; endless: boolean } | undefined;
    for (const line of lines) {
        if (!thread && /^\s*thread\s+\w+/.test(line)) thread = { depth, endless: false };
        if (thread && /while\s*\(\s*true\s*\)/.test(line)) thread.endless = true;
        const opened = (line.match(/\{/g) ?? []).length;
        const closed = (line.match(/\}/g) ?? []).length;
        if (thread && depth + opened - closed === thread.depth && line.trim() === '}' && depth > thread.depth) {
            if (!thread.endless) {
                out.push('  assert false;');
                smoke.push(out.length);
            }
            thread = undefined;
        }
        depth += opened - closed;
        out.push(line);
    }
    return { text: out.join('\n'), lines: smoke };
}

describe('non-vacuity: the end of every thread of the correct programs is reachable in its VC', () => {
    const programs = [
        ...fs.readdirSync(EXAMPLES).filter(f => f.endsWith('_ok.calvin')).map(f => path.join(EXAMPLES, f)),
        ...fs.readdirSync(CORPUS).filter(f => f.endsWith('_ok.calvin')).map(f => path.join(CORPUS, f)),
    ];
    fs.rmSync(OUT, { recursive: true, force: true });
    fs.mkdirSync(OUT, { recursive: true });
    const expected = new Map<string, number[]>();
    for (const p of programs) {
        const { text, lines } = withSmoke(fs.readFileSync(p, 'utf8'));
        const file = path.join(OUT, path.basename(p));
        fs.writeFileSync(file, text);
        expected.set(file, lines);
    }
    let reported: Array<{ file: string; line: number; code: string; severity: string }> | undefined;
    const report = () => {
        if (!reported) {
            const r = spawnSync(process.execPath, [CLI, 'check', '--format', 'json', OUT], { encoding: 'utf8', timeout: 20 * 60_000, maxBuffer: 64 << 20 });
            assert.ok(r.status === 0 || r.status === 1, r.stderr);
            reported = JSON.parse(r.stdout).diagnostics;
        }
        return reported!;
    };
    for (const [file, lines] of expected) {
        it(path.basename(file), { timeout: 20 * 60_000 }, () => {
            const got = report().filter(d => path.resolve(d.file) === file && d.severity !== 'info').map(d => `${d.line}:${d.code}`).sort();
            assert.deepEqual(got, lines.map(l => `${l}:assert`).sort());
        });
    }
});

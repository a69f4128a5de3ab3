// Seeded fuzzing of `calvin check` (issue 10): 2,000 mutants of the example
// programs (random token edits, and a quarter with an extreme value: huge
// literals, deep parentheses, long sums), checked by the real CLI with the
// real verifier, 100 programs per run. Every run must exit 0 or 1 with a JSON
// report, or 2 with a message; never a stack trace, an internal error, or a
// silent exit. A failing batch is split to name the mutant that fails.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, EXAMPLES } from '../util/paths.js';
import { generateCases, type FuzzCase } from '../fuzz/mutate.js';

const SEED = Number(process.env.CALVIN_FUZZ_SEED ?? 20261124);
const CASES = Number(process.env.CALVIN_FUZZ_CLI_CASES ?? 2000);
const BATCH = 100;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-fuzz-cli-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const bases = Object.fromEntries(fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin')).map(f => [f, fs.readFileSync(path.join(EXAMPLES, f), 'utf8')]));

/** What is wrong with one run of the CLI (undefined: nothing). */
function problem(files: string[]): string | undefined {
    const r = spawnSync(process.execPath, [CLI, 'check', '--format', 'json', '--time-limit', '1000', '--jobs', '2', ...files], {
        encoding: 'utf8', timeout: 10 * 60_000, maxBuffer: 256 << 20,
    });
    const out = `${r.stdout}\n${r.stderr}`;
    if (r.error) return `the CLI did not finish: ${r.error.message}`;
    if (/\n\s+at .+:\d+:\d+\)?\n/.test(out)) return `a stack trace was printed:\n${out.slice(0, 2000)}`;
    if (r.status === 2) return r.stderr.startsWith('calvin: ') ? undefined : `exit 2 without a message: ${JSON.stringify(r.stderr.slice(0, 500))}`;
    if (r.status !== 0 && r.status !== 1) return `exit ${r.status} (signal ${r.signal}): ${r.stderr.slice(0, 2000)}`;
    let report: { files?: number; diagnostics?: Array<{ severity: string; message: string; file: string; line: number }> };
    try {
        report = JSON.parse(r.stdout);
    } catch {
        return `exit ${r.status} without a JSON report: ${JSON.stringify(r.stdout.slice(0, 300))}`;
    }
    if (report.files !== files.length) return `the report counts ${report.files} files, not ${files.length}`;
    const errors = (report.diagnostics ?? []).filter(d => d.severity === 'error');
    if ((r.status === 1) !== (errors.length > 0)) return `exit ${r.status} with ${errors.length} error diagnostics`;
    const internal = (report.diagnostics ?? []).find(d => /internal error/i.test(d.message));
    if (internal) return `${internal.file}:${internal.line}: ${internal.message}`;
    return undefined;
}

/** Narrow a failing batch down to one failing mutant (or report the batch). */
function culprit(files: string[], cases: Map<string, FuzzCase>): string {
    let current = files;
    while (current.length > 1) {
        const half = current.slice(0, Math.ceil(current.length / 2));
        const rest = current.slice(half.length);
        if (problem(half)) current = half;
        else if (problem(rest)) current = rest;
        else break; // only together
    }
    const c = current.length === 1 ? cases.get(current[0]) : undefined;
    return c ? `${path.basename(current[0])} (${c.base}: ${c.mutations.join('; ')})` : `${current.length} files together`;
}

describe(`fuzz: ${CASES} mutated programs through calvin check (seed ${SEED})`, () => {
    const cases = generateCases(SEED, bases, CASES, 0.25);
    const files = new Map<string, FuzzCase>();
    for (const c of cases) {
        const f = path.join(dir, `batch${String(Math.floor(c.index / BATCH)).padStart(3, '0')}`, `case${String(c.index).padStart(5, '0')}.calvin`);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, c.text);
        files.set(f, c);
    }
    const batches = [...new Set([...files.keys()].map(f => path.dirname(f)))].sort();
    it('every run exits 0/1 with a report, or 2 with a message; no stack trace, internal error or silent exit', { timeout: 40 * 60_000 }, () => {
        const findings: string[] = [];
        for (const b of batches) {
            const batchFiles = [...files.keys()].filter(f => path.dirname(f) === b).sort();
            const p = problem(batchFiles);
            if (p) findings.push(`${culprit(batchFiles, files)}: ${p.split('\n')[0]}`);
        }
        assert.deepEqual(findings, []);
    });
});

// Seeded fuzzing of `calvin check` (issue 10), through the real CLI with the
// real verifier:
// - 2,000 mutants of the example programs (random token edits, and a quarter
//   with an extreme value: huge literals, deep parentheses, long sums), 100
//   files per run, and a share of them again one file per run (a batch hides
//   a hang that a single file shows: the solver is still starting when the
//   front end is done);
// - structural cases, one file per run: loops nested up to and past the
//   nesting limit, and wide programs (many globals, threads, statements,
//   chained calls).
// Every run must exit 0 or 1 with a JSON report, or 2 with a message that is
// not an internal error; never a stack trace, an internal error, or a silent
// exit. A failing batch is split to name the mutant that fails.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, EXAMPLES } from '../util/paths.js';
import { generateCases, type FuzzCase } from '../fuzz/mutate.js';
import { generateShapes, MAX_LOOP_DEPTH, nestedLoopCases, NESTING_LIMIT } from './shapes.js';

const SEED = Number(process.env.CALVIN_FUZZ_SEED ?? 20261124);
const CASES = Number(process.env.CALVIN_FUZZ_CLI_CASES ?? 2000);
const BATCH = 100;
/** Token mutants run again one file per run, spread over the cases, half of them extreme ones. */
const SINGLES = 24;
/** Runs at the same time (the machine's cores, at most 2: CI machines are small). */
const PARALLEL = Math.max(1, Math.min(2, os.availableParallelism()));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-fuzz-cli-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const bases = Object.fromEntries(fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin')).map(f => [f, fs.readFileSync(path.join(EXAMPLES, f), 'utf8')]));

interface Run { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; timedOut: boolean }

function run(files: string[], timeoutMs: number): Promise<Run> {
    return new Promise(resolve => {
        // A heap cap: a blow-up fails in seconds instead of taking the machine's memory.
        const child = spawn(process.execPath, ['--max-old-space-size=2048', CLI, 'check', '--no-witness', '--format', 'json', '--time-limit', '500', '--jobs', '1', ...files], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '', stderr = '', timedOut = false;
        child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
        child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
        const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
        child.on('close', (status, signal) => {
            clearTimeout(timer);
            resolve({ status, signal, stdout, stderr, timedOut });
        });
    });
}

/** What is wrong with one run of the CLI (undefined: nothing). */
async function problem(files: string[]): Promise<string | undefined> {
    const r = await run(files, files.length === 1 ? 120_000 : 10 * 60_000);
    const out = `${r.stdout}\n${r.stderr}`;
    if (r.timedOut) return `the CLI did not finish in time (killed)`;
    if (/\n\s+at .+:\d+:\d+\)?\n/.test(out)) return `a stack trace was printed:\n${out.slice(0, 2000)}`;
    if (/internal error|nothing was reported/i.test(r.stderr)) return `exit ${r.status} with an internal error: ${r.stderr.slice(0, 500)}`;
    if (r.status === 2) {
        if (!r.stderr.startsWith('calvin: ')) return `exit 2 without a message: ${JSON.stringify(r.stderr.slice(0, 500))}`;
        // "nothing could be checked" comes with the report (each check says why); usage errors come alone
        if (!r.stdout.trim()) return undefined;
    } else if (r.status !== 0 && r.status !== 1) {
        return `exit ${r.status} (signal ${r.signal}): ${r.stderr.slice(0, 2000)}`;
    }
    let report: { files?: number; diagnostics?: Array<{ severity: string; message: string; file: string; line: number }> };
    try {
        report = JSON.parse(r.stdout);
    } catch {
        return `exit ${r.status} without a JSON report: ${JSON.stringify(r.stdout.slice(0, 300))}`;
    }
    if (report.files !== files.length) return `the report counts ${report.files} files, not ${files.length}`;
    const errors = (report.diagnostics ?? []).filter(d => d.severity === 'error');
    if (r.status !== 2 && (r.status === 1) !== (errors.length > 0)) return `exit ${r.status} with ${errors.length} error diagnostics`;
    if (r.status === 2 && errors.length === 0) return 'exit 2 with a report without errors';
    const internal = (report.diagnostics ?? []).find(d => /internal error/i.test(d.message));
    if (internal) return `${internal.file}:${internal.line}: ${internal.message}`;
    return undefined;
}

/** Narrow a failing batch down to one failing mutant (or report the batch). */
async function culprit(files: string[], cases: Map<string, FuzzCase>): Promise<string> {
    let current = files;
    while (current.length > 1) {
        const half = current.slice(0, Math.ceil(current.length / 2));
        const rest = current.slice(half.length);
        if (await problem(half)) current = half;
        else if (await problem(rest)) current = rest;
        else break; // only together
    }
    return describeFiles(current, cases);
}

function describeFiles(files: string[], cases: Map<string, FuzzCase>): string {
    const c = files.length === 1 ? cases.get(files[0]) : undefined;
    return c ? `${path.basename(files[0])} (${c.base}: ${c.mutations.join('; ')})` : `${files.length} files together`;
}

/** Runs every job, PARALLEL at a time; the findings in job order. */
async function findings(jobs: string[][], cases: Map<string, FuzzCase>): Promise<string[]> {
    const out: string[] = new Array(jobs.length).fill('');
    let next = 0;
    const worker = async () => {
        while (next < jobs.length) {
            const i = next++;
            const p = await problem(jobs[i]);
            if (p) out[i] = `${jobs[i].length > 1 ? await culprit(jobs[i], cases) : describeFiles(jobs[i], cases)}: ${p.split('\n')[0]}`;
        }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    return out.filter(Boolean);
}

function writeCase(sub: string, c: FuzzCase, files: Map<string, FuzzCase>): string {
    const f = path.join(dir, sub, `case${String(c.index).padStart(5, '0')}.calvin`);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, c.text);
    files.set(f, c);
    return f;
}

describe(`fuzz: ${CASES} mutated programs through calvin check (seed ${SEED})`, () => {
    const cases = generateCases(SEED, bases, CASES, 0.25);
    const files = new Map<string, FuzzCase>();
    const batches: string[][] = [];
    for (const c of cases) {
        const f = writeCase(`batch${String(Math.floor(c.index / BATCH)).padStart(3, '0')}`, c, files);
        (batches[Math.floor(c.index / BATCH)] ??= []).push(f);
    }
    // The single-file share: evenly spread, half of it among the extreme mutants.
    const extreme = [...files.keys()].filter(f => /digits|parentheses|term sum/.test(files.get(f)!.mutations[0]));
    const ordinary = [...files.keys()].filter(f => !extreme.includes(f));
    const spread = (xs: string[], n: number) => Array.from({ length: Math.min(n, xs.length) }, (_, i) => xs[Math.floor(i * xs.length / Math.min(n, xs.length))]);
    const singles = [...spread(extreme, SINGLES / 2), ...spread(ordinary, SINGLES / 2)];

    it(`every run exits 0/1 with a report, or 2 with a message; no stack trace, internal error or silent exit (${batches.length} batches, ${singles.length} single files)`, { timeout: 40 * 60_000 }, async () => {
        assert.ok(cases.length >= 2000 || process.env.CALVIN_FUZZ_CLI_CASES, 'at least 2,000 mutants (issue 10)');
        assert.deepEqual(await findings([...batches, ...singles.map(f => [f])], files), []);
    });
});

describe('fuzz: programs of extreme shape through calvin check, one file per run', () => {
    const files = new Map<string, FuzzCase>();
    // Nesting depths up to 16 and past the limit (a syntax error that says so) run today.
    const shallow = [1, 2, 3, 5, 8, 12, 16, NESTING_LIMIT, NESTING_LIMIT + 2];
    const shapes = generateShapes(SEED + 1, bases, 18, shallow, 0).map(c => writeCase('shapes', c, files));
    it(`loops nested up to 16 deep and past the limit, and wide programs (${shapes.length} runs)`, { timeout: 20 * 60_000 }, async () => {
        assert.deepEqual(await findings(shapes.map(f => [f]), files), []);
    });
    // Between 17 and the limit, the simulation-checking program once grew exponentially
    // (32 loops: over 6 GB); loops are now analysed in linear time.
    const deep = [17, 24, 32, 40, MAX_LOOP_DEPTH];
    const deepShapes = nestedLoopCases(SEED + 2, bases, deep, 100);
    it(`loops nested ${deep.join(', ')} deep (up to the nesting limit)`, {
        timeout: 20 * 60_000,
    }, async () => {
        const deepFiles = deepShapes.map(c => writeCase('deep', c, files));
        assert.deepEqual(await findings(deepFiles.map(f => [f]), files), []);
    });
});

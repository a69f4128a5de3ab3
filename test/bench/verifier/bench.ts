// Verifier benchmark (not a test): prints tables, measures everything in one run.
//
//   npm run bench:verifier            # examples, wasm vs native, scaling series
//   npm run bench:verifier -- quick   # smaller scaling series
//   npm run bench:verifier -- textbook   # one part only (examples, textbook, threads, scaling)
//
// 1. Examples, end to end: `calvin check FILE` as a user runs it (process start,
//    front end, Z3 start, every check), per file; then in-process, per check: its
//    time and the part spent in the solver; with --solver z3-native too (when a z3
//    is on PATH) and the wasm/native ratio.
// 2. The tail of solver query times over all the examples' checks (median, p90,
//    p99, max), per backend.
// 3. Textbook algorithms written as a user would (programs/: a bounded buffer
//    with a monitor, a sense-reversing barrier), end to end with each backend,
//    and the wasm/native ratio of each check (issue 15: under 2 s with wasm,
//    under 1 s native, median ratio <= 2).
// 4. Threads that each write one global (100-1000): check time should grow
//    linearly, with and without inference.
// 5. Scaling: generated programs (test/bench/verifier/generate.ts) with 2-64
//    threads and 10-500 procedures; time per check should stay flat (linear total);
//    and the same programs checked with every call inlined (no abstractions): the
//    modular/inlined ratio.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../../language/src/index.js';
import { createBackend, nativeZ3Available, verifyProgram, type SolverBackend, type SolverSession, type CheckResult } from '../../../packages/verifier/src/index.js';
import type { ProgramModel } from '../../../packages/verifier/src/model/program.js';
import { CLI, EXAMPLES, ROOT } from '../../util/paths.js';
import { lockProgram } from './generate.js';

const QUICK = process.argv.includes('quick');
/**
 * BENCH_BEFORE=/path/to/an/older/checkout/packages/cli/out/calvin.cjs: the end-to-end
 * columns also run that build, in the same run, for the "before" figures.
 */
const BEFORE = process.env.BENCH_BEFORE;
const WORKER = path.join(ROOT, 'packages/cli/out/z3-worker.cjs');

async function modelOf(text: string, uri = 'file:///bench.calvin'): Promise<ProgramModel> {
    const { shared, Calvin } = createCalvinCoreServices();
    const res = await buildProgram(shared, [{ uri, text }]);
    return toProgramModel(programOf(res.documents[0], shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem);
}

/** A backend that records the time of every solver call. */
function recording(backend: SolverBackend, times: number[]): SolverBackend {
    return {
        name: backend.name,
        dispose: () => backend.dispose(),
        openSession: async o => {
            const s = await backend.openSession(o);
            const session: SolverSession = {
                eval: async text => {
                    const t0 = performance.now();
                    try { return await s.eval(text); } finally { if (/check-sat/.test(text)) times.push(performance.now() - t0); }
                },
                close: () => s.close(),
            };
            return session;
        },
    };
}

function quantile(values: number[], q: number): number {
    const s = [...values].sort((a, b) => a - b);
    return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

const ms = (x: number) => (Number.isFinite(x) ? `${Math.round(x)}` : '—');

async function examples(): Promise<void> {
    const files = fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin')).sort();
    const backends: Array<'z3-wasm' | 'z3-native'> = nativeZ3Available() ? ['z3-wasm', 'z3-native'] : ['z3-wasm'];
    console.log(`\n## Examples (${os.cpus().length} cores, Node ${process.version}; ${backends.join(' and ')})\n`);
    console.log('| example | end to end (ms) | verdict | checks: time / solver (ms) | in-process total wasm (ms) | native (ms) | wasm/native |');
    console.log('|---|---|---|---|---|---|---|');
    const queryTimes = new Map<string, number[]>(backends.map(b => [b, []]));
    const ratios: number[] = [];
    const solvers = new Map(backends.map(b => [b, recording(createBackend(b, b === 'z3-wasm' ? { workerScript: WORKER } : {}), queryTimes.get(b)!)]));
    // warm both backends up on every example once (their start is measured by the end-to-end
    // column; "warm" is a solver that has run such queries before, as in the language server)
    for (const s of solvers.values()) {
        for (const f of files) await verifyProgram(await modelOf(fs.readFileSync(path.join(EXAMPLES, f), 'utf8'), `file://${path.join(EXAMPLES, f)}`), { solver: s });
    }
    for (const b of backends) queryTimes.get(b)!.length = 0;
    for (const f of files) {
        const file = path.join(EXAMPLES, f);
        const t0 = performance.now();
        const r = spawnSync(process.execPath, [CLI, 'check', '--format', 'json', file], { encoding: 'utf8' });
        const e2e = performance.now() - t0;
        const t1 = performance.now();
        if (BEFORE) spawnSync(process.execPath, [BEFORE, 'check', '--format', 'json', file], { encoding: 'utf8' });
        const before = BEFORE ? ` / ${ms(performance.now() - t1)}` : '';
        const verdict = r.status === 0 ? 'verified' : `${JSON.parse(r.stdout).diagnostics.filter((d: { severity: string }) => d.severity !== 'info').length} findings`;
        const model = await modelOf(fs.readFileSync(file, 'utf8'), `file://${file}`);
        const totals = new Map<string, number>();
        let units: CheckResult[] = [];
        let nativeUnits: CheckResult[] = [];
        for (const b of backends) {
            const t1 = performance.now();
            const res = await verifyProgram(model, { solver: solvers.get(b)! });
            totals.set(b, performance.now() - t1);
            if (b === 'z3-wasm') units = res.checks;
            else nativeUnits = res.checks;
        }
        const perUnit = units.map(u => `${u.name} ${u.timeMs}/${u.solverMs}${u.timeMs > 300 ? ' (over 300)' : ''}`).join(', ');
        if (nativeUnits.length === units.length) units.forEach((u, i) => ratios.push(u.timeMs / Math.max(1, nativeUnits[i].timeMs)));
        const native = totals.get('z3-native');
        console.log(`| ${f.replace('.calvin', '')} | ${ms(e2e)}${before} | ${verdict} | ${perUnit} | ${ms(totals.get('z3-wasm')!)} | ${native === undefined ? '—' : ms(native)} | ${native ? (totals.get('z3-wasm')! / native).toFixed(1) : '—'} |`);
    }
    if (ratios.length > 0) console.log(`\nPer check (warm, in-process): wasm/native median ${quantile(ratios, 0.5).toFixed(1)}, p90 ${quantile(ratios, 0.9).toFixed(1)} over ${ratios.length} checks.`);
    console.log('\nSolver query times over these checks (check-sat-assuming, ms):\n');
    console.log('| backend | queries | median | p90 | p99 | max |');
    console.log('|---|---|---|---|---|---|');
    for (const [b, t] of queryTimes) console.log(`| ${b} | ${t.length} | ${quantile(t, 0.5).toFixed(1)} | ${quantile(t, 0.9).toFixed(1)} | ${quantile(t, 0.99).toFixed(1)} | ${Math.max(...t).toFixed(1)} |`);
    for (const s of solvers.values()) await s.dispose();
}

/** `calvin check --format json --verbose FILE` as a user runs it: its time, verdict and checks. */
function cli(file: string, extra: string[], cliPath = CLI): { ms: number; errors: number; checks: Array<{ name: string; timeMs: number; status: string }> } {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [cliPath, 'check', '--format', 'json', '--verbose', ...extra, file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    const ms = performance.now() - t0;
    if (r.status !== 0 && r.status !== 1) throw new Error(`calvin check ${file} exited ${r.status}: ${r.stderr}`);
    const report = JSON.parse(r.stdout) as { diagnostics: Array<{ severity: string }>; checks?: Array<{ name: string; timeMs: number; status: string }> };
    return { ms, errors: report.diagnostics.filter(d => d.severity !== 'info').length, checks: report.checks ?? [] };
}

/** The run with the median time of `reps` runs (alternating builds keeps their conditions alike). */
function medianRun<T extends { ms: number }>(runs: T[]): T {
    return [...runs].sort((a, b) => a.ms - b.ms)[runs.length >> 1];
}

async function textbook(): Promise<void> {
    const dir = path.join(ROOT, 'test/bench/verifier/programs');
    const files = fs.readdirSync(dir).filter(f => f.endsWith('.calvin')).sort();
    const native = nativeZ3Available();
    const reps = Number(process.env.BENCH_REPS ?? 3);
    console.log(`\n## Textbook algorithms (\`calvin check FILE\`, end to end, median of ${reps} runs${BEFORE ? '; now / before' : ''})\n`);
    console.log('| program | lines | verdict | wasm (ms) | native (ms) | checks: wasm/native (ms) | median wasm/native per check |');
    console.log('|---|---|---|---|---|---|---|');
    const all: number[] = [];
    for (const f of files) {
        const file = path.join(dir, f);
        const lines = fs.readFileSync(file, 'utf8').split('\n').length;
        const runs = { w: [] as Array<ReturnType<typeof cli>>, n: [] as Array<ReturnType<typeof cli>>, bw: [] as Array<ReturnType<typeof cli>>, bn: [] as Array<ReturnType<typeof cli>> };
        for (let i = 0; i < reps; i++) {
            runs.w.push(cli(file, ['--solver', 'wasm']));
            if (BEFORE) runs.bw.push(cli(file, ['--solver', 'wasm'], BEFORE));
            if (native) runs.n.push(cli(file, ['--solver', 'native']));
            if (native && BEFORE) runs.bn.push(cli(file, ['--solver', 'native'], BEFORE));
        }
        const w = medianRun(runs.w);
        const n = native ? medianRun(runs.n) : undefined;
        const both = (now: number, before?: Array<ReturnType<typeof cli>>) => `${ms(now)}${before && before.length ? ` / ${ms(medianRun(before).ms)}` : ''}`;
        const ratios = n ? w.checks.map((c, i) => c.timeMs / Math.max(1, n.checks[i]?.timeMs ?? NaN)) : [];
        all.push(...ratios);
        const per = w.checks.map((c, i) => `${c.name} ${c.timeMs}/${n?.checks[i]?.timeMs ?? '—'}`).join(', ');
        console.log(`| ${f.replace('.calvin', '')} | ${lines} | ${w.errors === 0 ? 'verified' : `${w.errors} findings`} | ${both(w.ms, runs.bw)} | ${n ? both(n.ms, runs.bn) : '—'} | ${per} | ${ratios.length ? quantile(ratios, 0.5).toFixed(1) : '—'} |`);
    }
    if (all.length > 0) console.log(`\nMedian wasm/native over these checks: ${quantile(all, 0.5).toFixed(1)}.`);
}

/** n threads that each write one global of their own. */
export function writerThreads(n: number): string {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(`int g${i} = 0;`);
    for (let i = 0; i < n; i++) out.push(`thread T${i} { g${i} = 1; }`);
    return out.join('\n') + '\n';
}

async function threads(): Promise<void> {
    const sizes = QUICK ? [100, 200, 400] : [100, 200, 500, 1000];
    console.log(`\n## Threads that each write one global (\`calvin check FILE\`, default solver, end to end${BEFORE ? '; before in brackets' : ''})\n`);
    console.log('| threads | with inference (ms) | ms/thread | --no-infer (ms) | ms/thread |');
    console.log('|---|---|---|---|---|');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-bench-threads-'));
    try {
        for (const n of sizes) {
            const file = path.join(dir, `writers${n}.calvin`);
            fs.writeFileSync(file, writerThreads(n));
            const inf = cli(file, []);
            const plain = cli(file, ['--no-infer']);
            const was = (extra: string[]) => (BEFORE ? ` (${ms(cli(file, extra, BEFORE).ms)})` : '');
            console.log(`| ${n} | ${ms(inf.ms)}${was([])} | ${(inf.ms / n).toFixed(1)} | ${ms(plain.ms)}${was(['--no-infer'])} | ${(plain.ms / n).toFixed(1)} |`);
        }
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

async function scaling(): Promise<void> {
    const solver = createBackend('z3-wasm', { workerScript: WORKER });
    await verifyProgram(await modelOf('int x = 0;\nthread T { x = 1; }\n'), { solver });
    const run = async (locks: number, threads: number, calls: number, inlined: boolean) => {
        const model = await modelOf(lockProgram({ locks, threads, calls, inlined }));
        const t0 = performance.now();
        const r = await verifyProgram(model, { solver });
        const problems = r.diagnostics.filter(d => d.severity !== 'info').length;
        if (problems > 0) throw new Error(`generated program (${locks} locks, ${threads} threads, inlined: ${inlined}) has ${problems} findings`);
        return { ms: performance.now() - t0, checks: r.checks.length };
    };
    // Every lock (2 procedures: acquire, release) is used at 4 call sites.
    const rows: Array<{ label: string; locks: number; threads: number; calls: number }> = [];
    for (const t of QUICK ? [2, 8, 32] : [2, 4, 8, 16, 32, 64]) rows.push({ label: 'threads', locks: 4, threads: t, calls: 4 });
    for (const p of QUICK ? [10, 50, 100] : [10, 50, 100, 250, 500]) {
        const locks = p / 2;
        const threads = Math.min(64, locks);
        rows.push({ label: 'procedures', locks, threads, calls: Math.ceil(4 * locks / threads) });
    }
    console.log('\n## Scaling (z3-wasm, one solver)\n');
    console.log('| series | procedures | threads | calls/thread | checks | modular (ms) | ms/check | inlined (ms) | modular/inlined |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
        const mod = await run(r.locks, r.threads, r.calls, false);
        const inl = await run(r.locks, r.threads, r.calls, true);
        console.log(`| ${r.label} | ${2 * r.locks} | ${r.threads} | ${r.calls} | ${mod.checks} | ${ms(mod.ms)} | ${(mod.ms / mod.checks).toFixed(0)} | ${ms(inl.ms)} | ${(mod.ms / inl.ms).toFixed(2)} |`);
    }
    await solver.dispose();
}

const only = process.argv.find(a => ['examples', 'textbook', 'threads', 'scaling'].includes(a));
if (!only || only === 'examples') await examples();
if (!only || only === 'textbook') await textbook();
if (!only || only === 'threads') await threads();
if (!only || only === 'scaling') await scaling();

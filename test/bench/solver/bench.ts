// Solver-host benchmark (not a test): N small VCs through each available backend,
// one fresh session per query, as the verifier will use it.
//
//   npm run build   # the wasm backend uses packages/cli/out/z3-worker.cjs
//   node --require ./scripts/polyfill.cjs --import tsx test/bench/solver/bench.ts [N] [VARS]
//
// Prints, per backend: cold start (backend created without pre-warming → first
// answer), then median / p90 / p99 / max / mean of the query time (openSession →
// answer → close), and the native/wasm ratios, all measured in this one run.
// Then, per backend, the first real query of a pre-warmed engine against the same
// query again (a check's first E* closure query of the bakery, as --dump-smt
// writes it): what the warm-up leaves to the first check.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createBackend, nativeZ3Available, type SolverBackend } from '../../../packages/verifier/src/solver-host/index.js';
import { firstLine, makeVc, WORKER_SCRIPT, type Vc } from '../../solver/vcs.js';
import { CLI, ROOT } from '../../util/paths.js';

const N = Number(process.argv[2] ?? 300);
const VARS = Number(process.argv[3] ?? 50);
const TIME_LIMIT_MS = 10_000;

interface Result {
    name: string;
    coldStartMs: number;
    coldOpenMs: number;
    times: number[];
    satTimes: number[];
    unsatTimes: number[];
    wrong: number;
}

function quantile(sorted: number[], q: number): number {
    if (sorted.length === 0) return NaN;
    const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
    return sorted[i];
}

function stats(values: number[]) {
    const s = [...values].sort((a, b) => a - b);
    return {
        median: quantile(s, 0.5),
        p90: quantile(s, 0.9),
        p99: quantile(s, 0.99),
        max: s[s.length - 1] ?? NaN,
        mean: s.reduce((a, b) => a + b, 0) / (s.length || 1),
    };
}

async function timedQuery(backend: SolverBackend, vc: Vc): Promise<{ ms: number; ok: boolean }> {
    const t0 = performance.now();
    const session = await backend.openSession({ timeLimitMs: TIME_LIMIT_MS });
    try {
        const answer = firstLine(await session.eval(vc.text));
        return { ms: performance.now() - t0, ok: answer === vc.expected };
    } finally {
        session.close();
    }
}

async function run(name: 'z3-wasm' | 'z3-native', vcs: Vc[]): Promise<Result> {
    const options = name === 'z3-wasm' ? { workerScript: WORKER_SCRIPT } : {};
    // Cold: a new backend, not pre-warmed; the first query pays the start.
    const t0 = performance.now();
    const cold = createBackend(name, { ...options, workers: 1, prewarm: false });
    let coldOpenMs: number;
    let coldStartMs: number;
    try {
        const s = await cold.openSession({ timeLimitMs: TIME_LIMIT_MS });
        coldOpenMs = performance.now() - t0;
        await s.eval(vcs[0].text);
        coldStartMs = performance.now() - t0;
        s.close();
    } finally {
        await cold.dispose();
    }

    // Warm: a pre-warmed backend, N queries one after another.
    const backend = createBackend(name, { ...options, workers: 1, prewarm: true });
    const result: Result = { name, coldStartMs, coldOpenMs, times: [], satTimes: [], unsatTimes: [], wrong: 0 };
    try {
        await timedQuery(backend, makeVc(999_999, VARS)); // wait for the pre-warm; not counted
        for (const vc of vcs) {
            const { ms, ok } = await timedQuery(backend, vc);
            result.times.push(ms);
            (vc.expected === 'sat' ? result.satTimes : result.unsatTimes).push(ms);
            if (!ok) result.wrong++;
        }
    } finally {
        await backend.dispose();
    }
    return result;
}

const fmt = (ms: number) => (Number.isFinite(ms) ? ms.toFixed(1).padStart(8) : '     n/a');

async function main(): Promise<void> {
    const vcs = Array.from({ length: N }, (_, i) => makeVc(i, VARS));
    console.log(`solver benchmark: ${N} VCs with ${VARS} Int variables (${vcs.filter(v => v.expected === 'sat').length} sat), fresh session per query`);
    console.log(`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'})`);
    const results: Result[] = [];
    if (fs.existsSync(WORKER_SCRIPT)) results.push(await run('z3-wasm', vcs));
    else console.log(`z3-wasm: skipped, ${WORKER_SCRIPT} is missing (run \`npm run build\`)`);
    if (nativeZ3Available()) results.push(await run('z3-native', vcs));
    else console.log('z3-native: skipped, no `z3` on PATH (apt-get install z3)');

    console.log('');
    console.log('backend     cold start  (to open)   median      p90      p99      max     mean  med sat med unsat  wrong');
    for (const r of results) {
        const all = stats(r.times);
        console.log(`${r.name.padEnd(10)} ${fmt(r.coldStartMs)}   ${fmt(r.coldOpenMs)}  ${fmt(all.median)} ${fmt(all.p90)} ${fmt(all.p99)} ${fmt(all.max)} ${fmt(all.mean)} ${fmt(stats(r.satTimes).median)} ${fmt(stats(r.unsatTimes).median)}  ${String(r.wrong).padStart(5)}`);
    }
    console.log('(all times in ms; cold start = createBackend without pre-warm → first answer; (to open) = until its first session opened)');
    const wasm = results.find(r => r.name === 'z3-wasm');
    const native = results.find(r => r.name === 'z3-native');
    if (wasm && native) {
        const w = stats(wasm.times);
        const n = stats(native.times);
        const ratio = (a: number, b: number) => (a / b).toFixed(3);
        console.log('');
        console.log(`native/wasm time ratio: cold ${ratio(native.coldStartMs, wasm.coldStartMs)}, median ${ratio(n.median, w.median)}, p90 ${ratio(n.p90, w.p90)}, p99 ${ratio(n.p99, w.p99)}, max ${ratio(n.max, w.max)}, mean ${ratio(n.mean, w.mean)}`);
        console.log(`(wasm is ${(w.median / n.median).toFixed(1)}× slower than native at the median, ${(wasm.coldStartMs / native.coldStartMs).toFixed(1)}× at cold start)`);
    }
    await firstQuery();
    if (results.some(r => r.wrong > 0)) {
        console.log('WRONG ANSWERS: see the "wrong" column');
        process.exitCode = 1;
    }
}

/** A pre-warmed engine's first real query, and the same query again (median of 5 engines each). */
async function firstQuery(): Promise<void> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-bench-first-'));
    try {
        spawnSync(process.execPath, [CLI, 'check', '-j', '1', '--solver', 'wasm', '--dump-smt', dir, path.join(ROOT, 'test/bench/verifier/programs/bakery.calvin')], { encoding: 'utf8' });
        const dump = fs.readFileSync(path.join(dir, 'T1.smt2'), 'utf8');
        const query = dump.slice(0, dump.indexOf('\n', dump.indexOf('(check-sat-assuming')) + 1);
        console.log(`\nfirst query of a pre-warmed engine (bakery's first E* closure query, ${query.length} chars; median of 5):`);
        for (const name of ['z3-wasm', 'z3-native'] as const) {
            if (name === 'z3-native' ? !nativeZ3Available() : !fs.existsSync(WORKER_SCRIPT)) continue;
            const first: number[] = [], again: number[] = [];
            for (let i = 0; i < 5; i++) {
                const backend = createBackend(name, { workers: 1, prewarm: true, workerScript: WORKER_SCRIPT });
                try {
                    // (ready: a session opened and closed)
                    (await backend.openSession({ timeLimitMs: TIME_LIMIT_MS })).close();
                    for (const out of [first, again]) {
                        const s = await backend.openSession({ timeLimitMs: TIME_LIMIT_MS });
                        const t0 = performance.now();
                        await s.eval(query);
                        out.push(performance.now() - t0);
                        s.close();
                    }
                } finally {
                    await backend.dispose();
                }
            }
            console.log(`${name.padEnd(10)} first ${fmt(stats(first).median)}  again ${fmt(stats(again).median)}`);
        }
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

await main();

// Witness search benchmark (issue 14; not a test): prints tables.
//
//   node --require ./scripts/polyfill.cjs --import tsx test/bench/witness/bench.ts [native] [quick]
//
// 1. Time to a witness for every error of every buggy example, with the default
//    bounds (target: under 2 s each), on Z3 in WebAssembly (the default backend),
//    and on a native z3 with `native` (when one is on PATH).
// 2. How it grows with the bounds: the same searches with loop iterations,
//    context switches and copies of replicated threads from 1 to 4.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createBackend, nativeZ3Available, type SolverBackend, type VDiagnostic } from '../../../packages/verifier/src/index.js';
import { DEFAULT_BOUNDS, WitnessSearch, type WitnessBounds } from '../../../packages/verifier/src/witness/index.js';
import { EXAMPLES, ROOT } from '../../util/paths.js';
import { checked, programOfFile, where } from '../../witness/util.js';

const QUICK = process.argv.includes('quick');
const NATIVE = process.argv.includes('native') && nativeZ3Available();
const WORKER = path.join(ROOT, 'packages/cli/out/z3-worker.cjs');

function pad(s: string, n: number): string {
    return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function table(head: string[], rows: string[][]): void {
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map(r => (r[i] ?? '').length)));
    console.log(head.map((h, i) => pad(h, widths[i])).join('  '));
    console.log(widths.map(w => '-'.repeat(w)).join('  '));
    for (const r of rows) console.log(r.map((c, i) => pad(c, widths[i])).join('  '));
    console.log('');
}

interface Case { file: string; program: Awaited<ReturnType<typeof programOfFile>>['program']; text: string; diagnostics: VDiagnostic[] }

async function cases(solver: SolverBackend): Promise<Case[]> {
    const files = fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin') && !f.endsWith('_ok.calvin')).sort();
    const out: Case[] = [];
    for (const f of files) {
        // (as `calvin check` reports them: with the inferred protection, which the search then reads)
        const { program: source, text } = await programOfFile(path.join(EXAMPLES, f));
        const { program, errors } = await checked(source, solver);
        out.push({ file: f, program, text, diagnostics: errors });
    }
    return out;
}

async function timeOf(c: Case, d: VDiagnostic, solver: SolverBackend, bounds: Partial<WitnessBounds>): Promise<{ ms: number; status: string; steps: number }> {
    const search = new WitnessSearch(c.program, { solver, bounds, source: () => c.text, timeLimitMs: 30_000 });
    const t0 = performance.now();
    const w = await search.find(d);
    return { ms: performance.now() - t0, status: w.status === 'confirmed' ? 'confirmed' : 'not confirmed', steps: w.status === 'confirmed' ? w.steps.length : 0 };
}

async function main(): Promise<void> {
    const backends: Array<[string, SolverBackend]> = [['z3-wasm', createBackend('z3-wasm', { workerScript: WORKER })]];
    if (NATIVE) backends.push(['z3-native', createBackend('z3-native')]);
    try {
        const all = await cases(backends[0][1]);
        console.log(`Witness search, default bounds ${JSON.stringify(DEFAULT_BOUNDS)} (target: under 2 s per diagnostic)\n`);
        const rows: string[][] = [];
        for (const c of all) {
            for (const d of c.diagnostics) {
                const row = [c.file, where(d)];
                for (const [, solver] of backends) {
                    const r = await timeOf(c, d, solver, {});
                    row.push(`${r.ms.toFixed(0)} ms`, r.status, String(r.steps));
                }
                rows.push(row);
            }
        }
        table(['example', 'diagnostic', ...backends.flatMap(([n]) => [n, 'result', 'steps'])], rows);

        const series: Array<[string, Array<Partial<WitnessBounds>>]> = [
            ['loops', [1, 2, 3, 4].map(loops => ({ loops }))],
            ['switches', [1, 2, 3, 4].map(switches => ({ switches }))],
            ['copies', [1, 2, 3, 4].map(copies => ({ copies }))],
        ];
        for (const [what, configs] of series) {
            console.log(`Growth with ${what} (others at their default; ${backends[0][0]}; c = confirmed, n = not confirmed)\n`);
            const growth: string[][] = [];
            for (const c of all) {
                for (const d of c.diagnostics) {
                    if (QUICK && growth.length >= 4) break;
                    const row = [c.file, where(d)];
                    for (const b of configs) {
                        const r = await timeOf(c, d, backends[0][1], b);
                        row.push(`${r.ms.toFixed(0)} ms ${r.status === 'confirmed' ? 'c' : 'n'}`);
                    }
                    growth.push(row);
                }
            }
            table(['example', 'diagnostic', ...configs.map(b => `${what} = ${Object.values(b)[0]}`)], growth);
        }
    } finally {
        for (const [, b] of backends) await b.dispose();
    }
}

main().catch(e => { console.error(e); process.exit(1); });

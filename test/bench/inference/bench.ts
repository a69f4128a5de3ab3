// Inference benchmark (issue 13; not a test): prints the README's table.
//
//   node --require ./scripts/polyfill.cjs --import tsx test/bench/inference/bench.ts [examples|corpus|inferred]...
//
// For each program of examples/, test/corpus/ and test/corpus/inferred/:
//  - protection annotation lines (`writable_if`, `environment`) as written, and how many of them can be
//    deleted with the same verdict (the program without them, checked with inference, still verifies when it
//    is correct and still reports a bug when it is buggy);
//  - the time of the inference itself (the fact analysis, no solver) and of the checks with and without
//    inference (the program as written; Z3 in WebAssembly, one solver instance, in this process).
// Totals per folder, and every example on its own line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../../language/src/index.js';
import type { ProgramModel } from '../../../packages/verifier/src/model/program.js';
import { createBackend, inferAnnotations, verifyProgram, verifyWithInference, type SolverBackend } from '../../../packages/verifier/src/index.js';
import { stripProtection } from '../../util/strip.js';
import { markersOf } from '../../corpus/markers.js';
import { EXAMPLES, ROOT } from '../../util/paths.js';

const WORKER = path.join(ROOT, 'packages/cli/out/z3-worker.cjs');
const FOLDERS: Record<string, string> = { examples: EXAMPLES, corpus: path.join(ROOT, 'test/corpus'), inferred: path.join(ROOT, 'test/corpus/inferred') };

async function modelOf(name: string, text: string): Promise<ProgramModel | undefined> {
    const { shared, Calvin } = createCalvinCoreServices();
    const res = await buildProgram(shared, [{ uri: `file:///bench/${name}`, text }]);
    const doc = res.documents[0];
    if ((doc.diagnostics ?? []).some(d => d.severity === 1)) return undefined;
    return toProgramModel(programOf(doc, shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem);
}

/** Lines of the program that hold a writable_if or environment clause. */
function protectionLines(text: string): number {
    const stripped = stripProtection(text).split('\n');
    return text.split('\n').filter((l, i) => l !== stripped[i]).length;
}

interface Row { name: string; lines: number; deletable: number; inferMs: number; withMs: number; withoutMs: number; rounds: number; annotations: number }

async function measure(file: string, solver: SolverBackend): Promise<Row | undefined> {
    const name = path.basename(file);
    const text = fs.readFileSync(file, 'utf8');
    const model = await modelOf(name, text);
    if (!model) return undefined;
    const buggy = markersOf(text).expect.size > 0;
    const lines = protectionLines(text);
    let deletable = 0;
    if (lines > 0) {
        const stripped = await modelOf(name, stripProtection(text));
        if (stripped) {
            const r = await verifyWithInference(stripped, { solver, timeLimitMs: 10_000 });
            const errors = r.diagnostics.filter(d => d.severity !== 'info');
            const same = buggy ? errors.some(d => d.severity === 'error') : errors.length === 0;
            if (same) deletable = lines;
        }
    }
    let t = Date.now();
    const inference = inferAnnotations(model);
    const inferMs = Date.now() - t;
    t = Date.now();
    await verifyProgram(model, { solver, timeLimitMs: 10_000 });
    const withoutMs = Date.now() - t;
    t = Date.now();
    const r = await verifyWithInference(model, { solver, timeLimitMs: 10_000 });
    const withMs = Date.now() - t;
    return { name, lines, deletable, inferMs, withMs, withoutMs, rounds: r.rounds, annotations: inference.annotations.length };
}

function pad(s: string, n: number): string {
    return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function table(head: string[], rows: string[][]): void {
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map(r => (r[i] ?? '').length)));
    console.log(`| ${head.map((h, i) => pad(h, widths[i])).join(' | ')} |`);
    console.log(`|${widths.map(w => '-'.repeat(w + 2)).join('|')}|`);
    for (const r of rows) console.log(`| ${r.map((c, i) => pad(c, widths[i])).join(' | ')} |`);
    console.log('');
}

async function main(): Promise<void> {
    const which = process.argv.slice(2).filter(a => FOLDERS[a]);
    const folders = which.length > 0 ? which : Object.keys(FOLDERS);
    const solver = createBackend('z3-wasm', { workerScript: WORKER });
    try {
        // warm Z3 up (its first query costs about half a second)
        const warm = await modelOf('warm.calvin', 'int x = 0;\nthread T { x = 1; }\n');
        if (warm) await verifyProgram(warm, { solver });
        const totals: string[][] = [];
        for (const folder of folders) {
            const dir = FOLDERS[folder];
            const files = fs.readdirSync(dir).filter(f => f.endsWith('.calvin')).sort().map(f => path.join(dir, f));
            const rows: Row[] = [];
            for (const f of files) {
                const row = await measure(f, solver);
                if (row) rows.push(row);
            }
            if (folder === 'examples') {
                console.log('Examples, one by one:\n');
                table(['program', 'protection lines', 'deletable', 'inferred annotations', 'inference (ms)', 'checks without inference (ms)', 'checks with inference (ms)', 'rounds'],
                    rows.map(r => [r.name, `${r.lines}`, `${r.deletable}`, `${r.annotations}`, `${r.inferMs}`, `${r.withoutMs}`, `${r.withMs}`, `${r.rounds}`]));
            }
            const sum = (f: (r: Row) => number) => rows.reduce((n, r) => n + f(r), 0);
            totals.push([folder, `${rows.length}`, `${sum(r => r.lines)}`, `${sum(r => r.deletable)}`, `${sum(r => r.inferMs)}`, `${sum(r => r.withoutMs)}`, `${sum(r => r.withMs)}`,
                `${(sum(r => r.withMs) / Math.max(1, sum(r => r.withoutMs))).toFixed(2)}`]);
        }
        console.log('Totals:\n');
        table(['folder', 'programs', 'protection lines', 'deletable with the same verdicts', 'inference (ms)', 'checks without inference (ms)', 'checks with inference (ms)', 'with / without'], totals);
    } finally {
        await solver.dispose();
    }
}

main().catch(e => { console.error(e); process.exit(1); });

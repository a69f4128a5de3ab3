/**
 * Front-end benchmark (not a test): parse + link + validate time of generated
 * programs of 1k, 10k and 50k lines, and, in the real language server over
 * stdio, the time from `didChange` of one method to `publishDiagnostics`
 * (median and p95 over 50 edits). Run: npm run bench:frontend
 */
import '../../../scripts/polyfill.cjs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildProgram, createCalvinCoreServices } from '../../../language/src/index.js';
import { LspClient, fileUri } from '../../util/lsp-client.js';
import { generateProgram } from './generate.js';

const SIZES = process.env.BENCH_SIZES ? process.env.BENCH_SIZES.split(',').map(Number) : [1_000, 10_000, 50_000];
const EDITS = Number(process.env.BENCH_EDITS ?? 50);

function percentile(xs: number[], p: number): number {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

async function frontEndTimes(text: string): Promise<{ cold: number; warm: number }> {
    const { shared } = createCalvinCoreServices();
    const t0 = performance.now();
    await buildProgram(shared, [{ uri: 'file:///bench/program.calvin', text }]);
    const cold = performance.now() - t0;
    const warm: number[] = [];
    for (let i = 1; i <= 3; i++) {
        const t = performance.now();
        await buildProgram(shared, [{ uri: 'file:///bench/program.calvin', text: text + ' '.repeat(i) }]);
        warm.push(performance.now() - t);
    }
    return { cold, warm: percentile(warm, 50) };
}

/** didChange of one method → publishDiagnostics, in the real server. */
async function serverLatency(text: string): Promise<{ median: number; p95: number; open: number }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-bench-'));
    const file = path.join(dir, 'program.calvin');
    fs.writeFileSync(file, text);
    const uri = fileUri(file);
    const client = await LspClient.start({ rootPath: dir });
    try {
        const t0 = performance.now();
        await client.open(uri, text, 1);
        await client.waitForDiagnostics(uri, () => true, 120_000);
        const open = performance.now() - t0;
        const times: number[] = [];
        // Each edit changes one method body of a different class; every other edit is an error and its fix.
        const marker = 'sum -= 1;';
        const current = text;
        let version = 1;
        for (let i = 0; i < EDITS; i++) {
            const at = nthIndexOf(current, marker, (i * 7) % 20);
            const replacement = i % 2 === 0 ? `sum -= ${i + 2};` : `sum -= true;`;
            const next = current.slice(0, at) + replacement + current.slice(at + marker.length);
            const before = client.published.length;
            const t = performance.now();
            await client.change(uri, next, ++version);
            await client.until(() => client.published.slice(before).some(p => p.uri === uri), 120_000);
            times.push(performance.now() - t);
            // restore, so the next edit starts from the clean program
            const b2 = client.published.length;
            await client.change(uri, current, ++version);
            await client.until(() => client.published.slice(b2).some(p => p.uri === uri), 120_000);
        }
        return { median: percentile(times, 50), p95: percentile(times, 95), open };
    } finally {
        await client.shutdown().catch(() => client.kill());
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

function nthIndexOf(s: string, needle: string, n: number): number {
    let at = -1;
    for (let i = 0; i <= n; i++) {
        const next = s.indexOf(needle, at + 1);
        if (next < 0) break;
        at = next;
    }
    return at;
}

async function main(): Promise<void> {
    console.log(`Calvin front-end benchmark (node ${process.version}, ${os.cpus().length} cores)`);
    console.log('| lines | parse+link+validate cold (ms) | warm rebuild (ms) | server: open → diagnostics (ms) | server: edit → diagnostics median / p95 (ms) |');
    console.log('|---|---|---|---|---|');
    for (const size of SIZES) {
        const text = generateProgram(size);
        const lines = text.split('\n').length;
        const fe = await frontEndTimes(text);
        const server = size <= 10_000 || process.env.BENCH_ALL ? await serverLatency(text) : undefined;
        console.log(`| ${lines} | ${fe.cold.toFixed(0)} | ${fe.warm.toFixed(0)} | ${server ? server.open.toFixed(0) : '—'} | ${server ? `${server.median.toFixed(0)} / ${server.p95.toFixed(0)}` : '— (set BENCH_ALL=1)'} |`);
    }
}

main().catch(e => {
    console.error(e);
    process.exit(1);
});

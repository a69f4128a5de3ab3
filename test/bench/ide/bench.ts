/**
 * IDE benchmark (not a test; issue 4): in the real language server over stdio
 * with verification on change,
 *  - keystroke → front-end diagnostics and keystroke → verification result of
 *    the edited check (median, p95 over 100 edits), on the shared examples and
 *    on a generated 200-procedure workspace;
 *  - the cache hit ratio over single-method edits in that workspace (checks of
 *    the edited program that did not run / all its checks);
 *  - cold start to full results for the examples folder (empty cache), and
 *    warm start (from `.calvin-cache/`).
 * Run: npm run bench:ide   (BENCH_EDITS=N to change the number of edits)
 */
import '../../../scripts/polyfill.cjs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EXAMPLES, ROOT } from '../../util/paths.js';
import { fileUri, LspClient } from '../../util/lsp-client.js';
import { lockProgram } from '../verifier/generate.js';

const EDITS = Number(process.env.BENCH_EDITS ?? 100);
const FINAL = new Set(['verified', 'failed', 'unknown', 'error']);

function percentile(xs: number[], p: number): number {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

const fmt = (ms: number) => `${Math.round(ms)} ms`;

interface Target {
    /** File name in the workspace. */
    file: string;
    /** A line the edit goes after (it opens the body of the check's thread or method). */
    anchor: string;
    /** The key of the check the edit belongs to. */
    key: string;
}

interface Workspace {
    dir: string;
    files: Map<string, string>;
    targets: Target[];
    /** The files of the program a file belongs to. */
    program: (file: string) => string[];
}

function workspace(files: Map<string, string>, targets: Target[], program: (file: string) => string[]): Workspace {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-ide-bench-'));
    for (const [name, text] of files) fs.writeFileSync(path.join(dir, name), text);
    return { dir, files, targets, program };
}

/** The examples with, for each, its first thread: the edit inserts a local at the start of its body. */
function examplesWorkspace(): Workspace {
    const files = new Map<string, string>();
    const targets: Target[] = [];
    for (const name of fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin')).sort()) {
        const text = fs.readFileSync(path.join(EXAMPLES, name), 'utf8');
        files.set(name, text);
        for (const m of text.matchAll(/^thread (\w+)[^\n]*\{$/gm)) targets.push({ file: name, anchor: m[0], key: `thread:${m[1]}` });
    }
    return workspace(files, targets, file => [file]);
}

/**
 * One program of 200 procedures across 11 files: 100 lock classes (acquire and
 * release, each with an abstraction), 10 per file, and 20 threads in a file of
 * their own that use them all.
 */
function generatedWorkspace(): Workspace {
    const files = new Map<string, string>();
    const targets: Target[] = [];
    const text = lockProgram({ locks: 100, threads: 20, calls: 5, inlined: false });
    const classes = [...text.matchAll(/^class L(\d+) \{\n[\s\S]*?^\}\n/gm)];
    for (let f = 0; f < 10; f++) {
        const name = `locks${f}.calvin`;
        files.set(name, classes.slice(10 * f, 10 * f + 10).map(m => m[0]).join(''));
        for (let k = 10 * f; k < 10 * f + 10; k++) targets.push({ file: name, anchor: `class L${k} {`, key: `abstraction:L${k}.release` });
    }
    files.set('threads.calvin', text.slice(text.indexOf('thread W0')));
    // the edits go round the files: file f, then f+1, ...
    targets.sort((a, b) => Number(a.key.match(/\d+/)![0]) % 10 - Number(b.key.match(/\d+/)![0]) % 10 || a.file.localeCompare(b.file));
    return workspace(files, targets, () => [...files.keys()]);
}

/** All checks of every file final, nothing pending. */
function quiet(client: LspClient, uris: string[]): boolean {
    return uris.every(u => {
        const d = client.latest.get(u);
        const st = client.status.get(u);
        return d !== undefined && st !== undefined && !st.pending && st.checks.every(c => FINAL.has(c.state));
    });
}

/**
 * The examples and two programs whose errors take the witness search seconds
 * each (test/corpus: five errors, 2-10 s per search; one query that Z3 cannot
 * decide within its 10 s), enough to hold both workers; the edits go to the
 * examples' threads while those searches (and the examples' own) run.
 */
function witnessWorkspace(): Workspace {
    const ws = examplesWorkspace();
    for (const slow of ['stack_monitor_overflow.calvin', 'time_varying_ignores_mode.calvin']) {
        ws.files.set(slow, fs.readFileSync(path.join(ROOT, 'test/corpus/inferred', slow), 'utf8'));
        fs.writeFileSync(path.join(ws.dir, slow), ws.files.get(slow)!);
    }
    return ws;
}

async function start(ws: Workspace, diskCache: boolean, options: { server?: string; solver?: string } = {}): Promise<{ client: LspClient; uris: Map<string, string>; ms: number }> {
    const t0 = performance.now();
    const client = await LspClient.start({
        rootPath: ws.dir, initializationOptions: { verifyOn: 'change', diskCache, ...(options.solver ? { solver: options.solver } : {}) },
        ...(options.server ? { server: [options.server, 'lsp'] } : {}),
    });
    const uris = new Map([...ws.files.keys()].map(n => [n, fileUri(path.join(ws.dir, n))]));
    // The workspace's files are verified without being opened (priority: workspace).
    if (!(await client.until(() => quiet(client, [...uris.values()]), 900_000))) throw new Error('no full results in 15 minutes');
    return { client, uris, ms: performance.now() - t0 };
}

interface EditFigures {
    frontEnd: number[];
    verification: number[];
    ran: number;
    total: number;
}

/**
 * Edits one check at a time (a new local at the start of its body, a new value
 * each time: its fingerprint changes); measures the front end's publication
 * and the edited check's result, and counts the checks of the program that ran.
 */
async function edits(client: LspClient, ws: Workspace, uris: Map<string, string>, n: number): Promise<EditFigures> {
    const texts = new Map(ws.files);
    const versions = new Map([...ws.files.keys()].map(f => [f, 1]));
    for (const [name, text] of texts) await client.open(uris.get(name)!, text, 1);
    await client.until(() => quiet(client, [...uris.values()]), 600_000);
    const out: EditFigures = { frontEnd: [], verification: [], ran: 0, total: 0 };
    for (let i = 0; i < n; i++) {
        const t = ws.targets[i % ws.targets.length];
        const uri = uris.get(t.file)!;
        const text = texts.get(t.file)!;
        const at = text.indexOf(t.anchor);
        if (at < 0) throw new Error(`anchor not found: ${t.anchor}`);
        // after the anchor's line for threads, inside release's body for the generated locks
        let next: string;
        if (t.key.startsWith('thread:')) {
            const eol = text.indexOf('\n', at);
            next = `${text.slice(0, eol + 1)}  int bench${i} = ${i};\n${text.slice(eol + 1)}`;
        } else {
            const body = text.indexOf('static void release() {', at) + 'static void release() {'.length;
            next = `${text.slice(0, body)} int bench${i} = ${i};${text.slice(body)}`;
        }
        texts.set(t.file, next);
        const version = versions.get(t.file)! + 1;
        versions.set(t.file, version);
        const published = client.published.length;
        const logged = client.statusLog.length;
        const program = ws.program(t.file).map(f => uris.get(f)!);
        const t0 = performance.now();
        await client.change(uri, next, version);
        let frontEnd = 0, verified = 0;
        const ok = await client.until(() => {
            if (!frontEnd && client.published.slice(published).some(p => p.uri === uri)) frontEnd = performance.now() - t0;
            const log = client.statusLog.slice(logged).filter(p => p.uri === uri);
            const started = log.some(p => p.checks.some(c => c.key === t.key && (c.state === 'queued' || c.state === 'running')));
            const last = log.at(-1)?.checks.find(c => c.key === t.key);
            if (!verified && started && last && FINAL.has(last.state)) verified = performance.now() - t0;
            return frontEnd > 0 && verified > 0 && quiet(client, program);
        }, 120_000);
        if (!ok) throw new Error(`edit ${i} (${t.key}) did not finish`);
        out.frontEnd.push(frontEnd);
        out.verification.push(verified);
        // the checks of the edited program that ran for this edit, and all its checks
        const names = new Set<string>();
        for (const p of client.statusLog.slice(logged)) if (program.includes(p.uri)) for (const c of p.checks) if (c.state === 'queued' || c.state === 'running') names.add(`${p.uri} ${c.key}`);
        out.ran += names.size;
        for (const u of program) out.total += client.status.get(u)?.checks.length ?? 0;
    }
    return out;
}

function row(name: string, xs: number[]): string {
    return `| ${name} | ${fmt(percentile(xs, 50))} | ${fmt(percentile(xs, 95))} | ${fmt(Math.max(...xs))} |`;
}

async function main(): Promise<void> {
    console.log(`# Calvin IDE benchmark (${EDITS} edits per workspace, ${os.availableParallelism?.() ?? os.cpus().length} cores, node ${process.version})\n`);

    // Cold and warm start on the examples folder: the default solver, and Z3 in WebAssembly;
    // BENCH_BEFORE=/path/to/an/older/checkout/packages/cli/out/calvin.cjs also starts that
    // build's server (in the same run, alternately), for the "before" figures.
    const ex = examplesWorkspace();
    const before = process.env.BENCH_BEFORE;
    const coldStart = async (solver?: string, server?: string): Promise<{ ms: number; checks: number }> => {
        fs.rmSync(path.join(ex.dir, '.calvin-cache'), { recursive: true, force: true });
        const cold = await start(ex, true, { solver, server });
        const checks = [...cold.uris.values()].reduce((n, u) => n + (cold.client.status.get(u)?.checks.length ?? 0), 0);
        await cold.client.shutdown();
        return { ms: cold.ms, checks };
    };
    const cold = await coldStart();
    const warm = await start(ex, true);
    const warmRan = warm.client.statusLog.some(p => p.checks.some(c => c.state === 'running'));
    await warm.client.shutdown();
    const coldWasm = await coldStart('wasm');
    const was = before ? { cold: await coldStart(undefined, before), wasm: await coldStart('wasm', before) } : undefined;
    console.log(`| start, examples folder | time to full results${was ? ' | before' : ''} |`);
    console.log(`|---|---|${was ? '---|' : ''}`);
    console.log(`| cold (empty cache; ${ex.files.size} files, ${cold.checks} checks), default solver | ${fmt(cold.ms)}${was ? ` | ${fmt(was.cold.ms)}` : ''} |`);
    console.log(`| cold, Z3 in WebAssembly | ${fmt(coldWasm.ms)}${was ? ` | ${fmt(was.wasm.ms)}` : ''} |`);
    console.log(`| warm (\`.calvin-cache/\`${warmRan ? '; some checks ran' : ', nothing runs'}) | ${fmt(warm.ms)}${was ? ' | |' : ''} |\n`);

    const results: Array<[string, EditFigures]> = [];
    for (const [name, ws] of [['examples', ex], ['200 procedures', generatedWorkspace()]] as const) {
        const s = await start(ws, false);
        try {
            results.push([name, await edits(s.client, ws, s.uris, EDITS)]);
        } finally {
            await s.client.shutdown();
            fs.rmSync(ws.dir, { recursive: true, force: true });
        }
    }
    console.log('| keystroke → | median | p95 | max |');
    console.log('|---|---|---|---|');
    for (const [name, r] of results) {
        console.log(row(`front-end diagnostics, ${name}`, r.frontEnd));
        console.log(row(`verification of the edited check, ${name}`, r.verification));
    }
    // Keystrokes while witness searches run: they yield their workers to the checks (issue 15);
    // with BENCH_BEFORE, that build too.
    const witnessEdits = Math.min(EDITS, 20);
    const during: Array<[string, EditFigures]> = [];
    for (const [label, server] of [['now', undefined], ...(before ? [['before', before]] : [])] as Array<[string, string | undefined]>) {
        const ws = witnessWorkspace();
        const s = await start(ws, false, { server });
        try {
            during.push([label, await edits(s.client, ws, s.uris, witnessEdits)]);
        } finally {
            await s.client.shutdown();
            fs.rmSync(ws.dir, { recursive: true, force: true });
        }
    }
    console.log(`\n| keystroke → verification of the edited check while witness searches run (examples + searches of 2-10 s; ${witnessEdits} edits) | median | p95 | max |`);
    console.log('|---|---|---|---|');
    for (const [label, r] of during) console.log(row(label, r.verification));
    console.log('\n| single-method edits | checks of the edited program | ran | cache hits |');
    console.log('|---|---|---|---|');
    for (const [name, r] of results) console.log(`| ${name} | ${r.total} | ${r.ran} | ${(100 * (1 - r.ran / r.total)).toFixed(1)} % |`);
}

main().then(() => process.exit(0), e => { console.error(e); process.exit(1); });

// Soak test of the language server with verification on change (issue 4):
// 1,000 random edits across the shared examples, requests in between. The
// server must answer every request, end with the diagnostics a fresh CLI run
// gives for the final texts, and not grow between the 100th and the 1,000th
// edit: by more than 100 MB of resident memory, nor by more than 40 MB of
// JavaScript heap that survives a full garbage collection (in its main thread
// and check workers, sampled by test/util/heap-probe.cjs, which collects every
// second). The second is what a leak makes grow; resident memory also follows
// how far V8 lets a heap grow between collections (the main thread's heap
// reservation went from 66 to 138 MB over a run in which the live heap stayed
// under 50 MB).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXAMPLES } from '../util/paths.js';
import { cliDiagnostics, publishedKeys } from '../util/cli-diagnostics.js';
import { fileUri, LspClient } from '../util/lsp-client.js';
import { mulberry32 as random } from '../fuzz/mutate.js';

const EDITS = 1000;
const PROBE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../util/heap-probe.cjs');

/** The JS heap that survived the latest full collection, summed over the server's probed threads (MB); undefined without fresh samples. */
function liveHeapMb(dir: string): number | undefined {
    let sum = 0, fresh = 0;
    for (const f of fs.readdirSync(dir)) {
        if (!/^heap-\d+\.json$/.test(f)) continue;
        try {
            const s = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { at: number; heapUsed: number };
            // a thread that stopped (a worker replaced after a crash) leaves a stale file
            if (Date.now() - s.at < 3000) { sum += s.heapUsed; fresh++; }
        } catch { /* renamed meanwhile */ }
    }
    return fresh > 0 ? sum / (1024 * 1024) : undefined;
}

/** The server's resident memory (MB), from /proc (Linux). */
function rssMb(pid: number): number {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    return kb / 1024;
}

describe('soak: 1,000 random edits with verification on change', () => {
    const seed = Number(process.env.CALVIN_SOAK_SEED ?? 20261123);
    const rnd = random(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-soak-'));
    const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-soak-heap-'));
    const names = fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin')).sort();
    const originals = new Map(names.map(n => [n, fs.readFileSync(path.join(EXAMPLES, n), 'utf8')]));
    const texts = new Map(originals);
    const versions = new Map(names.map(n => [n, 1]));
    let client: LspClient;

    before(async () => {
        for (const [n, t] of originals) fs.writeFileSync(path.join(dir, n), t);
        client = await LspClient.start({
            rootPath: dir,
            initializationOptions: { verifyOn: 'change', timeLimitMs: 10_000, diskCache: false },
            env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(PROBE)}`, CALVIN_HEAP_PROBE_DIR: probeDir },
        });
    });
    after(async () => {
        await client?.shutdown();
        // CALVIN_SOAK_KEEP=1 keeps the final texts to replay a failure with the CLI
        if (process.env.CALVIN_SOAK_KEEP) console.log(`# soak: final texts kept in ${dir}`);
        else fs.rmSync(dir, { recursive: true, force: true });
        fs.rmSync(probeDir, { recursive: true, force: true });
    });

    /** One random edit of a text: whitespace, a comment, a character, a number, or back to the original. */
    function mutate(name: string): string {
        const text = texts.get(name)!;
        const at = Math.floor(rnd() * (text.length + 1));
        const r = rnd();
        if (r < 0.3) return text.slice(0, at) + pick([' ', '\n', '  ']) + text.slice(at);
        if (r < 0.45) {
            const eol = text.indexOf('\n', at);
            const i = eol < 0 ? text.length : eol;
            return `${text.slice(0, i)} // edit ${Math.floor(rnd() * 1000)}${text.slice(i)}`;
        }
        if (r < 0.6) return rnd() < 0.5 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + pick(['x', ';', '{', '0', '(', '=']) + text.slice(at);
        if (r < 0.8) {
            // change a number: usually still a program, often another verdict
            const numbers = [...text.matchAll(/\b\d+\b/g)];
            if (numbers.length === 0) return text;
            const m = pick(numbers);
            return text.slice(0, m.index) + String(Math.floor(rnd() * 4)) + text.slice(m.index! + m[0].length);
        }
        return originals.get(name)!;
    }

    it('answers every request, ends with the CLI\'s diagnostics and keeps its memory', async () => {
        const uris = new Map(names.map(n => [n, fileUri(path.join(dir, n))]));
        for (const n of names) await client.open(uris.get(n)!, texts.get(n)!);
        let answered = 0, asked = 0;
        let rss100 = 0, heap100 = 0;
        const pid = client.process.pid!;
        for (let i = 1; i <= EDITS; i++) {
            const name = pick(names);
            const text = mutate(name);
            texts.set(name, text);
            const version = versions.get(name)! + 1;
            versions.set(name, version);
            await client.change(uris.get(name)!, text, version);
            if (i % 10 === 0) {
                // a request of the kinds an editor sends while typing
                const uri = uris.get(name)!;
                const line = Math.floor(rnd() * text.split('\n').length);
                const position = { line, character: Math.floor(rnd() * 10) };
                const requests: Array<[string, unknown]> = [
                    ['textDocument/hover', { textDocument: { uri }, position }],
                    ['textDocument/codeAction', { textDocument: { uri }, range: { start: position, end: position }, context: { diagnostics: client.latest.get(uri)?.diagnostics ?? [] } }],
                    ['textDocument/codeLens', { textDocument: { uri } }],
                    ['textDocument/documentSymbol', { textDocument: { uri } }],
                    ['calvin/checkStatus', { uri }],
                ];
                const [method, params] = pick(requests);
                asked++;
                try {
                    await client.request(method, params, 15_000);
                    answered++;
                } catch (e) {
                    // a request overtaken by an edit may be cancelled (ContentModified): still an answer
                    if ((e as { code?: number }).code === -32801 || (e as { code?: number }).code === -32800) answered++;
                    else throw e;
                }
            }
            // mostly typing speed; now and then a pause long enough for checks to start (and be cancelled)
            await new Promise(r => setTimeout(r, i % 50 === 0 ? 1500 : Math.floor(rnd() * 30)));
            // (the baseline is the largest of a few samples once warm: RSS moves with the garbage collector's timing)
            if (i >= 100 && i <= 300 && i % 50 === 0) {
                rss100 = Math.max(rss100, rssMb(pid));
                heap100 = Math.max(heap100, liveHeapMb(probeDir) ?? 0);
            }
            client.assertAlive();
        }
        assert.equal(answered, asked, 'every request was answered');

        // Quiet: every file's checks finished (or stale behind front-end errors), nothing pending.
        const quiet = () => names.every(n => {
            const uri = uris.get(n)!;
            const d = client.latest.get(uri);
            const checks = client.status.get(uri)?.checks ?? [];
            return d !== undefined && !client.status.get(uri)?.pending && checks.every(c => c.state !== 'queued' && c.state !== 'running');
        });
        assert.ok(await client.until(quiet, 240_000), 'the server settles');
        await new Promise(r => setTimeout(r, 1000));
        assert.ok(quiet(), 'and stays settled');
        const rss1000 = rssMb(pid);
        await new Promise(r => setTimeout(r, 1500)); // fresh samples of every thread, collected while quiet
        const heap1000 = liveHeapMb(probeDir);
        assert.ok(heap100 > 0 && heap1000 !== undefined, 'the heap probe reported (test/util/heap-probe.cjs)');

        // The same texts through a fresh CLI.
        for (const n of names) fs.writeFileSync(path.join(dir, n), texts.get(n)!);
        const cli = cliDiagnostics(dir);
        const expected = cli.keys;
        const actual = publishedKeys(client, new Map(names.map(n => [n, uris.get(n)!])));
        if (process.env.CALVIN_SOAK_KEEP && JSON.stringify(actual) !== JSON.stringify(expected)) {
            const bad = new Set([...actual.filter(a => !expected.includes(a)), ...expected.filter(e => !actual.includes(e))].map(k => k.split(':')[0]));
            for (const n of bad) {
                console.log(`# ${n}: status ${JSON.stringify(client.status.get(uris.get(n)!)?.checks.map(c => [c.name, c.state, c.cached]))}`);
                console.log(`# ${n}: diagnostics ${JSON.stringify(client.latest.get(uris.get(n)!)?.diagnostics.filter(d => d.code === "type").map(d => [d.code, d.range.start, d.message]))}`);
            }
        }
        assert.deepEqual(actual, expected);

        const growth = rss1000 - rss100;
        const heapGrowth = heap1000 - heap100;
        const VERIFIER = new Set(['race', 'assert', 'invariant', 'env', 'abstraction', 'null', 'bounds', 'div-zero', 'loop-invariant', 'unknown', 'unchecked']);
        const verifierDiagnostics = cli.diagnostics.filter(d => VERIFIER.has(d.code)).length;
        console.log(`# soak: ${EDITS} edits (seed ${seed}), final texts: ${expected.length} diagnostics (${verifierDiagnostics} from the verifier); ${asked} requests answered, memory ${rss100.toFixed(0)} MB at most over edits 100-300, ${rss1000.toFixed(0)} MB after edit ${EDITS} (${growth >= 0 ? '+' : ''}${growth.toFixed(0)} MB); live JS heap ${heap100.toFixed(0)} MB at most over edits 100-300, ${heap1000.toFixed(0)} MB after (${heapGrowth >= 0 ? '+' : ''}${heapGrowth.toFixed(0)} MB)`);
        assert.ok(heapGrowth < 40, `the live JS heap grew by ${heapGrowth.toFixed(0)} MB`);
        assert.ok(growth < 100, `memory grew by ${growth.toFixed(0)} MB`);
    });
});

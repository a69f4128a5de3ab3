// Seeded fuzzing of the front end and the language server with mutated
// example programs (token deletions, insertions, replacements, swaps,
// duplications and truncations; see mutate.ts).
//
// Part 1 sends every case to ONE long-running language server (didChange, and
// now and then didClose + didOpen), waits for its publishDiagnostics, and
// interleaves a random request (hover, documentSymbol, semantic tokens,
// completion, ...) at a random position, some before the diagnostics arrive.
// Part 2 runs the same cases through the front end in-process, where a
// crashing check shows its stack trace.
//
// CALVIN_FUZZ_SEED and CALVIN_FUZZ_CASES override the seed and the number of
// cases. Offending inputs are written to test/.tmp/fuzz/ (gitignored).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { EXAMPLES, ROOT } from '../util/paths.js';
import { fileUri, LspClient, LspRequestError } from '../util/lsp-client.js';
import { diagnosticsOf } from '../util/frontend.js';
import { buildProgram, createCalvinCoreServices } from '../../language/src/index.js';
import { generateCases, Random, type FuzzCase } from './mutate.js';

const SEED = Number(process.env.CALVIN_FUZZ_SEED ?? 20260211);
const CASES = Number(process.env.CALVIN_FUZZ_CASES ?? 2000);
const PUBLISH_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000;
const FRONT_END_CODES = new Set(['syntax', 'name', 'type']);
const OUT = path.join(ROOT, 'test/.tmp/fuzz');

const bases = Object.fromEntries(fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin')).sort()
    .map(f => [f, fs.readFileSync(path.join(EXAMPLES, f), 'utf8')]));
const cases = generateCases(SEED, bases, CASES);

/** A problem found with one case. */
interface Finding {
    kind: string;
    caseIndex: number;
    detail: string;
}

const saved = new Map<string, number>();
/** Write the offending input (first few per kind) to test/.tmp/fuzz/; returns the file or ''. */
function save(part: string, kind: string, c: FuzzCase, detail: string): string {
    const key = `${part}-${kind}`;
    const n = saved.get(key) ?? 0;
    saved.set(key, n + 1);
    if (n >= 10) return '';
    fs.mkdirSync(OUT, { recursive: true });
    const file = path.join(OUT, `${key}-seed${SEED}-case${c.index}.calvin`);
    fs.writeFileSync(file, c.text);
    fs.writeFileSync(file + '.txt', `seed ${SEED}, case ${c.index}, base ${c.base}\nmutations: ${c.mutations.join('; ')}\n${detail}\n`);
    return path.relative(ROOT, file);
}

/**
 * Where a stack trace fails: its message, its first frame in Calvin, Langium or
 * Chevrotain sources and, when that is not Calvin's, the first frame in Calvin's.
 */
function crashSite(stack: string): { name: string; site: string } {
    const message = stack.split('\n')[0].replace(/^An error occurred during validation: /, '');
    const frames = [...stack.matchAll(/at (\S+) \([^)]*?((?:language|server)\/src\/[^)]*|node_modules\/(?:langium|chevrotain)\/[^)]*)\)/g)]
        .map(m => ({ fn: m[1], file: m[2].replace(/^node_modules\//, ''), ours: !m[2].startsWith('node_modules') }));
    if (frames.length === 0) return { name: 'unknown', site: message };
    const ours = frames.find(f => f.ours);
    const where = [frames[0], ...(ours && ours !== frames[0] ? [ours] : [])].map(f => `${f.fn} ${f.file}`).join(' <- ');
    const named = ours && ours !== frames[0] && !frames[0].fn.includes('streamAllContents') ? frames[0] : (ours ?? frames[0]);
    return { name: named.fn.replace(/^.*\./, '').replace(/[^A-Za-z0-9]/g, ''), site: `${message} @ ${where}` };
}

function describeFindings(findings: Finding[], limit = 8): string {
    const byKind = new Map<string, Finding[]>();
    for (const f of findings) byKind.set(f.kind, [...(byKind.get(f.kind) ?? []), f]);
    return [...byKind].map(([kind, fs]) => `${kind}: ${fs.length} case(s), e.g.\n`
        + fs.slice(0, limit).map(f => `  case ${f.caseIndex} (${cases[f.caseIndex].base}; ${cases[f.caseIndex].mutations.join('; ')}): ${f.detail}`).join('\n')).join('\n')
        + `\n(seed ${SEED}; rerun with CALVIN_FUZZ_SEED=${SEED})`;
}

/** Problems with a diagnostic's shape: range inside the document, severity, message. */
function rangeProblems(text: string, diagnostics: readonly lsp.Diagnostic[]): string[] {
    const lines = text.split('\n');
    const problems: string[] = [];
    for (const d of diagnostics) {
        const { start, end } = d.range;
        // A range may end after a line's line break (a token that is the newline itself); LSP clients
        // clamp such characters to the line length. Nothing may lie beyond the last line.
        const inside = (p: lsp.Position) => Number.isInteger(p.line) && Number.isInteger(p.character) && p.line >= 0 && p.character >= 0
            && p.line < lines.length && p.character <= lines[p.line].length + (p.line < lines.length - 1 ? 1 : 0);
        const ordered = start.line < end.line || (start.line === end.line && start.character <= end.character);
        if (!inside(start) || !inside(end) || !ordered) problems.push(`range ${JSON.stringify(d.range)} outside the document (${lines.length} lines) or reversed: ${JSON.stringify(d.message)}`);
        if (d.severity !== undefined && ![1, 2, 3, 4].includes(d.severity)) problems.push(`severity ${d.severity}`);
        const message = typeof d.message === 'string' ? d.message : d.message?.value;
        if (typeof message !== 'string' || message.trim() === '') problems.push('empty message');
    }
    return problems;
}

/** Diagnostics that are not front-end errors with a Calvin code (e.g. a crashed check). */
function codeProblems(diagnostics: ReadonlyArray<{ code?: unknown; message: string | { value: string } }>): string[] {
    const text = (m: string | { value: string }) => (typeof m === 'string' ? m : m.value);
    return diagnostics.filter(d => !FRONT_END_CODES.has(String(d.code)) || text(d.message).startsWith('An error occurred'))
        .map(d => `code ${JSON.stringify(d.code)}: ${text(d.message)}`);
}

function positionAt(text: string, offset: number): lsp.Position {
    const before = text.slice(0, offset).split('\n');
    return { line: before.length - 1, character: before[before.length - 1].length };
}

describe(`fuzz: ${CASES} mutated programs through one language server (seed ${SEED})`, () => {
    let dir: string;
    let client: LspClient;
    const findings: Finding[] = [];
    let completed = 0;
    let requests = 0;
    let slowest = 0;
    let started = 0;

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-fuzz-'));
        client = await LspClient.start({ rootPath: dir });
        const uri = fileUri(path.join(dir, 'fuzz.calvin'));
        const rnd = new Random(SEED ^ 0x5eed);
        const requestKinds = ['hover', 'documentSymbol', 'semanticTokens', 'completion', 'definition', 'references', 'foldingRange', 'documentHighlight', 'prepareRename'];
        let version = 1;
        started = Date.now();

        /** Sends a random request; failures are collected in `failures` (not thrown). */
        const randomRequest = async (c: FuzzCase, early: boolean, failures: string[]): Promise<void> => {
            const kind = rnd.pick(requestKinds);
            const textDocument = { uri };
            const position = positionAt(c.text, rnd.int(c.text.length + 1));
            const [method, params] =
                kind === 'hover' ? ['textDocument/hover', { textDocument, position }]
                    : kind === 'documentSymbol' ? ['textDocument/documentSymbol', { textDocument }]
                        : kind === 'semanticTokens' ? ['textDocument/semanticTokens/full', { textDocument }]
                            : kind === 'completion' ? ['textDocument/completion', { textDocument, position }]
                                : kind === 'definition' ? ['textDocument/definition', { textDocument, position }]
                                    : kind === 'references' ? ['textDocument/references', { textDocument, position, context: { includeDeclaration: true } }]
                                        : kind === 'foldingRange' ? ['textDocument/foldingRange', { textDocument }]
                                            : kind === 'documentHighlight' ? ['textDocument/documentHighlight', { textDocument, position }]
                                                : ['textDocument/prepareRename', { textDocument, position }];
            requests++;
            try {
                await client.request(method, params, REQUEST_TIMEOUT_MS);
            } catch (e) {
                // A request that overlaps an edit may be cancelled or find the content modified.
                if (early && e instanceof LspRequestError && (e.code === -32800 || e.code === -32801)) return;
                failures.push(`${method} at ${JSON.stringify(position)}${early ? ' (sent before the diagnostics)' : ''}: ${(e as Error).message.split('\n')[0]}`);
            }
        };

        for (const c of cases) {
            const reopen = c.index > 0 && c.index % 400 === 0;
            if (reopen) {
                await client.close(uri);
                await client.settled(uri, 200);
                version = 1;
            }
            const mark = client.published.length;
            const errorsBefore = client.errorLogs().length;
            const publication = () => client.published.slice(mark).find(p => p.uri === uri);
            const t0 = Date.now();
            try {
                if (c.index === 0 || reopen) await client.open(uri, c.text, version);
                else await client.change(uri, c.text, ++version);
            } catch (e) {
                findings.push({ kind: 'server died', caseIndex: c.index, detail: `${(e as Error).message.split('\n')[0]} -> ${save('lsp', 'crash', c, String(e))}` });
                break;
            }
            const requestFailures: string[] = [];
            const early = rnd.chance(0.3) ? randomRequest(c, true, requestFailures) : undefined;
            // the diagnostics of this version, or an internal error, or the end of the process
            await client.until(() => publication() !== undefined || client.errorLogs().length > errorsBefore || !client.alive(), PUBLISH_TIMEOUT_MS);
            if (!publication() && client.alive() && client.errorLogs().length > errorsBefore) await client.until(() => publication() !== undefined, 1_000);
            const published = publication();
            if (!client.alive()) {
                findings.push({ kind: 'server died', caseIndex: c.index, detail: `exit ${JSON.stringify(client.exit)} -> ${save('lsp', 'crash', c, client.stderr)}` });
                break;
            }
            const newErrors = client.errorLogs().slice(errorsBefore);
            for (const l of newErrors) findings.push({ kind: 'internal error logged', caseIndex: c.index, detail: `${l.split('\n').slice(0, 3).join(' | ')} -> ${save('lsp', 'internal', c, l)}` });
            if (!published) {
                const why = newErrors.length ? `after an internal error: ${newErrors[0].split('\n')[0]}` : `within ${PUBLISH_TIMEOUT_MS} ms`;
                findings.push({ kind: 'no publishDiagnostics', caseIndex: c.index, detail: `no diagnostics ${why} -> ${save('lsp', 'nopublish', c, why)}` });
                // Recovery: the unmutated program must be checked again.
                const base = bases[c.base];
                const mark2 = client.published.length;
                await client.change(uri, base, ++version);
                const recovered = await client.until(() => client.published.slice(mark2).some(p => p.uri === uri) || !client.alive(), 15_000);
                await early;
                if (requestFailures.length) findings.push({ kind: 'request failed on a document whose build crashed', caseIndex: c.index, detail: requestFailures.join('; ') });
                if (!recovered || !client.alive()) {
                    findings.push({ kind: 'server unresponsive', caseIndex: c.index, detail: `no diagnostics for the unmutated ${c.base} after the failed case${client.diagnosticsForFailure()}` });
                    break;
                }
                completed++;
                continue;
            }
            slowest = Math.max(slowest, Date.now() - t0);
            await early;
            if (rnd.chance(0.7)) await randomRequest(c, false, requestFailures);
            for (const f of requestFailures) findings.push({ kind: 'request failed or hung', caseIndex: c.index, detail: `${f} -> ${save('lsp', 'request', c, f)}` });

            for (const p of rangeProblems(c.text, published.diagnostics)) findings.push({ kind: 'bad range', caseIndex: c.index, detail: `${p} -> ${save('lsp', 'range', c, p)}` });
            for (const p of codeProblems(published.diagnostics)) findings.push({ kind: 'not a front-end code (crashed check?)', caseIndex: c.index, detail: `${p} -> ${save('lsp', 'code', c, p)}` });
            completed++;
        }
    }, { timeout: 300_000 });

    after(async () => {
        await client?.shutdown();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
        console.log(`# fuzz (LSP): ${completed}/${cases.length} cases, ${requests} requests, slowest publish ${slowest} ms, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    });

    const ofKind = (...kinds: string[]) => findings.filter(f => kinds.includes(f.kind));

    it('the server stays alive and responsive to the end', () => {
        const fatal = ofKind('server died', 'server unresponsive');
        assert.equal(fatal.length, 0, describeFindings(fatal));
        assert.equal(completed, cases.length, `only ${completed} of ${cases.length} cases completed`);
        assert.ok(requests > cases.length / 2, `only ${requests} requests were sent`);
        client.assertAlive();
    });

    it('every case gets its publishDiagnostics, with no internal error', () => {
        const bad = ofKind('no publishDiagnostics', 'internal error logged', 'request failed on a document whose build crashed');
        assert.equal(bad.length, 0, describeFindings(bad));
    });

    it('every request interleaved with the edits is answered without error', () => {
        const failed = ofKind('request failed or hung');
        assert.equal(failed.length, 0, describeFindings(failed));
    });

    it('every diagnostic has a valid range inside the document', () => {
        const bad = ofKind('bad range');
        assert.equal(bad.length, 0, describeFindings(bad));
    });

    it('every diagnostic has a front-end code (syntax, name or type): no check crashed', () => {
        const bad = ofKind('not a front-end code (crashed check?)');
        assert.equal(bad.length, 0, describeFindings(bad));
    });
});

/** Distinct crash sites (the first line of each finding's detail) and how often each occurred. */
function countSites(findings: Finding[]): Map<string, number> {
    const sites = new Map<string, number>();
    for (const f of findings) {
        const site = f.detail.split('\n')[0];
        sites.set(site, (sites.get(site) ?? 0) + 1);
    }
    return sites;
}

describe(`fuzz: the same ${CASES} programs through the front end in-process (seed ${SEED})`, () => {
    const exceptions: Finding[] = [];
    const crashedChecks: Finding[] = [];
    /** console.error output of Langium's validation registry (the crashed checks' stack traces), by case. */
    const stacks = new Map<number, string[]>();

    before(async () => {
        let { shared } = createCalvinCoreServices();
        const uri = 'file:///virtual/fuzz.calvin';
        const consoleError = console.error;
        let current = -1;
        console.error = (...args: unknown[]) => {
            const text = args.map(a => (a instanceof Error ? a.stack ?? String(a) : String(a))).join(' ');
            stacks.set(current, [...(stacks.get(current) ?? []), text]);
        };
        try {
            for (const c of cases) {
                current = c.index;
                try {
                    const result = await buildProgram(shared, [{ uri, text: c.text }]);
                    const diagnostics = result.diagnostics.get(uri) ?? [];
                    const problems = [...codeProblems(diagnostics), ...rangeProblems(c.text, diagnostics)];
                    if (problems.length) {
                        const trace = (stacks.get(c.index) ?? []).find(s => /\n\s+at /.test(s)) ?? '';
                        const detail = `${problems[0]}\n${trace.split('\n').slice(0, 6).join('\n')}`;
                        const { name, site } = crashSite(trace || problems[0]);
                        crashedChecks.push({ kind: 'check crashed', caseIndex: c.index, detail: `${site}\n${detail} -> ${save('frontend', `check-${name}`, c, detail)}` });
                    }
                } catch (e) {
                    const detail = (e as Error).stack ?? String(e);
                    const { name, site } = crashSite(detail);
                    exceptions.push({ kind: 'exception', caseIndex: c.index, detail: `${site}\n-> ${save('frontend', `exception-${name}`, c, detail)}` });
                    // the parser may be left in a broken state: go on with fresh services
                    ({ shared } = createCalvinCoreServices());
                }
            }
        } finally {
            console.error = consoleError;
        }
    }, { timeout: 300_000 });

    it('no exception escapes the front end', () => {
        if (exceptions.length === 0) return;
        assert.fail(`${exceptions.length} of ${cases.length} cases throw; distinct sites:\n`
            + [...countSites(exceptions)].map(([s, n]) => `  ${n}x ${s}`).join('\n') + '\n' + describeFindings(exceptions, 3));
    });

    it('no validation check crashes (all diagnostics are syntax/name/type with valid ranges)', async () => {
        if (crashedChecks.length === 0) return;
        // Confirm the first case with fresh services (diagnosticsOf), as a self-contained repro.
        const first = cases[crashedChecks[0].caseIndex];
        const fresh = await diagnosticsOf(first.text);
        const confirmed = [...codeProblems(fresh), ...rangeProblems(first.text, fresh.map(d => ({
            range: { start: { line: d.line - 1, character: d.column - 1 }, end: { line: d.endLine - 1, character: d.endColumn - 1 } },
            severity: d.severity as lsp.DiagnosticSeverity, message: d.message,
        })))];
        const sites = countSites(crashedChecks);
        assert.fail(`${crashedChecks.length} of ${cases.length} cases crash a check; distinct sites:\n`
            + [...sites].map(([s, n]) => `  ${n}x ${s}`).join('\n')
            + `\nfirst case again with fresh services (diagnosticsOf): ${confirmed.length ? confirmed.join('; ') : 'NOT reproduced'}\n`
            + describeFindings(crashedChecks, 4));
    });
});

// End-to-end tests of the Calvin language server: the bundled CLI's `lsp`
// command over stdio, driven by a real JSON-RPC client (test/util/lsp-client.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { EXAMPLES } from '../util/paths.js';
import { checkDiagnostics, decodeSemanticTokens, fileUri, LspClient, rangeTuple, targetOf } from '../util/lsp-client.js';

type Pos = { line: number; character: number };
type Range4 = [number, number, number, number];

const SIMPLE_LOCK = fs.readFileSync(path.join(EXAMPLES, 'simple_lock_ok.calvin'), 'utf8');
const PRODUCER_CONSUMER = fs.readFileSync(path.join(EXAMPLES, 'producer_consumer_ok.calvin'), 'utf8');

/** 0-based position of the `nth` (0-based) occurrence of `token` on 1-based line `line1` (+ `offset` characters). */
function at(text: string, line1: number, token: string, nth = 0, offset = 0): Pos {
    const line = text.split('\n')[line1 - 1];
    assert.ok(line !== undefined, `no line ${line1}`);
    let i = -1;
    for (let k = 0; k <= nth; k++) {
        i = line.indexOf(token, i + 1);
        assert.ok(i >= 0, `'${token}' (#${nth}) not on line ${line1}: ${JSON.stringify(line)}`);
    }
    return { line: line1 - 1, character: i + offset };
}

/** Replace exactly one occurrence of `from` (it must occur exactly once). */
function replaceOnce(text: string, from: string, to: string): string {
    const i = text.indexOf(from);
    assert.ok(i >= 0 && text.indexOf(from, i + 1) < 0, `'${from}' must occur exactly once`);
    return text.slice(0, i) + to + text.slice(i + from.length);
}

function markdownOf(hover: lsp.Hover | null): string {
    assert.ok(hover, 'no hover');
    const c = hover.contents as lsp.MarkupContent;
    assert.equal(c.kind, 'markdown', 'hover content should be Markdown (the client asked for it)');
    return c.value;
}

function sortRanges(rs: Range4[]): Range4[] {
    return [...rs].sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3]);
}

function makeWorkspace(prefix: string, files: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return dir;
}

describe('language server: one-file features (workspace of examples)', () => {
    let dir: string;
    let client: LspClient;
    let lockUri: string;
    let pcUri: string;
    let editUri: string;

    before(async () => {
        dir = makeWorkspace('calvin-lsp-', {
            'simple_lock_ok.calvin': SIMPLE_LOCK,
            'producer_consumer_ok.calvin': PRODUCER_CONSUMER,
            'vector_ok.calvin': fs.readFileSync(path.join(EXAMPLES, 'vector_ok.calvin'), 'utf8'),
            // edited by the diagnostics tests; the same program as simple_lock_ok (files are independent programs)
            'edit.calvin': SIMPLE_LOCK,
        });
        lockUri = fileUri(path.join(dir, 'simple_lock_ok.calvin'));
        pcUri = fileUri(path.join(dir, 'producer_consumer_ok.calvin'));
        editUri = fileUri(path.join(dir, 'edit.calvin'));
        client = await LspClient.start({ rootPath: dir });
    });

    after(async () => {
        await client?.shutdown();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('initialize announces the editor features', () => {
        const caps = client.capabilities;
        assert.ok(caps.hoverProvider, 'hover');
        assert.ok(caps.definitionProvider, 'definition');
        assert.ok(caps.referencesProvider, 'references');
        assert.ok(caps.renameProvider, 'rename');
        assert.deepEqual((caps.renameProvider as lsp.RenameOptions).prepareProvider, true, 'prepareRename (the client announced prepareSupport)');
        assert.ok(caps.documentSymbolProvider, 'documentSymbol');
        assert.ok(caps.foldingRangeProvider, 'foldingRange');
        assert.ok(caps.completionProvider, 'completion');
        const st = caps.semanticTokensProvider as lsp.SemanticTokensOptions;
        assert.ok(st && st.full, 'semanticTokens/full');
        assert.ok(st.legend.tokenTypes.includes('decorator') && st.legend.tokenModifiers.includes('modification'), 'semantic token legend');
        const sync = caps.textDocumentSync as lsp.TextDocumentSyncOptions;
        assert.equal(sync.openClose, true);
        assert.ok(sync.change === 1 || sync.change === 2, `textDocumentSync.change = ${sync.change}`);
    });

    it('didOpen of a clean example publishes no diagnostics', async () => {
        for (const [uri, text] of [[lockUri, SIMPLE_LOCK], [pcUri, PRODUCER_CONSUMER], [editUri, SIMPLE_LOCK]]) {
            const published = client.waitForVersion(uri, 1);
            await client.open(uri, text);
            assert.deepEqual((await published).diagnostics, [], uri);
        }
    });

    it('didChange introducing a type error: exactly that diagnostic', async () => {
        const text = replaceOnce(SIMPLE_LOCK, 'int x = 0;\n', 'int x = 0;\nint f = true;\n');
        const published = client.waitForVersion(editUri, 2);
        await client.change(editUri, text, 2);
        const line = at(text, 27, 'true').line;
        checkDiagnostics((await published).diagnostics, [
            { code: 'type', severity: 1, range: [line, 8, line, 12], message: /'f'.*int.*boolean/ },
        ]);
        // nothing different (e.g. a stale result) follows
        checkDiagnostics((await client.settled(editUri))!.diagnostics, [
            { code: 'type', severity: 1, range: [line, 8, line, 12] },
        ]);
    });

    it('a syntax error does not hide name and type errors elsewhere in the file (error recovery)', async () => {
        let text = replaceOnce(SIMPLE_LOCK, 'int x = 0;', 'int x = true;');  // type, line 26
        text = replaceOnce(text, '  x++;', '  x++ +;');                       // syntax, line 30
        text = replaceOnce(text, '  x = 0;', '  x = zz;');                    // name, line 37
        const published = client.waitForVersion(editUri, 3);
        await client.change(editUri, text, 3);
        checkDiagnostics((await published).diagnostics, [
            { code: 'type', severity: 1, range: [25, 8, 25, 12], message: 'boolean' },
            { code: 'syntax', severity: 1, range: [29, 6, 29, 7], message: /Syntax error.*'\+'/ },
            { code: 'name', severity: 1, range: [36, 6, 36, 8], message: "'zz'" },
        ]);
    });

    it('fixing the errors clears the diagnostics', async () => {
        const published = client.waitForVersion(editUri, 4);
        await client.change(editUri, SIMPLE_LOCK, 4);
        assert.deepEqual((await published).diagnostics, []);
        assert.deepEqual((await client.settled(editUri))!.diagnostics, []);
    });

    it('a statement or an annotation cut short says that the file or the line ends there', async () => {
        const uri = fileUri(path.join(dir, 'cut-short.calvin'));
        const eof = SIMPLE_LOCK + 'thread T3 { x = ';
        const atEnd = client.waitForVersion(uri, 1);
        await client.open(uri, eof, 1);
        const lines = eof.split('\n');
        const last = lines.length - 1;
        checkDiagnostics((await atEnd).diagnostics, [
            { code: 'syntax', severity: 1, range: [last, lines[last].trimEnd().length, last, lines[last].trimEnd().length], message: /^Syntax error: unexpected end of the file; expected an expression\.$/ },
        ]);
        const eol = replaceOnce(SIMPLE_LOCK, 'int x = 0;', 'int x = 0; //@ invariant');
        const atLine = client.waitForVersion(uri, 2);
        await client.change(uri, eol, 2);
        const d = (await atLine).diagnostics.find(x => x.code === 'syntax');
        assert.match(String(d?.message), /^Syntax error: unexpected end of the line; expected an expression\.$/);
        await client.close(uri);
    });

    it('hover on m in Mutex.m (an annotation) shows a static volatile field', async () => {
        const value = markdownOf(await client.request('textDocument/hover', { textDocument: { uri: lockUri }, position: at(SIMPLE_LOCK, 24, 'Mutex.m', 0, 6) }));
        assert.match(value, /static volatile int m/);
        assert.match(value, /`volatile`/);
        assert.match(value, /static field/);
        assert.match(value, /class `Mutex`/);
    });

    it('hover on a field with writable_if shows the writable_if condition (declaration and use)', async () => {
        for (const pos of [at(PRODUCER_CONSUMER, 9, 'data'), at(PRODUCER_CONSUMER, 18, 'data'), at(PRODUCER_CONSUMER, 26, 'data')]) {
            const value = markdownOf(await client.request('textDocument/hover', { textDocument: { uri: pcUri }, position: pos }));
            assert.match(value, /int data/, JSON.stringify(pos));
            assert.ok(value.includes('writable_if tid == Producer && flag == 0'), `hover at ${JSON.stringify(pos)}: ${value}`);
        }
    });

    it('hover on a call of a method with an abstraction shows the abstraction', async () => {
        const value = markdownOf(await client.request('textDocument/hover', { textDocument: { uri: lockUri }, position: at(SIMPLE_LOCK, 32, 'release', 0, 2) }));
        assert.match(value, /static void release\(\)/);
        assert.match(value, /abstraction \{/);
        assert.ok(value.includes('requires m == tid;'), value);
        assert.ok(value.includes("step [m] m' == 0;"), value);
        assert.doesNotMatch(value, /m == 0 && m' == tid/, 'the abstraction of acquire, not release');
    });

    it('definition of acquire in Mutex.acquire() is the method declaration', async () => {
        const result = await client.request<Array<lsp.Location | lsp.LocationLink>>('textDocument/definition', { textDocument: { uri: lockUri }, position: at(SIMPLE_LOCK, 29, 'acquire', 0, 3) });
        assert.ok(Array.isArray(result) && result.length === 1, JSON.stringify(result));
        assert.deepEqual(targetOf(result[0]), { uri: lockUri, range: [10, 14, 10, 21] }); // line 11: static void acquire()
    });

    it('references of m: the declaration and every use, in code and annotations', async () => {
        const params = (includeDeclaration: boolean) => ({ textDocument: { uri: lockUri }, position: at(SIMPLE_LOCK, 6, ' m ', 0, 1), context: { includeDeclaration } });
        const uses: Range4[] = [
            [4, 18, 4, 19], [4, 31, 4, 32], [4, 37, 4, 38],     // //@ environment m == tid ==> m' == m;
            [8, 14, 8, 15], [8, 17, 8, 18], [8, 27, 8, 28],     // step [m] m == 0 && m' == tid;
            [11, 16, 11, 17],                                   // cas(m, 0, tid)
            [15, 17, 15, 18],                                   // requires m == tid;
            [16, 14, 16, 15], [16, 17, 16, 18],                 // step [m] m' == 0;
            [19, 4, 19, 5],                                     // m = 0;
            [23, 22, 23, 23], [24, 20, 24, 21],                 // Mutex.m in the top-level annotation
        ];
        const declaration: Range4 = [5, 22, 5, 23];
        for (const [include, expected] of [[true, [declaration, ...uses]], [false, uses]] as const) {
            const refs = await client.request<lsp.Location[]>('textDocument/references', params(include));
            assert.ok(refs.every(r => r.uri === lockUri), `all in simple_lock_ok: ${JSON.stringify(refs.map(r => r.uri))}`);
            assert.deepEqual(sortRanges(refs.map(r => rangeTuple(r.range))), sortRanges([...expected]), `includeDeclaration: ${include}`);
        }
    });

    it('rename to a keyword or to what is not one name is refused with a message', async () => {
        const position = at(SIMPLE_LOCK, 26, 'x');
        for (const newName of ['int', 'tid', 'writable_if', '1abc', 'a b', '']) {
            const r = await client.request<lsp.WorkspaceEdit | null>('textDocument/rename', { textDocument: { uri: lockUri }, position, newName }).catch((e: Error) => e);
            assert.ok(r instanceof Error && /is not a name Calvin accepts/.test(r.message), `${JSON.stringify(newName)}: ${r instanceof Error ? r.message : JSON.stringify(r)}`);
        }
    });

    it('rename x to y edits exactly the declaration and every use, including primes in annotations', async () => {
        const position = at(SIMPLE_LOCK, 26, 'x');
        const prepared = await client.request<lsp.Range | { range: lsp.Range } | null>('textDocument/prepareRename', { textDocument: { uri: lockUri }, position });
        assert.ok(prepared, 'prepareRename refused');
        assert.deepEqual(rangeTuple('range' in prepared ? prepared.range : prepared), [25, 4, 25, 5]);
        const edit = await client.request<lsp.WorkspaceEdit>('textDocument/rename', { textDocument: { uri: lockUri }, position, newName: 'y' });
        assert.ok(edit && !edit.documentChanges, JSON.stringify(edit));
        assert.deepEqual(Object.keys(edit.changes ?? {}), [lockUri], 'only simple_lock_ok changes (edit.calvin has its own x)');
        const edits = edit.changes![lockUri];
        assert.ok(edits.every(e => e.newText === 'y'));
        assert.deepEqual(sortRanges(edits.map(e => rangeTuple(e.range))), [
            [23, 35, 23, 36], [23, 41, 23, 42],   // environment Mutex.m == tid ==> x' == x;  (x of x', not the prime)
            [24, 31, 24, 32],                     // invariant Mutex.m == 0 ==> x >= 0;
            [25, 4, 25, 5],                       // int x = 0;
            [29, 2, 29, 3],                       // x++;
            [30, 9, 30, 10],                      // assert x > 0;
            [36, 2, 36, 3],                       // x = 0;
        ]);
        // Applying the edit gives a clean program.
        const lines = SIMPLE_LOCK.split('\n');
        for (const e of [...edits].sort((a, b) => b.range.start.line - a.range.start.line || b.range.start.character - a.range.start.character)) {
            const l = lines[e.range.start.line];
            lines[e.range.start.line] = l.slice(0, e.range.start.character) + e.newText + l.slice(e.range.end.character);
        }
        assert.equal(lines[23], "/*@ environment Mutex.m == tid ==> y' == y;");
        const published = client.waitForVersion(editUri, 5);
        await client.change(editUri, lines.join('\n'), 5);
        assert.deepEqual((await published).diagnostics, []);
    });

    it('documentSymbol: the outline of simple_lock_ok', async () => {
        const symbols = await client.request<lsp.DocumentSymbol[]>('textDocument/documentSymbol', { textDocument: { uri: lockUri } });
        const shape = (s: lsp.DocumentSymbol): unknown => ({ name: s.name, kind: s.kind, ...(s.children?.length ? { children: s.children.map(shape) } : {}) });
        const Class = 5, Method = 6, Property = 7, Field = 8, Event = 24;
        assert.deepEqual(symbols.map(shape), [
            {
                name: 'Mutex', kind: Class, children: [
                    { name: "environment m == tid ==> m' == m", kind: Property },
                    { name: 'm', kind: Field },
                    { name: 'acquire', kind: Method },
                    { name: 'release', kind: Method },
                ],
            },
            { name: "environment Mutex.m == tid ==> x' == x", kind: Property },
            { name: 'invariant Mutex.m == 0 ==> x >= 0', kind: Property },
            { name: 'x', kind: Field },
            { name: 'T1', kind: Event },
            { name: 'T2', kind: Event },
        ]);
        const [mutex, , , x, t1] = symbols;
        assert.deepEqual(rangeTuple(mutex.selectionRange), [3, 6, 3, 11]);
        assert.deepEqual([mutex.range.start.line, mutex.range.end.line], [3, 21]);
        assert.deepEqual(rangeTuple(mutex.children![1].selectionRange), [5, 22, 5, 23]);
        assert.deepEqual(rangeTuple(x.selectionRange), [25, 4, 25, 5]);
        assert.deepEqual([t1.range.start.line, t1.range.end.line], [27, 32]);
    });

    it('folding ranges: the class, the multi-line annotation and the threads', async () => {
        const ranges = await client.request<lsp.FoldingRange[]>('textDocument/foldingRange', { textDocument: { uri: lockUri } });
        const has = (start: number, ends: number[], what: string) =>
            assert.ok(ranges.some(r => r.startLine === start && ends.includes(r.endLine)), `${what}: no range ${start}..${ends.join('|')} in ${JSON.stringify(ranges.map(r => [r.startLine, r.endLine]))}`);
        has(3, [20, 21], 'class Mutex (lines 4-22)');
        has(7, [8, 9], '/*@ abstraction { ... } */ (lines 8-10)');
        has(14, [16, 17], 'the second abstraction (lines 15-18)');
        has(27, [31, 32], 'thread T1 (lines 28-33)');
        for (const r of ranges) assert.ok(r.startLine < r.endLine && r.endLine <= 38, JSON.stringify(r));
        const spans = ranges.map(r => `${r.startLine}-${r.endLine}-${r.kind ?? ''}`);
        assert.equal(new Set(spans).size, spans.length, `one range per region: ${JSON.stringify(spans)}`);
    });

    it('semantic tokens: annotation keywords are decorators, primed variables carry the modification modifier', async () => {
        const legend = (client.capabilities.semanticTokensProvider as lsp.SemanticTokensOptions).legend;
        const result = await client.request<lsp.SemanticTokens>('textDocument/semanticTokens/full', { textDocument: { uri: lockUri } });
        const tokens = decodeSemanticTokens(result.data, legend);
        const lines = SIMPLE_LOCK.split('\n');
        const token = (p: Pos, text: string) => {
            const t = tokens.find(k => k.line === p.line && k.character === p.character);
            assert.ok(t, `no token at ${JSON.stringify(p)} (${text})`);
            assert.equal(lines[t.line].slice(t.character, t.character + t.length), text);
            return t;
        };
        // //@ environment m == tid ==> m' == m;
        const environment = token(at(SIMPLE_LOCK, 5, 'environment'), 'environment');
        assert.equal(environment.type, 'decorator');
        const primed = token(at(SIMPLE_LOCK, 5, "m'"), 'm');
        assert.equal(primed.type, 'property');
        assert.ok(primed.modifiers.includes('modification'), `m' modifiers: ${primed.modifiers}`);
        const unprimed = token(at(SIMPLE_LOCK, 5, ' m ', 0, 1), 'm');
        assert.ok(!unprimed.modifiers.includes('modification'), 'the unprimed m is not a modification');
        for (const [line, word] of [[8, 'abstraction'], [9, 'step'], [16, 'requires'], [25, 'invariant']] as const) {
            assert.equal(token(at(SIMPLE_LOCK, line, word), word).type, 'decorator', word);
        }
        const acquire = token(at(SIMPLE_LOCK, 11, 'acquire'), 'acquire');
        assert.equal(acquire.type, 'method');
        assert.ok(acquire.modifiers.includes('declaration'));
        // tokens are in order and do not overlap
        for (let i = 1; i < tokens.length; i++) {
            const [a, b] = [tokens[i - 1], tokens[i]];
            assert.ok(b.line > a.line || (b.line === a.line && b.character >= a.character + a.length), `overlap: ${JSON.stringify([a, b])}`);
        }
    });

    it('completion in a thread body offers its locals and the globals, not other threads\' locals', async () => {
        const labels = async (p: Pos) => {
            const result = await client.request<lsp.CompletionList | lsp.CompletionItem[]>('textDocument/completion', { textDocument: { uri: pcUri }, position: p });
            return (Array.isArray(result) ? result : result.items).map(i => i.label);
        };
        const inProducer = await labels(at(PRODUCER_CONSUMER, 17, 'item'));   // start of `item = item + 1;`
        for (const name of ['item', 'data', 'flag', 'copy', 'while', 'if']) assert.ok(inProducer.includes(name), `Producer body: ${name} missing from ${inProducer}`);
        const inConsumer = await labels(at(PRODUCER_CONSUMER, 26, 'copy'));   // start of `copy = data;`
        for (const name of ['data', 'flag', 'copy']) assert.ok(inConsumer.includes(name), `Consumer body: ${name} missing from ${inConsumer}`);
        assert.ok(!inConsumer.includes('item'), 'item is a local of Producer');
        const inLockThread = await client.request<lsp.CompletionList>('textDocument/completion', { textDocument: { uri: lockUri }, position: at(SIMPLE_LOCK, 30, 'x') });
        const lockLabels = inLockThread.items.map(i => i.label);
        for (const name of ['x', 'Mutex']) assert.ok(lockLabels.includes(name), `T1 body: ${name} missing from ${lockLabels}`);
    });

    it('completion at the start of a /*@ ... */ annotation offers annotation keywords only', async () => {
        const text = replaceOnce(SIMPLE_LOCK, '  static void release() {', '  /*@  */\n  static void release() {');
        const published = client.waitForVersion(editUri, 6);
        await client.change(editUri, text, 6);
        assert.deepEqual((await published).diagnostics, []);
        const result = await client.request<lsp.CompletionList>('textDocument/completion', { textDocument: { uri: editUri }, position: at(text, 19, '/*@', 0, 4) });
        const labels = result.items.map(i => i.label);
        for (const k of ['requires', 'ensures', 'abstraction', 'writable_if', 'invariant', 'environment']) assert.ok(labels.includes(k), `${k} missing from ${labels}`);
        for (const k of ['while', 'int', 'x', 'Mutex', 'static']) assert.ok(!labels.includes(k), `${k} offered at the start of an annotation: ${labels}`);
    });

    it('completion in code does not offer annotation-only words (\\old, \\result)', async () => {
        const result = await client.request<lsp.CompletionList>('textDocument/completion', { textDocument: { uri: lockUri }, position: at(SIMPLE_LOCK, 30, 'x') });
        const labels = result.items.map(i => i.label);
        for (const k of ['\\old', '\\result']) assert.ok(!labels.includes(k), `${k} offered in code: ${labels}`);
    });

    it('completion does not offer the internal built-in class $Object', async () => {
        const result = await client.request<lsp.CompletionList>('textDocument/completion', { textDocument: { uri: lockUri }, position: at(SIMPLE_LOCK, 30, 'x') });
        const labels = result.items.map(i => i.label);
        assert.ok(!labels.includes('$Object'), `$Object offered: ${labels}`);
    });

    it('element frames (a[i], a[*]): no diagnostics; names in them are coloured, hovered and resolved', async () => {
        const text = [
            'class Buf {',
            '  //@ writable_if this.holder == tid;',
            '  int[] data = new int[4];',
            "  /*@ abstraction { step [data[*]] true; step [this.data[i]] data[i]' == v; } */",
            '  synchronized void set(int i, int v) { data[i] = v; }',
            '}',
            'thread T { Buf b = new Buf(); b.set(1, 2); }',
        ].join('\n');
        const uri = fileUri(path.join(dir, 'frames.calvin'));
        const published = client.waitForVersion(uri, 1);
        await client.open(uri, text);
        assert.deepEqual((await published).diagnostics, []);
        const legend = (client.capabilities.semanticTokensProvider as lsp.SemanticTokensOptions).legend;
        const tokens = decodeSemanticTokens((await client.request<lsp.SemanticTokens>('textDocument/semanticTokens/full', { textDocument: { uri } })).data, legend);
        const typeAt = (p: Pos) => tokens.find(k => k.line === p.line && k.character === p.character)?.type;
        assert.equal(typeAt(at(text, 4, 'data[*]')), 'property');
        assert.equal(typeAt(at(text, 4, 'data[i]')), 'property');
        assert.equal(typeAt(at(text, 4, 'i]')), 'parameter');
        assert.match(markdownOf(await client.request('textDocument/hover', { textDocument: { uri }, position: at(text, 4, 'data[*]') })), /int\[\] data/);
        assert.match(markdownOf(await client.request('textDocument/hover', { textDocument: { uri }, position: at(text, 4, 'i]') })), /int i/);
        const def = await client.request<lsp.Location[] | lsp.LocationLink[]>('textDocument/definition', { textDocument: { uri }, position: at(text, 4, 'i]') });
        const param = at(text, 5, 'int i', 0, 4);
        assert.deepEqual(targetOf(def[0]).range, [param.line, param.character, param.line, param.character + 1]);
    });

    it('rename of the built-in holder field is refused', async () => {
        const vectorUri = fileUri(path.join(dir, 'vector_ok.calvin'));
        const vector = fs.readFileSync(path.join(dir, 'vector_ok.calvin'), 'utf8');
        const position = at(vector, 5, 'holder');
        const prepared = await client.request('textDocument/prepareRename', { textDocument: { uri: vectorUri }, position }).catch((e: Error) => e);
        assert.ok(prepared === null || prepared instanceof Error, `prepareRename of holder should refuse, got ${JSON.stringify(prepared)}`);
        const edit = await client.request<lsp.WorkspaceEdit | null>('textDocument/rename', { textDocument: { uri: vectorUri }, position, newName: 'owner' }).catch((e: Error) => e);
        assert.ok(edit === null || edit instanceof Error || Object.keys((edit as lsp.WorkspaceEdit).changes ?? {}).length === 0,
            `rename of holder should not edit anything, got ${JSON.stringify(edit)}`);
    });

    it('the server is still running and logged no internal errors', () => {
        client.assertAlive();
        assert.deepEqual(client.errorLogs(), []);
    });
});

describe('language server: a program split over two files', () => {
    const A = [
        'class Lock {',
        '  static volatile int m = 0;',
        '  static void acquire() {',
        '    while (!cas(m, 0, tid)) { }',
        '  }',
        '}',
        '',
    ].join('\n');
    const B = [
        'int count = 0;',
        '',
        'thread Worker {',
        '  Lock.acquire();',
        '  count = Lock.m;',
        '}',
        '',
    ].join('\n');
    const unknownLock: Array<{ code: string; range: Range4; message: string }> = [
        { code: 'name', range: [3, 2, 3, 6], message: "'Lock'" },
        { code: 'name', range: [4, 10, 4, 14], message: "'Lock'" },
    ];
    let dir: string;
    let client: LspClient;
    let aUri: string;
    let bUri: string;

    before(async () => {
        dir = makeWorkspace('calvin-lsp-multi-', { 'a.calvin': A, 'b.calvin': B });
        aUri = fileUri(path.join(dir, 'a.calvin'));
        bUri = fileUri(path.join(dir, 'b.calvin'));
        client = await LspClient.start({ rootPath: dir });
    });

    after(async () => {
        await client?.shutdown();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('b.calvin, using a class of a.calvin, opens with no diagnostics (a.calvin is not open)', async () => {
        const published = client.waitForVersion(bUri, 1);
        await client.open(bUri, B);
        assert.deepEqual((await published).diagnostics, []);
    });

    it('definition, hover and references across files work without opening a.calvin', async () => {
        const defs = await client.request<Array<lsp.Location | lsp.LocationLink>>('textDocument/definition', { textDocument: { uri: bUri }, position: { line: 3, character: 9 } });
        assert.deepEqual(defs.map(targetOf), [{ uri: aUri, range: [2, 14, 2, 21] }], 'acquire is declared in a.calvin');
        const classDef = await client.request<Array<lsp.Location | lsp.LocationLink>>('textDocument/definition', { textDocument: { uri: bUri }, position: { line: 3, character: 3 } });
        assert.deepEqual(classDef.map(targetOf), [{ uri: aUri, range: [0, 6, 0, 10] }], 'Lock is declared in a.calvin');
        const hover = markdownOf(await client.request('textDocument/hover', { textDocument: { uri: bUri }, position: { line: 4, character: 15 } }));
        assert.match(hover, /static volatile int m/);
        assert.match(hover, /class `Lock`/);
        const refs = await client.request<lsp.Location[]>('textDocument/references', { textDocument: { uri: bUri }, position: { line: 3, character: 3 }, context: { includeDeclaration: true } });
        const key = (l: { uri: string; range: Range4 }) => `${l.uri === aUri ? 'a' : l.uri === bUri ? 'b' : l.uri}:${l.range.join(',')}`;
        assert.deepEqual(refs.map(r => key({ uri: r.uri, range: rangeTuple(r.range) })).sort(), ['a:0,6,0,10', 'b:3,2,3,6', 'b:4,10,4,14']);
    });

    it('rename of a field declared in a.calvin, from b.calvin, edits both files', async () => {
        const edit = await client.request<lsp.WorkspaceEdit>('textDocument/rename', { textDocument: { uri: bUri }, position: { line: 4, character: 15 }, newName: 'held' });
        const changes = edit.changes ?? {};
        assert.deepEqual(Object.keys(changes).sort(), [aUri, bUri].sort());
        assert.deepEqual(sortRanges(changes[aUri].map(e => rangeTuple(e.range))), [[1, 22, 1, 23], [3, 16, 3, 17]]);
        assert.deepEqual(sortRanges(changes[bUri].map(e => rangeTuple(e.range))), [[4, 15, 4, 16]]);
        assert.ok([...changes[aUri], ...changes[bUri]].every(e => e.newText === 'held'));
    });

    it('renaming the class in a.calvin gives b.calvin name errors; renaming it back clears them', async () => {
        const opened = client.waitForVersion(aUri, 1);
        await client.open(aUri, A);
        assert.deepEqual((await opened).diagnostics, []);
        await client.settled(bUri);

        const aPublished = client.waitForVersion(aUri, 2);
        let bPublished = client.waitForDiagnostics(bUri, p => p.diagnostics.length > 0);
        await client.change(aUri, replaceOnce(A, 'class Lock {', 'class Latch {'), 2);
        assert.deepEqual((await aPublished).diagnostics, [], 'a.calvin itself is fine');
        checkDiagnostics((await bPublished).diagnostics, unknownLock);
        checkDiagnostics((await client.settled(bUri))!.diagnostics, unknownLock);

        bPublished = client.waitForDiagnostics(bUri, p => p.diagnostics.length === 0);
        await client.change(aUri, A, 3);
        await bPublished;
        assert.deepEqual((await client.settled(bUri))!.diagnostics, []);
    });

    it('a change of a.calvin on disk (not open) reaches b.calvin through didChangeWatchedFiles', async () => {
        await client.close(aUri);
        await client.settled(bUri);
        fs.writeFileSync(path.join(dir, 'a.calvin'), replaceOnce(A, 'class Lock {', 'class Latch {'));
        let bPublished = client.waitForDiagnostics(bUri, p => p.diagnostics.length > 0);
        await client.notify('workspace/didChangeWatchedFiles', { changes: [{ uri: aUri, type: 2 /* Changed */ }] });
        checkDiagnostics((await bPublished).diagnostics, unknownLock);

        fs.writeFileSync(path.join(dir, 'a.calvin'), A);
        bPublished = client.waitForDiagnostics(bUri, p => p.diagnostics.length === 0);
        await client.notify('workspace/didChangeWatchedFiles', { changes: [{ uri: aUri, type: 2 }] });
        await bPublished;
        assert.deepEqual((await client.settled(bUri))!.diagnostics, []);
    });

    it('workspace symbols find declarations of files that are not open, with their kind', async () => {
        const all = await client.request<lsp.SymbolInformation[]>('workspace/symbol', { query: '' });
        const summary = JSON.stringify(all.map(s => [s.name, s.kind, s.location.uri]));
        const find = (name: string) => all.filter(s => s.name === name);
        // the same kinds as in the outline (documentSymbol)
        assert.deepEqual(find('Lock').map(s => [s.kind, s.location.uri]), [[5 /* Class */, aUri]], summary);
        assert.deepEqual(find('Worker').map(s => [s.kind, s.location.uri]), [[24 /* Event */, bUri]], summary);
        assert.deepEqual(find('count').map(s => [s.kind, s.location.uri]), [[8 /* Field */, bUri]], summary);
        assert.ok(all.every(s => s.location.uri.startsWith('file:')), `only workspace files: ${summary}`);
        assert.deepEqual(find('$Object'), [], summary);
    });

    it('the server is still running and logged no internal errors', () => {
        client.assertAlive();
        assert.deepEqual(client.errorLogs(), []);
    });
});

describe('language server: lifecycle', () => {
    let client: LspClient | undefined;
    after(() => client?.kill());

    it('works without a workspace folder and exits with code 0 after shutdown + exit', async () => {
        client = await LspClient.start();
        const uri = fileUri(path.join(os.tmpdir(), 'calvin-no-workspace', 'solo.calvin'));
        const published = client.waitForVersion(uri, 1);
        await client.open(uri, 'int g = 0;\nthread T {\n  g = undefinedName;\n}\n');
        checkDiagnostics((await published).diagnostics, [{ code: 'name', range: [2, 6, 2, 19], message: "'undefinedName'" }]);
        await client.shutdown(5_000);
        assert.deepEqual(client.exit, { code: 0, signal: null }, `exit: ${JSON.stringify(client.exit)}${client.diagnosticsForFailure()}`);
    });
});

describe('language server: malformed programs (minimal inputs found by test/fuzz)', () => {
    let dir: string;
    let client: LspClient;
    let count = 0;

    before(async () => {
        dir = makeWorkspace('calvin-lsp-bad-', {});
        client = await LspClient.start({ rootPath: dir });
    });

    after(async () => {
        await client?.shutdown();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    /**
     * Open `text` as a new document; returns what went wrong: no diagnostics,
     * an internal error, a diagnostic without a front-end code, no `syntax`
     * diagnostic (every input here is syntactically wrong), or a failing
     * documentSymbol request.
     */
    async function problemsWith(text: string): Promise<string[]> {
        const uri = fileUri(path.join(dir, `bad${++count}.calvin`));
        const mark = client.published.length;
        const errors = client.errorLogs().length;
        const publication = () => client.published.slice(mark).find(p => p.uri === uri);
        await client.open(uri, text);
        await client.until(() => publication() !== undefined || client.errorLogs().length > errors || !client.alive(), 5_000);
        if (!publication() && client.alive()) await client.until(() => publication() !== undefined, 500);
        const problems = client.errorLogs().slice(errors).map(l => `internal error: ${l.split('\n')[0]}`);
        const published = publication();
        if (!published) problems.push('no publishDiagnostics');
        else {
            const bad = published.diagnostics.filter(d => !['syntax', 'name', 'type'].includes(String(d.code)));
            problems.push(...bad.map(d => `diagnostic with code ${JSON.stringify(d.code)}: ${d.message}`));
            if (!published.diagnostics.some(d => d.code === 'syntax')) problems.push(`no syntax diagnostic: ${JSON.stringify(published.diagnostics.map(d => d.message))}`);
        }
        if (published) {
            await client.request('textDocument/documentSymbol', { textDocument: { uri } }, 5_000)
                .catch((e: Error) => problems.push(`documentSymbol: ${e.message.split('\n')[0]}`));
        }
        // Empty the document again: a document whose build throws would block the others (see below).
        const emptied = client.waitForDiagnostics(uri, p => p.diagnostics.length === 0, 5_000);
        await client.change(uri, '', 2);
        await emptied.catch(() => problems.push('no diagnostics after emptying the document'));
        await client.close(uri);
        return problems.map(p => `${JSON.stringify(text)}: ${p}`);
    }

    /** No problems with any input (or none matching `only`, to keep one bug per test). */
    async function assertAllFine(inputs: string[], only?: RegExp): Promise<void> {
        const problems: string[] = [];
        for (const input of inputs) problems.push(...await problemsWith(input));
        assert.deepEqual(only ? problems.filter(p => only.test(p)) : problems, []);
    }

    it('documentSymbol on a parameter without a type', async () => {
        await assertAllFine(['d k(final', 'class C { void m(int a, final) { } }'], /documentSymbol/);
    });

    it('validation checks do not crash on incomplete programs', async () => {
        await assertAllFine([
            '//@writable_if b?',            // CalvinTypeSystem.infer / TypeChecks.expectType: conditional without branches
            't f(',                         // StructureChecks.checkRecursion -> directCalls: method without body
            'int m()for',                   // checkMissingReturn -> hasBreak: for without body
            '/*@abstraction step new',      // TypeChecks.checkNew: new without type
            'r v=new(',                     // TypeChecks.checkNew (line 153)
            'thread{atomic',                // StructureChecks.checkAtomic: atomic without block
            '/*@set',                       // AnnotationChecks.checkSet reports on a missing node
            'class x d a(/*@ghost',         // StructureChecks.checkClassDuplicates: member without name
        ]);
    });

    it('the parser does not throw on incomplete expressions', async () => {
        await assertAllFine(['t m()if(&&', '/*@requires==', 't m()if(e[&&']);
    });

    it('the lexer does not throw on an annotation opener followed by /', async () => {
        await assertAllFine(['/*@/', 'int x = 0;\n/*@/ */\n']);
    });

    it('a document whose parse throws does not block the diagnostics of other documents', async () => {
        const badUri = fileUri(path.join(dir, 'blocking.calvin'));
        const cleanUri = fileUri(path.join(dir, 'other.calvin'));
        await client.open(badUri, '/*@/');
        await client.settled(badUri, 300);
        try {
            const published = client.waitForDiagnostics(cleanUri, () => true, 5_000);
            await client.open(cleanUri, 'int g = true;\n');
            checkDiagnostics((await published).diagnostics, [{ code: 'type', range: [0, 8, 0, 12] }]);
        } finally {
            const fixed = client.waitForDiagnostics(badUri, () => true, 5_000);
            await client.change(badUri, '', 2);
            await fixed.catch(() => undefined);
            await client.close(badUri);
            await client.close(cleanUri);
        }
    });

    it('after all of these the server is alive and checks a clean program', async () => {
        const uri = fileUri(path.join(dir, 'clean.calvin'));
        const published = client.waitForVersion(uri, 1);
        await client.open(uri, SIMPLE_LOCK);
        assert.deepEqual((await published).diagnostics, []);
        client.assertAlive();
    });
});

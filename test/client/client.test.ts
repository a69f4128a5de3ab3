/**
 * Tests of the VS Code extension in client/ that run without VS Code: the
 * TextMate grammar (tokenized with the same engine VS Code uses), the manifest,
 * the language configuration, the extension bundle (loaded with a stub `vscode`
 * module), the bundled server's stdio start-up, the verification gutter's
 * lines, and the packaged .vsix: unpacked into a temporary folder, its own
 * server verifies an example over stdio (the CLI bundle cannot drift that way:
 * it is not packaged, and every other end-to-end test runs it in place).
 */
import { after, describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import * as rpc from 'vscode-jsonrpc/node';
import { gutterIconSvg, gutterLines, gutterRuns } from '../../client/src/gutter.js';
import { checkDiagnostics, fileUri, LspClient } from '../util/lsp-client.js';
import { EXAMPLES, ROOT } from '../util/paths.js';

const require = createRequire(import.meta.url);
// Both packages are CommonJS (UMD); require() them to get their named exports reliably.
const vsctm = require('vscode-textmate') as typeof import('vscode-textmate');
const oniguruma = require('vscode-oniguruma') as typeof import('vscode-oniguruma');

const CLIENT = path.join(ROOT, 'client');
const GRAMMAR = path.join(CLIENT, 'syntaxes/calvin.tmLanguage.json');
const EXTENSION_BUNDLE = path.join(CLIENT, 'out/extension.cjs');
const SERVER_BUNDLE = path.join(CLIENT, 'out/server.cjs');
const NOT_BUILT = !fs.existsSync(EXTENSION_BUNDLE) || !fs.existsSync(SERVER_BUNDLE)
    ? 'client/out/extension.cjs or client/out/server.cjs is missing: run `npm run build` first'
    : false;

const manifest = JSON.parse(fs.readFileSync(path.join(CLIENT, 'package.json'), 'utf8'));
const languageConfiguration = JSON.parse(fs.readFileSync(path.join(CLIENT, 'language-configuration.json'), 'utf8'));

// ------------------------------------------------------------------ grammar

interface Token { text: string; scopes: string[] }

let grammar: import('vscode-textmate').IGrammar;

/** Tokenize a whole text line by line (carrying the rule stack, as the editor does). */
function tokenize(text: string): Token[][] {
    let state = vsctm.INITIAL;
    return text.split(/\r?\n/).map(line => {
        const r = grammar.tokenizeLine(line, state);
        state = r.ruleStack;
        return r.tokens.map(t => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes }));
    });
}

/** The tokens of one line whose text (trimmed) is `text`; fails if there is none. */
function tokensOf(lines: Token[][], lineIndex: number, text: string): Token[] {
    const found = lines[lineIndex]!.filter(t => t.text.trim() === text);
    assert.ok(found.length > 0, `no token "${text}" on line ${lineIndex}: ${JSON.stringify(lines[lineIndex]!.map(t => t.text))}`);
    return found;
}

function assertScope(token: Token, scope: string): void {
    assert.ok(token.scopes.includes(scope), `"${token.text}" should have scope ${scope}, has ${token.scopes.join(' ')}`);
}
function assertNoScope(token: Token, pattern: RegExp): void {
    const bad = token.scopes.find(s => pattern.test(s));
    assert.equal(bad, undefined, `"${token.text}" should have no scope matching ${pattern}, has ${token.scopes.join(' ')}`);
}

describe('TextMate grammar', () => {
    before(async () => {
        const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
        await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
        const registry = new vsctm.Registry({
            onigLib: Promise.resolve({
                createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
                createOnigString: (s: string) => new oniguruma.OnigString(s),
            }),
            loadGrammar: async (scopeName: string) =>
                scopeName === 'source.calvin' ? vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR) : null,
        });
        const g = await registry.loadGrammar('source.calvin');
        assert.ok(g, 'grammar source.calvin did not load');
        grammar = g;
    });

    it('highlights annotations in examples/simple_lock_ok.calvin', () => {
        const source = fs.readFileSync(path.join(EXAMPLES, 'simple_lock_ok.calvin'), 'utf8');
        const lines = tokenize(source);
        const lineOf = (needle: string) => {
            const i = source.split(/\r?\n/).findIndex(l => l.includes(needle));
            assert.ok(i >= 0, `example no longer contains ${needle}`);
            return i;
        };

        // A plain // comment is a comment, not an annotation.
        for (const t of lines[0]!) {
            assertScope(t, 'comment.line.double-slash.calvin');
            assertNoScope(t, /annotation/);
        }

        // //@ environment m == tid ==> m' == m;
        const env = lineOf('//@ environment m == tid');
        assertScope(tokensOf(lines, env, '//@')[0]!, 'punctuation.definition.annotation.begin.calvin');
        const environment = tokensOf(lines, env, 'environment')[0]!;
        assertScope(environment, 'meta.annotation.calvin');
        assertScope(environment, 'keyword.other.annotation.calvin');
        assertScope(tokensOf(lines, env, 'tid')[0]!, 'variable.language.tid.calvin');
        assertScope(tokensOf(lines, env, '==>')[0]!, 'keyword.operator.logical.implies.calvin');
        // m' (the identifier and its prime) is a post-state variable; the unprimed m is not.
        const primedM = lines[env]!.findIndex(t => t.text === "'");
        assert.ok(primedM > 0, `no prime token: ${JSON.stringify(lines[env]!.map(t => t.text))}`);
        assertScope(lines[env]![primedM - 1]!, 'variable.other.primed.calvin');
        assert.equal(lines[env]![primedM - 1]!.text, 'm');
        assertScope(lines[env]![primedM]!, 'variable.other.primed.calvin');
        assertNoScope(tokensOf(lines, env, 'm')[0]!, /primed/);

        // Multi-line /*@ abstraction { ... } */: keywords on the continuation lines too.
        const abs = lineOf('/*@ abstraction {');
        assertScope(tokensOf(lines, abs, '/*@')[0]!, 'punctuation.definition.annotation.begin.calvin');
        assertScope(tokensOf(lines, abs, 'abstraction')[0]!, 'keyword.other.annotation.calvin');
        const step = tokensOf(lines, abs + 1, 'step')[0]!;
        assertScope(step, 'meta.annotation.calvin');
        assertScope(step, 'keyword.other.annotation.calvin');
        assertScope(tokensOf(lines, abs + 2, '*/')[0]!, 'punctuation.definition.annotation.end.calvin');
        assertScope(tokensOf(lines, lineOf('requires m == tid;'), 'requires')[0]!, 'keyword.other.annotation.calvin');
        const invariant = tokensOf(lines, lineOf('invariant Mutex.m == 0'), 'invariant')[0]!;
        assertScope(invariant, 'keyword.other.annotation.calvin');

        // Java code after the annotation is code again.
        const acquire = lineOf('static void acquire()');
        assertNoScope(tokensOf(lines, acquire, 'static')[0]!, /annotation/);
        assertScope(tokensOf(lines, acquire, 'static')[0]!, 'storage.modifier.calvin');
        assertScope(tokensOf(lines, acquire, 'void')[0]!, 'storage.type.primitive.calvin');
        assertScope(tokensOf(lines, acquire, 'acquire')[0]!, 'entity.name.function.calvin');
        const cas = lineOf('while (!cas(m, 0, tid))');
        assertScope(tokensOf(lines, cas, 'while')[0]!, 'keyword.control.calvin');
        assertScope(tokensOf(lines, cas, 'cas')[0]!, 'support.function.builtin.calvin');
        assertScope(tokensOf(lines, cas, '0')[0]!, 'constant.numeric.calvin');
        const thread = lineOf('thread T1');
        assertScope(tokensOf(lines, thread, 'thread')[0]!, 'storage.type.thread.calvin');
        assertScope(tokensOf(lines, thread, 'T1')[0]!, 'entity.name.type.thread.calvin');
        // The Java `assert` statement is a keyword, but not an annotation one.
        const assertLine = tokensOf(lines, lineOf('assert x > 0;'), 'assert')[0]!;
        assertScope(assertLine, 'keyword.control.assert.calvin');
        assertNoScope(assertLine, /annotation/);
    });

    it('treats annotation keywords outside annotations as ordinary identifiers', () => {
        const lines = tokenize([
            'int requires = 0;',
            'void ensures(int step) { requires = step + 1; /* requires x; */ }',
            '// invariant m\' == m',
        ].join('\n'));
        for (const t of lines.flat().filter(t => /requires|ensures|step|invariant/.test(t.text))) {
            assertNoScope(t, /annotation/);
        }
        assertScope(tokensOf(lines, 0, 'requires')[0]!, 'variable.other.calvin');
        assertScope(tokensOf(lines, 1, 'ensures')[0]!, 'entity.name.function.calvin');
        assertScope(tokensOf(lines, 1, 'requires x;')[0]!, 'comment.block.calvin');
        for (const t of lines[2]!) assertNoScope(t, /primed|annotation/);
    });

    it('handles JML continuation lines, \\old/\\result and comments inside annotations', () => {
        const lines = tokenize([
            '/*@ requires x > 0;',
            '  @ ensures \\result == \\old(x) <==> true; // why',
            '  @*/',
            'int x = 0;',
        ].join('\n'));
        assertScope(tokensOf(lines, 1, '@')[0]!, 'punctuation.definition.annotation.continuation.calvin');
        assertScope(tokensOf(lines, 1, 'ensures')[0]!, 'keyword.other.annotation.calvin');
        assertScope(tokensOf(lines, 1, '\\result')[0]!, 'support.function.calvin');
        assertScope(tokensOf(lines, 1, '\\old')[0]!, 'support.function.calvin');
        assertScope(tokensOf(lines, 1, '<==>')[0]!, 'keyword.operator.logical.implies.calvin');
        assertScope(tokensOf(lines, 1, 'why')[0]!, 'comment.line.double-slash.calvin');
        assertScope(tokensOf(lines, 2, '@')[0]!, 'punctuation.definition.annotation.continuation.calvin');
        assertScope(tokensOf(lines, 2, '*/')[0]!, 'punctuation.definition.annotation.end.calvin');
        for (const t of lines[3]!) assertNoScope(t, /annotation|comment/);
    });
});

// ------------------------------------------------------------------ manifest

describe('extension manifest (client/package.json)', () => {
    it('contributes the calvin language, its grammar and configuration', () => {
        const lang = manifest.contributes.languages.find((l: { id: string }) => l.id === 'calvin');
        assert.ok(lang, 'language calvin');
        assert.deepEqual(lang.extensions, ['.calvin']);
        assert.ok(fs.existsSync(path.join(CLIENT, lang.configuration)), lang.configuration);
        const g = manifest.contributes.grammars.find((x: { language: string }) => x.language === 'calvin');
        assert.equal(g.scopeName, 'source.calvin');
        assert.equal(path.resolve(CLIENT, g.path), GRAMMAR);
        assert.equal(JSON.parse(fs.readFileSync(GRAMMAR, 'utf8')).scopeName, 'source.calvin');
    });

    it('declares the activation events, entry point and settings', () => {
        assert.deepEqual([...manifest.activationEvents].sort(), ['onLanguage:calvin', 'workspaceContains:**/*.calvin']);
        assert.equal(manifest.main, './out/extension.cjs');
        const props = manifest.contributes.configuration.properties;
        assert.deepEqual(props['calvin.verifyOn'].enum, ['change', 'save', 'never']);
        assert.equal(props['calvin.verifyOn'].default, 'change');
        assert.equal(props['calvin.timeLimitMs'].type, 'number');
        assert.equal(props['calvin.timeLimitMs'].default, 10000);
        assert.equal(props['calvin.maxWorkers'].default, 0);
        assert.deepEqual(props['calvin.trace.server'].enum, ['off', 'messages', 'verbose']);
    });

    it('contributes the restart, output and verification commands', () => {
        const commands = manifest.contributes.commands.map((c: { command: string; category?: string; title: string }) =>
            [c.command, `${c.category ? c.category + ': ' : ''}${c.title}`]);
        assert.deepEqual(Object.fromEntries(commands), {
            'calvin.restartServer': 'Calvin: Restart Language Server',
            'calvin.showOutput': 'Calvin: Show Output',
            'calvin.reverifyFile': 'Calvin: Re-verify File',
            'calvin.cancelVerification': 'Calvin: Cancel Verification',
            'calvin.showStatusMenu': 'Calvin: Show Verification Menu',
        });
        // the server's own commands (code lenses) are registered by the language client: no clash
        for (const [id] of commands) assert.ok(!id.startsWith('calvin.check.') && !id.startsWith('calvin.counterexample.'), id);
    });

    it('contributes the verification settings', () => {
        const props = manifest.contributes.configuration.properties;
        assert.deepEqual(Object.keys(props).sort(), ['calvin.diskCache', 'calvin.infer', 'calvin.maxWorkers', 'calvin.solver', 'calvin.timeLimitMs', 'calvin.trace.server', 'calvin.verificationGutter', 'calvin.verifyOn', 'calvin.witness', 'calvin.z3Path']);
        assert.equal(props['calvin.infer'].default, true);
        assert.equal(props['calvin.witness'].default, true);
        // issue 15: the solver backend
        assert.deepEqual(props['calvin.solver'].enum, ['auto', 'wasm', 'native']);
        assert.equal(props['calvin.solver'].default, 'auto');
        assert.equal(props['calvin.verificationGutter'].type, 'boolean');
        assert.equal(props['calvin.verificationGutter'].default, true);
        assert.equal(props['calvin.timeLimitMs'].default, 10000);
        assert.deepEqual(props['calvin.verifyOn'].enum, ['change', 'save', 'never']);
    });
});

// ------------------------------------------------------------------ language configuration

describe('language configuration', () => {
    interface Rule { beforeText: string; afterText?: string; action: { indent: string; appendText?: string } }
    const rules: Rule[] = languageConfiguration.onEnterRules;
    /** The rule VS Code applies (the first that matches), as it would for Enter between `before` and `after`. */
    const ruleFor = (before: string, after = '') =>
        rules.find(r => new RegExp(r.beforeText).test(before) && (r.afterText === undefined || new RegExp(r.afterText).test(after)));

    it('continues a /*@ annotation with @ on Enter', () => {
        assert.equal(ruleFor('  /*@ requires x > 0;')?.action.appendText, '  @ ');
        assert.equal(ruleFor('/*@ abstraction {')?.action.appendText, '  @ ');
        assert.equal(ruleFor('/*@ ', ' */')?.action.indent, 'indentOutdent');
        assert.equal(ruleFor('    @ ensures y;')?.action.appendText, '@ ');
    });

    it('does not continue closed annotations or plain code', () => {
        assert.equal(ruleFor('/*@ requires x > 0; */'), undefined);
        assert.equal(ruleFor('  @*/'), undefined);
        assert.equal(ruleFor('int x = 0;'), undefined);
        assert.equal(ruleFor('//@ environment m == tid ==> m\' == m;'), undefined);
    });

    it('has comments and brackets, and never auto-closes the prime', () => {
        assert.equal(languageConfiguration.comments.lineComment, '//');
        assert.deepEqual(languageConfiguration.comments.blockComment, ['/*', '*/']);
        const pairs = languageConfiguration.autoClosingPairs.map((p: { open: string; close: string }) => p.open + p.close);
        for (const p of ['{}', '[]', '()', '/** */', '/*@ */']) assert.ok(pairs.includes(p), p);
        // `'` marks post-state variables (x'), so it must not be paired.
        assert.ok(!pairs.some((p: string) => p.includes("'")));
    });
});

// ------------------------------------------------------------------ bundles

describe('extension bundle', { skip: NOT_BUILT }, () => {
    it('activates with a stub vscode, registers its commands and reports a missing server clearly', async () => {
        const errors: string[] = [];
        const commands = new Map<string, unknown>();
        const statusItem = { created: false, shown: false, text: '', show() { this.shown = true; }, dispose() { /* nothing */ } };
        const disposable = { dispose() { /* nothing */ } };
        const channel = new Proxy({}, { get: () => () => undefined });
        const decorations: unknown[] = [];
        const known: Record<string, unknown> = {
            StatusBarAlignment: { Left: 1, Right: 2 },
            OverviewRulerLane: { Left: 1 },
            Uri: { parse: (u: string) => ({ toString: () => u }) },
            languages: { onDidChangeDiagnostics: () => disposable, getDiagnostics: () => [] },
            window: {
                createTextEditorDecorationType: (o: unknown) => { decorations.push(o); return disposable; },
                onDidChangeVisibleTextEditors: () => disposable,
                visibleTextEditors: [],
                createOutputChannel: () => channel,
                showErrorMessage: async (message: string) => { errors.push(message); return undefined; },
                setStatusBarMessage: () => disposable,
                createStatusBarItem: () => { statusItem.created = true; return statusItem; },
            },
            commands: { registerCommand: (id: string, fn: unknown) => { commands.set(id, fn); return disposable; } },
            workspace: {
                getConfiguration: () => ({ get: (_key: string, dflt: unknown) => dflt }),
                createFileSystemWatcher: () => disposable,
                onDidChangeConfiguration: () => disposable,
                onDidChangeTextDocument: () => disposable,
            },
        };
        // vscode-languageclient subclasses vscode classes at load time: any other member is a dummy class.
        const vscodeStub = new Proxy(known, { get: (t, p: string) => (p in t ? t[p] : class {}) });
        const Module = require('node:module') as { _load: (request: string, ...rest: unknown[]) => unknown };
        const load = Module._load;
        Module._load = function (request: string, ...rest: unknown[]) {
            return request === 'vscode' ? vscodeStub : load.call(this, request, ...rest);
        };
        try {
            const ext = require(EXTENSION_BUNDLE) as { activate: (c: unknown) => Promise<void>; deactivate: () => Promise<void> };
            const context = {
                subscriptions: [] as unknown[],
                // A server path that does not exist: activation must report it, not throw.
                asAbsolutePath: (p: string) => path.join(os.tmpdir(), 'calvin-no-such-extension', p),
            };
            await ext.activate(context);
            assert.deepEqual([...commands.keys()].sort(), ['calvin.cancelVerification', 'calvin.restartServer', 'calvin.reverifyFile', 'calvin.showOutput', 'calvin.showStatusMenu']);
            assert.ok(statusItem.shown, 'the status-bar item is shown');
            assert.equal(decorations.length, 4, 'the gutter has its four decorations (verified, failed, checking, not checked)');
            assert.match(statusItem.text, /Calvin/);
            assert.equal(errors.length, 1);
            assert.match(errors[0]!, /Calvin: the language server is missing .*npm run build/);
            // The output channel and the .calvin watcher are disposed with the extension.
            assert.ok(context.subscriptions.length >= 4, `subscriptions: ${context.subscriptions.length}`);
            await ext.deactivate();
        } finally {
            Module._load = load;
        }
    });

    it('the bundled server answers initialize over stdio, as the extension starts it', async () => {
        // vscode-languageclient with TransportKind.stdio runs `node <module> --stdio`.
        const child = spawn(process.execPath, [SERVER_BUNDLE, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', d => { stderr += d; });
        const connection = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
        connection.listen();
        try {
            const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no initialize reply in 15 s; stderr: ${stderr}`)), 15000).unref());
            const result = await Promise.race([
                connection.sendRequest<{ capabilities: Record<string, unknown> }>('initialize', {
                    processId: process.pid, rootUri: null, capabilities: {},
                    initializationOptions: { verifyOn: 'change', timeLimitMs: 10000, maxWorkers: 0 },
                }),
                timeout,
            ]);
            assert.ok(result.capabilities.textDocumentSync !== undefined, JSON.stringify(result.capabilities));
            await connection.sendRequest('shutdown');
            const exited = new Promise(resolve => child.once('exit', resolve));
            await connection.sendNotification('exit');
            await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 5000).unref())]);
        } finally {
            connection.dispose();
            child.kill();
        }
    });
});

// ------------------------------------------------------------------ verification gutter

describe('verification gutter (client/src/gutter.ts)', () => {
    const r = (a: number, b: number) => ({ start: { line: a, character: 0 }, end: { line: b, character: 1 } });

    it('paints each line of a check with its state, and the line of an error as failed', () => {
        const lines = gutterLines([
            { state: 'verified', range: r(1, 1), extent: r(1, 3) },
            { state: 'failed', range: r(5, 5), extent: r(5, 8) },
            { state: 'running', range: r(10, 10), extent: r(10, 11) },
            { state: 'stale', range: r(13, 13), extent: r(13, 13) },
            { state: 'unknown', range: r(14, 14) },
        ], [
            { range: r(6, 6), severity: 1, source: 'calvin' },
            { range: r(7, 7), severity: 3, source: 'calvin' }, // an info: no mark
            { range: r(2, 2), severity: 1, source: 'other' },  // another tool's
        ]);
        assert.deepEqual([...lines].sort((a, b) => a[0] - b[0]), [
            [1, 'verified'], [2, 'verified'], [3, 'verified'],
            [5, 'verified'], [6, 'failed'], [7, 'verified'], [8, 'verified'],
            [10, 'checking'], [11, 'checking'],
            [13, 'notChecked'], [14, 'notChecked'],
        ]);
        assert.deepEqual(gutterRuns(lines), { verified: [[1, 3], [5, 5], [7, 8]], failed: [[6, 6]], checking: [[10, 11]], notChecked: [[13, 14]] });
    });

    it('shows stale lines as being checked while the document is pending, and a failure wins over the rest', () => {
        const lines = gutterLines([{ state: 'stale', range: r(0, 0), extent: r(0, 2) }, { state: 'verified', range: r(2, 2), extent: r(2, 4) }], [{ range: r(4, 4) }], true);
        assert.deepEqual([...lines].sort((a, b) => a[0] - b[0]), [[0, 'checking'], [1, 'checking'], [2, 'checking'], [3, 'verified'], [4, 'failed']]);
        for (const s of ['verified', 'failed', 'checking', 'notChecked'] as const) assert.match(gutterIconSvg(s), /^<svg [^>]*>.*<\/svg>$/);
    });
});

// ------------------------------------------------------------------ packaging

/** The entries of a .zip file (vsce writes no zip64): name → contents, inflated. */
function unzip(file: string): Map<string, Buffer> {
    const buf = fs.readFileSync(file);
    let eocd = buf.length - 22;
    while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
    assert.ok(eocd >= 0, `${file} is not a zip file`);
    const count = buf.readUInt16LE(eocd + 10);
    let p = buf.readUInt32LE(eocd + 16);
    const out = new Map<string, Buffer>();
    for (let i = 0; i < count; i++) {
        assert.equal(buf.readUInt32LE(p), 0x02014b50, 'central directory entry');
        const method = buf.readUInt16LE(p + 10), size = buf.readUInt32LE(p + 20);
        const nameLength = buf.readUInt16LE(p + 28), extraLength = buf.readUInt16LE(p + 30), commentLength = buf.readUInt16LE(p + 32);
        const local = buf.readUInt32LE(p + 42);
        const name = buf.toString('utf8', p + 46, p + 46 + nameLength);
        assert.equal(buf.readUInt32LE(local), 0x04034b50, `local header of ${name}`);
        const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
        const data = buf.subarray(start, start + size);
        assert.ok(method === 0 || method === 8, `${name}: compression method ${method}`);
        out.set(name, method === 0 ? Buffer.from(data) : zlib.inflateRawSync(data));
        p += 46 + nameLength + extraLength + commentLength;
    }
    return out;
}

describe('packaging: the .vsix verifies', { skip: NOT_BUILT }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-vsix-'));
    let client: LspClient | undefined;
    after(async () => {
        await client?.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it('vsce packages the extension; its own server, unpacked elsewhere, reports the exact verification diagnostics', { timeout: 240_000 }, async () => {
        const vsix = path.join(dir, 'calvin.vsix');
        const vsce = path.join(ROOT, 'node_modules/@vscode/vsce/vsce');
        // stdin closed: a vsce confirmation prompt (e.g. about a missing LICENSE) fails instead of hanging.
        const r = spawnSync(process.execPath, [vsce, 'package', '--no-dependencies', '--allow-missing-repository', '-o', vsix], {
            cwd: CLIENT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000,
        });
        assert.equal(r.status, 0, `vsce failed:\n${r.stdout}\n${r.stderr}`);
        assert.doesNotMatch(r.stdout + r.stderr, /WARNING/, 'vsce warned');
        // unpacked outside the repository: no node_modules to fall back on, as in a user's VS Code
        const unpacked = path.join(dir, 'unpacked');
        for (const [name, data] of unzip(vsix)) {
            if (name.endsWith('/')) continue;
            fs.mkdirSync(path.dirname(path.join(unpacked, name)), { recursive: true });
            fs.writeFileSync(path.join(unpacked, name), data);
        }
        const manifestInVsix = JSON.parse(fs.readFileSync(path.join(unpacked, 'extension/package.json'), 'utf8'));
        const server = path.join(unpacked, 'extension/out/server.cjs');
        assert.ok(fs.existsSync(path.join(unpacked, 'extension', manifestInVsix.main)), `the entry point ${manifestInVsix.main} is packaged`);
        assert.ok(fs.existsSync(server), 'out/server.cjs is packaged');
        // as the extension starts it (TransportKind.stdio: `node out/server.cjs --stdio`), from a folder without node_modules
        client = await LspClient.start({ server: [server, '--stdio'], cwd: unpacked, initializationOptions: { verifyOn: 'change', maxWorkers: 1, diskCache: false } });
        const file = path.join(EXAMPLES, 'simple_lock_unlocked.calvin');
        const uri = fileUri(file);
        await client.open(uri, fs.readFileSync(file, 'utf8'));
        const diagnostics = await client.checksDone(uri, 180_000, 5);
        checkDiagnostics(diagnostics, [
            { code: 'race', range: [22, 2, 22, 3], message: 'write of x may race' },
            { code: 'race', range: [22, 2, 22, 6], message: 'read of x may race' },
            { code: 'assert', range: [23, 2, 23, 15], message: "assertion 'x > 0' may fail" },
            { code: 'race', range: [23, 9, 23, 10], message: 'read of x may race' },
        ]);
        assert.deepEqual(client.status.get(uri)?.checks.map(c => [c.name, c.state]), [
            ['initialization', 'verified'], ['Mutex.acquire', 'verified'], ['Mutex.release', 'verified'], ['T1', 'failed'], ['T2', 'verified'],
        ]);
        assert.deepEqual(client.errorLogs(), []);
        assert.doesNotMatch(client.stderr, /not found|cannot find|could not start/i);
    });
});

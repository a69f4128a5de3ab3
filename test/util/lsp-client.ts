/**
 * A small, real LSP client for end-to-end tests of the Calvin language server:
 * it spawns `node packages/cli/out/calvin.cjs lsp`, talks JSON-RPC over the
 * child's stdio (vscode-jsonrpc), and keeps what the server pushes
 * (diagnostics per URI, log messages, stderr) so that tests can wait for it
 * with time-outs and explain failures.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node';
import * as lsp from 'vscode-languageserver-protocol';
import { CLI, ROOT } from './paths.js';

export type Diagnostic = lsp.Diagnostic;
export type PublishDiagnosticsParams = lsp.PublishDiagnosticsParams;

/** `calvin/checkStatus` (docs/protocol.md). */
export interface CheckStatus {
    name: string;
    key: string;
    kind: 'abstraction' | 'thread' | 'init';
    range: lsp.Range;
    state: 'stale' | 'queued' | 'running' | 'verified' | 'failed' | 'unknown' | 'error';
    cached: boolean;
    timeMs?: number;
}
export interface CheckStatusParams { uri: string; checks: CheckStatus[]; pending?: boolean }

export interface LspClientOptions {
    /** The workspace folder (a directory path); omitted: no workspace folder. */
    rootPath?: string;
    /** Extra arguments after `lsp`. */
    args?: string[];
    /** Another server to start with node (its script and arguments) instead of `calvin.cjs lsp` (the .vsix's server). */
    server?: string[];
    /** The server's working directory (default: the repository). */
    cwd?: string;
    /** Variables added to the server's environment. */
    env?: Record<string, string>;
    /** Time limit for `initialize` (ms). */
    initializeTimeoutMs?: number;
    /** Overrides of the client capabilities sent in `initialize`. */
    capabilities?: lsp.ClientCapabilities;
    /**
     * `initializationOptions` (the extension sends its calvin.* settings there). Default:
     * `{ verifyOn: 'never' }`, so that front-end tests see the front end's diagnostics only;
     * the verification tests turn the verifier on.
     */
    initializationOptions?: Record<string, unknown>;
}

/** The file: URI of a path. */
export function fileUri(p: string): string {
    return pathToFileURL(path.resolve(p)).toString();
}

/** The capabilities a typical editor announces (the ones the tests rely on). */
export function defaultCapabilities(): lsp.ClientCapabilities {
    return {
        general: { positionEncodings: ['utf-16'] },
        workspace: {
            workspaceFolders: true,
            configuration: false,
            applyEdit: true,
            workspaceEdit: { documentChanges: false },
            didChangeWatchedFiles: { dynamicRegistration: false },
            symbol: { dynamicRegistration: false },
        },
        window: { workDoneProgress: false },
        textDocument: {
            synchronization: { dynamicRegistration: false, didSave: true, willSave: false },
            publishDiagnostics: { relatedInformation: true, versionSupport: true, codeDescriptionSupport: true, dataSupport: true },
            hover: { dynamicRegistration: false, contentFormat: [lsp.MarkupKind.Markdown, lsp.MarkupKind.PlainText] },
            completion: {
                dynamicRegistration: false,
                contextSupport: true,
                completionItem: { snippetSupport: false, documentationFormat: [lsp.MarkupKind.Markdown, lsp.MarkupKind.PlainText], deprecatedSupport: true },
            },
            definition: { dynamicRegistration: false, linkSupport: true },
            references: { dynamicRegistration: false },
            documentSymbol: { dynamicRegistration: false, hierarchicalDocumentSymbolSupport: true },
            rename: { dynamicRegistration: false, prepareSupport: true },
            foldingRange: { dynamicRegistration: false, lineFoldingOnly: false },
            semanticTokens: {
                dynamicRegistration: false,
                requests: { full: { delta: false }, range: true },
                tokenTypes: Object.values(lsp.SemanticTokenTypes),
                tokenModifiers: Object.values(lsp.SemanticTokenModifiers),
                formats: [lsp.TokenFormat.Relative],
                overlappingTokenSupport: false,
                multilineTokenSupport: false,
            },
        },
    };
}

/** A request answered with a JSON-RPC error (`code`: e.g. -32801 ContentModified, -32800 RequestCancelled). */
export class LspRequestError extends Error {
    constructor(readonly method: string, readonly code: number, message: string) {
        super(message);
    }
}

interface Waiter {
    predicate: (p: PublishDiagnosticsParams) => boolean;
    resolve: (p: PublishDiagnosticsParams) => void;
}

export class LspClient {
    readonly process: ChildProcessWithoutNullStreams;
    readonly connection: rpc.MessageConnection;
    /** Everything the server wrote to stderr. */
    stderr = '';
    /** window/logMessage and window/showMessage notifications, in order. */
    readonly logs: Array<{ type: number; message: string }> = [];
    /** Every publishDiagnostics, in order of arrival. */
    readonly published: PublishDiagnosticsParams[] = [];
    /** The latest publishDiagnostics per URI. */
    readonly latest = new Map<string, PublishDiagnosticsParams>();
    /** Every `calvin/checkStatus` notification, in order, and the latest per URI. */
    readonly statusLog: CheckStatusParams[] = [];
    readonly status = new Map<string, CheckStatusParams>();
    /** Every other request and notification from the server (work-done progress, code lens refresh, ...), in order. */
    readonly others: Array<{ method: string; params: unknown }> = [];
    initializeResult: lsp.InitializeResult | undefined;
    exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

    private readonly waiters = new Map<string, Waiter[]>();
    private readonly listeners = new Set<() => void>();
    private closed = false;

    private constructor(argv: string[], cwd: string, env?: Record<string, string>) {
        this.process = spawn(process.execPath, argv, { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: env ? { ...process.env, ...env } : process.env });
        this.process.stderr.setEncoding('utf8');
        this.process.stderr.on('data', (chunk: string) => { this.stderr += chunk; });
        this.process.on('exit', (code, signal) => { this.exit = { code, signal }; });
        // A write to a dead server must fail the test through its request, not crash the runner.
        this.process.stdin.on('error', () => { /* reported through alive() / request time-outs */ });
        this.connection = rpc.createMessageConnection(
            new rpc.StreamMessageReader(this.process.stdout),
            new rpc.StreamMessageWriter(this.process.stdin),
        );
        this.connection.onNotification(lsp.PublishDiagnosticsNotification.type, p => this.onDiagnostics(p));
        this.connection.onNotification(lsp.LogMessageNotification.type, p => { this.logs.push(p); this.notifyListeners(); });
        this.connection.onNotification(lsp.ShowMessageNotification.type, p => { this.logs.push(p); this.notifyListeners(); });
        this.connection.onNotification('calvin/checkStatus', (p: CheckStatusParams) => {
            this.statusLog.push(p);
            this.status.set(p.uri, p);
            this.notifyListeners();
        });
        // Server-to-client requests: answer like a passive editor would.
        this.connection.onRequest(lsp.ConfigurationRequest.type, p => p.items.map(() => null));
        this.connection.onRequest((method: string, params: unknown) => { this.others.push({ method, params }); this.notifyListeners(); return null; });
        this.connection.onNotification((method: string, params: unknown) => { this.others.push({ method, params }); this.notifyListeners(); });
        // (vscode-jsonrpc routes `$/progress` to progress handlers, not to the handler above)
        this.connection.onUnhandledProgress(params => { this.others.push({ method: '$/progress', params }); this.notifyListeners(); });
        this.connection.onError(() => { /* surfaces as failed requests */ });
        this.connection.onClose(() => { this.closed = true; });
        this.connection.listen();
    }

    /** Spawn the server, `initialize` (with the workspace folder, if any) and send `initialized`. */
    static async start(options: LspClientOptions = {}): Promise<LspClient> {
        const client = new LspClient(options.server ?? [CLI, 'lsp', ...(options.args ?? [])], options.cwd ?? ROOT, options.env);
        const rootUri = options.rootPath ? fileUri(options.rootPath) : null;
        const params: lsp.InitializeParams = {
            processId: process.pid,
            clientInfo: { name: 'calvin-e2e-tests', version: '1' },
            locale: 'en',
            rootUri,
            workspaceFolders: options.rootPath ? [{ uri: rootUri!, name: path.basename(options.rootPath) }] : null,
            capabilities: options.capabilities ?? defaultCapabilities(),
            initializationOptions: options.initializationOptions ?? { verifyOn: 'never' },
        };
        try {
            client.initializeResult = await client.request(lsp.InitializeRequest.method, params, options.initializeTimeoutMs ?? 20_000) as lsp.InitializeResult;
        } catch (e) {
            client.kill();
            throw e;
        }
        await client.connection.sendNotification(lsp.InitializedNotification.type, {});
        return client;
    }

    get capabilities(): lsp.ServerCapabilities {
        if (!this.initializeResult) throw new Error('not initialized');
        return this.initializeResult.capabilities;
    }

    /** True while the server process runs and its connection is open. */
    alive(): boolean {
        return this.exit === undefined && !this.closed && this.process.exitCode === null && this.process.signalCode === null;
    }

    /** Throw (with the server's stderr and logs) unless the server is alive. */
    assertAlive(): void {
        if (!this.alive()) throw new Error(`the language server is not running (exit ${JSON.stringify(this.exit)})${this.diagnosticsForFailure()}`);
    }

    /** Server stderr and error logs, for failure messages. */
    diagnosticsForFailure(): string {
        const errors = this.logs.filter(l => l.type === lsp.MessageType.Error).map(l => l.message);
        return (this.stderr ? `\n--- server stderr ---\n${this.stderr.slice(-4000)}` : '')
            + (errors.length ? `\n--- server error logs ---\n${errors.join('\n').slice(-4000)}` : '');
    }

    /** Log messages of type Error (e.g. the server's "internal error" reports). */
    errorLogs(): string[] {
        return this.logs.filter(l => l.type === lsp.MessageType.Error).map(l => l.message);
    }

    private notifyListeners(): void {
        for (const l of [...this.listeners]) l();
    }

    /**
     * Resolves true as soon as `condition()` holds (checked now and after every
     * diagnostics or log notification and when the process exits), false after `timeoutMs`.
     */
    until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
        if (condition()) return Promise.resolve(true);
        return new Promise(resolve => {
            const check = () => {
                if (!condition()) return;
                done(true);
            };
            const done = (value: boolean) => {
                clearTimeout(timer);
                this.listeners.delete(check);
                this.process.off('exit', check);
                resolve(value);
            };
            const timer = setTimeout(() => done(condition()), timeoutMs);
            this.listeners.add(check);
            this.process.on('exit', check);
        });
    }

    private onDiagnostics(p: PublishDiagnosticsParams): void {
        this.published.push(p);
        this.latest.set(p.uri, p);
        this.notifyListeners();
        const waiting = this.waiters.get(p.uri);
        if (!waiting) return;
        for (const w of [...waiting]) {
            if (w.predicate(p)) {
                waiting.splice(waiting.indexOf(w), 1);
                w.resolve(p);
            }
        }
    }

    /**
     * The next publishDiagnostics for `uri` (arriving after this call) that
     * satisfies `predicate`; rejects after `timeoutMs`.
     */
    waitForDiagnostics(uri: string, predicate: (p: PublishDiagnosticsParams) => boolean = () => true, timeoutMs = 10_000): Promise<PublishDiagnosticsParams> {
        return new Promise((resolve, reject) => {
            const list = this.waiters.get(uri) ?? [];
            this.waiters.set(uri, list);
            let timer: NodeJS.Timeout | undefined = undefined;
            const waiter: Waiter = {
                predicate,
                resolve: p => { clearTimeout(timer); resolve(p); },
            };
            timer = setTimeout(() => {
                const i = list.indexOf(waiter);
                if (i >= 0) list.splice(i, 1);
                const last = this.latest.get(uri);
                reject(new Error(`no matching publishDiagnostics for ${uri} within ${timeoutMs} ms`
                    + ` (server ${this.alive() ? 'alive' : 'dead'}; latest: ${last ? JSON.stringify(last.diagnostics.map(d => [d.code, d.range.start.line, d.message])) : 'none'})`
                    + this.diagnosticsForFailure()));
            }, timeoutMs);
            list.push(waiter);
        });
    }

    /**
     * The publication of `uri`'s diagnostics about the editor's `version` of
     * its text (an earlier publication, about an older text or the file on
     * disk, may still arrive after the change was sent).
     */
    waitForVersion(uri: string, version: number, timeoutMs = 10_000): Promise<PublishDiagnosticsParams> {
        return this.waitForDiagnostics(uri, p => p.version === version, timeoutMs);
    }

    /**
     * The latest publishDiagnostics for `uri` once none has arrived for
     * `quietMs` (to check that nothing stale or different follows a result).
     */
    async settled(uri: string, quietMs = 300, timeoutMs = 10_000): Promise<PublishDiagnosticsParams | undefined> {
        const deadline = Date.now() + timeoutMs;
        let count = -1;
        while (count !== this.published.length) {
            if (Date.now() > deadline) throw new Error(`diagnostics for ${uri} did not settle within ${timeoutMs} ms`);
            count = this.published.length;
            await new Promise(r => setTimeout(r, quietMs));
        }
        return this.latest.get(uri);
    }

    /**
     * Wait until every check of `uri` has a final state (not stale, queued or
     * running) and its status says nothing is pending (the server publishes
     * a document's diagnostics before its status); returns the latest
     * diagnostics. `minChecks`: how many checks the file has.
     */
    async checksDone(uri: string, timeoutMs = 60_000, minChecks = 1): Promise<Diagnostic[]> {
        const FINAL = new Set(['verified', 'failed', 'unknown', 'error']);
        const done = () => {
            const st = this.status.get(uri);
            const diags = this.latest.get(uri);
            return st !== undefined && !st.pending && st.checks.length >= minChecks && st.checks.every(c => FINAL.has(c.state))
                && diags !== undefined;
        };
        if (!(await this.until(done, timeoutMs))) {
            throw new Error(`the checks of ${uri} did not finish within ${timeoutMs} ms (pending: ${this.status.get(uri)?.pending}): ${JSON.stringify(this.status.get(uri)?.checks.map(c => [c.name, c.state]))}`
                + `; diagnostics: ${JSON.stringify(this.latest.get(uri)?.diagnostics.map(d => [d.code, d.range.start.line]))}${this.diagnosticsForFailure()}`);
        }
        return this.latest.get(uri)!.diagnostics;
    }

    /**
     * Send a whole-text change and wait until its checks are done: the status
     * says pending for the new text, then final (see checksDone).
     */
    async editAndVerify(uri: string, text: string, version: number, timeoutMs = 120_000, minChecks = 1): Promise<Diagnostic[]> {
        const seen = this.statusLog.length;
        await this.change(uri, text, version);
        await this.until(() => this.statusLog.slice(seen).some(p => p.uri === uri && p.pending === true), 20_000);
        return this.checksDone(uri, timeoutMs, minChecks);
    }

    /** A request with a time-out; errors carry the server's stderr. */
    async request<R = unknown>(method: string, params: unknown, timeoutMs = 10_000): Promise<R> {
        this.assertAlive();
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`request ${method} timed out after ${timeoutMs} ms (server ${this.alive() ? 'alive' : 'dead'})${this.diagnosticsForFailure()}`)), timeoutMs);
        });
        try {
            return await Promise.race([this.connection.sendRequest(method, params) as Promise<R>, timeout]);
        } catch (e) {
            if (e instanceof rpc.ResponseError) {
                throw new LspRequestError(method, e.code, `request ${method} failed: ${e.code} ${e.message}${this.diagnosticsForFailure()}`);
            }
            throw e;
        } finally {
            clearTimeout(timer);
        }
    }

    async notify(method: string, params: unknown): Promise<void> {
        this.assertAlive();
        await this.connection.sendNotification(method, params);
    }

    /** textDocument/didOpen. */
    async open(uri: string, text: string, version = 1, languageId = 'calvin'): Promise<void> {
        await this.notify(lsp.DidOpenTextDocumentNotification.method, { textDocument: { uri, languageId, version, text } } satisfies lsp.DidOpenTextDocumentParams);
    }

    /**
     * textDocument/didChange replacing the whole text. A content change
     * without a range is the full text under both Full and Incremental sync.
     */
    async change(uri: string, text: string, version: number): Promise<void> {
        const sync = this.capabilities.textDocumentSync;
        const kind = typeof sync === 'number' ? sync : sync?.change;
        if (kind !== lsp.TextDocumentSyncKind.Full && kind !== lsp.TextDocumentSyncKind.Incremental) {
            throw new Error(`the server does not accept document changes (textDocumentSync ${JSON.stringify(sync)})`);
        }
        await this.notify(lsp.DidChangeTextDocumentNotification.method, {
            textDocument: { uri, version },
            contentChanges: [{ text }],
        } satisfies lsp.DidChangeTextDocumentParams);
    }

    /** textDocument/didClose. */
    async close(uri: string): Promise<void> {
        await this.notify(lsp.DidCloseTextDocumentNotification.method, { textDocument: { uri } });
    }

    /** `shutdown`, `exit`, then SIGKILL if the process has not ended within `timeoutMs`. */
    async shutdown(timeoutMs = 5_000): Promise<void> {
        if (this.alive()) {
            try {
                await this.request(lsp.ShutdownRequest.method, undefined, timeoutMs);
                await this.connection.sendNotification(lsp.ExitNotification.type);
            } catch {
                // fall through to kill
            }
        }
        await this.waitForExit(timeoutMs);
        this.kill();
    }

    /** Resolves when the process has exited, or after `timeoutMs`. */
    waitForExit(timeoutMs: number): Promise<boolean> {
        if (this.process.exitCode !== null || this.process.signalCode !== null) return Promise.resolve(true);
        return new Promise(resolve => {
            const timer = setTimeout(() => resolve(false), timeoutMs);
            this.process.once('exit', () => { clearTimeout(timer); resolve(true); });
        });
    }

    /** Kill the process (idempotent) and dispose of the connection. */
    kill(): void {
        if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
        this.connection.dispose();
        this.process.stdin.destroy();
        this.process.stdout.destroy();
        this.process.stderr.destroy();
    }
}

/** Semantic tokens decoded from the relative encoding. */
export interface DecodedToken {
    line: number;
    character: number;
    length: number;
    type: string;
    modifiers: string[];
}

export function decodeSemanticTokens(data: number[], legend: lsp.SemanticTokensLegend): DecodedToken[] {
    const out: DecodedToken[] = [];
    let line = 0;
    let character = 0;
    if (data.length % 5 !== 0) throw new Error(`semantic token data length ${data.length} is not a multiple of 5`);
    for (let i = 0; i < data.length; i += 5) {
        const [dLine, dChar, length, typeIndex, mods] = data.slice(i, i + 5);
        line += dLine;
        character = dLine === 0 ? character + dChar : dChar;
        const modifiers = legend.tokenModifiers.filter((_, bit) => (mods & (1 << bit)) !== 0);
        out.push({ line, character, length, type: legend.tokenTypes[typeIndex], modifiers });
    }
    return out;
}

/** An expected diagnostic: 0-based range [startLine, startChar, endLine, endChar]. */
export interface ExpectedDiagnostic {
    code: string;
    range: [number, number, number, number];
    severity?: number;
    /** A substring or pattern the message must match. */
    message?: string | RegExp;
}

function rangeTuple(r: lsp.Range): [number, number, number, number] {
    return [r.start.line, r.start.character, r.end.line, r.end.character];
}

function byPosition<T extends { range: [number, number, number, number]; code: string }>(a: T, b: T): number {
    for (let i = 0; i < 4; i++) if (a.range[i] !== b.range[i]) return a.range[i] - b.range[i];
    return a.code < b.code ? -1 : a.code > b.code ? 1 : 0;
}

/**
 * Compare diagnostics exactly, both ways: the same (code, range, severity)
 * set, nothing missing, nothing extra; then each message against its pattern.
 * Throws an Error whose message shows both lists.
 */
export function checkDiagnostics(actual: readonly lsp.Diagnostic[], expected: readonly ExpectedDiagnostic[]): void {
    const got = actual.map(d => ({ code: String(d.code), range: rangeTuple(d.range), severity: d.severity ?? 1, message: messageText(d) })).sort(byPosition);
    const want = expected.map(e => ({ code: e.code, range: e.range, severity: e.severity ?? 1, message: e.message })).sort(byPosition);
    const show = (l: Array<{ code: string; range: number[]; severity: number; message?: unknown }>) =>
        l.map(d => `  ${d.code} [${d.range.join(',')}] sev ${d.severity}: ${String(d.message)}`).join('\n') || '  (none)';
    const key = (d: { code: string; range: number[]; severity: number }) => `${d.code}@${d.range.join(',')}#${d.severity}`;
    const same = got.length === want.length && got.every((g, i) => key(g) === key(want[i]));
    if (!same) throw new Error(`diagnostics differ\nexpected:\n${show(want)}\nactual:\n${show(got)}`);
    want.forEach((w, i) => {
        const m = got[i].message;
        const ok = w.message === undefined ? true : typeof w.message === 'string' ? m.includes(w.message) : w.message.test(m);
        if (!ok) throw new Error(`diagnostic ${key(w)}: message ${JSON.stringify(m)} does not match ${String(w.message)}`);
    });
}

/** A diagnostic's message as text (LSP 3.18 also allows Markdown content). */
export function messageText(d: lsp.Diagnostic): string {
    return typeof d.message === 'string' ? d.message : d.message.value;
}

/** A Location or LocationLink as { uri, range } (the selection range of a link). */
export function targetOf(l: lsp.Location | lsp.LocationLink): { uri: string; range: [number, number, number, number] } {
    return 'targetUri' in l
        ? { uri: l.targetUri, range: rangeTuple(l.targetSelectionRange) }
        : { uri: l.uri, range: rangeTuple(l.range) };
}

export { rangeTuple };

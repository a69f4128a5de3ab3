// The Calvin VS Code extension: starts the bundled Calvin language server
// (out/server.cjs, built by scripts/bundle.mjs) and connects it to `.calvin` files.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { gutterIconSvg, gutterLines, gutterRuns, type GutterCheck, type GutterState } from './gutter.js';

/** The client id: LanguageClient reads its trace level from `<id>.trace.server`. */
const CLIENT_ID = 'calvin';
const CLIENT_NAME = 'Calvin';

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel | undefined;
let status: VerificationStatus | undefined;
let gutter: VerificationGutter | undefined;

/** One check as `calvin/checkStatus` reports it (docs/protocol.md). */
interface CheckStatus {
    name: string;
    key: string;
    kind: 'abstraction' | 'thread' | 'init';
    state: 'stale' | 'queued' | 'running' | 'verified' | 'failed' | 'unknown' | 'error';
    cached: boolean;
    timeMs?: number;
    range: GutterCheck['range'];
    extent?: GutterCheck['range'];
}

/**
 * The verification gutter (setting `calvin.verificationGutter`): per line of
 * each checked thread or method, verified / failed here / checking / not
 * checked, from `calvin/checkStatus` and the diagnostics (client/src/gutter.ts).
 */
class VerificationGutter implements vscode.Disposable {
    private readonly types: Record<GutterState, vscode.TextEditorDecorationType>;
    private readonly status = new Map<string, { checks: CheckStatus[]; pending: boolean }>();
    private readonly subscriptions: vscode.Disposable[] = [];

    constructor() {
        const type = (s: GutterState, hover: string) => vscode.window.createTextEditorDecorationType({
            gutterIconPath: vscode.Uri.parse(`data:image/svg+xml;base64,${Buffer.from(gutterIconSvg(s)).toString('base64')}`),
            gutterIconSize: 'contain',
            overviewRulerLane: vscode.OverviewRulerLane.Left,
            ...(s === 'failed' ? { overviewRulerColor: '#f85149' } : {}),
            ...({ hoverMessage: hover } as object),
        });
        this.types = {
            verified: type('verified', 'Calvin: verified'), failed: type('failed', 'Calvin: fails here'),
            checking: type('checking', 'Calvin: checking'), notChecked: type('notChecked', 'Calvin: not checked'),
        };
        this.subscriptions.push(
            vscode.languages.onDidChangeDiagnostics(e => { for (const u of e.uris) this.refresh(u.toString()); }),
            vscode.window.onDidChangeVisibleTextEditors(() => this.refreshAll()),
            vscode.workspace.onDidChangeConfiguration(e => { if (e.affectsConfiguration('calvin.verificationGutter')) this.refreshAll(); }),
        );
    }

    update(uri: string, checks: CheckStatus[], pending: boolean): void {
        this.status.set(uri, { checks, pending });
        this.refresh(uri);
    }

    clear(): void {
        this.status.clear();
        this.refreshAll();
    }

    private refreshAll(): void {
        for (const e of vscode.window.visibleTextEditors) this.refresh(e.document.uri.toString());
    }

    private refresh(uri: string): void {
        const on = vscode.workspace.getConfiguration('calvin').get<boolean>('verificationGutter', true);
        for (const editor of vscode.window.visibleTextEditors) {
            if (editor.document.uri.toString() !== uri) continue;
            const st = this.status.get(uri);
            const lines = on && st ? gutterLines(st.checks, vscode.languages.getDiagnostics(editor.document.uri).map(d => ({
                range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
                severity: d.severity + 1, source: d.source,
            })), st.pending) : new Map<number, GutterState>();
            const runs = gutterRuns(lines);
            for (const s of Object.keys(this.types) as GutterState[]) {
                editor.setDecorations(this.types[s], runs[s].map(([a, b]) => new vscode.Range(a, 0, b, 0)));
            }
        }
    }

    dispose(): void {
        for (const d of this.subscriptions) d.dispose();
        for (const t of Object.values(this.types)) t.dispose();
    }
}

/**
 * The status-bar item: the checks of every file the server reported on
 * ("Calvin: 12/14 verified, checking T2…"); a click opens the menu.
 */
class VerificationStatus implements vscode.Disposable {
    private readonly item = vscode.window.createStatusBarItem('calvin.status', vscode.StatusBarAlignment.Left, 10);
    private readonly checks = new Map<string, CheckStatus[]>();

    constructor() {
        this.item.name = 'Calvin verification';
        this.item.command = 'calvin.showStatusMenu';
        this.render();
        this.item.show();
    }

    private readonly pending = new Set<string>();

    update(uri: string, checks: CheckStatus[], pending = false): void {
        if (checks.length === 0) this.checks.delete(uri);
        else this.checks.set(uri, checks);
        if (pending) this.pending.add(uri); else this.pending.delete(uri);
        this.render();
    }

    clear(): void {
        this.checks.clear();
        this.render();
    }

    private render(): void {
        const all = [...this.checks.values()].flat();
        const verified = all.filter(c => c.state === 'verified').length;
        const failed = all.filter(c => c.state === 'failed').length;
        const unknown = all.filter(c => c.state === 'unknown' || c.state === 'error').length;
        const running = all.filter(c => c.state === 'running' || c.state === 'queued');
        let text = all.length === 0 ? 'Calvin' : `Calvin: ${verified}/${all.length} verified`;
        if (running.length > 0) text += `, checking ${running.find(c => c.state === 'running')?.name ?? running[0].name}…`;
        else if (this.pending?.size > 0) text += ', checking…';
        else if (failed > 0) text += `, ${failed} failed`;
        else if (unknown > 0) text += `, ${unknown} not decided`;
        const icon = running.length > 0 || this.pending?.size > 0 ? '$(sync~spin)' : failed > 0 ? '$(error)' : unknown > 0 ? '$(warning)' : all.length > 0 ? '$(check)' : '$(circle-outline)';
        this.item.text = `${icon} ${text}`;
        this.item.tooltip = all.length === 0 ? 'Calvin: no checks yet' : all.map(c => `${c.name}: ${c.state}${c.cached ? ' (cached)' : ''}${c.timeMs !== undefined ? `, ${c.timeMs} ms` : ''}`).join('\n');
    }

    dispose(): void {
        this.item.dispose();
    }
}

/** The `calvin.*` settings the server understands, as a plain (serializable) object. */
function calvinSettings(): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration('calvin');
    return {
        verifyOn: config.get<string>('verifyOn', 'change'),
        timeLimitMs: config.get<number>('timeLimitMs', 10000),
        maxWorkers: config.get<number>('maxWorkers', 0),
        diskCache: config.get<boolean>('diskCache', true),
        infer: config.get<boolean>('infer', true),
        witness: config.get<boolean>('witness', true),
    };
}

async function startClient(context: vscode.ExtensionContext, channel: vscode.LogOutputChannel, watcher: vscode.FileSystemWatcher): Promise<void> {
    const serverModule = context.asAbsolutePath('out/server.cjs');
    if (!fs.existsSync(serverModule)) {
        // Only happens in a development checkout that was not built.
        void vscode.window.showErrorMessage(`Calvin: the language server is missing (${serverModule}). Run \`npm run build\` and reload the window.`);
        return;
    }
    // The server reads LSP from stdin and writes to stdout (it creates its connection on process.stdin/stdout).
    const serverOptions: ServerOptions = {
        run: { module: serverModule, transport: TransportKind.stdio },
        debug: {
            module: serverModule,
            transport: TransportKind.stdio,
            // Lets the "Attach to Server" launch configuration attach a debugger.
            options: { execArgv: ['--nolazy', '--inspect=6009'] },
        },
    };
    const clientOptions: LanguageClientOptions = {
        documentSelector: [{ scheme: 'file', language: 'calvin' }],
        synchronize: {
            // Sends workspace/didChangeConfiguration with the `calvin` section when a setting changes.
            configurationSection: 'calvin',
            // Files of one program may live in several .calvin files: tell the server about changes on disk too.
            fileEvents: watcher,
        },
        initializationOptions: calvinSettings(),
        outputChannel: channel,
        middleware: {
            // "Show the environment step": the server answers with Markdown; shown as a preview beside the code
            executeCommand: async (command, args, next) => {
                const result = await next(command, args);
                if (command === 'calvin.counterexample.show' && result && typeof (result as { markdown?: unknown }).markdown === 'string') {
                    await showMarkdown((result as { markdown: string }).markdown);
                }
                // "Show interleaving": the trace as a document, and each step's values beside its line
                if (command === 'calvin.witness.show' && result && typeof (result as { markdown?: unknown }).markdown === 'string') {
                    const r = result as { markdown: string; steps?: WitnessStepDecoration[] };
                    witnessDecorations.show(r.steps ?? []);
                    await showMarkdown(r.markdown);
                }
                return result;
            },
        },
    };
    const newClient = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    client = newClient;
    try {
        await newClient.start();
        newClient.onNotification('calvin/checkStatus', (p: { uri: string; checks: CheckStatus[]; pending?: boolean; solver?: string }) => {
            if (p.solver) solverInUse = p.solver;
            status?.update(p.uri, p.checks, p.pending === true);
            gutter?.update(p.uri, p.checks, p.pending === true);
        });
    } catch (err) {
        // A failed start must not surface as an activation exception: say what happened and where to look.
        client = undefined;
        channel.error(`the language server failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
        // Not awaited: activation must not wait for the user to dismiss the message.
        void vscode.window.showErrorMessage(
            `Calvin: the language server failed to start: ${err instanceof Error ? err.message : String(err)}`,
            'Show Output',
        ).then(choice => { if (choice === 'Show Output') channel.show(true); });
        await newClient.dispose().catch(() => undefined);
    }
}

/** A step of a shown witness, decorated at the end of its line. */
interface WitnessStepDecoration { uri: string; line: number; text: string }

/**
 * The steps of the witness last shown, as faint text at the end of their
 * lines (several steps on one line are joined); gone when one of the files
 * changes or another witness is shown.
 */
const witnessDecorations = new (class {
    private type: vscode.TextEditorDecorationType | undefined;
    private steps: WitnessStepDecoration[] = [];

    show(steps: WitnessStepDecoration[]): void {
        this.steps = steps;
        this.apply();
    }

    clear(uri?: string): void {
        if (uri && !this.steps.some(s => s.uri === uri)) return;
        this.steps = [];
        this.apply();
    }

    apply(): void {
        this.type ??= vscode.window.createTextEditorDecorationType({ after: { margin: '0 0 0 2em', color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' } });
        for (const editor of vscode.window.visibleTextEditors) {
            const byLine = new Map<number, string[]>();
            for (const s of this.steps) if (s.uri === editor.document.uri.toString()) byLine.set(s.line, [...(byLine.get(s.line) ?? []), s.text]);
            editor.setDecorations(this.type, [...byLine].map(([line, texts]) => ({
                range: editor.document.lineAt(Math.min(line, editor.document.lineCount - 1)).range,
                renderOptions: { after: { contentText: `⟵ ${texts.join('; ')}` } },
            })));
        }
    }
})();

/** A Markdown text in a preview (an untitled document behind it, so nothing is written to disk). */
async function showMarkdown(markdown: string): Promise<void> {
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: markdown });
    await vscode.commands.executeCommand('markdown.showPreviewToSide', doc.uri);
}

/** The solver the server runs its checks on (from `calvin/checkStatus`), for the status menu. */
let solverInUse: string | undefined;

async function stopClient(): Promise<void> {
    const current = client;
    client = undefined;
    status?.clear();
    gutter?.clear();
    if (!current) return;
    try {
        // dispose() also stops a running client; the timeout keeps a hung server from blocking shutdown.
        await current.dispose(2000);
    } catch (err) {
        output?.error(`error while stopping the language server: ${String(err)}`);
    }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    // A log channel (required by vscode-languageclient 11) so that messages carry timestamps and levels.
    const channel = vscode.window.createOutputChannel(CLIENT_NAME, { log: true });
    output = channel;
    // One watcher for the extension's lifetime, shared by the clients of successive restarts.
    const watcher = vscode.workspace.createFileSystemWatcher('**/*.calvin');
    status = new VerificationStatus();
    gutter = new VerificationGutter();
    // Client-side command ids differ from the server's (calvin.check.*), which the language client registers itself.
    const reverifyFile = async () => {
        const doc = vscode.window.activeTextEditor?.document;
        if (!client || !doc || doc.languageId !== 'calvin') { void vscode.window.showInformationMessage('Calvin: open a .calvin file to verify it.'); return; }
        await client.sendRequest('workspace/executeCommand', { command: 'calvin.check.runFile', arguments: [doc.uri.toString()] });
    };
    const cancel = async () => { if (client) await client.sendRequest('calvin/cancelChecks', {}); };
    context.subscriptions.push(
        channel,
        watcher,
        status,
        gutter,
        vscode.workspace.onDidChangeTextDocument(e => witnessDecorations.clear(e.document.uri.toString())),
        vscode.window.onDidChangeVisibleTextEditors(() => witnessDecorations.apply()),
        vscode.commands.registerCommand('calvin.reverifyFile', reverifyFile),
        vscode.commands.registerCommand('calvin.cancelVerification', cancel),
        vscode.commands.registerCommand('calvin.showStatusMenu', async () => {
            const items: Array<vscode.QuickPickItem & { run: () => unknown }> = [
                { label: '$(refresh) Re-verify file', description: 'run every check of the active file again, ignoring the cache', run: reverifyFile },
                { label: '$(debug-stop) Cancel verification', description: 'stop the queued and running checks', run: cancel },
                { label: '$(debug-restart) Restart server', run: () => vscode.commands.executeCommand('calvin.restartServer') },
                { label: '$(output) Open log', run: () => channel.show(true) },
                // what runs the checks (calvin.solver): said by the server in calvin/checkStatus
                ...(solverInUse ? [{ label: '$(server-process) Solver', description: solverInUse, run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'calvin.solver') }] : []),
            ];
            const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Calvin' });
            await pick?.run();
        }),
        vscode.commands.registerCommand('calvin.restartServer', async () => {
            await stopClient();
            await startClient(context, channel, watcher);
            if (client) vscode.window.setStatusBarMessage('Calvin: language server restarted', 3000);
        }),
        vscode.commands.registerCommand('calvin.showOutput', () => channel.show(true)),
    );
    await startClient(context, channel, watcher);
}

export function deactivate(): Promise<void> {
    return stopClient();
}

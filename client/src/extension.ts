// The Calvin VS Code extension: starts the bundled Calvin language server
// (out/server.cjs, built by scripts/bundle.mjs) and connects it to `.calvin` files.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';

/** The client id: LanguageClient reads its trace level from `<id>.trace.server`. */
const CLIENT_ID = 'calvin';
const CLIENT_NAME = 'Calvin';

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel | undefined;

/** The `calvin.*` settings the server understands, as a plain (serializable) object. */
function calvinSettings(): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration('calvin');
    return {
        verifyOn: config.get<string>('verifyOn', 'change'),
        timeLimitMs: config.get<number>('timeLimitMs', 10000),
        maxWorkers: config.get<number>('maxWorkers', 0),
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
    };
    const newClient = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    client = newClient;
    try {
        await newClient.start();
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

async function stopClient(): Promise<void> {
    const current = client;
    client = undefined;
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
    context.subscriptions.push(
        channel,
        watcher,
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

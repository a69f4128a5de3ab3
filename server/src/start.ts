import { inject } from 'langium';
import { createDefaultModule, createDefaultSharedModule, startLanguageServer } from 'langium/lsp';
import { NodeFileSystem } from 'langium/node';
import { createConnection, ProposedFeatures, StreamMessageReader, StreamMessageWriter, type Connection } from 'vscode-languageserver/node.js';
import { CalvinGeneratedModule, CalvinGeneratedSharedModule, CalvinModule, CalvinSharedModule, registerValidationChecks } from '@calvin/language';
import { CalvinLspModule, CalvinLspSharedModule, verificationOf, type CalvinLspServices } from './calvin-lsp-module.js';

/** Create the full (LSP) services for a connection. */
export function createCalvinLspServices(connection: Connection) {
    const shared = inject(
        createDefaultSharedModule({ connection, ...NodeFileSystem }),
        CalvinGeneratedSharedModule,
        CalvinSharedModule,
        CalvinLspSharedModule,
    );
    const Calvin = inject(
        createDefaultModule({ shared }),
        CalvinGeneratedModule,
        CalvinModule,
        CalvinLspModule,
    ) as CalvinLspServices;
    shared.ServiceRegistry.register(Calvin);
    registerValidationChecks(Calvin);
    return { shared, Calvin };
}

/** Run the Calvin language server over stdio (the connection picks the transport from argv, stdio by default). */
export function startServer(): void {
    const reader = new StreamMessageReader(process.stdin);
    const writer = new StreamMessageWriter(process.stdout);
    // A malformed header (`Content-Length: abc`) leaves the stream at an unknown position: nothing
    // after it can be read reliably, so the server says so and ends rather than wait for input that
    // can never be parsed. A body that is not JSON (its length was right) gets a parse error answer.
    reader.onError(err => {
        const message = err?.message ?? String(err);
        if (/content-length|header/i.test(message)) {
            process.stderr.write(`Calvin: the client sent a malformed message header (${message}); closing the connection\n`);
            process.exit(1);
        }
        void writer.write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${message}` } } as never);
    });
    const connection = createConnection(ProposedFeatures.all, reader, writer) as unknown as Connection;
    // Never let a stray exception end the server: report it and go on.
    process.on('uncaughtException', err => connection.console.error(`Calvin: internal error: ${err?.stack ?? err}`));
    process.on('unhandledRejection', err => connection.console.error(`Calvin: internal error: ${(err as Error)?.stack ?? err}`));
    const { shared } = createCalvinLspServices(connection);
    // (created now: it listens to the workspace from the start)
    verificationOf(shared);
    startLanguageServer(shared);
}

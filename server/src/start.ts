import { inject } from 'langium';
import { createDefaultModule, createDefaultSharedModule, startLanguageServer } from 'langium/lsp';
import { NodeFileSystem } from 'langium/node';
import { createConnection, ProposedFeatures, type Connection } from 'vscode-languageserver/node';
import { CalvinGeneratedModule, CalvinGeneratedSharedModule, CalvinModule, CalvinSharedModule, registerValidationChecks } from '@calvin/language';
import { VerificationService } from './verification/service.js';
import { verificationServices } from './verification/lsp-features.js';
import { CalvinLspModule, CalvinLspSharedModule, type CalvinLspServices } from './calvin-lsp-module.js';

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
    const connection = createConnection(ProposedFeatures.all, process.stdin, process.stdout) as unknown as Connection;
    // Never let a stray exception end the server: report it and go on.
    process.on('uncaughtException', err => connection.console.error(`Calvin: internal error: ${err?.stack ?? err}`));
    process.on('unhandledRejection', err => connection.console.error(`Calvin: internal error: ${(err as Error)?.stack ?? err}`));
    const { shared, Calvin } = createCalvinLspServices(connection);
    verificationServices.set(shared, new VerificationService(shared, Calvin, connection));
    startLanguageServer(shared);
}

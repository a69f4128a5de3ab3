// Verification diagnostics in the language server (issue 3, a first version; issue 4
// makes it incremental): after the front end has validated an open document, its
// program (the linked files) is verified in the background and the verifier's
// findings are published together with the front end's diagnostics.
//
// A file is never shown clean while its verification runs: until the result
// arrives it carries an information diagnostic "verifying…"; a check the solver
// could not decide is an `unknown` warning (from the verifier).
import { DocumentState, type LangiumDocument } from 'langium';
import type { LangiumSharedServices } from 'langium/lsp';
import { DiagnosticSeverity, type Connection, type Diagnostic, type InitializeParams, type PublishDiagnosticsParams } from 'vscode-languageserver';
import { programOf, toProgramModel, type CalvinServices } from '@calvin/language';
import { createBackend, verifyProgram, type SolverBackend, type VDiagnostic } from '@calvin/verifier';

export type VerifyOn = 'change' | 'save' | 'never';

export interface VerificationSettings {
    verifyOn: VerifyOn;
    timeLimitMs: number;
    /** Solver workers (0: cores - 1, at least 1). */
    maxWorkers: number;
}

const DEBOUNCE_MS = 400;
const SEVERITY = { error: DiagnosticSeverity.Error, warning: DiagnosticSeverity.Warning, info: DiagnosticSeverity.Information } as const;

export class VerificationService {
    settings: VerificationSettings = { verifyOn: 'change', timeLimitMs: 10_000, maxWorkers: 0 };
    /** Verifier diagnostics per document URI, from the last completed run. */
    private readonly results = new Map<string, Diagnostic[]>();
    /** Documents whose verification is scheduled or running. */
    private readonly pending = new Set<string>();
    private readonly generation = new Map<string, number>();
    private timer: NodeJS.Timeout | undefined;
    private queued = new Set<string>();
    private solver: SolverBackend | undefined;
    private running: Promise<void> = Promise.resolve();
    private readonly publish: (p: PublishDiagnosticsParams) => void;

    constructor(private readonly shared: LangiumSharedServices, private readonly Calvin: CalvinServices, private readonly connection: Connection) {
        // Every publication of a document's diagnostics carries its verifier findings too.
        const send = connection.sendDiagnostics.bind(connection);
        this.publish = p => void send(p);
        connection.sendDiagnostics = async (p: PublishDiagnosticsParams) => send({ ...p, diagnostics: [...p.diagnostics, ...this.extra(p.uri)] });
        shared.lsp.LanguageServer.onInitialize((params: InitializeParams) => this.configure(params.initializationOptions));
        // Registered before Langium's own handler: the front end's publication already says "verifying".
        shared.workspace.DocumentBuilder.onDocumentPhase(DocumentState.Validated, doc => {
            if (this.settings.verifyOn === 'change') this.markPending(doc.uri.toString(), false);
        });
        shared.workspace.DocumentBuilder.onBuildPhase(DocumentState.Validated, docs => {
            if (this.settings.verifyOn === 'change') this.schedule(docs.map(d => d.uri.toString()));
        });
        shared.workspace.TextDocuments.onDidSave(e => {
            if (this.settings.verifyOn === 'save') this.schedule([e.document.uri]);
        });
        connection.onShutdown(() => this.solver?.dispose());
    }

    configure(options: unknown): void {
        const o = (options ?? {}) as Partial<VerificationSettings>;
        if (o.verifyOn === 'change' || o.verifyOn === 'save' || o.verifyOn === 'never') this.settings.verifyOn = o.verifyOn;
        if (typeof o.timeLimitMs === 'number' && o.timeLimitMs > 0) this.settings.timeLimitMs = o.timeLimitMs;
        if (typeof o.maxWorkers === 'number' && o.maxWorkers >= 0) this.settings.maxWorkers = Math.floor(o.maxWorkers);
    }

    private extra(uri: string): Diagnostic[] {
        if (this.pending.has(uri)) {
            return [{
                range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
                severity: DiagnosticSeverity.Information, source: 'calvin', code: 'verifying',
                message: 'Calvin is verifying this file…',
            }];
        }
        return this.results.get(uri) ?? [];
    }

    private isOpen(uri: string): boolean {
        return this.shared.workspace.TextDocuments.get(uri) !== undefined;
    }

    /** A newer text: older runs' results are stale; the document shows "verifying" until the new run ends. */
    private markPending(uri: string, publish: boolean): void {
        if (!this.isOpen(uri)) return;
        this.queued.add(uri);
        this.generation.set(uri, (this.generation.get(uri) ?? 0) + 1);
        if (!this.pending.has(uri)) {
            this.pending.add(uri);
            if (publish) this.republish(uri);
        }
    }

    /** Verify the programs of these documents (the open ones) after a short quiet period. */
    schedule(uris: string[]): void {
        for (const uri of uris) if (!this.queued.has(uri)) this.markPending(uri, true);
        if (this.queued.size === 0) return;
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => {
            const batch = [...this.queued];
            this.queued = new Set();
            this.running = this.running.then(() => this.verifyAll(batch)).catch(e => this.connection.console.error(`Calvin: verification failed: ${(e as Error)?.stack ?? e}`));
        }, DEBOUNCE_MS);
    }

    private async verifyAll(uris: string[]): Promise<void> {
        const all = [...this.shared.workspace.LangiumDocuments.all];
        const done = new Set<string>();
        for (const uri of uris) {
            if (done.has(uri)) continue;
            const doc = all.find(d => d.uri.toString() === uri);
            if (!doc) { this.finish([uri], new Map(), new Map([[uri, this.generation.get(uri) ?? 0]])); continue; }
            const group = programOf(doc, all);
            group.forEach(d => done.add(d.uri.toString()));
            const ids = group.map(d => d.uri.toString());
            const started = new Map(ids.map(u => [u, this.generation.get(u) ?? 0]));
            await this.verifyGroup(group, ids, started);
        }
    }

    private async verifyGroup(group: LangiumDocument[], ids: string[], started: Map<string, number>): Promise<void> {
        const byUri = new Map<string, Diagnostic[]>(ids.map(u => [u, []]));
        const hasErrors = group.some(d => (d.diagnostics ?? []).some(x => (x.severity ?? 1) === 1));
        if (hasErrors) {
            this.connection.console.log(`Calvin: not verified (front-end errors first): ${ids.join(', ')}`);
            this.finish(ids, byUri, started);
            return;
        }
        try {
            const model = toProgramModel(group, this.Calvin.types.TypeSystem);
            const result = await verifyProgram(model, { solver: this.backend(), timeLimitMs: this.settings.timeLimitMs, concurrency: this.workers() });
            for (const d of result.diagnostics) byUri.get(d.range.file)?.push(toLsp(d));
        } catch (e) {
            // Never show the file clean when the verifier itself failed.
            for (const [uri, list] of byUri) {
                list.push({
                    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
                    severity: DiagnosticSeverity.Warning, source: 'calvin', code: 'unknown',
                    message: `This file was not verified: internal error (${(e as Error)?.message ?? e}).`,
                });
                void uri;
            }
        }
        this.finish(ids, byUri, started);
    }

    /** Store and publish results, unless the document changed since the run started (then a newer run is coming). */
    private finish(ids: string[], byUri: Map<string, Diagnostic[]>, started: Map<string, number>): void {
        for (const uri of ids) {
            if ((this.generation.get(uri) ?? 0) !== started.get(uri)) continue;
            this.results.set(uri, byUri.get(uri) ?? []);
            this.pending.delete(uri);
            this.republish(uri);
        }
    }

    private republish(uri: string): void {
        const doc = [...this.shared.workspace.LangiumDocuments.all].find(d => d.uri.toString() === uri);
        if (!doc || doc.state < DocumentState.Validated) return;
        this.publish({ uri, diagnostics: [...(doc.diagnostics ?? []), ...this.extra(uri)] });
    }

    private workers(): number {
        const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 2;
        return this.settings.maxWorkers > 0 ? this.settings.maxWorkers : Math.max(1, cores - 1);
    }

    private backend(): SolverBackend {
        this.solver ??= createBackend('z3-wasm', { workers: this.workers() });
        return this.solver;
    }
}

function toLsp(d: VDiagnostic): Diagnostic {
    const range = (r: VDiagnostic['range']) => ({ start: { line: r.startLine, character: r.startChar }, end: { line: r.endLine, character: r.endChar } });
    return {
        range: range(d.range), severity: SEVERITY[d.severity], source: 'calvin', code: d.code, message: d.message,
        relatedInformation: d.related.length > 0 ? d.related.map(r => ({ location: { uri: r.range.file, range: range(r.range) }, message: r.message })) : undefined,
    };
}

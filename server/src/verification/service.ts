// Verification in the language server: incremental, per check.
//
// After the front end has validated a program's files, its checks are planned
// (packages/verifier/src/incremental/plan.ts: one fingerprint per check, no
// solver). A check whose fingerprint is in the cache (memory and
// `.calvin-cache/`) is done at once; the others are queued on the check
// workers (off the main thread), the check being edited first, then the open
// files, then the workspace. A newer edit cancels the checks whose fingerprint
// it changed; a result that is no longer wanted is never shown.
//
// The service wires the parts to Langium's and the editor's events: the
// tracker (tracker.ts) keeps the state of every check, the scheduler
// (scheduler.ts) decides when to plan and runs checks on the pool, the
// publisher (publisher.ts) tells the editor, convert.ts makes LSP objects.
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DocumentState, URI, type LangiumDocument } from 'langium';
import type { LangiumSharedServices } from 'langium/lsp';
import { DiagnosticSeverity, type Connection, type Diagnostic, type InitializeParams } from 'vscode-languageserver';
import { parsedText, programOf, toProgramModel, type CalvinServices } from '@calvin/language';
import {
    CheckPool, decodeResult, defaultCheckWorkerScript, encodeResult, inferAnnotations, planChecks, programContext, Refutations, refutationsOf, resolveSolver, ResultCache,
    storedResultFits, uncheckedDiagnostics, userCacheKey, type CheckPlan, type Range, type CheckResult, type Inference, type InferredAnnotation, type ProgramContext, type ProgramModel, type WitnessResult,
} from '@calvin/verifier';
import { diff } from './positions.js';
import { clampTimeLimit, DEFAULT_SETTINGS, validateSettings, type VerificationSettings } from './settings.js';
import { findingKey, lspContains, planContains, shownOf, toLsp, within } from './convert.js';
import { witnessDocument } from './witness-document.js';
import { environmentStepMarkdown } from './environment-step.js';
import { CheckTracker, type CheckStatus, type CheckStatusParams, type TrackedCheck, type TrackedProgram } from './tracker.js';
import { CheckScheduler } from './scheduler.js';
import { Publisher } from './publisher.js';

export type { VerifyOn, VerificationSettings } from './settings.js';
export type { CheckState, CheckStatus, CheckStatusParams, TrackedCheck } from './tracker.js';
export { lspRange, toLsp, counterexampleText } from './convert.js';

/** Programs larger than this are not verified as you type (front end only, with a warning). */
export const MAX_INTERACTIVE_LINES = 20_000;

/**
 * Quiet period after the last edit before the checks are planned (counted from
 * the keystroke, not from the end of the front end's rebuild): short enough
 * that a pause in typing shows the result well within a second, long enough
 * that not every keystroke starts (and then cancels) solver work.
 */
const DEBOUNCE_MS = 200;

/** CALVIN_DEBUG=1: when the server's phases start and end, on stderr (the editor's output channel), in ms since the process started. */
const debugTrace = process.env.CALVIN_DEBUG ? (m: string) => process.stderr.write(`[${performance.now().toFixed(0)} ms] ${m}\n`) : undefined;
const FILE_START = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

export class VerificationService {
    settings: VerificationSettings = { ...DEFAULT_SETTINGS };
    /** The client shows disabled code actions with their reason (`codeAction.disabledSupport`). */
    clientSupportsDisabledActions = false;
    private readonly tracker = new CheckTracker();
    private readonly scheduler: CheckScheduler;
    private readonly publisher: Publisher;
    private readonly connection: Connection;
    /** Last text seen per document (to move diagnostics with edits) and where the last edit was. */
    private readonly texts = new Map<string, string>();
    /** The editor's version of each open document's text (publications carry it). */
    private readonly versions = new Map<string, number>();
    private readonly lastEdit = new Map<string, ReturnType<typeof diff> & object>();
    private cache: ResultCache = new ResultCache();
    private workspaceRoot: string | undefined;
    /** verifyOn = save: the documents saved since their program was last planned (the others are planned, not run). */
    private readonly saved = new Set<string>();
    /** The text of each document when its program was last planned. */
    private readonly plannedTexts = new Map<string, string>();
    /** The program context last built for hover and code actions, per program (rebuilt when a document is parsed again). */
    private readonly contexts = new Map<string, { roots: unknown[]; ctx?: ProgramContext; reason?: string }>();
    /** Settings problems already reported (each is said once). */
    private readonly settingsWarnings = new Set<string>();

    constructor(private readonly shared: LangiumSharedServices) {
        const connection = shared.lsp.Connection;
        if (!connection) throw new Error('the verification service needs an LSP connection');
        this.connection = connection;
        this.scheduler = new CheckScheduler({
            debounceMs: DEBOUNCE_MS,
            plan: uris => this.plan(uris),
            makePool: () => this.makePool(),
            onError: e => connection.console.error(`Calvin: verification failed: ${(e as Error)?.stack ?? e}`),
        });
        this.publisher = new Publisher(connection, {
            verification: uri => this.verificationDiagnostics(uri),
            frontEnd: uri => this.currentFrontEnd(uri),
            version: uri => this.builtVersion(uri),
            status: uri => this.status(uri),
            active: () => this.scheduler.active,
            cancelAll: () => this.cancelChecks(),
        });
        shared.lsp.LanguageServer.onInitialize((params: InitializeParams) => {
            this.configure(params.initializationOptions);
            this.publisher.workDoneProgress = params.capabilities.window?.workDoneProgress === true;
            this.clientSupportsDisabledActions = params.capabilities.textDocument?.codeAction?.disabledSupport === true;
            this.publisher.codeLensRefresh = params.capabilities.workspace?.codeLens?.refreshSupport === true;
            const folder = params.workspaceFolders?.[0]?.uri ?? params.rootUri ?? undefined;
            if (folder?.startsWith('file:')) this.workspaceRoot = fileURLToPath(folder);
            this.resetCache();
            debugTrace?.('initialized: the check workers start');
            // issue 15: the check workers (and their solvers) start now, while the front end runs
            this.scheduler.warm();
        });
        shared.workspace.TextDocuments.onDidChangeContent(e => this.textChanged(e.document.uri, e.document.getText(), e.document.version));
        shared.workspace.TextDocuments.onDidClose(e => { this.texts.delete(e.document.uri); this.versions.delete(e.document.uri); this.plannedTexts.delete(e.document.uri); });
        // An opened file's queued checks move up at once (the rebuild that follows plans them again)
        shared.workspace.TextDocuments.onDidOpen(e => this.opened(e.document.uri));
        // Registered before Langium's own handler: the front end's publication already says "verifying".
        shared.workspace.DocumentBuilder.onDocumentPhase(DocumentState.Validated, doc => {
            if (this.settings.verifyOn !== 'change') return;
            this.scheduler.queued.add(doc.uri.toString());
            this.publisher.statusChanged(doc.uri.toString()); // pending: the status bar and lenses say so at once
        });
        // (with verifyOn = save or never, planning shows which checks an edit made stale, and the
        // commands can run them; only a save, with save, runs them by itself)
        shared.workspace.DocumentBuilder.onBuildPhase(DocumentState.Validated, docs => {
            debugTrace?.(`front end: ${docs.length} document(s) validated`);
            this.scheduler.schedule(docs.map(d => d.uri.toString()));
        });
        // A deleted file: its program goes, and its other files are planned again (as a program of their own).
        shared.workspace.DocumentBuilder.onUpdate((_changed, deleted) => {
            const gone = new Set(deleted.map(d => d.toString()));
            const others = new Set<string>();
            for (const u of gone) {
                const { others: rest, cancel } = this.tracker.deleted(u);
                rest.forEach(x => others.add(x));
                this.scheduler.cancel(cancel);
                this.texts.delete(u);
                this.versions.delete(u);
                this.plannedTexts.delete(u);
                this.lastEdit.delete(u);
                this.publisher.forget(u);
                this.scheduler.forget(u);
            }
            const rest = [...others].filter(u => !gone.has(u));
            if (rest.length > 0) this.scheduler.schedule(rest);
        });
        shared.workspace.TextDocuments.onDidSave(e => {
            if (this.settings.verifyOn !== 'save') return;
            // a save of the text last planned, with nothing stale or about to be planned: nothing to run, nothing to say
            if (this.savedUnchanged(e.document.uri, e.document.getText())) return;
            this.saved.add(e.document.uri);
            this.scheduler.schedule([e.document.uri]);
            this.publisher.statusChanged(e.document.uri);
        });
        // Settings changed in the editor (workspace/didChangeConfiguration, section `calvin`).
        shared.workspace.ConfigurationProvider.onConfigurationSectionUpdate(update => {
            if (update.section !== 'calvin') return;
            const before = { ...this.settings };
            this.configure(update.configuration);
            if (JSON.stringify(this.settings) === JSON.stringify(before)) return;
            if (this.settings.solver !== before.solver || this.settings.z3Path !== before.z3Path) this.scheduler.replacePool();
            else if (this.settings.maxWorkers !== before.maxWorkers) this.scheduler.resize(this.workerCount());
            if (this.settings.diskCache !== before.diskCache) this.resetCache();
            if (this.settings.infer !== before.infer) this.contexts.clear();
            // the time limit is part of every fingerprint: plan again
            if (this.settings.verifyOn === 'change') this.scheduler.schedule(this.tracker.allPrograms().flatMap(p => p.uris));
        });
        connection.onShutdown(() => this.scheduler.dispose());
        connection.onRequest('calvin/verifyCheck', async (p: { uri: string; name?: string; key?: string; timeLimitMs?: number }) =>
            this.verifyCheck(p.uri, p.key ?? p.name ?? '', typeof p.timeLimitMs === 'number' && Number.isFinite(p.timeLimitMs) ? clampTimeLimit(p.timeLimitMs) : undefined));
        connection.onRequest('calvin/cancelChecks', (p: { uri?: string } | undefined) => ({ cancelled: this.cancelChecks(p?.uri) }));
        connection.onRequest('calvin/checkStatus', (p: { uri: string }) => this.status(p.uri));
        connection.onRequest('calvin/environmentStep', (p: { uri: string; diagnostic: unknown }) => this.environmentStep(p.uri, p.diagnostic));
    }

    /** Listeners of state changes (code lens refresh, tests). */
    get onChange(): Array<(uri: string) => void> {
        return this.publisher.onChange;
    }

    configure(options: unknown): void {
        this.settings = validateSettings(options, this.settings, m => {
            if (this.settingsWarnings.has(m)) return;
            this.settingsWarnings.add(m);
            this.connection.console.warn(`Calvin: ${m}`);
        });
    }

    private resetCache(): void {
        const dir = this.settings.diskCache && this.workspaceRoot ? path.join(this.workspaceRoot, '.calvin-cache') : undefined;
        this.cache = new ResultCache({
            dir, root: this.workspaceRoot, key: dir ? userCacheKey() : undefined,
            warn: m => this.connection.console.warn(`Calvin: ${m}`),
        });
    }

    // ------------------------------------------------------------ what the editor asks

    checksOf(uri: string): TrackedCheck[] {
        return this.tracker.checksOf(uri);
    }

    programChecksOf(uri: string): TrackedCheck[] {
        return this.tracker.programChecksOf(uri);
    }

    status(uri: string): CheckStatusParams & { solver?: string } {
        return { ...this.tracker.status(uri), pending: this.pending(uri), ...(this.solverDescription ? { solver: this.solverDescription } : {}) };
    }

    /**
     * Whether the document's verification results are not final yet: it waits
     * to be planned, or a check of its program is queued or running. (Said in
     * `calvin/checkStatus`, never as a diagnostic.)
     */
    private pending(uri: string): boolean {
        if (this.settings.verifyOn === 'never' && !this.tracker.busy(uri)) return false;
        const program = this.tracker.programOf(uri);
        const runs = this.settings.verifyOn === 'change' || this.saved.has(uri);
        return (runs && (this.scheduler.queued.has(uri) || this.scheduler.planning.has(uri))) || (program !== undefined && this.tracker.busy(uri))
            || (runs && this.scheduler.waiting && !program);
    }

    /**
     * The program a document belongs to, as the verifier sees it (E(p), I(p),
     * guards: hover, quick fixes), or why there is none. Built from the
     * current documents, independently of verification runs.
     */
    contextOf(uri: string): { ctx?: ProgramContext; reason?: string } {
        const all = [...this.shared.workspace.LangiumDocuments.all];
        const doc = this.documentOf(uri);
        if (!doc || doc.state < DocumentState.Validated) return { reason: 'the file is still being analysed' };
        const group = programOf(doc, all);
        const id = group.map(d => d.uri.toString()).sort().join('\n');
        const roots = group.map(d => d.parseResult.value);
        const known = this.contexts.get(id);
        if (known && known.roots.length === roots.length && known.roots.every((r, i) => r === roots[i])) return known;
        let entry: { roots: unknown[]; ctx?: ProgramContext; reason?: string };
        if (group.some(d => (d.diagnostics ?? []).some(x => (x.severity ?? 1) === 1))) {
            entry = { roots, reason: 'the program has errors; fix them to see what the checker assumes' };
        } else {
            try {
                const model = toProgramModel(group, this.languageServices().types.TypeSystem);
                const tracked = this.tracker.programOf(uri);
                entry = { roots, ctx: programContext(this.withInference(model, tracked?.refutations, tracked).program) };
            } catch (e) {
                entry = { roots, reason: `internal error: ${(e as Error)?.message ?? e}` };
            }
        }
        this.contexts.set(id, entry);
        // (the contexts of groupings of documents that no longer exist go)
        for (const k of this.contexts.keys()) if (k !== id && !k.split('\n').every(u => this.documentOf(u))) this.contexts.delete(k);
        return entry;
    }

    /** The annotations Calvin inferred for a document's program (the last plan's; none with calvin.infer off). */
    inferredAnnotations(uri: string): InferredAnnotation[] {
        return this.tracker.programOf(uri)?.inference?.annotations ?? [];
    }

    /** The verification diagnostics shown in a document at a position. */
    diagnosticsAt(uri: string, position: { line: number; character: number }): Diagnostic[] {
        return this.verificationDiagnostics(uri).filter(d => lspContains(d.range, position));
    }

    /** Run one check now, bypassing the cache. */
    async verifyCheck(uri: string, keyOrName: string, timeLimitMs?: number): Promise<CheckStatus | undefined> {
        const check = this.tracker.programChecksOf(uri).find(c => c.plan.key === keyOrName || c.plan.name === keyOrName);
        const program = this.tracker.programOf(uri);
        if (!check || !program?.model || !this.verifiable(program)) return undefined;
        this.scheduler.cancel(this.tracker.stopJob(check));
        await this.runCheck(program, check, 0, timeLimitMs, undefined, true); // (its own result, as asked)
        // a plan made meanwhile (an edit, the inference's next round) may have queued it again: the
        // answer is the check's result, so wait for that run too
        const key = check.plan.key;
        const current = () => this.tracker.programChecksOf(uri).find(c => c.plan.key === key);
        for (let waited = 0; current()?.job && waited < 600_000; waited += 100) await new Promise(r => setTimeout(r, 100));
        return this.status(check.uri).checks.find(c => c.key === key);
    }

    /** Run every check of a document's program again, bypassing the cache. */
    async verifyFile(uri: string): Promise<CheckStatusParams> {
        const program = this.tracker.programOf(uri);
        if (!program?.model || !this.verifiable(program)) return this.status(uri);
        await Promise.all([...program.checks.values()].map(c => {
            this.scheduler.cancel(this.tracker.stopJob(c));
            return this.runCheck(program, c, c.uri === uri ? 0 : 1, this.settings.timeLimitMs, 'store', true);
        }));
        return this.status(uri);
    }

    /** The program's model is the current text's: no front-end error, no document being rebuilt, no edit since it was planned. */
    private verifiable(program: TrackedProgram): boolean {
        if (program.frontEndErrors || program.uris.some(u => this.scheduler.queued.has(u))) return false;
        return program.uris.every(u => (this.documentOf(u)?.state ?? DocumentState.Changed) >= DocumentState.Validated);
    }

    /** The methods of a document that have no abstraction (checked where they are inlined). */
    methodsWithoutAbstraction(uri: string): Array<{ id: string; nameRange: { startLine: number; startChar: number; endLine: number; endChar: number } }> {
        const model = this.tracker.programOf(uri)?.model;
        if (!model) return [];
        return [...model.procedures, ...model.classes.flatMap(c => c.methods)].filter(m => !m.abstraction && m.nameRange.file === uri);
    }

    /**
     * A diagnostic's environment step as a Markdown document (the command and
     * `calvin/environmentStep` answer with it; the VS Code extension opens it,
     * the hover at the diagnostic shows it). No message is sent: a prompt would
     * block an editor such as Neovim.
     */
    environmentStep(uri: string, diagnostic: unknown): { markdown: string } {
        const d = diagnostic as Diagnostic | undefined;
        if (!d || typeof d !== 'object' || !d.range) return { markdown: 'No diagnostic given.' };
        // the diagnostic as the server shows it now (its data may have been dropped by the client)
        const shown = this.verificationDiagnostics(uri).find(x => x.message === d.message && String(x.code) === String(d.code)) ?? d;
        return { markdown: environmentStepMarkdown(shown, this.contextOf(uri).ctx, uri) };
    }

    /** Cancel the queued and running checks (of one document's program, or all). */
    cancelChecks(uri?: string): number {
        let n = 0;
        const programs = uri ? [this.tracker.programOf(uri)].filter((p): p is TrackedProgram => p !== undefined) : this.tracker.allPrograms();
        for (const program of programs) {
            for (const c of program.checks.values()) {
                if (!c.job) continue;
                this.scheduler.cancel(this.tracker.stopJob(c));
                c.state = 'stale';
                n++;
            }
            this.publishProgram(program);
        }
        return n;
    }

    /** Plan and run the programs of these documents after a short quiet period. */
    schedule(uris: string[]): void {
        this.scheduler.schedule(uris);
    }

    // ------------------------------------------------------------ edits

    /**
     * verifyOn = save: whether a save finds the document's program planned on
     * this very text, with no check stale (not run since it changed) and no
     * plan on the way. (Such a save would only plan the same checks again.)
     */
    private savedUnchanged(uri: string, text: string): boolean {
        if (this.plannedTexts.get(uri) !== text) return false;
        if (this.scheduler.waiting || this.scheduler.queued.has(uri) || this.scheduler.planning.has(uri)) return false;
        const program = this.tracker.programOf(uri);
        if (!program || program.frontEndErrors) return false;
        // (nor may another file of the program have changed since: its edit may not have reached the planner yet)
        if (program.uris.some(u => this.scheduler.queued.has(u) || this.scheduler.planning.has(u)
            || (this.texts.has(u) && this.texts.get(u) !== this.plannedTexts.get(u)))) return false;
        return [...program.checks.values()].every(c => c.state !== 'stale');
    }

    private textChanged(uri: string, text: string, version: number): void {
        const before = this.texts.get(uri);
        this.texts.set(uri, text);
        this.versions.set(uri, version);
        if (before === undefined) return;
        const e = diff(before, text);
        if (!e) return;
        this.scheduler.edited();
        this.lastEdit.set(uri, e);
        this.tracker.edited(uri, e);
    }

    /** The document of a URI (a map lookup: this is on the path of every publication). */
    private documentOf(uri: string): LangiumDocument | undefined {
        const docs = this.shared.workspace.LangiumDocuments;
        const u = URI.parse(uri);
        return docs.hasDocument(u) ? docs.getDocument(u) : undefined;
    }

    private opened(uri: string): void {
        const program = this.tracker.programOf(uri);
        if (!program) return;
        for (const c of program.checks.values()) {
            if (c.uri === uri && c.job) this.scheduler.reprioritize(c.job.id, this.priorityOf(c, program));
        }
    }

    private isOpen(uri: string): boolean {
        return this.shared.workspace.TextDocuments.get(uri) !== undefined;
    }

    /** The language's services (the type system), from Langium's registry. */
    private languageServices(): CalvinServices {
        return this.shared.ServiceRegistry.all[0] as unknown as CalvinServices;
    }

    // ------------------------------------------------------------ planning

    private async plan(uris: string[]): Promise<void> {
        debugTrace?.(`planning ${uris.length} document(s)`);
        const all = [...this.shared.workspace.LangiumDocuments.all];
        const done = new Set<string>();
        // open documents first
        const order = [...uris].sort((a, b) => Number(this.isOpen(b)) - Number(this.isOpen(a)));
        for (const uri of order) {
            if (done.has(uri)) continue;
            const doc = this.documentOf(uri);
            if (!doc) continue;
            const group = programOf(doc, all);
            group.forEach(d => done.add(d.uri.toString()));
            group.forEach(d => this.scheduler.planning.delete(d.uri.toString()));
            // a document being rebuilt is planned when its rebuild is validated (which schedules it again)
            if (group.some(d => d.state < DocumentState.Validated)) continue;
            this.planGroup(group);
            debugTrace?.(`planned ${uri}`);
            // yield between programs: the front end answers keystrokes meanwhile
            await new Promise(resolve => setImmediate(resolve));
        }
    }

    /** Plan a program's checks; `again`: planned again after the checker refuted inferred annotations (it runs as the first plan did). */
    private planGroup(group: LangiumDocument[], again?: { run: boolean }): void {
        const { program, cancel } = this.tracker.enter(group.map(d => d.uri.toString()));
        for (const d of group) this.plannedTexts.set(d.uri.toString(), d.textDocument.getText());
        this.scheduler.cancel(cancel);
        this.scheduler.cancel(this.tracker.staleWitnessJobs(program));
        const uris = program.uris;
        const run = again?.run ?? (this.settings.verifyOn === 'change' || uris.some(u => this.saved.has(u)));
        if (this.settings.verifyOn === 'save') uris.forEach(u => this.saved.delete(u));
        program.frontEndErrors = group.some(d => (d.diagnostics ?? []).some(x => (x.severity ?? 1) === 1));
        if (program.frontEndErrors) {
            // not verified until the front end is happy: the checks are stale, their diagnostics hidden (as in the CLI)
            this.scheduler.cancel(this.tracker.halt(program, 'stale', 'keep'));
            this.publishProgram(program);
            return;
        }
        const lines = group.reduce((n, d) => n + d.textDocument.lineCount, 0);
        if (lines > MAX_INTERACTIVE_LINES) {
            // too large to verify as you type: front-end diagnostics only, and a warning that says so
            this.scheduler.cancel(this.tracker.halt(program, 'stale', 'hide'));
            program.infos = uris.map(uri => ({ uri, diagnostic: warningAtStart(`Not verified: this program has ${lines} lines, more than the ${MAX_INTERACTIVE_LINES} Calvin verifies as you type; run 'calvin check' on it.`) }));
            this.publishProgram(program);
            return;
        }
        let plans: CheckPlan[];
        let model: ProgramModel;
        try {
            model = toProgramModel(group, this.languageServices().types.TypeSystem);
            // what the checker refuted of the inference holds until the program's text changes
            if (program.refutationsAt !== program.edits) { program.refutations = new Refutations(); program.refutationsAt = program.edits; }
            const inference = this.withInference(model, program.refutations, program);
            program.inference = this.settings.infer ? inference : undefined;
            model = inference.program;
            const ctx = programContext(model);
            plans = planChecks(ctx, { timeLimitMs: this.settings.timeLimitMs, ...(this.settings.resourceLimit > 0 ? { resourceLimit: this.settings.resourceLimit } : {}) });
            // the initialization check's place (its code lens, calvin/checkStatus, its document): its first
            // invariant, or for an inferred one the declaration `calvin infer` writes it above (never the
            // assertion it was inferred from)
            plans = plans.map(p => p.kind === 'init' ? { ...p, range: initCheckRange(ctx, p.range, inference.annotations) } : p);
            program.infos = uncheckedDiagnostics(ctx).map(d => ({ uri: d.range.file, diagnostic: toLsp(d) }));
        } catch (e) {
            // an internal error: said where the user looks, and nothing shown as verified
            this.connection.console.error(`Calvin: could not plan the checks of ${uris.join(', ')}: ${(e as Error)?.stack ?? e}`);
            this.scheduler.cancel(this.tracker.halt(program, 'error', 'hide'));
            program.infos = [{ uri: uris[0], diagnostic: warningAtStart(`Calvin could not verify this program: internal error: ${(e as Error)?.message ?? e} (details in the server's log)`) }];
            this.publishProgram(program);
            return;
        }
        const decisions = this.tracker.applyPlan(program, model, plans, plan => {
            const stored = this.cache.get(plan.fingerprint);
            return stored && storedResultFits(stored, plan) ? decodeResult(stored, plan) : undefined;
        }, run ? 'run' : 'plan-only');
        this.scheduler.cancel(decisions.cancel);
        // (the states that changed go out with the program's publication below, after its diagnostics)
        // (a workspace check whose file was just opened or edited moves up the queue)
        for (const c of decisions.keep) this.scheduler.reprioritize(c.job!.id, this.priorityOf(c, program));
        // results from the cache may refute inferred annotations: then the program is planned again
        if (this.refuted(program, [...program.checks.values()].filter(c => c.current && c.result).map(c => c.result!), run)) return;
        // cached results with only refutations, none of them new (refutedOnly): those checks run in
        // full (are stale until they can: verifyOn = save)
        const refutedOnly = [...program.checks.values()].filter(c => c.current && c.result?.refutedOnly);
        if (!run) for (const c of refutedOnly.splice(0)) { c.current = false; c.state = 'stale'; }
        // the initialization check first (one small query): an inferred invariant it refutes plans the
        // program again before the other checks spend their time on it (issue 15)
        const order = [...decisions.run].sort((a, b) => Number(b.plan.kind === 'init') - Number(a.plan.kind === 'init'));
        for (const c of order) void this.runCheck(program, c, this.priorityOf(c, program));
        for (const c of refutedOnly) void this.runCheck(program, c, this.priorityOf(c, program), undefined, undefined, true);
        this.publishProgram(program);
        if (run) for (const c of program.checks.values()) if (c.current && c.result?.status === 'failed') this.searchWitnesses(program, c);
    }

    /** The inference of a program (calvin.infer), or the program as written. */
    private withInference(model: ProgramModel, refutations: Refutations | undefined, program: TrackedProgram | undefined): Inference {
        const none: Inference = { program: model, guards: new Map(), annotations: [], unprotected: new Map(), rounds: 0 };
        if (!this.settings.infer) return none;
        try {
            return inferAnnotations(model, refutations?.options);
        } catch (e) {
            // the inference is a guess: without it, the program is checked as written
            this.connection.console.error(`Calvin: the inference failed for ${program?.uris.join(', ') ?? 'a program'}: ${(e as Error)?.stack ?? e}`);
            return none;
        }
    }

    /**
     * Results that refute inferred annotations (issue 13, "the checker
     * disposes"): the inference drops what was refuted and the program is
     * planned again (only the checks whose fingerprint changes run). Whether
     * it was planned again.
     */
    private refuted(program: TrackedProgram, results: CheckResult[], run = true): boolean {
        const refs = results.flatMap(refutationsOf);
        if (refs.length === 0 || !program.refutations.add(refs, false)) return false;
        const docs = program.uris.map(u => this.documentOf(u));
        if (docs.some(d => !d || d.state < DocumentState.Validated)) return false; // planned anyway once rebuilt
        // (before the pool starts its next check, which may be one this plan no longer wants)
        queueMicrotask(() => {
            if (this.tracker.programOf(program.uris[0]) !== program) return;
            this.planGroup(docs as LangiumDocument[], { run });
        });
        return true;
    }

    /**
     * 0: the check covers the last edit; 1: an open file's check; 2: the rest of the workspace.
     * With inferred annotations, a check that writes no shared state comes half a step later:
     * it cannot refute them, and a check that does may plan its program again (issue 15).
     */
    private priorityOf(check: TrackedCheck, program: TrackedProgram): number {
        const later = check.plan.kind !== 'init' && !check.plan.writes && (program.inference?.annotations.length ?? 0) > 0 ? 0.5 : 0;
        return this.basePriorityOf(check, program) + later;
    }

    private basePriorityOf(check: TrackedCheck, program: TrackedProgram): number {
        const e = this.lastEdit.get(check.uri);
        if (e && planContains(check.plan, e.start)) return 0;
        // a method without abstraction being edited: the checks that inline it
        for (const [uri, edit] of this.lastEdit) {
            if (!program.uris.includes(uri) || !program.model) continue;
            const m = [...program.model.procedures, ...program.model.classes.flatMap(c => c.methods)]
                .find(x => !x.abstraction && x.range.file === uri && within(x.range, edit.start));
            if (m && check.plan.inlines.includes(m.id)) return 0;
        }
        return this.isOpen(check.uri) ? 1 : 2;
    }

    /**
     * Run a check; with a time limit of its own (a manual re-run with more time) its result is not cached unless `cache: 'store'`.
     * With inferred annotations it ends at the ones it refutes (`untilRefuted`: the program is planned
     * again without them), unless `full` (what it refutes was refuted before: it runs in full).
     */
    private async runCheck(program: TrackedProgram, check: TrackedCheck, priority: number, timeLimitMs?: number, cache: 'store' | 'skip' = timeLimitMs === undefined ? 'store' : 'skip', full = false): Promise<void> {
        if (!program.model) return;
        const limit = timeLimitMs ?? this.settings.timeLimitMs;
        const plan = check.plan;
        check.state = 'queued';
        check.cached = false;
        const untilRefuted = !full && (program.inference?.annotations.length ?? 0) > 0;
        const { id, done } = this.scheduler.submit({
            version: `${program.version}`, model: program.model, key: plan.key, name: plan.name, kind: plan.kind, range: plan.range,
            options: { timeLimitMs: limit, checkBudgetMs: limit, ...(this.settings.resourceLimit > 0 ? { resourceLimit: this.settings.resourceLimit } : {}), ...houdiniSeed(check), ...(untilRefuted ? { untilRefuted } : {}) }, priority,
            onStart: () => {
                if (check.job?.id !== id) return;
                check.state = 'running';
                this.publisher.statusChanged(check.uri);
            },
        });
        check.job = { id, fingerprint: plan.fingerprint, plan, edits: program.edits };
        this.publisher.progressStart();
        this.publisher.statusChanged(check.uri);
        const outcome = await done;
        this.publisher.progressStep();
        if (check.job?.id !== id) return; // replaced or cancelled: never shown
        const jobPlan = check.job.plan;
        const edits = check.job.edits; // (a plan that kept the job since it was submitted moved this forward)
        check.job = undefined;
        if (outcome.kind !== 'result') {
            check.state = 'stale';
            this.publishProgram(program);
            return;
        }
        const stored = encodeResult(outcome.result, plan);
        if (cache === 'store') this.cache.set(stored);
        if (check.plan.fingerprint !== jobPlan.fingerprint || program.edits !== edits) {
            // The text changed meanwhile: whether the result is still the check's is known once the new
            // text is planned (it then comes from the cache). Until then it is not shown.
            check.state = 'stale';
            this.publishProgram(program);
            return;
        }
        this.tracker.accept(check, decodeResult(stored, jobPlan), 'run');
        if (this.refuted(program, [check.result!])) return;
        // (a result with only refutations, none of them new: the check runs in full)
        if (check.result!.refutedOnly) return this.runCheck(program, check, priority, timeLimitMs, cache, true);
        this.publishProgram(program); // its diagnostics, then the states
        this.searchWitnesses(program, check);
    }

    // ------------------------------------------------------------ witnesses (issue 14)

    /**
     * In the background, after a check's diagnostics are shown: for each of
     * its errors, a concrete interleaving of the real program that reaches it
     * (on the check workers, after every check), shown with the diagnostic
     * once found. A witness holds for the program's text it was searched
     * for; an edit starts over.
     */
    private searchWitnesses(program: TrackedProgram, check: TrackedCheck): void {
        if (!this.settings.witness || !program.model || !check.result || !check.current) return;
        if (check.witnessEdits !== program.edits) {
            this.scheduler.cancel(check.witnessJobs.splice(0));
            check.witnesses.clear();
            check.witnessEdits = program.edits;
        }
        const sources: Record<string, string> = {};
        for (const u of program.uris) { const d = this.documentOf(u); if (d) sources[u] = d.textDocument.getText(); }
        const edits = program.edits;
        const model = program.model;
        let added = false;
        for (const d of check.result.diagnostics) {
            if (d.severity !== 'error' || d.inferred || d.code === 'unknown') continue;
            const key = findingKey(d);
            if (check.witnesses.has(key)) continue;
            check.witnesses.set(key, 'pending');
            added = true;
            const limit = this.settings.timeLimitMs;
            const { id, done } = this.scheduler.submit({
                version: `${program.version}`, model, key: check.plan.key, name: check.plan.name, kind: check.plan.kind, range: check.plan.range,
                options: { timeLimitMs: limit, checkBudgetMs: 4 * limit }, priority: 3, background: true, witness: { diagnostic: d, sources },
            });
            check.witnessJobs.push(id);
            void done.then(outcome => {
                check.witnessJobs = check.witnessJobs.filter(j => j !== id);
                if (this.tracker.programOf(check.uri) !== program || program.edits !== edits || check.witnesses.get(key) !== 'pending') return;
                if (outcome.kind === 'witness') check.witnesses.set(key, outcome.witness);
                else check.witnesses.delete(key);
                if (check.result && check.current) check.shown = shownOf(check.result, check.witnesses);
                this.publishProgram(program);
            });
        }
        if (added) {
            if (check.result) check.shown = shownOf(check.result, check.witnesses);
            this.publisher.statusChanged(check.uri);
        }
    }

    /** The witness of a diagnostic shown in a document, as Markdown with links to its steps (the "Show interleaving" command). */
    witnessMarkdown(uri: string, diagnostic: unknown): { markdown: string; steps: Array<{ uri: string; line: number; text: string }> } | undefined {
        const w = (diagnostic as { data?: { witness?: WitnessResult } } | undefined)?.data?.witness;
        const message = (diagnostic as { message?: string } | undefined)?.message ?? '';
        if (!w) return undefined;
        return witnessDocument(w, message, uri);
    }

    /** `calvin.maxWorkers`, or the cores available (issue 15). */
    private workerCount(): number {
        const cores = os.availableParallelism?.() ?? os.cpus().length;
        return this.settings.maxWorkers > 0 ? this.settings.maxWorkers : Math.max(1, cores);
    }

    // ------------------------------------------------------------ the solver (issue 15)

    /** What runs the checks, as the log and `calvin/checkStatus` say it. */
    private solverDescription: string | undefined;

    /** The check workers, on the solver `calvin.solver` / `calvin.z3Path` choose (said once in the log). */
    private makePool(): CheckPool {
        let kind: 'z3-wasm' | 'z3-native' = 'z3-wasm', z3Path: string | undefined, z3Version: string | undefined;
        try {
            const r = resolveSolver(this.settings.solver, this.settings.z3Path || undefined);
            kind = r.kind;
            z3Path = r.z3Path;
            z3Version = r.version;
            this.solverDescription = r.description;
        } catch (e) {
            // calvin.solver = native without a usable z3: said in the log, and checks run on WebAssembly
            this.solverDescription = `Z3 in WebAssembly (${(e as Error).message})`;
        }
        const workers = this.workerCount();
        this.connection.console.info(`Calvin: solver: ${this.solverDescription}; ${workers} check worker${workers === 1 ? '' : 's'}`);
        return new CheckPool(defaultCheckWorkerScript(), workers, { kind, z3Path, z3Version });
    }

    // ------------------------------------------------------------ publishing

    /**
     * The verification part of a document's diagnostics: the checks' findings.
     * (Progress is never a diagnostic: `calvin/checkStatus` says `pending`, with
     * the work-done progress and the code lenses.)
     */
    private verificationDiagnostics(uri: string): Diagnostic[] {
        if (!this.documentOf(uri)) return []; // (a deleted file)
        // hidden while the front end reports errors in the program, also before it is planned again
        // (the front end's publication of a text with a new error did show the last results with it)
        const program = this.tracker.programOf(uri);
        if (program?.uris.some(u => this.frontEndErrorsIn(u))) return [];
        return this.tracker.shownIn(uri, this.settings.verifyOn !== 'never' ? 'with' : 'without');
    }

    /** Whether the front end reports an error in the document's text as last validated. */
    private frontEndErrorsIn(uri: string): boolean {
        const doc = this.documentOf(uri);
        return doc !== undefined && doc.state >= DocumentState.Validated && (doc.diagnostics ?? []).some(x => (x.severity ?? 1) === 1);
    }

    /** The front end's diagnostics of a document, unless a newer text is being rebuilt (its rebuild publishes). */
    private currentFrontEnd(uri: string): Diagnostic[] | undefined {
        const doc = this.documentOf(uri);
        if (!doc || doc.state < DocumentState.Validated) return undefined;
        const text = this.texts.get(uri);
        const built = parsedText(doc.parseResult.value);
        if (text !== undefined && built !== undefined && built !== text) return undefined;
        return doc.diagnostics ?? [];
    }

    /**
     * The editor's version of the text a document's front end was built from:
     * undefined for a file not open in the editor, 'stale' when the editor's
     * text has changed since (its rebuild will publish).
     */
    private builtVersion(uri: string): number | 'stale' | undefined {
        const text = this.texts.get(uri);
        const version = this.versions.get(uri);
        if (text === undefined || version === undefined) return undefined;
        const doc = this.documentOf(uri);
        const built = doc ? parsedText(doc.parseResult.value) : undefined;
        if (built !== undefined && built !== text) return 'stale';
        return version;
    }

    private publishProgram(program: TrackedProgram): void {
        for (const uri of program.uris) this.publisher.republish(uri);
    }
}

/**
 * Where the initialization check is shown: over its first invariant when it
 * is written; an inferred invariant has the range of the code it comes from
 * (an assertion in a thread's body), so the check goes over the declaration
 * above which `calvin infer` writes that invariant (or, failing that, the
 * first inferred invariant).
 */
function initCheckRange(ctx: ProgramContext, range: Range, annotations: InferredAnnotation[]): Range {
    const first = ctx.invariants[0]?.clause;
    if (!first?.inferred) return range;
    const invariants = annotations.filter(a => a.kind === 'invariant');
    return (invariants.find(a => a.text === first.text) ?? invariants[0])?.before ?? range;
}

function warningAtStart(message: string): Diagnostic {
    return { range: FILE_START, severity: DiagnosticSeverity.Warning, source: 'calvin', code: 'unknown', message };
}

/**
 * An edited check's Houdini starts from the loop invariants its last verified
 * run kept (issue 15): usually still inductive, so one round instead of one per
 * refuted candidate; the verdict does not depend on it (runVC).
 */
function houdiniSeed(check: TrackedCheck): { houdiniSeed?: string[] } {
    const last = check.result;
    return last?.status === 'verified' && Array.isArray(last.inferredLoopInvariants) ? { houdiniSeed: [...last.inferredLoopInvariants] } : {};
}

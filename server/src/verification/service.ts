// Verification in the language server (issue 4): incremental, per check.
//
// After the front end has validated a program's files, its checks are planned
// (packages/verifier/src/incremental/plan.ts: one fingerprint per check, no
// solver). A check whose fingerprint is in the cache (memory and
// `.calvin-cache/`) is done at once; the others are queued on the check
// workers (off the main thread), the check being edited first, then the open
// files, then the workspace. A newer edit cancels the checks whose fingerprint
// it changed; a result that is no longer wanted is never shown.
//
// What the user sees: each check's state (`calvin/checkStatus`, code lenses),
// its diagnostics (kept on their lines while the text around them changes,
// until the check runs again), and, while anything of a file is being checked,
// an information diagnostic "Calvin is verifying this file…".
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DocumentState, URI, type LangiumDocument } from 'langium';
import type { LangiumSharedServices } from 'langium/lsp';
import {
    DiagnosticSeverity, type Connection, type Diagnostic, type InitializeParams, type PublishDiagnosticsParams, type WorkDoneProgressServerReporter,
} from 'vscode-languageserver';
import { programOf, toProgramModel, type CalvinServices } from '@calvin/language';
import {
    CheckPool, type ProgramContext, decodeResult, defaultCheckWorkerScript, encodeResult, planChecks, programContext, ResultCache, storedResultFits, userCacheKey,
    type CheckPlan, type ProgramModel, type UnitResult, type VDiagnostic,
} from '@calvin/verifier';
import { uncheckedDiagnostics } from '@calvin/verifier';
import { diff, moveRange, type TextEdit } from './positions.js';
import { clampTimeLimit, DEFAULT_SETTINGS, validateSettings, type VerificationSettings } from './settings.js';

export type { VerifyOn, VerificationSettings } from './settings.js';

/** Programs larger than this are not verified as you type (front end only, with a warning). */
export const MAX_INTERACTIVE_LINES = 20_000;
export type CheckState = 'stale' | 'queued' | 'running' | 'verified' | 'failed' | 'unknown' | 'error';

/** One check as the editor sees it (`calvin/checkStatus`). */
export interface CheckStatus {
    name: string;
    key: string;
    kind: 'abstraction' | 'thread' | 'init';
    range: { start: { line: number; character: number }; end: { line: number; character: number } };
    state: CheckState;
    cached: boolean;
    timeMs?: number;
}

export interface CheckStatusParams {
    uri: string;
    checks: CheckStatus[];
}

/** The state of one check of a program. */
export interface TrackedCheck {
    plan: CheckPlan;
    /** The document the check belongs to (its thread or method). */
    uri: string;
    state: CheckState;
    cached: boolean;
    /** The last result (at the current positions when `current`). */
    result?: UnitResult;
    /** The result belongs to the current fingerprint. */
    current: boolean;
    /** Its diagnostics as shown (moved with edits until the check runs again). */
    shown: Array<{ uri: string; diagnostic: Diagnostic }>;
    job?: { id: number; fingerprint: string; plan: CheckPlan };
}

interface TrackedProgram {
    uris: string[];
    version: number;
    model?: ProgramModel;
    checks: Map<string, TrackedCheck>;
    /** `unchecked` infos. */
    infos: Array<{ uri: string; diagnostic: Diagnostic }>;
    /** The front end reports errors: nothing is verified, no verification result is shown (as in the CLI). */
    frontEndErrors: boolean;
    /** Text changes to the program's documents so far: a result computed before the last one waits for the next plan. */
    edits: number;
}

/**
 * Quiet period after the last edit before the checks are planned: short enough
 * that a pause in typing shows the result well within a second, long enough
 * that not every keystroke starts (and then cancels) solver work.
 */
const DEBOUNCE_MS = 200;
const SEVERITY = { error: DiagnosticSeverity.Error, warning: DiagnosticSeverity.Warning, info: DiagnosticSeverity.Information } as const;

export class VerificationService {
    settings: VerificationSettings = { ...DEFAULT_SETTINGS };
    private readonly programs = new Map<string, TrackedProgram>();
    /** The program (id) each document belongs to. */
    private readonly programOfUri = new Map<string, string>();
    /** Last text seen per document (to move diagnostics with edits) and where the last edit was. */
    private readonly texts = new Map<string, string>();
    private readonly lastEdit = new Map<string, TextEdit>();
    private pool: CheckPool | undefined;
    private cache: ResultCache = new ResultCache();
    private workspaceRoot: string | undefined;
    private readonly queued = new Set<string>();
    /** verifyOn = save: the documents saved since their program was last planned (the others are planned, not run). */
    private readonly saved = new Set<string>();
    private timer: NodeJS.Timeout | undefined;
    private running: Promise<void> = Promise.resolve();
    private readonly publishRaw: (p: PublishDiagnosticsParams) => void;
    /** The verification diagnostics last published per document (a publication that would repeat them is not sent). */
    private readonly sentExtra = new Map<string, string>();
    private progress: WorkDoneProgressServerReporter | undefined;
    private progressTotal = 0;
    private progressCreating = false;
    private workDoneProgress = false;
    private codeLensRefresh = false;
    private lensRefresh: NodeJS.Timeout | undefined;
    private versionCounter = 0;
    /** The program context last built for hover and code actions, per program (rebuilt when a document is parsed again). */
    private readonly contexts = new Map<string, { roots: unknown[]; ctx?: ProgramContext; reason?: string }>();
    /** Listeners of state changes (code lens refresh, tests). */
    readonly onChange: Array<(uri: string) => void> = [];

    constructor(private readonly shared: LangiumSharedServices, private readonly Calvin: CalvinServices, private readonly connection: Connection) {
        // Every publication of a document's diagnostics carries its verification diagnostics too.
        const send = connection.sendDiagnostics.bind(connection);
        this.publishRaw = p => void send(p);
        connection.sendDiagnostics = async (p: PublishDiagnosticsParams) => {
            const extra = this.extra(p.uri);
            this.sentExtra.set(p.uri, JSON.stringify(extra));
            return send({ ...p, diagnostics: [...p.diagnostics, ...extra] });
        };
        shared.lsp.LanguageServer.onInitialize((params: InitializeParams) => {
            this.configure(params.initializationOptions);
            this.workDoneProgress = params.capabilities.window?.workDoneProgress === true;
            this.codeLensRefresh = params.capabilities.workspace?.codeLens?.refreshSupport === true;
            const folder = params.workspaceFolders?.[0]?.uri ?? params.rootUri ?? undefined;
            if (folder?.startsWith('file:')) this.workspaceRoot = fileURLToPath(folder);
            this.resetCache();
        });
        shared.workspace.TextDocuments.onDidChangeContent(e => this.textChanged(e.document.uri, e.document.getText()));
        shared.workspace.TextDocuments.onDidClose(e => { this.texts.delete(e.document.uri); });
        // Registered before Langium's own handler: the front end's publication already says "verifying".
        shared.workspace.DocumentBuilder.onDocumentPhase(DocumentState.Validated, doc => {
            if (this.settings.verifyOn === 'change') this.markPending(doc.uri.toString());
        });
        // (with verifyOn = save or never, planning shows which checks an edit made stale, and the
        // commands can run them; only a save, with save, runs them by itself)
        shared.workspace.DocumentBuilder.onBuildPhase(DocumentState.Validated, docs => {
            this.schedule(docs.map(d => d.uri.toString()));
        });
        // A deleted file: its program goes, and its other files are planned again (as a program of their own).
        shared.workspace.DocumentBuilder.onUpdate((_changed, deleted) => {
            const gone = new Set(deleted.map(d => d.toString()));
            const others = new Set<string>();
            for (const u of gone) {
                const id = this.programOfUri.get(u);
                if (id) {
                    this.programs.get(id)?.uris.forEach(x => others.add(x));
                    this.dropProgram(id);
                }
                this.texts.delete(u);
                this.lastEdit.delete(u);
                this.sentExtra.delete(u);
                this.queued.delete(u);
            }
            const rest = [...others].filter(u => !gone.has(u));
            if (rest.length > 0) this.schedule(rest);
        });
        shared.workspace.TextDocuments.onDidSave(e => {
            if (this.settings.verifyOn !== 'save') return;
            this.saved.add(e.document.uri);
            this.schedule([e.document.uri]);
        });
        // Settings changed in the editor (workspace/didChangeConfiguration, section `calvin`).
        shared.workspace.ConfigurationProvider.onConfigurationSectionUpdate(update => {
            if (update.section !== 'calvin') return;
            const before = { ...this.settings };
            this.configure(update.configuration);
            if (JSON.stringify(this.settings) === JSON.stringify(before)) return;
            if (this.pool && this.settings.maxWorkers !== before.maxWorkers) this.pool.resize(this.workerCount());
            if (this.settings.diskCache !== before.diskCache) this.resetCache();
            // the time limit is part of every fingerprint: plan again
            if (this.settings.verifyOn === 'change') this.schedule([...this.programOfUri.keys()]);
        });
        connection.onShutdown(() => this.pool?.dispose());
        connection.onRequest('calvin/verifyCheck', async (p: { uri: string; name?: string; key?: string; timeLimitMs?: number }) =>
            this.verifyCheck(p.uri, p.key ?? p.name ?? '', typeof p.timeLimitMs === 'number' && Number.isFinite(p.timeLimitMs) ? clampTimeLimit(p.timeLimitMs) : undefined));
        connection.onRequest('calvin/cancelChecks', (p: { uri?: string } | undefined) => ({ cancelled: this.cancelChecks(p?.uri) }));
        connection.onRequest('calvin/checkStatus', (p: { uri: string }) => this.status(p.uri));
    }

    /** Settings problems already reported (each is said once). */
    private readonly settingsWarnings = new Set<string>();

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
            warn: m => this.connection?.console.warn(`Calvin: ${m}`),
        });
    }

    // ------------------------------------------------------------ what the editor asks

    /** The checks of a document (the ones whose thread or method is in it). */
    checksOf(uri: string): TrackedCheck[] {
        const p = this.programOfUri.get(uri);
        const program = p ? this.programs.get(p) : undefined;
        return program ? [...program.checks.values()].filter(c => c.uri === uri) : [];
    }

    /** Every check of the program a document belongs to. */
    programChecksOf(uri: string): TrackedCheck[] {
        const p = this.programOfUri.get(uri);
        return p ? [...(this.programs.get(p)?.checks.values() ?? [])] : [];
    }

    status(uri: string): CheckStatusParams {
        return {
            uri, checks: this.checksOf(uri).map(c => ({
                name: c.plan.name, key: c.plan.key, kind: c.plan.kind, range: lspRange(c.plan.range),
                state: c.state, cached: c.cached, timeMs: c.result?.timeMs,
            })),
        };
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
                entry = { roots, ctx: programContext(toProgramModel(group, this.Calvin.types.TypeSystem)) };
            } catch (e) {
                entry = { roots, reason: `internal error: ${(e as Error)?.message ?? e}` };
            }
        }
        this.contexts.set(id, entry);
        // (the contexts of groupings of documents that no longer exist go)
        for (const k of this.contexts.keys()) if (k !== id && !k.split('\n').every(u => this.documentOf(u))) this.contexts.delete(k);
        return entry;
    }

    /** The verification diagnostics shown in a document at a position. */
    diagnosticsAt(uri: string, position: { line: number; character: number }): Diagnostic[] {
        return this.extra(uri).filter(d => d.code !== 'verifying' && lspContains(d.range, position));
    }

    /** Run one check now, bypassing the cache. */
    async verifyCheck(uri: string, keyOrName: string, timeLimitMs?: number): Promise<CheckStatus | undefined> {
        const check = this.programChecksOf(uri).find(c => c.plan.key === keyOrName || c.plan.name === keyOrName);
        const p = this.programOfUri.get(uri);
        const program = p ? this.programs.get(p) : undefined;
        if (!check || !program?.model || !this.verifiable(program)) return undefined;
        this.stopJob(check);
        await this.runCheck(program, check, 0, timeLimitMs);
        return this.status(check.uri).checks.find(c => c.key === check.plan.key);
    }

    /** Run every check of a document's program again, bypassing the cache. */
    async verifyFile(uri: string): Promise<CheckStatusParams> {
        const p = this.programOfUri.get(uri);
        const program = p ? this.programs.get(p) : undefined;
        if (!program?.model || !this.verifiable(program)) return this.status(uri);
        await Promise.all([...program.checks.values()].map(c => {
            this.stopJob(c);
            return this.runCheck(program, c, c.uri === uri ? 0 : 1, this.settings.timeLimitMs, true);
        }));
        return this.status(uri);
    }

    /** The program's model is the current text's: no front-end error, no document being rebuilt, no edit since it was planned. */
    private verifiable(program: TrackedProgram): boolean {
        if (program.frontEndErrors || program.uris.some(u => this.queued.has(u))) return false;
        return program.uris.every(u => (this.documentOf(u)?.state ?? DocumentState.Changed) >= DocumentState.Validated);
    }

    /** The methods of a document that have no abstraction (checked where they are inlined). */
    methodsWithoutAbstraction(uri: string): Array<{ id: string; nameRange: { startLine: number; startChar: number; endLine: number; endChar: number } }> {
        const p = this.programOfUri.get(uri);
        const model = p ? this.programs.get(p)?.model : undefined;
        if (!model) return [];
        return [...model.procedures, ...model.classes.flatMap(c => c.methods)].filter(m => !m.abstraction && m.nameRange.file === uri);
    }

    /** A diagnostic's counterexample, as a message (any editor shows it). */
    async showCounterexample(uri: string, diagnostic: unknown): Promise<string> {
        const d = diagnostic as Diagnostic | undefined;
        const text = d ? counterexampleText(d) : 'no counterexample';
        void this.connection.window.showInformationMessage(text);
        void uri;
        return text;
    }

    /** Cancel the queued and running checks (of one document's program, or all). */
    cancelChecks(uri?: string): number {
        let n = 0;
        for (const [id, program] of this.programs) {
            if (uri && this.programOfUri.get(uri) !== id) continue;
            for (const c of program.checks.values()) {
                if (!c.job) continue;
                this.stopJob(c);
                c.state = 'stale';
                n++;
            }
            this.publishProgram(program);
        }
        return n;
    }

    // ------------------------------------------------------------ edits

    private textChanged(uri: string, text: string): void {
        const before = this.texts.get(uri);
        this.texts.set(uri, text);
        if (before === undefined) return;
        const e = diff(before, text);
        if (!e) return;
        this.lastEdit.set(uri, e);
        // Diagnostics stay on their lines until their check runs again.
        const p = this.programOfUri.get(uri);
        const program = p ? this.programs.get(p) : undefined;
        if (!program) return;
        program.edits++;
        for (const c of program.checks.values()) {
            for (const s of c.shown) s.diagnostic = moveDiagnostic(s.diagnostic, s.uri, uri, e);
            if (c.plan.range.file === uri) c.plan = { ...c.plan, range: fromLsp(c.plan.range.file, moveRange(lspRange(c.plan.range), e)) };
        }
        for (const s of program.infos) s.diagnostic = moveDiagnostic(s.diagnostic, s.uri, uri, e);
    }

    /** The document of a URI (a map lookup: this is on the path of every publication). */
    private documentOf(uri: string): LangiumDocument | undefined {
        const docs = this.shared.workspace.LangiumDocuments;
        const u = URI.parse(uri);
        return docs.hasDocument(u) ? docs.getDocument(u) : undefined;
    }

    private isOpen(uri: string): boolean {
        return this.shared.workspace.TextDocuments.get(uri) !== undefined;
    }

    /** A newer text: the document shows "verifying" until its program is planned again. */
    private markPending(uri: string): void {
        this.queued.add(uri);
    }

    /** Plan and run the programs of these documents after a short quiet period. */
    schedule(uris: string[]): void {
        for (const uri of uris) this.queued.add(uri);
        if (this.queued.size === 0) return;
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => {
            this.timer = undefined;
            const batch = [...this.queued];
            this.queued.clear();
            this.running = this.running.then(() => this.plan(batch)).catch(e => this.connection.console.error(`Calvin: verification failed: ${(e as Error)?.stack ?? e}`));
        }, DEBOUNCE_MS);
    }

    // ------------------------------------------------------------ planning

    private async plan(uris: string[]): Promise<void> {
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
            // a document being rebuilt is planned when its rebuild is validated (which schedules it again)
            if (group.some(d => d.state < DocumentState.Validated)) continue;
            await this.planGroup(group);
            // yield between programs: the front end answers keystrokes meanwhile
            await new Promise(resolve => setImmediate(resolve));
        }
    }

    private async planGroup(group: LangiumDocument[]): Promise<void> {
        const uris = group.map(d => d.uri.toString()).sort();
        const id = uris.join('\n');
        // a document that moved to another program leaves its old one
        for (const u of uris) {
            const old = this.programOfUri.get(u);
            if (old && old !== id) this.dropProgram(old);
            this.programOfUri.set(u, id);
        }
        let program = this.programs.get(id);
        if (!program) {
            program = { uris, version: 0, checks: new Map(), infos: [], frontEndErrors: false, edits: 0 };
            this.programs.set(id, program);
        }
        program.version = ++this.versionCounter;
        const run = this.settings.verifyOn === 'change' || uris.some(u => this.saved.has(u));
        if (this.settings.verifyOn === 'save') uris.forEach(u => this.saved.delete(u));
        const hasErrors = group.some(d => (d.diagnostics ?? []).some(x => (x.severity ?? 1) === 1));
        program.frontEndErrors = hasErrors;
        if (hasErrors) {
            // not verified until the front end is happy: the checks are stale, their diagnostics hidden (as in the CLI)
            for (const c of program.checks.values()) {
                this.stopJob(c);
                c.state = 'stale';
            }
            this.publishProgram(program);
            return;
        }
        const lines = group.reduce((n, d) => n + d.textDocument.lineCount, 0);
        if (lines > MAX_INTERACTIVE_LINES) {
            // too large to verify as you type: front-end diagnostics only, and a warning that says so
            for (const c of program.checks.values()) { this.stopJob(c); c.state = 'stale'; c.shown = []; }
            program.infos = uris.map(uri => ({
                uri, diagnostic: {
                    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, severity: DiagnosticSeverity.Warning, source: 'calvin', code: 'unknown',
                    message: `Not verified: this program has ${lines} lines, more than the ${MAX_INTERACTIVE_LINES} Calvin verifies as you type; run 'calvin check' on it.`,
                },
            }));
            this.publishProgram(program);
            return;
        }
        let plans: CheckPlan[];
        let model: ProgramModel;
        try {
            model = toProgramModel(group, this.Calvin.types.TypeSystem);
            plans = planChecks(model, { timeLimitMs: this.settings.timeLimitMs });
            program.infos = uncheckedDiagnostics(programContext(model)).map(d => ({ uri: d.range.file, diagnostic: toLsp(d) }));
        } catch (e) {
            // an internal error: said where the user looks, and nothing shown as verified
            this.connection.console.error(`Calvin: could not plan the checks of ${uris.join(', ')}: ${(e as Error)?.stack ?? e}`);
            for (const c of program.checks.values()) {
                this.stopJob(c);
                c.state = 'error';
                c.shown = [];
            }
            program.infos = [{
                uri: uris[0], diagnostic: {
                    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, severity: DiagnosticSeverity.Warning, source: 'calvin', code: 'unknown',
                    message: `Calvin could not verify this program: internal error: ${(e as Error)?.message ?? e} (details in the server's log)`,
                },
            }];
            this.publishProgram(program);
            return;
        }
        program.model = model;
        const previous = program.checks;
        program.checks = new Map();
        for (const plan of plans) {
            const old = previous.get(plan.key);
            previous.delete(plan.key);
            const check: TrackedCheck = old ?? { plan, uri: plan.range.file, state: 'stale', cached: false, current: false, shown: [] };
            const oldPlan = old?.plan; // (check is old: its plan is replaced just below)
            const samePlan = old?.current && old.result && oldPlan!.fingerprint === plan.fingerprint;
            check.plan = plan;
            check.uri = plan.range.file;
            program.checks.set(plan.key, check);
            if (samePlan) {
                // unchanged: its result at the new positions
                check.result = { ...check.result!, ...decodeResult(encodeResult(check.result!, oldPlan!), plan) };
                check.shown = shownOf(check.result);
                if (check.state !== check.result.status) { check.state = check.result.status; this.statusChanged(check.uri); }
                continue;
            }
            const stored = this.cache.get(plan.fingerprint);
            if (stored && storedResultFits(stored, plan)) {
                this.stopJob(check);
                this.accept(check, decodeResult(stored, plan), true);
                continue;
            }
            check.current = false;
            if (!run) {
                // not run before a save; a check still running for the saved text finishes (its result is cached, not shown)
                if (check.state !== 'stale') { check.state = 'stale'; this.statusChanged(check.uri); }
                continue;
            }
            if (check.job && check.job.fingerprint === plan.fingerprint) {
                check.job.plan = plan; // it is still the right one: let it finish
                // (a workspace check whose file was just opened or edited moves up the queue)
                this.pool?.reprioritize(check.job.id, this.priorityOf(check, program));
                continue;
            }
            this.stopJob(check);
            void this.runCheck(program, check, this.priorityOf(check, program));
        }
        // checks that are gone: stop them
        for (const c of previous.values()) if (c.job) this.pool?.cancel(c.job.id);
        this.publishProgram(program);
    }

    /** 0: the check covers the last edit; 1: an open file's check; 2: the rest of the workspace. */
    private priorityOf(check: TrackedCheck, program: TrackedProgram): number {
        const e = this.lastEdit.get(check.uri);
        if (e && contains(check.plan, e.start)) return 0;
        // a method without abstraction being edited: the checks that inline it
        for (const [uri, edit] of this.lastEdit) {
            if (!program.uris.includes(uri) || !program.model) continue;
            const m = [...program.model.procedures, ...program.model.classes.flatMap(c => c.methods)]
                .find(x => !x.abstraction && x.range.file === uri && within(x.range, edit.start));
            if (m && check.plan.inlines.includes(m.id)) return 0;
        }
        return this.isOpen(check.uri) ? 1 : 2;
    }

    private async runCheck(program: TrackedProgram, check: TrackedCheck, priority: number, timeLimitMs?: number, store = timeLimitMs === undefined): Promise<void> {
        if (!program.model) return;
        const pool = this.checkPool();
        const limit = timeLimitMs ?? this.settings.timeLimitMs;
        const plan = check.plan;
        check.state = 'queued';
        check.cached = false;
        const { id, done } = pool.submit({
            version: `${program.version}`, model: program.model, key: plan.key, name: plan.name, kind: plan.kind, range: plan.range,
            options: { timeLimitMs: limit, checkBudgetMs: limit }, priority,
            onStart: () => {
                if (check.job?.id !== id) return;
                check.state = 'running';
                this.statusChanged(check.uri);
            },
        });
        check.job = { id, fingerprint: plan.fingerprint, plan };
        const edits = program.edits;
        this.progressStart();
        this.statusChanged(check.uri);
        const outcome = await done;
        this.progressStep();
        if (check.job?.id !== id) return; // replaced or cancelled: never shown
        const jobPlan = check.job.plan;
        check.job = undefined;
        if (outcome.kind === 'cancelled') {
            check.state = 'stale';
            this.publishProgram(program);
            return;
        }
        const stored = encodeResult(outcome.result, plan);
        if (store) this.cache.set(stored);
        if (check.plan.fingerprint !== plan.fingerprint || program.edits !== edits) {
            // The text changed meanwhile: whether the result is still the check's is known once the new
            // text is planned (it then comes from the cache). Until then it is not shown.
            check.state = 'stale';
            this.publishProgram(program);
            return;
        }
        this.accept(check, decodeResult(stored, jobPlan), false);
        this.publishProgram(program);
    }

    private accept(check: TrackedCheck, result: UnitResult, cached: boolean): void {
        check.result = result;
        check.current = true;
        check.cached = cached;
        check.state = result.status;
        check.shown = shownOf(result);
        this.statusChanged(check.uri);
    }

    private dropProgram(id: string): void {
        const p = this.programs.get(id);
        if (!p) return;
        for (const c of p.checks.values()) if (c.job) this.pool?.cancel(c.job.id);
        this.programs.delete(id);
        for (const u of p.uris) if (this.programOfUri.get(u) === id) this.programOfUri.delete(u);
    }

    /** Cancel a check's job, if it has one (its result will never be shown). */
    private stopJob(check: TrackedCheck): void {
        if (check.job) this.pool?.cancel(check.job.id);
        check.job = undefined;
    }

    /** `calvin.maxWorkers`, or cores − 1 (at least 1). */
    private workerCount(): number {
        const cores = os.availableParallelism?.() ?? os.cpus().length;
        return this.settings.maxWorkers > 0 ? this.settings.maxWorkers : Math.max(1, cores - 1);
    }

    private checkPool(): CheckPool {
        if (!this.pool) {
            this.pool = new CheckPool(defaultCheckWorkerScript(), this.workerCount());
        }
        return this.pool;
    }

    // ------------------------------------------------------------ publishing

    /** The verification part of a document's diagnostics. */
    private extra(uri: string): Diagnostic[] {
        const p = this.programOfUri.get(uri);
        const program = p ? this.programs.get(p) : undefined;
        const out: Diagnostic[] = [];
        if (!this.documentOf(uri)) return out; // (a deleted file)
        const runs = this.settings.verifyOn === 'change' || this.saved.has(uri);
        const pending = (runs && this.queued.has(uri)) || (program !== undefined && [...program.checks.values()].some(c => c.state === 'queued' || c.state === 'running'))
            || (runs && this.timer !== undefined && !program);
        if (pending && this.settings.verifyOn !== 'never') {
            out.push({
                range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
                severity: DiagnosticSeverity.Information, source: 'calvin', code: 'verifying',
                message: 'Calvin is verifying this file…',
            });
        }
        if (!program || program.frontEndErrors) return out;
        const seen = new Set<string>();
        for (const c of program.checks.values()) {
            for (const s of c.shown) {
                if (s.uri !== uri) continue;
                const k = `${s.diagnostic.range.start.line}:${s.diagnostic.range.start.character}:${s.diagnostic.range.end.line}:${s.diagnostic.range.end.character}:${String(s.diagnostic.code)}`;
                if (seen.has(k)) continue; // the same line reached through several checks
                seen.add(k);
                out.push(s.diagnostic);
            }
        }
        if (this.settings.verifyOn !== 'never') for (const s of program.infos) if (s.uri === uri) out.push(s.diagnostic);
        return out;
    }

    private publishProgram(program: TrackedProgram): void {
        for (const uri of program.uris) this.republish(uri);
    }

    private republish(uri: string): void {
        const doc = this.documentOf(uri);
        if (!doc || doc.state < DocumentState.Validated) return;
        // a newer text not rebuilt yet: its rebuild publishes (diagnostics of the old text would be misplaced in it)
        const text = this.texts.get(uri);
        const root = doc.parseResult.value.$cstNode as { fullText?: string } | undefined;
        if (text !== undefined && root?.fullText !== undefined && root.fullText !== text) return;
        // the status first: a client that sees the diagnostics then knows the states behind them
        this.statusChanged(uri);
        const extra = this.extra(uri);
        const key = JSON.stringify(extra);
        if (this.sentExtra.get(uri) === key) return; // the editor shows these already
        this.sentExtra.set(uri, key);
        this.publishRaw({ uri, diagnostics: [...(doc.diagnostics ?? []), ...extra] });
    }

    private statusChanged(uri: string): void {
        void this.connection.sendNotification('calvin/checkStatus', this.status(uri));
        // one code lens refresh for a burst of changes (a plan changes every check's state at once)
        if (this.codeLensRefresh && !this.lensRefresh) {
            this.lensRefresh = setTimeout(() => {
                this.lensRefresh = undefined;
                void this.connection.sendRequest('workspace/codeLens/refresh').catch(() => undefined);
            }, 50);
        }
        for (const l of this.onChange) l(uri);
    }

    /**
     * One work-done progress for a run of checks: created when the first check
     * is queued (the client answers asynchronously; a single creation is in
     * flight), ended when none is queued or running. Cancelling it in the
     * client cancels the checks.
     */
    private progressStart(): void {
        this.progressTotal++;
        if (!this.workDoneProgress || this.progress || this.progressCreating) return;
        this.progressCreating = true;
        void this.connection.window.createWorkDoneProgress().then(p => {
            this.progressCreating = false;
            if ((this.pool?.active.length ?? 0) === 0) { p.done(); this.progressTotal = 0; return; }
            this.progress = p;
            p.begin('Calvin', 0, 'verifying', true);
            p.token.onCancellationRequested(() => this.cancelChecks());
            this.progressStep();
        }).catch(() => { this.progressCreating = false; });
    }

    private progressStep(): void {
        const active = this.pool?.active.length ?? 0;
        if (!this.progress) { if (active === 0 && !this.progressCreating) this.progressTotal = 0; return; }
        if (active === 0) {
            this.progress.done();
            this.progress = undefined;
            this.progressTotal = 0;
            return;
        }
        const done = this.progressTotal - active;
        this.progress.report(Math.round(100 * done / Math.max(1, this.progressTotal)), `${done}/${this.progressTotal} checks`);
    }
}

/** A diagnostic (shown in `at`) after an edit of the document `edited`: its range and its related locations there move. */
function moveDiagnostic(d: Diagnostic, at: string, edited: string, e: TextEdit): Diagnostic {
    const related = d.relatedInformation?.map(r => r.location.uri === edited ? { ...r, location: { ...r.location, range: moveRange(r.location.range, e) } } : r);
    return { ...d, range: at === edited ? moveRange(d.range, e) : d.range, relatedInformation: related };
}

/** The counterexample of a verification diagnostic: the values in its message, one per line. */
export function counterexampleText(d: Diagnostic): string {
    const message = String(d.message);
    const m = /\[([^\]]*)\]\s*$/.exec(message);
    const head = message.replace(/\s*\[[^\]]*\]\s*$/, '');
    if (!m) return `${head}\n(no counterexample values)`;
    const parts = m[1].split(/;\s*/);
    const values = (parts[0] ?? '').split(/,\s*/).filter(x => x.includes(' = '));
    const notes = parts.slice(values.length > 0 ? 1 : 0).filter(x => !x.includes(' = ') || x.startsWith('another'));
    return [head, ...values.map(v => `  ${v}`), ...notes.map(n => `  ${n}`)].join('\n');
}

function shownOf(result: UnitResult): Array<{ uri: string; diagnostic: Diagnostic }> {
    // `data.check`: the check a diagnostic comes from (code actions re-run it)
    return result.diagnostics.map(d => {
        const lsp = toLsp(d);
        return { uri: d.range.file, diagnostic: { ...lsp, data: { ...(lsp.data as object | undefined), check: result.key } } };
    });
}

export function lspRange(r: { startLine: number; startChar: number; endLine: number; endChar: number }) {
    return { start: { line: r.startLine, character: r.startChar }, end: { line: r.endLine, character: r.endChar } };
}

function fromLsp(file: string, r: { start: { line: number; character: number }; end: { line: number; character: number } }) {
    return { file, startLine: r.start.line, startChar: r.start.character, endLine: r.end.line, endChar: r.end.character };
}

function within(r: { startLine: number; startChar: number; endLine: number; endChar: number }, p: { line: number; character: number }): boolean {
    const after = p.line > r.startLine || (p.line === r.startLine && p.character >= r.startChar);
    const before = p.line < r.endLine || (p.line === r.endLine && p.character <= r.endChar);
    return after && before;
}

function lspContains(r: { start: { line: number; character: number }; end: { line: number; character: number } }, p: { line: number; character: number }): boolean {
    return within({ startLine: r.start.line, startChar: r.start.character, endLine: r.end.line, endChar: r.end.character }, p);
}

/** Whether an edit position is inside the thread or method a check is about. */
function contains(plan: CheckPlan, p: { line: number; character: number }): boolean {
    return plan.extent !== undefined && within(plan.extent, p);
}

export function toLsp(d: VDiagnostic): Diagnostic {
    const range = (r: VDiagnostic['range']) => lspRange(r);
    return {
        range: range(d.range), severity: SEVERITY[d.severity], source: 'calvin', code: d.code, message: d.message,
        ...(d.counterexample ? { data: { counterexample: d.counterexample } } : {}),
        relatedInformation: d.related.length > 0 ? d.related.map(r => ({ location: { uri: r.range.file, range: range(r.range) }, message: r.message })) : undefined,
    };
}

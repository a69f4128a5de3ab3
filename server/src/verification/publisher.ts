// The publisher: what the editor is told. A document's diagnostics are the
// front end's followed by the verifier's; a publication that would repeat what
// the editor shows is not sent. Check states go out as `calvin/checkStatus`
// (before the diagnostics they explain), code lenses are refreshed once per
// burst of changes, and a run of checks is one work-done progress.
import type { Connection, Diagnostic, PublishDiagnosticsParams, WorkDoneProgressServerReporter } from 'vscode-languageserver';
import type { CheckStatusParams } from './tracker.js';

export interface PublisherView {
    /** The verification diagnostics of a document now. */
    verification(uri: string): Diagnostic[];
    /** The front end's diagnostics of a document, when they belong to its current text (undefined: its rebuild will publish). */
    frontEnd(uri: string): Diagnostic[] | undefined;
    /** The editor's version of the text the front end was built from (undefined: not open; 'stale': changed since). */
    version(uri: string): number | 'stale' | undefined;
    status(uri: string): CheckStatusParams;
    /** Checks submitted and not finished (for the progress). */
    active(): number;
    /** The user cancelled the progress: cancel the checks. */
    cancelAll(): void;
}

export class Publisher {
    private readonly sendRaw: (p: PublishDiagnosticsParams) => void;
    /** The verification diagnostics last sent per document. */
    private readonly sent = new Map<string, string>();
    private lensRefresh: ReturnType<typeof setTimeout> | undefined;
    private progress: WorkDoneProgressServerReporter | undefined;
    private progressTotal = 0;
    private progressDone = 0;
    private progressText = '';
    private progressPoll: ReturnType<typeof setTimeout> | undefined;
    private progressCreating = false;
    /** Client capabilities (set at initialize). */
    codeLensRefresh = false;
    workDoneProgress = false;
    /** Listeners of state changes (code lens refresh, tests). */
    readonly onChange: Array<(uri: string) => void> = [];

    constructor(private readonly connection: Connection, private readonly view: PublisherView) {
        // Every publication of a document's diagnostics (Langium's too) carries its verification
        // diagnostics and the version of the text they are about; one about a text the editor has
        // changed since is not sent (the rebuild of the new text publishes).
        const send = connection.sendDiagnostics.bind(connection);
        this.sendRaw = p => void send(p);
        connection.sendDiagnostics = async (p: PublishDiagnosticsParams) => {
            const version = this.view.version(p.uri);
            if (version === 'stale') return;
            const extra = this.view.verification(p.uri);
            this.sent.set(p.uri, JSON.stringify(extra));
            return send({ ...p, diagnostics: [...p.diagnostics, ...extra], ...(version !== undefined ? { version } : {}) });
        };
    }

    /**
     * Publish a document's diagnostics again, if its verification part
     * changed, then its status: a client that sees a final status (nothing
     * pending) already has the diagnostics that go with it.
     */
    republish(uri: string): void {
        const frontEnd = this.view.frontEnd(uri);
        if (!frontEnd) return;
        const extra = this.view.verification(uri);
        const key = JSON.stringify(extra);
        if (this.sent.get(uri) !== key) { // (else the editor shows these already)
            this.sent.set(uri, key);
            const version = this.view.version(uri);
            this.sendRaw({ uri, diagnostics: [...frontEnd, ...extra], ...(typeof version === 'number' ? { version } : {}) });
        }
        this.statusChanged(uri);
    }

    forget(uri: string): void {
        this.sent.delete(uri);
    }

    statusChanged(uri: string): void {
        void this.connection.sendNotification('calvin/checkStatus', this.view.status(uri));
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
    progressStart(): void {
        this.progressTotal++;
        if (!this.workDoneProgress || this.progress || this.progressCreating) return;
        this.progressCreating = true;
        void this.connection.window.createWorkDoneProgress().then(p => {
            this.progressCreating = false;
            if (this.view.active() === 0) { p.done(); this.progressTotal = 0; return; }
            this.progress = p;
            p.begin('Calvin', 0, 'verifying', true);
            p.token.onCancellationRequested(() => this.view.cancelAll());
            this.progressStep();
        }).catch(() => { this.progressCreating = false; });
    }

    progressStep(): void {
        const active = this.view.active();
        if (!this.progress) { if (active === 0 && !this.progressCreating) this.progressTotal = 0; return; }
        if (active === 0) {
            this.progress.done();
            this.progress = undefined;
            this.progressTotal = 0;
            this.progressDone = 0;
            this.progressText = '';
            return;
        }
        // (the pool may count a finished job for a moment, or a witness search no check waits
        // for: the count never goes back, and the progress is looked at again until it ends)
        this.progressDone = Math.min(this.progressTotal, Math.max(this.progressDone, this.progressTotal - active));
        const text = `${this.progressDone}/${this.progressTotal} checks`;
        if (text !== this.progressText) this.progress.report(Math.round(100 * this.progressDone / Math.max(1, this.progressTotal)), text);
        this.progressText = text;
        if (!this.progressPoll) {
            this.progressPoll = setTimeout(() => {
                this.progressPoll = undefined;
                this.progressStep();
            }, 250);
        }
    }
}

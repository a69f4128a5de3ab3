// The check tracker: the state of every program's checks (plans, results,
// what is shown), and the decisions a new plan implies. Pure state: no LSP,
// no solver, no timers (the scheduler runs jobs, the publisher sends).
import type { Diagnostic } from 'vscode-languageserver';
import type { CheckPlan, ProgramModel, CheckResult, Inference, WitnessResult } from '@calvin/verifier';
import { decodeResult, encodeResult, Refutations } from '@calvin/verifier';
import { fromLsp, lspRange, moveDiagnostic, shownOf, type Shown } from './convert.js';
import { moveExtent, moveRange, removes, type TextEdit } from './positions.js';

export type CheckState = 'stale' | 'queued' | 'running' | 'verified' | 'failed' | 'unknown' | 'error';

/** One check as the editor sees it (`calvin/checkStatus`). */
export interface CheckStatus {
    name: string;
    key: string;
    kind: 'abstraction' | 'thread' | 'init';
    range: { start: { line: number; character: number }; end: { line: number; character: number } };
    /** The whole thread or method the check is about (for a verification gutter); none for `init`. */
    extent?: { start: { line: number; character: number }; end: { line: number; character: number } };
    state: CheckState;
    cached: boolean;
    timeMs?: number;
    /** The witness searches of its errors (issue 14): some still running, or all done. None: no error to search. */
    witnesses?: 'pending' | 'ready';
}

export interface CheckStatusParams {
    uri: string;
    checks: CheckStatus[];
    /** The results are not final yet: the document waits to be planned, or a check of its program is queued or running. */
    pending?: boolean;
}

/** The state of one check of a program. */
export interface TrackedCheck {
    plan: CheckPlan;
    /** The document the check's thread or method is in. */
    uri: string;
    state: CheckState;
    /** The result came from the cache (nothing ran). */
    cached: boolean;
    /** The last result (at the current positions when `current`). */
    result?: CheckResult;
    /** The result belongs to the current fingerprint. */
    current: boolean;
    /** Its diagnostics as shown (moved with edits until the check runs again). */
    shown: Shown[];
    /** The job running it, if any (its id in the check pool); `edits`: the program's text changes its result is valid for. */
    job?: { id: number; fingerprint: string; plan: CheckPlan; edits?: number };
    /** Witnesses of its findings by finding key (issue 14), for the program's text at `witnessEdits`; and the jobs searching them. */
    witnesses: Map<string, WitnessResult | 'pending'>;
    witnessJobs: number[];
    witnessEdits?: number;
}

export interface TrackedProgram {
    uris: string[];
    version: number;
    model?: ProgramModel;
    checks: Map<string, TrackedCheck>;
    /** Diagnostics of the program that no check owns (`unchecked` infos, "too large", planning errors). */
    infos: Shown[];
    /** The front end reports errors: nothing is verified, no verification result is shown (as in the CLI). */
    frontEndErrors: boolean;
    /** Text changes to the program's documents so far: a result computed before the last one waits for the next plan. */
    edits: number;
    /** The inferred annotations refuted by checks since the program's text last changed (issue 13). */
    refutations: Refutations;
    /** `edits` when `refutations` started. */
    refutationsAt: number;
    /** The inference of the last plan (none with calvin.infer off). */
    inference?: Inference;
}

/** What a new plan asks for: checks to run, jobs to cancel or keep, documents whose states changed. */
export interface PlanDecisions {
    run: TrackedCheck[];
    /** Jobs that still compute the right result (their check's file may have moved up the queue). */
    keep: TrackedCheck[];
    /** Job ids no longer wanted. */
    cancel: number[];
    changed: Set<string>;
}

export class CheckTracker {
    private readonly programs = new Map<string, TrackedProgram>();
    /** The program (id) each document belongs to. */
    private readonly programOfUri = new Map<string, string>();
    private versionCounter = 0;

    programOf(uri: string): TrackedProgram | undefined {
        const id = this.programOfUri.get(uri);
        return id ? this.programs.get(id) : undefined;
    }

    allPrograms(): TrackedProgram[] {
        return [...this.programs.values()];
    }

    /** The checks of a document (the ones whose thread or method is in it). */
    checksOf(uri: string): TrackedCheck[] {
        const program = this.programOf(uri);
        return program ? [...program.checks.values()].filter(c => c.uri === uri) : [];
    }

    /** Every check of the program a document belongs to. */
    programChecksOf(uri: string): TrackedCheck[] {
        return [...(this.programOf(uri)?.checks.values() ?? [])];
    }

    status(uri: string): CheckStatusParams {
        return {
            uri, checks: this.checksOf(uri).map(c => ({
                name: c.plan.name, key: c.plan.key, kind: c.plan.kind, range: lspRange(c.plan.range),
                ...(c.plan.extent && c.plan.extent.file === uri ? { extent: lspRange(c.plan.extent) } : {}),
                state: c.state, cached: c.cached, timeMs: c.result?.timeMs,
                ...(c.witnesses.size > 0 ? { witnesses: [...c.witnesses.values()].some(w => w === 'pending') ? 'pending' as const : 'ready' as const } : {}),
            })),
        };
    }

    /** The program of these documents (created, or found), after the programs they leave are dropped (their job ids returned). */
    enter(uris: string[]): { program: TrackedProgram; cancel: number[] } {
        const sorted = [...uris].sort();
        const id = sorted.join('\n');
        const cancel: number[] = [];
        // a document that moved to another program leaves its old one
        for (const u of sorted) {
            const old = this.programOfUri.get(u);
            if (old && old !== id) cancel.push(...this.drop(old));
            this.programOfUri.set(u, id);
        }
        let program = this.programs.get(id);
        if (!program) {
            program = { uris: sorted, version: 0, checks: new Map(), infos: [], frontEndErrors: false, edits: 0, refutations: new Refutations(), refutationsAt: 0 };
            this.programs.set(id, program);
        }
        program.version = ++this.versionCounter;
        return { program, cancel };
    }

    /** Forget a program; the job ids of its running checks are returned (to cancel). */
    drop(id: string): number[] {
        const p = this.programs.get(id);
        if (!p) return [];
        this.programs.delete(id);
        for (const u of p.uris) if (this.programOfUri.get(u) === id) this.programOfUri.delete(u);
        return [...p.checks.values()].flatMap(c => [...(c.job ? [c.job.id] : []), ...c.witnessJobs.splice(0)]);
    }

    /**
     * The witness searches for an older text of the program (their results would be
     * dropped): their job ids, to cancel; their findings are no longer pending.
     */
    staleWitnessJobs(program: TrackedProgram): number[] {
        const out: number[] = [];
        for (const c of program.checks.values()) {
            if (c.witnessJobs.length === 0 || c.witnessEdits === program.edits) continue;
            out.push(...c.witnessJobs.splice(0));
            for (const [k, w] of c.witnesses) if (w === 'pending') c.witnesses.delete(k);
        }
        return out;
    }

    /** Forget a deleted document: its program goes; the other documents of that program are returned (to plan again). */
    deleted(uri: string): { others: string[]; cancel: number[] } {
        const id = this.programOfUri.get(uri);
        if (!id) return { others: [], cancel: [] };
        const others = this.programs.get(id)?.uris.filter(u => u !== uri) ?? [];
        return { others, cancel: this.drop(id) };
    }

    /** Diagnostics stay on their lines (and check ranges with their code) until their check runs again. */
    edited(uri: string, e: TextEdit): void {
        const program = this.programOf(uri);
        if (!program) return;
        program.edits++;
        for (const c of program.checks.values()) {
            // (a diagnostic whose code the edit removed or replaced goes: it would sit on other code)
            c.shown = c.shown.filter(s => !(s.uri === uri && removes(s.diagnostic.range, e)));
            for (const s of c.shown) s.diagnostic = moveDiagnostic(s.diagnostic, s.uri, uri, e);
            if (c.plan.range.file === uri) c.plan = { ...c.plan, range: fromLsp(c.plan.range.file, moveRange(lspRange(c.plan.range), e)) };
            if (c.plan.extent?.file === uri) c.plan = { ...c.plan, extent: fromLsp(uri, moveExtent(lspRange(c.plan.extent), e)) };
        }
        for (const s of program.infos) s.diagnostic = moveDiagnostic(s.diagnostic, s.uri, uri, e);
    }

    /** Stop tracking a check's job (its result will never be shown); its id, to cancel. */
    stopJob(check: TrackedCheck): number[] {
        const id = check.job?.id;
        check.job = undefined;
        return id === undefined ? [] : [id];
    }

    /**
     * Nothing of the program is verified (front-end errors, too large, a
     * planning error): its checks stop and take `state`; `shown: 'hide'` also
     * takes their diagnostics away. The job ids to cancel are returned.
     */
    halt(program: TrackedProgram, state: 'stale' | 'error', shown: 'keep' | 'hide'): number[] {
        const cancel: number[] = [];
        for (const c of program.checks.values()) {
            cancel.push(...this.stopJob(c));
            c.state = state;
            if (shown === 'hide') c.shown = [];
        }
        return cancel;
    }

    /**
     * A new plan of the program: an unchanged check keeps its result (at the
     * new positions), a cached one takes the cache's, the others run (or go
     * stale, when `run` is false); the checks that are gone are cancelled.
     */
    applyPlan(program: TrackedProgram, model: ProgramModel, plans: CheckPlan[], cached: (plan: CheckPlan) => CheckResult | undefined, mode: 'run' | 'plan-only'): PlanDecisions {
        const out: PlanDecisions = { run: [], keep: [], cancel: [], changed: new Set() };
        program.model = model;
        const previous = program.checks;
        program.checks = new Map();
        for (const plan of plans) {
            const old = previous.get(plan.key);
            previous.delete(plan.key);
            const check: TrackedCheck = old ?? { plan, uri: plan.range.file, state: 'stale', cached: false, current: false, shown: [], witnesses: new Map(), witnessJobs: [] };
            const oldPlan = old?.plan; // (check is old: its plan is replaced just below)
            const samePlan = old?.current && old.result && oldPlan!.fingerprint === plan.fingerprint;
            check.plan = plan;
            check.uri = plan.range.file;
            program.checks.set(plan.key, check);
            if (samePlan) {
                // unchanged: its result at the new positions
                check.result = { ...check.result!, ...decodeResult(encodeResult(check.result!, oldPlan!), plan) };
                check.shown = shownOf(check.result, check.witnesses);
                if (check.state !== check.result.status) { check.state = check.result.status; out.changed.add(check.uri); }
                continue;
            }
            const stored = cached(plan);
            if (stored) {
                out.cancel.push(...this.stopJob(check));
                this.accept(check, stored, 'cache');
                out.changed.add(check.uri);
                continue;
            }
            check.current = false;
            if (mode === 'plan-only') {
                // not run before a save; a check still running for the saved text finishes (its result is cached, not shown)
                if (check.state !== 'stale') { check.state = 'stale'; out.changed.add(check.uri); }
                continue;
            }
            if (check.job && check.job.fingerprint === plan.fingerprint) {
                check.job.plan = plan; // it is still the right one: let it finish
                check.job.edits = program.edits; // (and its result is the current text's)
                out.keep.push(check);
                continue;
            }
            out.cancel.push(...this.stopJob(check));
            out.run.push(check);
        }
        // checks that are gone: stop them
        for (const c of previous.values()) out.cancel.push(...(c.job ? [c.job.id] : []), ...c.witnessJobs.splice(0));
        return out;
    }

    accept(check: TrackedCheck, result: CheckResult, from: 'cache' | 'run'): void {
        check.result = result;
        check.current = true;
        check.cached = from === 'cache';
        check.state = result.status;
        check.shown = shownOf(result, check.witnesses);
    }

    /** The verification diagnostics of a document: its checks' (once per range and code), then (`infos: 'with'`) the program's infos. */
    shownIn(uri: string, infos: 'with' | 'without'): Diagnostic[] {
        const program = this.programOf(uri);
        if (!program || program.frontEndErrors) return [];
        const out: Diagnostic[] = [];
        const seen = new Set<string>();
        for (const c of program.checks.values()) {
            for (const s of c.shown) {
                if (s.uri !== uri) continue;
                const r = s.diagnostic.range;
                const k = `${r.start.line}:${r.start.character}:${r.end.line}:${r.end.character}:${String(s.diagnostic.code)}`;
                if (seen.has(k)) continue; // the same line reached through several checks
                seen.add(k);
                out.push(s.diagnostic);
            }
        }
        if (infos === 'with') for (const s of program.infos) if (s.uri === uri) out.push(s.diagnostic);
        return out;
    }

    /** Whether some check of the document's program is queued or running. */
    busy(uri: string): boolean {
        return this.programChecksOf(uri).some(c => c.state === 'queued' || c.state === 'running');
    }
}

import type { ProgramModel } from '../model/program.js';
import type { InferredRef } from '../il/il.js';
import { inferAnnotations, type Inference, type InferOptions } from '../infer/infer.js';
import { checksOf, programContext } from '../driver/program-context.js';
import { inParallel, verifyCheck, uncheckedDiagnostics, oneLine, type VerifyOptions, type VerifyResult } from '../driver/verify.js';
import type { CheckResult, VDiagnostic } from '../report/result.js';
import { dedupe } from '../report/findings.js';
import { planCheck } from './plan.js';

/**
 * Verification with inferred protection (issue 13): "inference proposes, the
 * checker disposes". The inference adds the annotations the user left out;
 * the checks verify the program with them exactly as if they were written.
 * When a check refutes an inferred annotation (a write where what the thread
 * was inferred to know does not hold, a step that breaks an inferred
 * environment clause), the inference drops that fact and runs again, and
 * only the checks whose fingerprint changed run again (Houdini over the
 * inferred annotations). Refutations are never shown: when none is left, the
 * checks' results are the verdict, with every inferred annotation proved.
 */

export interface InferredVerifyResult extends VerifyResult {
    inference: Inference;
    /** Rounds of inference and checking. */
    rounds: number;
}

const MAX_ROUNDS = 8;

/** The state the inference keeps between rounds (and, in the server, between edits). */
export class Refutations {
    readonly excluded = new Map<string, Set<string>>();
    readonly disabled = new Set<string>();

    get options(): InferOptions {
        return { excluded: this.excluded, disabled: this.disabled };
    }

    /** Take in a check's refutations; whether any was new. */
    add(refs: InferredRef[], last: boolean): boolean {
        let changed = false;
        for (const r of refs) {
            if (r.kind === 'environment') changed = this.disable(`env:${r.field}`) || changed;
            else if (r.kind === 'invariant') changed = this.disable(`inv:${r.field}`) || changed;
            else if (r.site && r.atom && !last) {
                const set = this.excluded.get(r.site) ?? new Set();
                if (!set.has(r.atom)) { set.add(r.atom); changed = true; }
                this.excluded.set(r.site, set);
            } else changed = this.disable(r.field) || changed;
        }
        return changed;
    }

    private disable(key: string): boolean {
        if (this.disabled.has(key)) return false;
        this.disabled.add(key);
        return true;
    }

    /** A key of the state (to tell whether anything changed). */
    key(): string {
        return `${[...this.disabled].sort().join(',')}|${[...this.excluded].map(([k, v]) => `${k}=${[...v].sort().join('&')}`).sort().join(',')}`;
    }
}

/** Whether the inference proposed invariants (the initialization check may refute them). */
function inferredInvariants(inference: Inference): boolean {
    return inference.annotations.some(a => a.kind === 'invariant');
}

/** The refutations a check's result carries. */
export function refutationsOf(r: CheckResult): InferredRef[] {
    return r.diagnostics.filter(d => d.inferred).map(d => d.inferred!);
}

/** Verify a program with inferred protection; `refutations` may come from an earlier run (the server keeps them per program). */
export async function verifyWithInference(program: ProgramModel, options: VerifyOptions, refutations = new Refutations()): Promise<InferredVerifyResult> {
    const done = new Map<string, CheckResult>();
    /** Each check's last run: the loop invariants it kept, and its candidates. */
    const lastRun = new Map<string, { kept: string[]; candidates: string[] }>();
    /** Whether the last round refuted inferred invariants only (the checks lost assumptions, nothing else changed). */
    let invariantsOnly = false;
    /**
     * Checks end at their refutations (VerifyOptions.untilRefuted: the same refutations as a full
     * run, without the rest, which the next round would throw away), until a round refutes
     * nothing new: then the checks that ended so run in full.
     */
    let early = true;
    // (the inference is a guess: when it fails, the program is checked as written, and the failure logged)
    let inference = reinfer(program, refutations, options);
    options.trace?.(`[infer] ${inference.annotations.length} annotation(s) inferred`);
    for (let round = 1; ; round++) {
        let ctx;
        try {
            const fault = options.testFault;
            if (fault && program.files.some(f => f.includes(fault))) throw new Error(`injected fault (${fault})`);
            ctx = programContext(inference.program);
        } catch (e) {
            options.log?.(`internal error in the program of ${program.files[0] ?? '?'}: ${(e as Error)?.stack ?? e}`);
            const range = program.threads[0]?.nameRange ?? { file: program.files[0] ?? '', startLine: 0, startChar: 0, endLine: 0, endChar: 0 };
            return { checks: [], diagnostics: [{ range, severity: 'error', code: 'unknown', related: [], message: `this program was not checked: internal error (${oneLine(e)}); please report it` }], inference, rounds: round };
        }
        const planOptions = { timeLimitMs: options.timeLimitMs ?? 10_000, resourceLimit: options.resourceLimit };
        const checks = checksOf(ctx).map(c => ({ check: c, fingerprint: planCheck(ctx, c, planOptions).fingerprint }));
        const run = async ({ check, fingerprint }: (typeof checks)[number]) => {
            const known = done.get(fingerprint);
            if (known) return known;
            // After a round that refuted only inferred invariants, a check has lost assumptions and
            // nothing else: its Houdini starts from what it kept last time (one round instead of one
            // per refuted candidate), with the same outcome as from all candidates (VerifyOptions).
            const last = invariantsOnly ? lastRun.get(check.key) : undefined;
            const untilRefuted = early && inference.annotations.length > 0;
            const r = (await verifyCheck(ctx, check.key, { ...options, ...(last ? { houdiniSeed: last.kept, houdiniSeedCandidates: last.candidates } : {}), ...(untilRefuted ? { untilRefuted } : {}) }))!;
            if (!r.refutedOnly) done.set(fingerprint, r);
            if ((r.status === 'verified' || r.status === 'failed') && r.candidates) lastRun.set(check.key, { kept: r.inferredLoopInvariants, candidates: r.candidates });
            return r;
        };
        // Inferred invariants not new to this round may still fail in the initial state: the
        // initialization check (one small query) goes first, and what it refutes starts the next
        // round at once, before the other checks run with it (issue 15).
        const init = checks.find(c => c.check.kind === 'init');
        const first = init && inferredInvariants(inference) && !done.has(init.fingerprint) ? await run(init) : undefined;
        const initRefs = first ? refutationsOf(first) : [];
        if (initRefs.length > 0) options.trace?.(`[infer] round ${round} refuted in the initial state: ${refutedText(initRefs)}`);
        if (initRefs.length > 0 && round < MAX_ROUNDS + 4 && refutations.add(initRefs, round >= MAX_ROUNDS)) {
            inference = reinfer(program, refutations, options);
            invariantsOnly = initRefs.every(r => r.kind === 'invariant');
            continue;
        }
        const results = await inParallel(checks, options.concurrency ?? 1, run);
        const refs = results.flatMap(refutationsOf);
        if (refs.length > 0) options.trace?.(`[infer] round ${round} refuted: ${refutedText(refs)}`);
        // after MAX_ROUNDS, a refuted guard is dropped as a whole (a bounded number of rounds more);
        // a refutation still there at the end is shown (never hidden)
        if (refs.length === 0 || round >= MAX_ROUNDS + 4 || !refutations.add(refs, round >= MAX_ROUNDS)) {
            if (results.some(r => r.refutedOnly)) {
                // nothing new refuted: the checks that ended at their refutations run in full (the others are done)
                early = false;
                continue;
            }
            const diagnostics: VDiagnostic[] = uncheckedDiagnostics(ctx);
            for (const r of results) for (const d of r.diagnostics) diagnostics.push(d);
            return { checks: results, diagnostics: dedupe(diagnostics), inference, rounds: round };
        }
        inference = reinfer(program, refutations, options);
        invariantsOnly = refs.every(r => r.kind === 'invariant');
    }
}

/** What a round refuted, for CALVIN_DEBUG. */
function refutedText(refs: InferredRef[]): string {
    return refs.map(r => JSON.stringify(r)).join('; ');
}

/** The inference again, without what the checks refuted (as written when it fails: it is a guess). */
function reinfer(program: ProgramModel, refutations: Refutations, options: VerifyOptions): Inference {
    try {
        return inferAnnotations(program, refutations.options);
    } catch (e) {
        options.log?.(`internal error in the inference for ${program.files[0] ?? '?'}: ${(e as Error)?.stack ?? e}`);
        return { program, guards: new Map(), annotations: [], unprotected: new Map(), rounds: 0 };
    }
}

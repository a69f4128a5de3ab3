// The z3-native backend: each engine is a long-lived `z3 -in -smt2` process.
// An eval writes the commands followed by (echo "calvin-done-<n>") and reads
// stdout up to that line. A process that runs past the hard limit is killed and
// restarted; one that dies is restarted for the next session.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { clearLiveTimeout, setLiveTimeout } from './live-timer.js';
import { HARD_LIMIT_GRACE_MS, settleWithin, TERMINATE_WAIT_MS, timerDelay, type Engine } from './pool.js';
import { smtError, unbalancedReason } from './smt-text.js';
import { SolverFailure } from './types.js';
import { findNativeZ3 } from './find-z3.js';

const START_TIMEOUT_MS = 20_000;

export const NO_NATIVE_Z3 =
    'z3-native: no `z3` executable on PATH. Install Z3 (e.g. `apt-get install z3` on Debian/Ubuntu, `brew install z3` on macOS) or use the z3-wasm backend.';

interface Pending {
    sentinel: string;
    resolve(output: string): void;
    reject(e: SolverFailure): void;
    timer?: NodeJS.Timeout;
}

interface Instance {
    proc: ChildProcessWithoutNullStreams;
    ready: Promise<void>;
    alive: boolean;
    stdout: string;
    stderrTail: string;
    expectedExit: boolean;
}

export class NativeEngine implements Engine {
    private instance: Instance | undefined;
    private pending: Pending | undefined;
    private nextId = 1;
    private disposed = false;

    constructor(private readonly z3Path: string, private readonly prewarm: boolean) { }

    ready(): Promise<void> {
        if (this.disposed) return Promise.reject(new SolverFailure('error', 'z3-native: the backend was disposed'));
        if (!this.instance || !this.instance.alive) this.instance = this.spawn();
        return this.instance.ready;
    }

    async eval(text: string, timeLimitMs: number): Promise<string> {
        const open = unbalancedReason(text);
        if (open) return smtError(`calvin: incomplete input, ${open}; nothing was evaluated`);
        await this.ready();
        return this.send(this.current(), text, timeLimitMs);
    }

    async debug(what: 'crash' | 'hang', timeLimitMs: number): Promise<string> {
        await this.ready();
        const inst = this.current();
        // Signal first, so that z3 cannot answer the (empty) eval before it is stopped.
        inst.proc.kill(what === 'crash' ? 'SIGSEGV' : 'SIGSTOP');
        return this.send(inst, '', timeLimitMs);
    }

    /**
     * Stop the eval in flight (it rejects with 'error'): the process is killed,
     * and a new one starts (now when pre-warmed, else with the next eval; a
     * native z3 starts in ~20 ms).
     */
    abort(): void {
        const inst = this.instance;
        if (!this.pending || !inst) return;
        this.fail(new SolverFailure('error', 'z3-native: the eval was interrupted'));
        this.kill(inst);
        // (a pre-warmed engine starts the next process now: the next eval does not wait for it)
        if (this.prewarm && !this.disposed) this.ready().catch(() => undefined);
    }

    async dispose(): Promise<void> {
        this.disposed = true;
        const inst = this.instance;
        this.instance = undefined;
        this.fail(new SolverFailure('error', 'z3-native: the backend was disposed'));
        if (inst?.alive) {
            const exited = new Promise<void>(resolve => inst.proc.once('exit', () => resolve()));
            this.setRef(inst, true);
            this.kill(inst);
            await settleWithin(exited, TERMINATE_WAIT_MS);
        }
    }

    /** The running process, right after ready(). */
    private current(): Instance {
        const inst = this.instance;
        if (!inst?.alive) throw new SolverFailure('crash', 'z3-native: z3 died before the eval started');
        return inst;
    }

    private send(inst: Instance, text: string, timeLimitMs: number): Promise<string> {
        if (this.pending) return Promise.reject(new SolverFailure('error', 'z3-native: one eval at a time per process'));
        const sentinel = `calvin-done-${this.nextId++}`;
        return new Promise<string>((resolve, reject) => {
            const pending: Pending = { sentinel, resolve, reject };
            this.pending = pending;
            pending.timer = setTimeout(() => {
                this.fail(new SolverFailure('timeout', `z3-native: no answer within ${timeLimitMs} ms + ${HARD_LIMIT_GRACE_MS} ms grace; the process was restarted`));
                this.kill(inst);
                if (!this.disposed) this.ready().catch(() => undefined);
            }, timerDelay(timeLimitMs + HARD_LIMIT_GRACE_MS));
            this.setRef(inst, true);
            inst.proc.stdin.write(`${text}\n(echo "${sentinel}")\n`);
        });
    }

    private fail(failure: SolverFailure): void {
        const p = this.pending;
        if (!p) return;
        this.pending = undefined;
        clearTimeout(p.timer);
        if (this.instance) this.setRef(this.instance, false);
        p.reject(failure);
    }

    private onStdout(inst: Instance): void {
        const p = this.pending;
        if (!p) return;
        // The sentinel on a line of its own ends this eval's output.
        const m = new RegExp(`(^|\n)${p.sentinel}\r?\n`).exec(inst.stdout);
        if (!m) return;
        const output = inst.stdout.slice(0, m.index + m[1].length);
        inst.stdout = inst.stdout.slice(m.index + m[0].length);
        this.pending = undefined;
        clearTimeout(p.timer);
        this.setRef(inst, false);
        p.resolve(output);
    }

    private kill(inst: Instance): void {
        if (!inst.alive) return;
        inst.alive = false;
        inst.expectedExit = true;
        if (this.instance === inst) this.instance = undefined;
        inst.proc.kill('SIGKILL');
    }

    /** An idle process does not keep the Node process alive. */
    private setRef(inst: Instance, ref: boolean): void {
        const handles = [inst.proc, inst.proc.stdin, inst.proc.stdout, inst.proc.stderr] as Array<{ ref?(): void; unref?(): void }>;
        for (const h of handles) (ref ? h.ref : h.unref)?.call(h);
    }

    private spawn(): Instance {
        const proc = spawn(this.z3Path, ['-in', '-smt2'], { stdio: ['pipe', 'pipe', 'pipe'] });
        const inst: Instance = { proc, ready: undefined as never, alive: true, stdout: '', stderrTail: '', expectedExit: false };
        proc.stdout.setEncoding('utf8');
        proc.stderr.setEncoding('utf8');
        proc.stdout.on('data', (chunk: string) => {
            inst.stdout += chunk;
            if (this.instance === inst) this.onStdout(inst);
        });
        proc.stderr.on('data', (chunk: string) => {
            inst.stderrTail = (inst.stderrTail + chunk).slice(-2000);
        });
        // EPIPE after the process died: reported through 'exit'.
        proc.stdin.on('error', () => undefined);
        inst.ready = new Promise<void>((resolve, reject) => {
            let started = false;
            const startTimer = setLiveTimeout(() => {
                const failure = new SolverFailure('error', `z3-native: z3 did not start within ${START_TIMEOUT_MS} ms`);
                this.fail(failure);
                reject(failure);
                this.kill(inst);
            }, START_TIMEOUT_MS);
            proc.on('error', e => {
                // Spawn failure (ENOENT, EACCES): no 'exit' may follow.
                clearLiveTimeout(startTimer);
                inst.alive = false;
                if (this.instance === inst) this.instance = undefined;
                const enoent = (e as NodeJS.ErrnoException).code === 'ENOENT';
                const failure = new SolverFailure('error', enoent ? NO_NATIVE_Z3 : `z3-native: cannot run ${this.z3Path}: ${e.message}`);
                this.fail(started ? new SolverFailure('crash', failure.message) : failure);
                if (!started) reject(failure);
            });
            proc.on('exit', (code, signal) => {
                clearLiveTimeout(startTimer);
                const wasAlive = inst.alive;
                inst.alive = false;
                if (this.instance === inst) this.instance = undefined;
                if (inst.expectedExit) return;
                const why = `exit code ${code}${signal ? `, signal ${signal}` : ''}${inst.stderrTail.trim() ? `: ${inst.stderrTail.trim()}` : ''}`;
                if (!started) {
                    const failure = new SolverFailure('error', `z3-native: z3 exited during start (${why})`);
                    this.fail(failure); // the warm-up query
                    reject(failure);
                    return;
                }
                this.fail(new SolverFailure('crash', `z3-native: z3 died (${why})`));
                if (wasAlive && !this.disposed) this.ready().catch(() => undefined);
            });
            proc.on('spawn', () => {
                const warm = this.prewarm
                    ? this.send(inst, '(declare-const calvin_warm Int)(assert (> calvin_warm 0))(check-sat)(reset)', START_TIMEOUT_MS)
                    : Promise.resolve('');
                warm.then(() => {
                    started = true;
                    clearLiveTimeout(startTimer);
                    if (!this.pending) this.setRef(inst, false);
                    resolve();
                }, e => {
                    clearLiveTimeout(startTimer);
                    reject(e instanceof SolverFailure ? new SolverFailure('error', `z3-native: z3 failed its warm-up query: ${e.message}`) : e);
                });
            });
        });
        inst.ready.catch(() => undefined);
        return inst;
    }
}

export function createNativeEngines(count: number, prewarm: boolean, z3Path?: string): Engine[] {
    const z3 = z3Path || findNativeZ3();
    if (!z3) throw new SolverFailure('error', NO_NATIVE_Z3);
    return Array.from({ length: count }, () => new NativeEngine(z3, prewarm));
}

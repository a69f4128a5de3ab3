// Inference acceptance (issue 13): every example and corpus program with its
// protection annotations deleted (every `writable_if` and `environment`
// clause) is checked through the real CLI (inference on) and the real Z3.
// A correct program (no @expect marker) must still verify; a buggy one must
// still report a bug (inference may remove false alarms, never hide a bug).
// The exceptions are listed below with the reason (also in the README).
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, EXAMPLES, ROOT } from '../util/paths.js';
import { markersOf } from './markers.js';
import { stripProtection } from '../util/strip.js';

const CORPUS = path.join(ROOT, 'test/corpus');
const JOBS = process.env.CALVIN_TEST_JOBS ?? '2';

/** Programs whose verdict changes without their written protection, and why. */
export const STRIPPED_EXCEPTIONS: Record<string, string> = {
    'time_varying_wrong_lock.calvin': 'its bug is a write that breaks the written protocol (x is protected by lock a while b is false); without the protocol every write of x holds lock c, and the program is race-free',
    'race_writable_if_volatile.calvin': 'its bug is a write of a volatile field that breaks the written protocol; volatile accesses never race, so without the protocol nothing is wrong',
    'refcount_ok.calvin': 'its protection is written over ghost state (which thread holds a reference): no guard over shared state says it (test/corpus/inferred/refcount_ok is the same idiom)',
    'rwlock_ok.calvin': 'its protection is written over ghost state (which threads are readers): no guard over shared state says it (test/corpus/inferred/rwlock_ok is the same idiom)',
    'atomic_lock_ghost_ok.calvin': "its lock's holder is a ghost owner set in the same atomic step that takes `busy`; that nobody else changes it while it is this thread's id follows from the invariant `busy <==> owner != 0`, which the inference's facts do not use",
    'textbook_bakery_ok.calvin': "x is written after the waiting loops, where the inference knows only that the writer is not choosing (it loses the ghost `pc1 == 4`, set in the step whose test ends the loop through the local `wait`): that guard does not exclude the other thread",
    'textbook_sense_barrier_ok.calvin': 'the protection of data is written over ghost state (the phase counter and the arrival flags): no guard over shared state says when the phase changes',
    'ticket_lock_ok.calvin': 'the turn belongs to the thread whose local ticket equals the shared counter: a relation between a local and shared state, which no guard over shared state can express',
    'env_clause_parts_ok.calvin': "its assertion rests on the environment clause that the stage never goes back: the inference proposes who may write a field, not how it changes",
    'handoff_env_premise_ok.calvin': "who owns the slot is decided by a protocol over two fields taken in one atomic step (state and owner, `state == 1 ==> owner == tid`) and kept by an environment clause: the inference proposes guards of one field's writers, not a protocol over two",
    'final_arrays_distinct_ok.calvin': "its lock is an array element taken with cas (`locks[0] == tid`), kept by environment clauses: the inference proposes guards of fields, and array elements are guarded only through the field that owns their array",
    'loop_after_assert_ok.calvin': "its assertion rests on the environment clause `count' >= count` (the counter never decreases): the inference proposes who may write a field, not how it changes",
    'max_register_early_return_ok.calvin': "its abstraction rests on the environment clause `peak' >= peak` (the peak never decreases): the inference proposes who may write a field, not how it changes",
    'double_buffer_swap_ok.calvin': 'a frame may be written by the renderer while it is the spare one (`this == spare`): the inference\'s facts compare locations with constants, the thread id and monitors, not an object with a global reference',
    'handoff_slot_ok.calvin': "who owns the slot is a protocol over two fields written in different steps (`owner` claimed by cas, `full` raised by the owner): the inference proposes guards of one field's writers, not a protocol over two",
    'retry_until_entered_ok.calvin': "the inferred guard of `taken` is what holds at its one write (`this.holder == tid && this.visitors == 0`), not who writes it (`tid == Writer`): the writer's read after the loop, outside the monitor, is stable only because no other thread writes it",
    'spin_flag_cas_ok.calvin': "the lock is taken in a loop that records its success in a local flag (`got = cas(lk, 0, tid)`): the check's loop invariants carry `got ==> lk == tid` out of the loop, the inference's facts do not, so it finds no protection of `data` at the write after it",
};

function programs(): Array<{ name: string; file: string }> {
    const of = (dir: string) => fs.readdirSync(dir).filter(f => f.endsWith('.calvin')).sort().map(f => ({ name: f, file: path.join(dir, f) }));
    return [...of(EXAMPLES), ...of(CORPUS)];
}

describe('programs without their protection annotations (inference)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-stripped-'));
    const report = new Map<string, Array<{ line: number; code: string; severity: string }>>();
    const all = programs();
    before(() => {
        for (const p of all) fs.writeFileSync(path.join(dir, p.name), stripProtection(fs.readFileSync(p.file, 'utf8')));
        const r = spawnSync(process.execPath, [CLI, 'check', '--no-witness', '--format', 'json', '--jobs', JOBS, dir], { encoding: 'utf8', timeout: 30 * 60_000, maxBuffer: 64 * 1024 * 1024 });
        if (r.error) throw r.error;
        assert.ok(r.status === 0 || r.status === 1, `calvin check exited ${r.status}:\n${r.stderr}`);
        for (const d of (JSON.parse(r.stdout) as { diagnostics: Array<{ file: string; line: number; code: string; severity: string }> }).diagnostics) {
            const key = path.basename(d.file);
            report.set(key, [...(report.get(key) ?? []), d]);
        }
    });
    for (const p of all) {
        const exception = STRIPPED_EXCEPTIONS[p.name];
        it(p.name, exception ? { todo: exception } : {}, () => {
            const text = fs.readFileSync(p.file, 'utf8');
            const buggy = markersOf(text).expect.size > 0;
            const errors = (report.get(p.name) ?? []).filter(d => d.severity !== 'info');
            if (buggy) assert.ok(errors.some(d => d.severity === 'error'), `${p.name}: the bug is no longer reported without the protection annotations`);
            else assert.deepEqual(errors.map(d => `${d.line}:${d.code}`), [], `${p.name}: false alarms without the protection annotations`);
        });
    }
});

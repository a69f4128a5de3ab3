// `calvin infer` and `calvin check --no-infer` (issue 13), through the real
// CLI and the real Z3: the annotations `calvin infer` inserts parse,
// type-check and verify, and the annotated programs checked without inference
// give the same verdicts as the plain programs checked with it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, ROOT } from '../util/paths.js';

const INFERRED = path.join(ROOT, 'test/corpus/inferred');
const PROGRAMS = ['tas_tid_ok', 'flag_handoff_ok', 'time_varying_ok', 'stop_flag_ok', 'publish_immutable_ok', 'sync_methods_unsync_dec', 'oneshot_init_read_before_check'];

function calvin(args: string[]): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 10 * 60_000 });
    if (r.error) throw r.error;
    return r;
}

function verdicts(stdout: string): string[] {
    return (JSON.parse(stdout) as { diagnostics: Array<{ file: string; line: number; code: string; severity: string }> }).diagnostics
        .filter(d => d.severity !== 'info').map(d => `${path.basename(d.file)}:${d.code}`).sort();
}

describe('calvin infer', () => {
    it('inserts annotations that verify without inference, with the verdicts of the plain programs checked with it', () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-infer-cli-'));
        try {
            for (const p of PROGRAMS) fs.copyFileSync(path.join(INFERRED, `${p}.calvin`), path.join(dir, `${p}.calvin`));
            const plain = calvin(['check', '--no-witness', '--format', 'json', dir]);
            assert.ok(plain.status === 0 || plain.status === 1, plain.stderr);
            const withInference = verdicts(plain.stdout);
            const before = calvin(['check', '--no-witness', '--no-infer', '--format', 'json', dir]);
            assert.notDeepEqual(verdicts(before.stdout), withInference, 'without inference the plain programs have false alarms');

            const written = calvin(['infer', '--write', dir]);
            assert.equal(written.status, 0, written.stderr);
            for (const p of PROGRAMS) assert.match(written.stdout, new RegExp(`${p}\\.calvin: \\d+ annotations? inserted`));
            const text = fs.readFileSync(path.join(dir, 'tas_tid_ok.calvin'), 'utf8');
            assert.match(text, /\/\/@ writable_if m == tid;\nint count = 0;/);

            const after = calvin(['check', '--no-witness', '--no-infer', '--format', 'json', dir]);
            assert.ok(after.status === 0 || after.status === 1, after.stderr);
            assert.deepEqual(verdicts(after.stdout), withInference);
            // the annotated files pass the front end with no diagnostic at all
            const front = calvin(['check', '--no-verify', '--format', 'json', dir]);
            assert.deepEqual(JSON.parse(front.stdout).diagnostics, []);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it('prints the file with the annotations inserted, or lists them as JSON; a file with errors exits 1', () => {
        const file = path.join(INFERRED, 'flag_handoff_ok.calvin');
        const text = calvin(['infer', file]);
        assert.equal(text.status, 0, text.stderr);
        assert.match(text.stdout, /\/\/@ writable_if \(tid == Producer && flag == 0\) \|\| \(tid == Consumer && flag == 1\);\nvolatile int flag = 0;/);
        assert.equal(fs.readFileSync(file, 'utf8').includes('writable_if'), false, 'the file itself is not changed');
        const json = calvin(['infer', '--format', 'json', file]);
        const list = JSON.parse(json.stdout) as { files: Array<{ file: string; annotations: Array<{ kind: string; field: string; text: string; line: number; origin: string }> }> };
        const data = list.files[0].annotations.find(a => a.field === 'data');
        assert.deepEqual(data && { kind: data.kind, text: data.text }, { kind: 'writable_if', text: 'tid == Producer && flag == 0' });
        assert.match(data!.origin, /^inferred from the write at line \d+, when flag == 0$/);

        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-infer-bad-'));
        try {
            fs.writeFileSync(path.join(dir, 'bad.calvin'), 'int x = ;\n');
            const bad = calvin(['infer', path.join(dir, 'bad.calvin')]);
            assert.equal(bad.status, 1);
            assert.match(bad.stderr, /bad\.calvin: not inferred/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

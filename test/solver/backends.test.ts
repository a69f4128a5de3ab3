// Results do not depend on the solver backend (issue 15): the examples and the
// whole corpus, checked by the real CLI once with Z3 in WebAssembly and once
// with a native z3, give the same diagnostics (file, range, severity, code,
// message and related locations) and every check the same status. Only the
// counterexample values in brackets, and the related note on which read
// another thread changed just before, may differ: the two Z3 builds may pick
// different models of the same failure (both are real counterexamples).
//
// Needs a native z3 (skipped with the reason when it is missing, required under
// CI=true, where .ci/run installs Debian's z3).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { needs } from '../util/external.js';
import { CLI, EXAMPLES, ROOT } from '../util/paths.js';

// (test/corpus is searched recursively: test/corpus/inferred is in it)
const DIRS = [EXAMPLES, path.join(ROOT, 'test/corpus')];

interface Report {
    diagnostics: Array<{ file: string; line: number; column: number; endLine: number; endColumn: number; severity: string; code: string; message: string; related?: unknown }>;
    checks?: Array<{ file: string; name: string; kind: string; status: string }>;
}

function run(solver: 'wasm' | 'native', dir: string): Report {
    // Known gaps are checked too (their verdicts must agree as well); a short time limit keeps
    // them from spending minutes, and a check that runs out of time under one backend only is
    // reported as such by the comparison below.
    // (the verdicts are compared: witnesses, found with either backend's models, are a separate matter)
    const r = spawnSync(process.execPath, [CLI, 'check', '--solver', solver, '--format', 'json', '--verbose', '--no-witness', dir], {
        encoding: 'utf8', timeout: 20 * 60_000, maxBuffer: 64 * 1024 * 1024, cwd: ROOT,
    });
    if (r.error) throw r.error;
    assert.ok(r.status === 0 || r.status === 1, `calvin check --solver ${solver} exited ${r.status}:\n${r.stderr}`);
    assert.match(r.stderr, solver === 'native' ? /solver: native Z3/ : /solver: Z3 in WebAssembly/, 'the choice of solver is shown with --verbose');
    return JSON.parse(r.stdout) as Report;
}

/**
 * A diagnostic without its counterexample values ("[x = 3, y = 4]") and value notes (which
 * values it has depends on the model too: a reference is shown when it is null).
 */
function shape(d: Report['diagnostics'][number]): string {
    const message = d.message
        .replace(/ \[((?:[^[\]]|\[[^[\]]*\])*)\]/g, (all, inner: string) => (inner.includes(' = ') ? '' : all))
        .replace(/from \S+ to \S+ just before/g, 'from _ to _ just before');
    // (which read another thread's step changed just before comes from the model too)
    const related = (d.related as Array<{ message: string }> | undefined)?.filter(r => !/ read here, just after another thread changed it$/.test(r.message));
    return JSON.stringify({ ...d, message, ...(related && related.length > 0 ? { related } : { related: undefined }) });
}

describe('the solver backends give the same results', needs('z3', 'apt-get install -y z3'), () => {
    for (const dir of DIRS) {
        it(`${path.relative(ROOT, dir)}: wasm and native agree`, { timeout: 25 * 60_000 }, () => {
            const wasm = run('wasm', dir);
            const native = run('native', dir);
            assert.ok(wasm.diagnostics.length > 0, 'the corpus has findings');
            assert.deepEqual(native.diagnostics.map(shape), wasm.diagnostics.map(shape));
            const statuses = (r: Report) => (r.checks ?? []).map(c => `${c.file} ${c.kind} ${c.name}: ${c.status}`);
            assert.ok(statuses(wasm).length > 0, '--verbose lists the checks');
            assert.deepEqual(statuses(native), statuses(wasm));
        });
    }
});

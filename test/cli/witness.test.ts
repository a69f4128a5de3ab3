// Witnesses in the CLI's output (issue 14), through the real CLI and the real
// Z3: under each error, the interleaving as numbered steps (text); a `witness`
// member on each error (JSON); SARIF `codeFlows` with one threadFlow per
// thread and executionOrder on each location, valid against the SARIF 2.1.0
// JSON schema (the schema Microsoft publishes, from @microsoft/jest-sarif).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { CLI, EXAMPLES } from '../util/paths.js';

const require = createRequire(import.meta.url);

function calvin(args: string[]): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 10 * 60_000 });
    if (r.error) throw r.error;
    return r;
}

/** The SARIF 2.1.0 schema validator (draft-04 JSON schema, with ajv 6). */
function sarifValidator(): (log: unknown) => string[] {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Ajv = require('ajv');
    const ajv = new Ajv({ schemaId: 'auto', meta: false, validateSchema: false, allErrors: true });
    ajv.addMetaSchema(require('ajv/lib/refs/json-schema-draft-04.json'));
    const validate = ajv.compile(require('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'));
    return log => (validate(log) ? [] : (validate.errors as Array<{ dataPath: string; message: string }>).map(e => `${e.dataPath} ${e.message}`));
}

describe('witnesses in calvin check', () => {
    const file = path.join(EXAMPLES, 'simple_lock_unlocked.calvin');

    it('JSON: every error has a confirmed witness whose last steps are the failure', () => {
        const r = calvin(['check', '--format', 'json', file]);
        assert.equal(r.status, 1, r.stderr);
        const report = JSON.parse(r.stdout) as { diagnostics: Array<{ line: number; code: string; severity: string; witness?: { status: string; bounds: object; steps: Array<{ thread: string; file: string; line: number; column: number; action: string; values: string; failing?: boolean }> } }> };
        const errors = report.diagnostics.filter(d => d.severity === 'error');
        assert.ok(errors.length >= 3);
        for (const d of errors) {
            assert.equal(d.witness?.status, 'confirmed', JSON.stringify(d));
            assert.deepEqual(d.witness!.bounds, { loops: 3, switches: 3, copies: 2, inlineDepth: 8 });
            const steps = d.witness!.steps;
            assert.ok(steps.length > 0);
            for (const s of steps) {
                assert.ok(['T1', 'T2', 'init'].includes(s.thread), s.thread);
                assert.equal(path.resolve(s.file), file);
                assert.ok(s.line >= 1 && s.column >= 1 && s.action.length > 0);
            }
            assert.ok(steps.some(s => s.failing), 'the failing step is marked');
            // the failing step is at the diagnostic's line
            assert.ok(steps.filter(s => s.failing).some(s => s.line === d.line), JSON.stringify(steps));
        }
        // a race is two threads' conflicting accesses: both threads take part
        const race = errors.find(d => d.code === 'race' && d.line === 23)!;
        assert.deepEqual([...new Set(race.witness!.steps.map(s => s.thread))].sort(), ['T1', 'T2']);
    });

    it('a confirmed witness replaces the modular counterexample\'s bracketed values in the message (they would contradict its own)', () => {
        const messages = (args: string[]) => {
            const r = calvin(['check', '--format', 'json', ...args, file]);
            const report = JSON.parse(r.stdout) as { diagnostics: Array<{ line: number; column: number; code: string; severity: string; message: string; witness?: { status: string } }> };
            return new Map(report.diagnostics.filter(d => d.severity === 'error').map(d => [`${d.line}:${d.column}:${d.code}`, d]));
        };
        const without = messages(['--no-witness']);
        const withWitness = messages([]);
        assert.deepEqual([...withWitness.keys()], [...without.keys()]);
        assert.ok([...without.values()].some(d => / \[.* = .*\]/.test(d.message)), 'the modular check gives values');
        for (const [k, d] of withWitness) {
            assert.equal(d.witness?.status, 'confirmed', k);
            assert.doesNotMatch(d.message, / \[.* = .*\]/, k);
            // the rest of the message is the same
            assert.equal(without.get(k)!.message.replace(/ \[.*\]/, ''), d.message);
        }
    });

    it('text: the interleaving under the diagnostic, as numbered steps', () => {
        const r = calvin(['check', file]);
        assert.equal(r.status, 1, r.stderr);
        const lines = r.stdout.split('\n');
        const at = lines.findIndex(l => /simple_lock_unlocked\.calvin:24:3: error \[assert\]/.test(l));
        assert.ok(at >= 0, r.stdout);
        const block = lines.slice(at + 1).filter((l, i, all) => all.slice(0, i + 1).every(x => x.startsWith('  ')));
        assert.match(block.find(l => l.startsWith('  witness:')) ?? '', /^ {2}witness: T1: assertion 'x > 0' may fail/);
        const steps = block.filter(l => /^ {4}\s*\d+\. /.test(l));
        assert.ok(steps.length >= 2, block.join('\n'));
        assert.match(steps[0], /^ {4}\s*1\. (T1|T2)\s+simple_lock_unlocked\.calvin:\d+\s+\S/);
        assert.ok(steps.some(l => /T2 +simple_lock_unlocked\.calvin:29 +x = 0; +\(x: \d+ → 0\)/.test(l)), steps.join('\n'));
        assert.match(steps[steps.length - 1], /<-$/);
    });

    it('SARIF: codeFlows with a threadFlow per thread and executionOrder, valid against the SARIF 2.1.0 schema', () => {
        const r = calvin(['check', '--format', 'sarif', file]);
        assert.equal(r.status, 1, r.stderr);
        const log = JSON.parse(r.stdout);
        assert.deepEqual(sarifValidator()(log), []);
        const results = log.runs[0].results as Array<{ ruleId: string; codeFlows?: Array<{ threadFlows: Array<{ id: string; locations: Array<{ executionOrder: number; location: { physicalLocation: { region: { startLine: number } } } }> }> }> }>;
        const errors = results.filter(x => x.ruleId !== 'unchecked');
        for (const res of errors) {
            assert.equal(res.codeFlows?.length, 1);
            const flows = res.codeFlows![0].threadFlows;
            const orders = flows.flatMap(f => f.locations.map(l => l.executionOrder)).sort((a, b) => a - b);
            assert.deepEqual(orders, orders.map((_, i) => i + 1), 'every step has its place in the execution order');
            assert.equal(new Set(flows.map(f => f.id)).size, flows.length, 'one threadFlow per thread');
        }
    });

    it('a correct program reported only because an annotation is too weak: not confirmed, and the message names the annotation', () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-weak-'));
        try {
            // Only T2 ever writes x, but the written writable_if lets any thread: T1's read of x is
            // reported (modularly), yet no real execution has two threads accessing x at once.
            const weak = path.join(dir, 'weak.calvin');
            fs.writeFileSync(weak, `//@ writable_if true;
int x = 0;
int done = 0;
thread T1 { int v = x; }
thread T2 { if (false) { x = 1; } done = 1; }
`);
            const r = calvin(['check', '--format', 'json', '--no-infer', weak]);
            const report = JSON.parse(r.stdout) as { diagnostics: Array<{ line: number; code: string; witness?: { status: string; reason?: string } }> };
            const read = report.diagnostics.find(d => d.code === 'race' && d.line === 4);
            assert.ok(read, r.stdout);
            assert.equal(read.witness?.status, 'not-confirmed');
            assert.match(read.witness?.reason ?? '', /not confirmed within the bounds \(3 loop iterations, 3 context switches, 2 copies of each replicated thread\)/);
            assert.match(read.witness?.reason ?? '', /writable_if/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it('--no-witness leaves them out; --witness-bounds sets the bounds', () => {
        const none = JSON.parse(calvin(['check', '--format', 'json', '--no-witness', file]).stdout) as { diagnostics: Array<{ witness?: unknown }> };
        assert.ok(none.diagnostics.every(d => d.witness === undefined));
        const small = JSON.parse(calvin(['check', '--format', 'json', '--witness-bounds', '1,1,1', file]).stdout) as { diagnostics: Array<{ severity: string; witness?: { bounds: object } }> };
        for (const d of small.diagnostics.filter(x => x.severity === 'error')) assert.deepEqual(d.witness?.bounds, { loops: 1, switches: 1, copies: 1, inlineDepth: 8 });
        assert.equal(calvin(['check', '--witness-bounds', 'many', file]).status, 2);
    });
});

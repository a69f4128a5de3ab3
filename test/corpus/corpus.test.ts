// The verifier's acceptance test (issue 3): every .calvin program under
// examples/ and test/corpus/ is checked through the real
// CLI and the real Z3, and its error/warning diagnostics, as (line, code)
// pairs, must match the program's @expect/@allow markers exactly
// (checking.md, "Expected-diagnostic markers"): nothing missing, nothing extra.
//
// Programs listed in known-gaps.json are reported as `todo` with the reason:
// the checker is not exact on them yet (see the README's "Verifier" section).
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, EXAMPLES, ROOT } from '../util/paths.js';
import { compareWithMarkers, markersOf, type Reported } from './markers.js';

const CORPUS = path.join(ROOT, 'test/corpus');
const GAPS: Record<string, string> = JSON.parse(fs.readFileSync(path.join(CORPUS, 'known-gaps.json'), 'utf8'));
const JOBS = process.env.CALVIN_TEST_JOBS ?? '2';

function programsIn(dir: string): string[] {
    return fs.readdirSync(dir).filter(f => f.endsWith('.calvin')).sort().map(f => path.join(dir, f));
}

/**
 * The CLI over a directory's programs (each file is its own program); diagnostics by file.
 * Known gaps run separately with a short time limit: they are `todo`, and their status
 * is shown without spending minutes on time-outs.
 */
/** A program's key in known-gaps.json: its path under test/corpus (or its name, for the examples). */
function gapKey(file: string): string {
    const rel = path.relative(CORPUS, file);
    return rel.startsWith('..') ? path.basename(file) : rel.split(path.sep).join('/');
}

function checkDirectory(dir: string): Map<string, Reported[]> {
    const files = programsIn(dir);
    const gaps = files.filter(f => GAPS[gapKey(f)]);
    const rest = files.filter(f => !GAPS[gapKey(f)]);
    return new Map([...runCli(rest, []), ...runCli(gaps, ['--time-limit', '3000'])]);
}

function runCli(files: string[], extra: string[]): Map<string, Reported[]> {
    if (files.length === 0) return new Map();
    const r = spawnSync(process.execPath, [CLI, 'check', '--no-witness', '--format', 'json', '--jobs', JOBS, ...extra, ...files], {
        encoding: 'utf8', timeout: 30 * 60_000, maxBuffer: 64 * 1024 * 1024,
    });
    if (r.error) throw r.error;
    assert.ok(r.status === 0 || r.status === 1, `calvin check exited ${r.status}:\n${r.stderr}`);
    const report = JSON.parse(r.stdout) as { diagnostics: Array<Reported & { file: string }> };
    const out = new Map<string, Reported[]>();
    for (const d of report.diagnostics) {
        const key = path.resolve(d.file);
        out.set(key, [...(out.get(key) ?? []), d]);
    }
    return out;
}

function suite(title: string, dir: string) {
    describe(title, () => {
        let results = new Map<string, Reported[]>();
        before(() => { results = checkDirectory(dir); });
        for (const file of programsIn(dir)) {
            const name = path.basename(file);
            const gap = GAPS[gapKey(file)];
            it(name, gap ? { todo: gap } : {}, () => {
                const verdict = compareWithMarkers(markersOf(fs.readFileSync(file, 'utf8')), results.get(path.resolve(file)) ?? []);
                assert.ok(verdict.exact, `${name}: ${verdict.summary}`);
            });
        }
    });
}

describe('verifier corpus', () => {
    suite('examples/', EXAMPLES);
    suite('test/corpus/', CORPUS);
    // programs without any protection annotation: what they need is inferred (issue 13)
    suite('test/corpus/inferred/', path.join(CORPUS, 'inferred'));
});

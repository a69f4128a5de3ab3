// Non-vacuity ("smoke") test of the verifier: a verification condition whose
// assumptions contradict each other proves everything. For every correct
// program of the examples and the corpus, an `assert false;` is added at the
// end of each thread and of each method checked against an abstraction (before
// a final `return`, or where the end is reached last); the checker must report
// every one of them (the point is reachable in the VC), and nothing else. The
// places come from the front end's model (statement ranges), so one-line
// threads and methods get theirs too, and a correct program without any smoke
// assertion is a failure of this test.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildProgram, createCalvinCoreServices, programOf, toProgramModel } from '../../language/src/index.js';
import type { ProgramModel, Range, Stmt } from '../../packages/verifier/src/model/program.js';
import { CLI, EXAMPLES, ROOT } from '../util/paths.js';

const CORPUS = path.join(ROOT, 'test/corpus');
const OUT = path.join(ROOT, 'test/.tmp/vacuity');
const SMOKE = 'assert false; ';

/** A place to insert at; `annotation`: a statement annotation starts there (insert before its `//@` or `/*@`). */
interface Pos { line: number; char: number; annotation?: boolean }

const startOf = (r: Range): Pos => ({ line: r.startLine, char: r.startChar });

/** Whether a statement list cannot fall off its end (it ends in a return on every path). */
function endsInReturn(stmts: Stmt[]): boolean {
    const last = stmts[stmts.length - 1];
    if (!last) return false;
    switch (last.kind) {
        case 'return': return true;
        case 'block': case 'sync': return endsInReturn(last.body);
        case 'if': return endsInReturn(last.then) && endsInReturn(last.else);
        default: return false;
    }
}

/** Before the first statement of a list (inside blocks). */
function firstPoint(stmts: Stmt[]): Pos | undefined {
    const first = stmts[0];
    if (!first) return undefined;
    return first.kind === 'block' ? firstPoint(first.body) : { ...startOf(first.range), annotation: first.kind === 'witness' };
}

/**
 * Where the end of a body is reached last: before its final `return` (and the
 * `witness` annotations that belong to it), before a final `if` whose branches
 * all return, inside a final endless loop, or at `end` (the closing brace).
 */
function smokePoint(stmts: Stmt[], end: Pos | undefined): Pos | undefined {
    const i = stmts.length - 1;
    const last = stmts[i];
    if (!last) return end;
    const before = (k: number): Pos => {
        while (k > 0 && stmts[k - 1].kind === 'witness') k--;
        return { ...startOf(stmts[k].range), annotation: stmts[k].kind === 'witness' };
    };
    switch (last.kind) {
        case 'return': return before(i);
        case 'block': case 'sync': return smokePoint(last.body, undefined) ?? end;
        case 'if': return endsInReturn(last.then) && endsInReturn(last.else) ? before(i) : end;
        case 'while':
            // an endless loop: its body is reached (the end of the thread is not)
            return last.cond.kind === 'bool' && last.cond.value ? firstPoint(last.body) ?? end : end;
        default: return end;
    }
}

async function modelOf(file: string, text: string): Promise<ProgramModel> {
    const { shared, Calvin } = createCalvinCoreServices();
    const res = await buildProgram(shared, [{ uri: pathToFileURL(file).toString(), text }]);
    const doc = res.documents[0];
    const errors = (doc.diagnostics ?? []).filter(d => d.severity === 1);
    assert.deepEqual(errors.map(e => e.message), [], `${path.basename(file)} has front-end errors`);
    return toProgramModel(programOf(doc, shared.workspace.LangiumDocuments.all), Calvin.types.TypeSystem);
}

/** The program with `assert false;` at the end of each thread and each method with an abstraction; the (1-based) lines of those asserts. */
async function withSmoke(file: string, text: string): Promise<{ text: string; lines: number[] }> {
    const m = await modelOf(file, text);
    const points: Pos[] = [];
    for (const t of m.threads) {
        // the thread's closing brace ends its range
        const end = { line: t.range.endLine, char: t.range.endChar - 1 };
        const p = smokePoint(t.body, end);
        if (p) points.push(p);
    }
    const methods = [...m.procedures, ...m.classes.flatMap(c => c.methods)].filter(x => x.abstraction);
    for (const x of methods) {
        const p = smokePoint(x.body, startOf(x.endRange));
        if (p) points.push(p);
    }
    const lines = text.split('\n');
    // inserted on the same line, last first (so that earlier columns stay valid)
    for (const p of [...points].sort((a, b) => b.line - a.line || b.char - a.char)) {
        const l = lines[p.line];
        const at = p.annotation ? Math.max(l.lastIndexOf('//@', p.char), l.lastIndexOf('/*@', p.char)) : p.char;
        assert.ok(at >= 0, `${path.basename(file)}:${p.line + 1}: the annotation does not start on the line of its clause`);
        lines[p.line] = l.slice(0, at) + SMOKE + l.slice(at);
    }
    return { text: lines.join('\n'), lines: [...new Set(points.map(p => p.line + 1))].sort((a, b) => a - b) };
}

describe('non-vacuity: the end of every thread and checked method of the correct programs is reachable in its VC', async () => {
    const programs = [
        ...fs.readdirSync(EXAMPLES).filter(f => f.endsWith('_ok.calvin')).map(f => path.join(EXAMPLES, f)),
        ...fs.readdirSync(CORPUS).filter(f => f.endsWith('_ok.calvin')).map(f => path.join(CORPUS, f)),
    ];
    fs.rmSync(OUT, { recursive: true, force: true });
    fs.mkdirSync(OUT, { recursive: true });
    const expected = new Map<string, number[]>();
    for (const p of programs) {
        const file = path.join(OUT, path.basename(p));
        const { text, lines } = await withSmoke(file, fs.readFileSync(p, 'utf8'));
        fs.writeFileSync(file, text);
        expected.set(file, lines);
    }
    let reported: Array<{ file: string; line: number; code: string; severity: string; message: string }> | undefined;
    const report = () => {
        if (!reported) {
            const r = spawnSync(process.execPath, [CLI, 'check', '--no-witness', '--format', 'json', OUT], { encoding: 'utf8', timeout: 20 * 60_000, maxBuffer: 64 << 20 });
            assert.ok(r.status === 0 || r.status === 1, r.stderr);
            reported = JSON.parse(r.stdout).diagnostics;
        }
        return reported!;
    };
    for (const [file, lines] of expected) {
        it(path.basename(file), { timeout: 20 * 60_000 }, () => {
            assert.ok(lines.length > 0, 'no smoke assertion could be placed in this program');
            const got = report().filter(d => path.resolve(d.file) === file && d.severity !== 'info');
            assert.deepEqual(got.map(d => `${d.line}:${d.code}`).sort(), lines.map(l => `${l}:assert`).sort(), got.map(d => `${d.line}: ${d.message}`).join('\n'));
        });
    }
});

describe('smoke placement', () => {
    it('one-line threads and methods, final returns (with their witness), synchronized blocks and endless loops', async () => {
        const text = [
            'class L { }',
            'final L lk = new L();',
            'int x = 0;',
            '/*@ abstraction { step [x] true; } */',
            'int get() { //@ witness step 1;',
            '  return x; }',
            'thread A { int k = get(); }',
            'thread B {',
            '  synchronized (lk) { x = 1; }',
            '}',
            'thread C { while (true) { x = 2; } }',
        ].join('\n');
        const s = await withSmoke('/smoke/p.calvin', text);
        const out = s.text.split('\n');
        assert.deepEqual(s.lines, [5, 7, 10, 11]);
        assert.equal(out[4], 'int get() { assert false; //@ witness step 1;');
        assert.equal(out[6], 'thread A { int k = get(); assert false; }');
        assert.equal(out[9], 'assert false; }');
        assert.equal(out[10], 'thread C { while (true) { assert false; x = 2; } }');
    });
});

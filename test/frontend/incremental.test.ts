// The incremental front end (language/src/workspace/incremental.ts) against a
// full rebuild: example and corpus programs get sequences of edits inside
// method and thread bodies (statements added and removed, names that do not
// resolve, type errors, annotations, comments, calls that change the call
// graph, syntax errors); after each edit the incrementally updated document
// must equal a fresh build of the same text: the same diagnostics in the same
// order, the same syntax tree with the same offsets and positions for every
// node and token, the same reference targets, the same program model. The test
// also requires that most edits actually took the incremental path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AstNode, CstNode, FileSystemProvider, LangiumDocument, LangiumSharedCoreServices } from 'langium';
import { AstUtils, CstUtils, DocumentState, EmptyFileSystem, URI } from 'langium';
import * as ast from '../../language/src/generated/ast.js';
import { buildProgram, createCalvinCoreServices, toProgramModel, type CalvinServices } from '../../language/src/index.js';
import { pendingBodyEdit } from '../../language/src/workspace/incremental.js';
import { mulberry32 } from '../fuzz/mutate.js';
import { randomBodyEdit } from '../util/body-edits.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EDITS_PER_PROGRAM = 6;

function programs(): Array<{ name: string; text: string }> {
    const out: Array<{ name: string; text: string }> = [];
    const add = (dir: string, every: number) => {
        const files = fs.readdirSync(dir).filter(f => f.endsWith('.calvin')).sort();
        files.forEach((f, i) => { if (i % every === 0) out.push({ name: path.relative(ROOT, path.join(dir, f)), text: fs.readFileSync(path.join(dir, f), 'utf8') }); });
    };
    add(path.join(ROOT, 'examples'), 1);
    add(path.join(ROOT, 'test/corpus'), 3);
    return out;
}


interface Workspace {
    shared: LangiumSharedCoreServices;
    Calvin: CalvinServices;
    files: Map<string, string>;
}

function workspace(): Workspace {
    const files = new Map<string, string>();
    const empty = EmptyFileSystem.fileSystemProvider();
    const provider: FileSystemProvider = Object.assign(Object.create(Object.getPrototypeOf(empty)), empty, {
        readFile: async (uri: URI) => {
            const text = files.get(uri.toString());
            if (text === undefined) throw new Error(`no file ${uri.toString()}`);
            return text;
        },
    });
    const { shared, Calvin } = createCalvinCoreServices({ fileSystemProvider: () => provider });
    return { shared, Calvin, files };
}

function rangeText(c: CstNode | undefined): string {
    if (!c) return '-';
    const r = c.range;
    return `${c.offset}+${c.length} ${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;
}

/** Everything position- and link-related of a document, as lines. */
function snapshot(document: LangiumDocument): string[] {
    const root = document.parseResult.value;
    const out: string[] = [];
    const where = (n: AstNode | undefined) => n ? `${n.$type}@${n.$cstNode?.offset}` : 'none';
    for (const node of AstUtils.streamAst(root)) {
        const c = node.$cstNode;
        out.push(`${node.$type} ${node.$containerProperty ?? ''}${node.$containerIndex ?? ''} ${rangeText(c)} ${c?.astNode === node}`);
        for (const ref of AstUtils.streamReferences(node)) {
            const r = ref.reference;
            out.push(`  ${ref.property} '${r.$refText}' ${rangeText(r.$refNode)} -> ${r.error ? `error ${r.error.message}` : where(r.ref)}`);
        }
    }
    for (const leaf of CstUtils.streamCst(root.$cstNode!)) {
        if (!('content' in leaf)) out.push(`leaf ${rangeText(leaf)} ${leaf.hidden} ${JSON.stringify(leaf.text)} ${leaf.root === root.$cstNode}`);
    }
    out.push(`references ${document.references.length}`);
    return out;
}

function diagnostics(document: LangiumDocument): string[] {
    return (document.diagnostics ?? []).map(d => `${d.range.start.line}:${d.range.start.character}-${d.range.end.line}:${d.range.end.character} ${d.code} ${d.severity} ${d.message}`);
}

/** Equal line lists; otherwise fails with the first difference (the lists can be long). */
function sameLines(actual: string[], expected: string[], context: string): void {
    const n = Math.max(actual.length, expected.length);
    for (let i = 0; i < n; i++) {
        if (actual[i] !== expected[i]) {
            assert.fail(`${context}: line ${i} differs\n  incremental: ${actual[i]}\n  full:        ${expected[i]}\n  (before: ${expected[i - 1]})`);
        }
    }
}

async function fresh(uri: string, text: string): Promise<{ document: LangiumDocument; Calvin: CalvinServices }> {
    const { shared, Calvin } = createCalvinCoreServices();
    const result = await buildProgram(shared, [{ uri, text }]);
    return { document: result.documents[0], Calvin };
}

/** `text` as a file of a workspace of its own, built, and updated once (which settles the validation categories of updates). */
async function built(uri: string, text: string): Promise<{ w: Workspace; document: LangiumDocument; builder: LangiumSharedCoreServices['workspace']['DocumentBuilder'] }> {
    const w = workspace();
    w.files.set(uri, text);
    const document = (await buildProgram(w.shared, [{ uri, text }])).documents[0];
    const builder = w.shared.workspace.DocumentBuilder;
    await builder.update([URI.parse(uri)], []);
    return { w, document, builder };
}

/** The document, updated to `text`, equals a fresh build of `text`. */
async function compareWithFullBuild(w: Workspace, document: LangiumDocument, uri: string, text: string, context: string): Promise<void> {
    const expected = await fresh(uri, text);
    assert.equal(document.textDocument.getText(), text, context);
    sameLines(diagnostics(document), diagnostics(expected.document), `diagnostics: ${context}`);
    sameLines(snapshot(document), snapshot(expected.document), `tree: ${context}`);
    // (the model is built for programs without errors)
    if ((expected.document.diagnostics ?? []).some(d => d.severity === 1)) return;
    const model = JSON.stringify(toProgramModel([document], w.Calvin.types.TypeSystem));
    assert.equal(model, JSON.stringify(toProgramModel([expected.document], expected.Calvin.types.TypeSystem)), `model: ${context}`);
}

/**
 * Applies the edits one after the other (each a replacement of a unique
 * needle); after each, the document equals a full build, and took the
 * incremental path or not as `incremental` says.
 */
async function editSequence(text: string, edits: Array<{ from: string; to: string; incremental: boolean }>): Promise<LangiumDocument> {
    const uri = 'file:///incremental/sequence.calvin';
    const { w, document, builder } = await built(uri, text);
    let tookIncremental = false;
    builder.onBuildPhase(DocumentState.IndexedContent, () => { tookIncremental ||= pendingBodyEdit(document) !== undefined; });
    for (const [i, e] of edits.entries()) {
        assert.equal(text.split(e.from).length, 2, `'${e.from}' is not unique`);
        text = text.replace(e.from, e.to);
        w.files.set(uri, text);
        tookIncremental = false;
        await builder.update([URI.parse(uri)], []);
        const context = `edit ${i + 1} ('${e.from}' → '${e.to}')`;
        assert.equal(tookIncremental, e.incremental, `${context}: incremental`);
        await compareWithFullBuild(w, document, uri, text, context);
    }
    return document;
}

describe('incremental front end', () => {
    const program = [
        '// header comment',
        'int g = 0;',
        'class C {',
        '  int f = 0;',
        '  void a() {',
        '    b(); // calls b',
        '  }',
        '  void b() {',
        '    f = f + 1;',
        '  }',
        '}',
        'thread T {',
        '  C c = new C();',
        '  c.a(); g = 1;',
        '}',
        '// trailing comment',
        '',
    ].join('\n');

    it('a call that closes a cycle reports the recursion at both methods, and removing it clears it', async () => {
        const document = await editSequence(program, [
            { from: 'f = f + 1;', to: 'f = f + 1;\n    a();', incremental: true },
        ]);
        const messages = (document.diagnostics ?? []).map(d => d.message);
        assert.equal(messages.filter(m => m.startsWith('Recursion through methods')).length, 2, messages.join('\n'));
        await editSequence(program.replace('f = f + 1;', 'f = f + 1; a();'), [
            { from: ' a();', to: '', incremental: true },
        ]);
    });

    it('edits at the start and end of bodies, in threads, across lines; syntax errors and their fixes', async () => {
        await editSequence(program, [
            { from: '  c.a(); g = 1;', to: '  c.a(); g = 2;\n  int h = g;', incremental: true },
            { from: '    b(); // calls b', to: '    /* { */ b(); // calls b', incremental: true },
            // a syntax error: full (error recovery may reach beyond the body); its fix: incremental
            { from: 'int h = g;', to: 'int h = ;', incremental: false },
            { from: 'int h = ;', to: 'int h = g + 1;', incremental: true },
            { from: 'int h = g + 1;', to: 'int h = g + 1', incremental: false },
            { from: 'f = f + 1;', to: 'f = f + 2;', incremental: false }, // the error elsewhere: full
            { from: 'int h = g + 1', to: 'int h = g + 1;', incremental: true },
            { from: '    f = f + 2;\n', to: '', incremental: true },
            { from: 'void b() {\n', to: 'void b() {\n    boolean q = 1;\n', incremental: true },
        ]);
    });

    it('edits outside bodies rebuild everything', async () => {
        await editSequence(program, [
            { from: 'int f = 0;', to: 'int f = 1;', incremental: false },
            { from: 'void b()', to: 'void bb()', incremental: false },
            { from: '// trailing comment', to: '// trailing', incremental: false },
            { from: '  void a() {\n', to: '  void a() {}\n  void a2() {\n', incremental: false },
        ]);
    });

    it('an edit that arrives while the previous one is being built does not cancel it: both are incremental', async () => {
        const uri = 'file:///incremental/queued.calvin';
        const { w, document, builder } = await built(uri, program);
        const lock = w.shared.workspace.WorkspaceLock;
        const update = () => lock.write(token => builder.update([URI.parse(uri)], [], token));
        let incremental = 0, validated = 0;
        builder.onBuildPhase(DocumentState.IndexedContent, () => { if (pendingBodyEdit(document)) incremental++; });
        builder.onDocumentPhase(DocumentState.Validated, () => { validated++; });
        const first = program.replace('f = f + 1;', 'f = f + 1;\n    int k = 0;');
        const second = first.replace('int k = 0;', 'int k = 1;');
        w.files.set(uri, first);
        let started!: () => void;
        const inFirstBuild = new Promise<void>(resolve => { started = resolve; });
        const phase = builder.onBuildPhase(DocumentState.ComputedScopes, () => started());
        const p1 = update();
        await inFirstBuild;
        phase.dispose();
        w.files.set(uri, second);
        const p2 = update(); // cancels the first build's token
        await Promise.all([p1, p2]);
        assert.equal(validated, 2, 'both builds completed');
        assert.equal(incremental, 2, 'both builds were incremental');
        await compareWithFullBuild(w, document, uri, second, 'after both edits');
    });

    it('a line annotation that runs to the end of the body\'s last line takes its closing brace: a full rebuild', async () => {
        const oneLine = 'class C {\n  int f = 0;\n  void m() { f = f + 1; }\n}\nthread T { C c = new C(); c.m(); }\n';
        await editSequence(oneLine, [
            { from: 'f = f + 1; }', to: 'f = f + 1; //@ assert f > 0; }', incremental: false },
            { from: 'f = f + 1; //@ assert f > 0; }', to: 'f = f + 1; }', incremental: false }, // after an error elsewhere
            { from: 'c.m(); }', to: 'c.m();\n  //@ assert true;\n}', incremental: true },
            { from: '{ f = f + 1; }', to: '{ //@ assert f >= 0;\n f = f + 1; }', incremental: true },
        ]);
    });

    it('files with CRLF line ends', async () => {
        await editSequence(program.replace(/\n/g, '\r\n'), [
            { from: 'f = f + 1;', to: 'f = f + 1;\r\n    f = 2;', incremental: true },
            { from: 'g = 1;', to: 'g = 1;\r\n  g = 3;', incremental: true },
        ]);
    });

    it('equals a full rebuild after every edit inside a body', async () => {
        let edits = 0, incremental = 0;
        for (const [p, program] of programs().entries()) {
            const uri = `file:///incremental/${path.basename(program.name)}`;
            let text = program.text;
            const { w, document, builder } = await built(uri, text);
            let tookIncremental = false;
            builder.onBuildPhase(DocumentState.IndexedContent, () => { tookIncremental ||= pendingBodyEdit(document) !== undefined; });
            const rnd = mulberry32(1000 + p);
            for (let k = 0; k < EDITS_PER_PROGRAM; k++) {
                const next = randomBodyEdit(text, document.parseResult.value as ast.Program, rnd, k);
                if (next === undefined || next === text) break;
                text = next;
                w.files.set(uri, text);
                tookIncremental = false;
                await builder.update([URI.parse(uri)], []);
                edits++;
                if (tookIncremental) incremental++;
                await compareWithFullBuild(w, document, uri, text, `${program.name}, edit ${k + 1} (${tookIncremental ? 'incremental' : 'full'})`);
            }
        }
        assert.ok(edits >= 100, `only ${edits} edits`);
        assert.ok(incremental >= edits * 0.4, `only ${incremental} of ${edits} edits were incremental`);
        console.log(`${edits} edits, ${incremental} incremental`);
    });
});

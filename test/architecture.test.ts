// docs/architecture.md matches the code: every folder its code map names
// exists and every folder of the verifier is named; and the verifier keeps
// the rules the page states — no Langium or LSP, no IO in the pipeline, and
// folders that import each other without cycles. Imports are read with
// TypeScript's parser (type-only imports and `import('...')` types count).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import ts from 'typescript';
import { ROOT } from './util/paths.js';

const DOC = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
const SRC = path.join(ROOT, 'packages/verifier/src');
const SRC_PREFIX = 'packages/verifier/src/';

/** The lines of one `## ` section of the page. */
function section(title: string): string[] {
    const lines = DOC.split('\n');
    const start = lines.findIndex(l => l === `## ${title}`);
    assert.ok(start >= 0, `docs/architecture.md has a "## ${title}" section`);
    const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
    return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** The headings of the code map, with the paths (backticked, with a `/`) they name. */
const headings = section('Code map')
    .filter(l => /^#{3,} /.test(l))
    .map(l => ({ line: l, stage: /^#{3,} (\d+)\. /.exec(l)?.[1], paths: [...l.matchAll(/`([^`\s]+\/[^`\s]*)`/g)].map(m => m[1]) }));

/** The verifier's top-level folder of a file (a file at the top is a node of its own: `index.ts`). */
function folderOf(file: string): string {
    return path.relative(SRC, file).split(path.sep)[0];
}

function sourceFiles(dir: string): string[] {
    const out: string[] = [];
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) out.push(...sourceFiles(p));
        else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
    }
    return out.sort();
}

/** Every module specifier a file imports or re-exports, type-only ones included. */
function importsOf(file: string): string[] {
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const out: string[] = [];
    const visit = (n: ts.Node): void => {
        if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) out.push(n.moduleSpecifier.text);
        else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) out.push(n.argument.literal.text);
        else if (ts.isCallExpression(n) && n.arguments.length > 0 && ts.isStringLiteral(n.arguments[0])
            && (n.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(n.expression) && n.expression.text === 'require'))) out.push(n.arguments[0].text);
        ts.forEachChild(n, visit);
    };
    visit(sf);
    return out;
}

/** A relative import resolved to its source file (`./x.js` → x.ts). */
function resolve(from: string, spec: string): string {
    const target = path.resolve(path.dirname(from), spec.replace(/\.js$/, '.ts'));
    assert.ok(fs.existsSync(target), `${path.relative(ROOT, from)} imports ${spec}, which does not resolve to a source file`);
    return target;
}

const isBuiltin = (spec: string) => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]);
const isRelative = (spec: string) => spec.startsWith('.');
const rel = (file: string) => path.relative(SRC, file).split(path.sep).join('/');

const files = sourceFiles(SRC);
const imports = new Map(files.map(f => [f, importsOf(f)]));

describe('docs/architecture.md matches the code', () => {
    it('names folders that exist', () => {
        const named = headings.flatMap(h => h.paths);
        assert.ok(named.length >= 25, `the code map's headings name folders (found ${named.length})`);
        const missing = named.filter(p => !fs.existsSync(path.join(ROOT, p)));
        assert.deepEqual(missing, [], 'folders named in the code map that do not exist');
    });

    it('names every folder of the verifier', () => {
        const named = new Set(headings.flatMap(h => h.paths).filter(p => p.startsWith(SRC_PREFIX)).map(p => p.slice(SRC_PREFIX.length).replace(/\/$/, '')));
        const folders = fs.readdirSync(SRC, { withFileTypes: true }).filter(e => e.isDirectory()).map(e => e.name).sort();
        assert.deepEqual(folders.filter(f => !named.has(f)), [], 'verifier folders missing from the code map');
    });

    it('numbers the pipeline stages in order, each a verifier folder', () => {
        const stages = headings.filter(h => h.stage !== undefined);
        const numbers = stages.map(h => Number(h.stage));
        assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b), 'stages in increasing order');
        assert.ok(numbers.length >= 6, 'the stages are numbered');
        for (const h of stages) assert.ok(h.paths.length > 0 && h.paths.every(p => p.startsWith(SRC_PREFIX)), h.line);
    });

    it('names the entry points, and they exist', () => {
        const entries = section('Entry points').join('\n');
        for (const f of ['packages/cli/src/main.ts', 'server/src/start.ts', 'packages/verifier/src/worker/check-worker.ts', 'client/src/extension.ts']) {
            assert.ok(entries.includes(`\`${f}\``), `entry point ${f} is named`);
            assert.ok(fs.existsSync(path.join(ROOT, f)), f);
        }
    });

    it('has a glossary with one row per term', () => {
        const rows = section('Glossary').filter(l => l.startsWith('| ') && !l.startsWith('| term') && !l.startsWith('|---'));
        const terms = rows.map(r => r.split('|')[1].trim());
        assert.ok(terms.includes('check') && terms.includes('obligation') && terms.includes('check plan') && terms.includes('check job'), terms.join(', '));
        assert.deepEqual(terms.filter((t, i) => terms.indexOf(t) !== i), [], 'terms defined twice');
    });
});

describe('the verifier keeps the architecture invariants', () => {
    it('imports nothing from Langium, LSP, Chevrotain or the other workspace packages', () => {
        const bad: string[] = [];
        for (const [file, specs] of imports) {
            for (const s of specs) {
                if (isRelative(s) || isBuiltin(s)) continue;
                if ((s === 'z3-solver' || s.startsWith('z3-solver/')) && rel(file).startsWith('solver-host/')) continue;
                bad.push(`${rel(file)}: ${s}`);
            }
        }
        assert.deepEqual(bad, [], 'packages imported by the verifier besides z3-solver (in solver-host/)');
    });

    it('the pipeline stages, smt/ and driver/ do no IO: no Node built-in module, directly or through what they import', () => {
        const stageFolders = headings.filter(h => h.stage !== undefined).flatMap(h => h.paths).map(p => p.slice(SRC_PREFIX.length).replace(/\/$/, ''));
        const pure = new Set([...stageFolders, 'smt', 'driver']);
        const allowed = (file: string) => pure.has(folderOf(file)) || rel(file) === 'solver-host/types.ts';
        const problems: string[] = [];
        for (const file of files.filter(f => pure.has(folderOf(f)))) {
            const seen = new Set<string>();
            const stack = [file];
            while (stack.length > 0) {
                const f = stack.pop()!;
                if (seen.has(f)) continue;
                seen.add(f);
                for (const s of imports.get(f) ?? []) {
                    if (isBuiltin(s)) problems.push(`${rel(file)} reaches ${s} (in ${rel(f)})`);
                    else if (isRelative(s)) {
                        const target = resolve(f, s);
                        if (!allowed(target)) problems.push(`${rel(file)} reaches ${rel(target)} (from ${rel(f)})`);
                        else stack.push(target);
                    }
                }
            }
        }
        assert.deepEqual(problems, []);
    });

    it('IO stays in solver-host/, worker/ and incremental/cache.ts', () => {
        const allowed = (file: string, spec: string) => {
            const r = rel(file);
            return r.startsWith('solver-host/') || r.startsWith('worker/') || r === 'incremental/cache.ts'
                || (r === 'incremental/plan.ts' && spec === 'node:crypto'); // hashing, not IO
        };
        const bad = [...imports].flatMap(([file, specs]) => specs.filter(s => isBuiltin(s) && !allowed(file, s)).map(s => `${rel(file)}: ${s}`));
        assert.deepEqual(bad, []);
    });

    it('its folders import each other without cycles', () => {
        const graph = new Map<string, Set<string>>();
        for (const [file, specs] of imports) {
            const from = folderOf(file);
            const edges = graph.get(from) ?? graph.set(from, new Set()).get(from)!;
            for (const s of specs.filter(isRelative)) {
                const to = folderOf(resolve(file, s));
                if (to !== from) edges.add(to);
            }
        }
        // depth-first search; a back edge is a cycle, reported with its path
        const state = new Map<string, 'open' | 'done'>();
        const cycles: string[] = [];
        const dfs = (n: string, trail: string[]): void => {
            state.set(n, 'open');
            for (const m of [...(graph.get(n) ?? [])].sort()) {
                if (state.get(m) === 'open') cycles.push([...trail.slice(trail.indexOf(m)), n, m].join(' → '));
                else if (!state.has(m)) dfs(m, [...trail, n]);
            }
            state.set(n, 'done');
        };
        for (const n of [...graph.keys()].sort()) if (!state.has(n)) dfs(n, []);
        assert.deepEqual(cycles, [], 'import cycles between the folders of packages/verifier/src');
        assert.ok(graph.size >= 15, `the graph covers the verifier (${graph.size} folders)`);
    });
});

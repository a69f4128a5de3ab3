// Runs every test/**/*.test.ts with Node's built-in test runner (TypeScript through tsx).
// Usage: npm test [-- PATTERN]   (PATTERN filters test files by substring)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const filter = process.argv[2];

function find(dir) {
    const out = [];
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
        const p = path.join(dir, e.name);
        if (e.isDirectory()) out.push(...find(p));
        else if (e.name.endsWith('.test.ts')) out.push(p);
    }
    return out;
}

const files = find(path.join(root, 'test')).filter(f => !filter || f.includes(filter)).sort();
if (files.length === 0) {
    console.error('no test files found');
    process.exit(1);
}
const result = spawnSync(process.execPath, [
    '--require', path.join(root, 'scripts/polyfill.cjs'),
    '--import', 'tsx',
    '--test', '--test-concurrency=1', '--test-reporter=spec',
    ...files,
], { stdio: 'inherit', cwd: root });
process.exit(result.status ?? 1);

// Bundles the CLI (which includes the language server), the server for the
// VS Code extension, and the extension itself, with esbuild.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
// Node 20 lacks Object.groupBy, which chevrotain (under Langium) calls: define it first thing.
const polyfill = fs.readFileSync(path.join(root, 'scripts/polyfill.cjs'), 'utf8');
const watch = process.argv.includes('--watch');

const common = {
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: true,
    logLevel: 'warning',
    banner: { js: polyfill },
    define: { CALVIN_VERSION: JSON.stringify(version) },
    // Langium is ESM; in a CJS bundle import.meta.url must still point at the bundle.
    mainFields: ['module', 'main'],
};

const builds = [
    { ...common, entryPoints: [path.join(root, 'packages/cli/src/main.ts')], outfile: path.join(root, 'packages/cli/out/calvin.cjs') },
    { ...common, entryPoints: [path.join(root, 'server/src/main.ts')], outfile: path.join(root, 'client/out/server.cjs') },
    { ...common, entryPoints: [path.join(root, 'client/src/extension.ts')], outfile: path.join(root, 'client/out/extension.cjs'), external: ['vscode'], banner: {} },
];

for (const options of builds) {
    if (!fs.existsSync(options.entryPoints[0])) continue;
    if (watch) {
        const ctx = await esbuild.context(options);
        await ctx.watch();
    } else {
        await esbuild.build(options);
    }
}
if (!watch) console.log(`bundled ${builds.length} entry points (calvin ${version})`);

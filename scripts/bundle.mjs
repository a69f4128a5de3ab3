// Bundles the CLI (which includes the language server), the server for the
// VS Code extension, and the extension itself, with esbuild.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
    // the `calvin` command: a small launcher (launch.ts: V8's flags for a WebAssembly run), then the command
    { ...common, entryPoints: [path.join(root, 'packages/cli/src/launch.ts')], outfile: path.join(root, 'packages/cli/out/calvin.cjs'), banner: {} },
    { ...common, entryPoints: [path.join(root, 'packages/cli/src/main.ts')], outfile: path.join(root, 'packages/cli/out/calvin-main.cjs') },
    { ...common, entryPoints: [path.join(root, 'server/src/main.ts')], outfile: path.join(root, 'client/out/server.cjs') },
    { ...common, entryPoints: [path.join(root, 'client/src/extension.ts')], outfile: path.join(root, 'client/out/extension.cjs'), external: ['vscode'], banner: {} },
];

// The z3 worker of the solver host (packages/verifier/src/solver-host). z3-solver is never
// inlined whole: Z3's pthreads load the script that contains z3-built.js.
// - Every worker bundle loads Emscripten's glue from next to itself: z3-built.js as
//   patched for speed by packages/verifier/src/solver-host/z3-glue.ts, written below as
//   z3-built.cjs (the CLI's package is an ES module package: a .js would not load).
// - CLI (and tests): z3-solver's wrapper stays external, loaded from node_modules, and so
//   does z3-built.wasm.
// - VS Code extension (.vsix without node_modules): z3-solver's JS wrapper is inlined,
//   and z3-built.wasm is copied next to the bundle (CALVIN_Z3_BESIDE).
const z3Worker = path.join(root, 'packages/verifier/src/solver-host/z3-worker.ts');
const checkWorker = path.join(root, 'packages/verifier/src/worker/check-worker.ts');
const workerCommon = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, logLevel: 'warning', entryPoints: [z3Worker] };
const checkCommon = { ...workerCommon, entryPoints: [checkWorker], mainFields: ['module', 'main'], banner: { js: polyfill } };
builds.push(
    { ...workerCommon, outfile: path.join(root, 'packages/cli/out/z3-worker.cjs'), external: ['z3-solver'], define: { CALVIN_Z3_BESIDE: 'false' } },
    { ...workerCommon, outfile: path.join(root, 'client/out/z3-worker.cjs'), external: ['z3-solver/build/z3-built.js'], define: { CALVIN_Z3_BESIDE: 'true' } },
    // the check workers of the language server: the verifier and its own Z3
    { ...checkCommon, outfile: path.join(root, 'packages/cli/out/check-worker.cjs'), external: ['z3-solver'], define: { CALVIN_Z3_BESIDE: 'false' } },
    { ...checkCommon, outfile: path.join(root, 'client/out/check-worker.cjs'), external: ['z3-solver/build/z3-built.js'], define: { CALVIN_Z3_BESIDE: 'true' } },
);
if (fs.existsSync(z3Worker)) {
    const z3Build = path.dirname(createRequire(path.join(root, 'packages/verifier/package.json')).resolve('z3-solver/build/z3-built.js'));
    // (tsc -b has compiled the verifier: the patcher is its out/ module)
    const { patchGlue } = await import(pathToFileURL(path.join(root, 'packages/verifier/out/solver-host/z3-glue.js')).href);
    const wasm = fs.readFileSync(path.join(z3Build, 'z3-built.wasm'));
    const glue = patchGlue(fs.readFileSync(path.join(z3Build, 'z3-built.js'), 'utf8'), wasm);
    for (const dir of ['packages/cli/out', 'client/out']) {
        fs.mkdirSync(path.join(root, dir), { recursive: true });
        fs.writeFileSync(path.join(root, dir, 'z3-built.cjs'), glue);
    }
    fs.copyFileSync(path.join(z3Build, 'z3-built.wasm'), path.join(root, 'client/out', 'z3-built.wasm'));
}

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

// V8's code cache of the command (packages/cli/src/code-cache.ts): examples checked once per
// flavor of V8's flags, the compiled code written at the exit. Optional: a cache that cannot be
// made is left out (the command compiles as usual), and an old one never outlives its bundle.
{
    const bundle = path.join(root, 'packages/cli/out/calvin-main.cjs');
    const flavors = ['plain', 'wasm'];
    for (const f of flavors) fs.rmSync(`${bundle}.${f}.cache`, { force: true });
    if (!watch && fs.existsSync(bundle) && process.env.CALVIN_NO_CODE_CACHE === undefined) {
        const { spawnSync } = await import('node:child_process');
        // (four examples cover the front end, the inference, abstractions, arrays and the witness
        // search: the whole folder made no faster cache and took twice as long)
        const examples = ['vector_race', 'simple_lock_unlocked', 'abstract_threads_negative', 'time_varying_ok'].map(n => path.join(root, 'examples', `${n}.calvin`));
        for (const f of flavors) {
            const t0 = Date.now();
            // (Z3 in WebAssembly for both: it is there wherever the build is)
            const r = spawnSync(process.execPath, [path.join(root, 'packages/cli/out/calvin.cjs'), 'check', '--solver', 'wasm', '--format', 'json', ...examples], {
                env: { ...process.env, CALVIN_CODE_CACHE: `write:${f}` }, encoding: 'utf8', timeout: 300_000, maxBuffer: 64 * 1024 * 1024,
            });
            const made = fs.existsSync(`${bundle}.${f}.cache`);
            if (r.status !== 0 && r.status !== 1) fs.rmSync(`${bundle}.${f}.cache`, { force: true });
            console.log(made && (r.status === 0 || r.status === 1) ? `code cache (${f}): ${Date.now() - t0} ms` : `code cache (${f}) not made (exit ${r.status}${r.error ? `, ${r.error.message}` : ''}): the command compiles as usual`);
        }
    }
}

// The `calvin` command's entry (bundled to packages/cli/out/calvin.cjs; the
// command itself is calvin-main.cjs, main.ts). It loads nothing else first,
// because of one decision that must be taken before anything compiles
// WebAssembly: V8's settings for it.
//
// A `check` or `infer` that will run Z3 in WebAssembly runs with V8's baseline
// compiler only (Liftoff) and lazy validation: Z3's 35 MB module starts sooner
// and no optimizing compilation competes for the cores with the checks. Its
// code then runs about 15 % slower once warm, which a run of a few seconds
// never makes up (issue 15, measured on the textbook programs: 3.0-3.4 s end
// to end before, 2.4-2.9 s after). The flags are set here, through
// v8.setFlagsFromString, before the first module is compiled (Node keeps V8's
// flags open to it; checked with Node 20, 22 and 24): a second Node started
// with them on its command line, as this launcher did before, cost 60-200 ms
// more. The language server (`calvin lsp`, the VS Code extension) keeps V8's
// tiering: it runs for hours, and the flags hold for the whole process (set
// back later, they do not bring the optimizing tier back; measured).
//
// The choice of solver is guessed here as `resolveSolver` will make it (an
// explicit --solver, else a z3 on PATH or at --z3-path means native): a wrong
// guess costs only the time, never a result.
//
// The command's bundle is loaded with V8's code cache made at build time
// (code-cache.ts), one per set of flags.
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { loadBundle } from './code-cache.js';
import { findNativeZ3, prefetchNativeZ3Version } from '@calvin/verifier/find-z3';
import { QUICK_WASM_FLAGS, QUICK_WASM_SET, runsWasm } from './quick-wasm.js';

function main(): void {
    const here = typeof __dirname === 'string' ? __dirname : '.';
    // (scripts/bundle.mjs makes each flavor's cache in a run of its own: CALVIN_CODE_CACHE=write:<flavor>)
    const args = process.argv.slice(2);
    // (PATH is searched once: for the guess, and for the `--version` started below)
    let z3: string | undefined | null = null;
    const nativeZ3 = () => (z3 === null ? (z3 = findNativeZ3()) : z3);
    const making = /^write:(wasm|plain)$/.exec(process.env.CALVIN_CODE_CACHE ?? '')?.[1];
    const wasm = making ? making === 'wasm' : runsWasm(args, () => nativeZ3() !== undefined);
    if (wasm) {
        v8.setFlagsFromString(QUICK_WASM_FLAGS.join(' '));
        (globalThis as Record<symbol, unknown>)[QUICK_WASM_SET] = true;
    }
    // (a native run: the z3's `--version` runs while the bundle loads)
    if (!wasm && (args[0] === 'check' || args[0] === 'infer') && !args.includes('--no-verify')) {
        const found = nativeZ3();
        if (found) prefetchNativeZ3Version(found);
    }
    loadBundle(path.join(here, 'calvin-main.cjs'), wasm ? 'wasm' : 'plain');
}

main();

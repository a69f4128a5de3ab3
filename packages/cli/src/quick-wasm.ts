// Which `calvin` runs use Z3 in WebAssembly, guessed from the arguments alone, before
// anything loads (launch.ts): an explicit --solver, else a z3 on PATH or at
// --z3-path means native, as resolveSolver decides. A wrong guess costs only time.
import { findNativeZ3 } from '@calvin/verifier/find-z3';

/** The V8 flags of a short WebAssembly run. */
export const QUICK_WASM_FLAGS = ['--liftoff-only', '--wasm-lazy-validation'] as const;

/** Set on globalThis by the launcher when it set the flags (launch.ts and the command are two bundles). */
export const QUICK_WASM_SET = Symbol.for('calvin.quickWasmFlags');

/** Whether this process runs with the flags (set by the launcher, or given to Node). */
export function quickWasmFlags(): boolean {
    return (globalThis as Record<symbol, unknown>)[QUICK_WASM_SET] === true || QUICK_WASM_FLAGS.every(f => process.execArgv.includes(f));
}

/** Whether these arguments ask for a `check` or `infer` run that will use Z3 in WebAssembly. */
export function runsWasm(args: readonly string[], nativeOnPath: () => boolean = () => findNativeZ3() !== undefined): boolean {
    if (args[0] !== 'check' && args[0] !== 'infer') return false;
    let solver = 'auto';
    let z3Path = false;
    for (let i = 1; i < args.length; i++) {
        const a = args[i];
        if (a === '--') break;
        if (a === '--no-verify' || a === '-h' || a === '--help') return false;
        if (a === '--solver') solver = args[++i] ?? solver;
        else if (a.startsWith('--solver=')) solver = a.slice('--solver='.length);
        else if (a === '--z3-path' || a.startsWith('--z3-path=')) z3Path = true;
    }
    if (solver === 'wasm' || solver === 'z3-wasm') return true;
    if (solver !== 'auto') return false;
    return !z3Path && !nativeOnPath();
}


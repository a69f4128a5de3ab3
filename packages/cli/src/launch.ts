// The `calvin` command's entry (bundled to packages/cli/out/calvin.cjs; the
// command itself is calvin-main.cjs, main.ts). It loads nothing else first,
// because of one decision that must be taken before Node starts: V8's settings
// for WebAssembly are fixed for the life of a process (a later
// v8.setFlagsFromString is ignored).
//
// A `check` or `infer` that will run Z3 in WebAssembly runs in a Node started
// with V8's baseline compiler only (Liftoff) and lazy validation: Z3's 35 MB
// module starts sooner and no optimizing compilation competes for the cores
// with the checks. Its code then runs about 15 % slower once warm, which a run
// of a few seconds never makes up (issue 15, measured on the textbook
// programs: 3.0-3.4 s end to end before, 2.4-2.9 s after). The language
// server (`calvin lsp`, the VS Code extension) keeps V8's tiering.
//
// The choice of solver is guessed here as `resolveSolver` will make it (an
// explicit --solver, else a z3 on PATH or at --z3-path means native): a wrong
// guess costs only the time, never a result.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { QUICK_WASM_FLAGS, runsWasm } from './quick-wasm.js';

function main(): void {
    const args = process.argv.slice(2);
    const here = typeof __dirname === 'string' ? __dirname : '.';
    if (process.env.CALVIN_NO_RESPAWN || QUICK_WASM_FLAGS.every(f => process.execArgv.includes(f)) || !runsWasm(args)) {
        require(path.join(here, 'calvin-main.cjs'));
        return;
    }
    // The same command in a Node with the flags; this process waits and passes on its exit.
    const child = spawn(process.execPath, [...process.execArgv, ...QUICK_WASM_FLAGS, process.argv[1], ...args], {
        stdio: 'inherit',
        env: { ...process.env, CALVIN_NO_RESPAWN: '1' },
    });
    // A signal for this process goes on to the command (a terminal's Ctrl-C reaches both).
    const forward = (signal: NodeJS.Signals) => () => { child.kill(signal); };
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, forward(s));
    child.on('error', e => {
        process.stderr.write(`calvin: could not start: ${e.message}\n`);
        process.exit(2);
    });
    child.on('exit', (code, signal) => {
        if (signal) {
            process.removeAllListeners(signal);
            process.kill(process.pid, signal);
        }
        process.exit(code ?? 2);
    });
}

main();

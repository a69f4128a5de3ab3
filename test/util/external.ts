// Tests that need a program outside the repository (Neovim, a native z3):
// skipped with the reason when it is missing, unless CI is set, where the
// missing program makes them fail with a message (.ci/run installs them).
import { spawnSync } from 'node:child_process';

/** Whether a program runs (`cmd --version` exits 0). */
export function runs(cmd: string): boolean {
    const r = spawnSync(cmd, ['--version'], { encoding: 'utf8' });
    return !r.error && r.status === 0;
}

/**
 * The `skip` option for a suite that needs `cmd`: false when it is there, or
 * when CI is set (the suite then fails and says what to install); otherwise
 * the reason, which the test runner prints.
 */
export function needs(cmd: string, install: string): { skip: string | false } {
    if (runs(cmd) || process.env.CI) return { skip: false };
    return { skip: `'${cmd}' is not installed (${install}); skipped outside CI` };
}

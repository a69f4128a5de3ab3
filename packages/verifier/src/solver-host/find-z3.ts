// Where a native z3 is: on PATH. A module of its own, with no other dependency: the
// `calvin` command's launcher (packages/cli/src/launch.ts) asks it before anything else loads.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The z3 executable on PATH, if any. */
export function findNativeZ3(): string | undefined {
    const names = process.platform === 'win32'
        ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean).map(ext => `z3${ext.toLowerCase()}`)
        : ['z3'];
    for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
        if (!dir) continue;
        for (const name of names) {
            const candidate = path.join(dir, name);
            try {
                fs.accessSync(candidate, fs.constants.X_OK);
                if (fs.statSync(candidate).isFile()) return candidate;
            } catch { /* not here */ }
        }
    }
    return undefined;
}

/** The version in `z3 --version`'s output ("Z3 version 4.8.12 - 64 bit" → "4.8.12"). */
export function parseZ3Version(output: string): string | undefined {
    return /version\s+(\d+\.\d+(?:\.\d+)?)/i.exec(output)?.[1];
}

/** Where the launcher leaves a `z3 --version` it started (the launcher and the command are two bundles). */
const PREFETCH = Symbol.for('calvin.z3VersionPrefetch');

interface Prefetch {
    z3: string;
    version: Promise<string | undefined>;
}

/**
 * Start `z3 --version` now, without waiting (the launcher, before the command's bundle loads): the
 * command's choice of solver (choose.ts) then takes its answer instead of running it itself and
 * waiting, about 20 ms on its start-up path.
 */
export function prefetchNativeZ3Version(z3: string): void {
    const version = new Promise<string | undefined>(resolve => {
        try {
            const child = execFile(z3, ['--version'], { encoding: 'utf8', timeout: 5000 }, (error, stdout) => resolve(error ? undefined : parseZ3Version(stdout)));
            child.on('error', () => resolve(undefined));
        } catch {
            resolve(undefined);
        }
    });
    (globalThis as Record<symbol, unknown>)[PREFETCH] = { z3, version } satisfies Prefetch;
}

/** The answer of a prefetched `z3 --version` of this executable, if one was started. */
export function prefetchedNativeZ3Version(z3: string): Promise<string | undefined> | undefined {
    const p = (globalThis as Record<symbol, unknown>)[PREFETCH] as Prefetch | undefined;
    return p && p.z3 === z3 ? p.version : undefined;
}

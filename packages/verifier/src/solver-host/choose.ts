// Which solver backend runs the checks: `auto` takes a native z3 (on PATH, or
// at the path given) when it is at least MIN_NATIVE_VERSION, and Z3 in
// WebAssembly otherwise. Results never depend on the choice (the corpus runs
// under both in test/solver/backends.test.ts); only the time does.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { findNativeZ3, parseZ3Version, prefetchedNativeZ3Version } from './find-z3.js';
import { SolverFailure } from './types.js';

/** What a user may ask for (`z3-wasm` / `z3-native`: older spellings). */
export type SolverChoice = 'auto' | 'wasm' | 'native' | 'z3-wasm' | 'z3-native';
export const SOLVER_CHOICES: readonly SolverChoice[] = ['auto', 'wasm', 'native', 'z3-wasm', 'z3-native'];

/** The oldest native z3 `auto` takes (Debian's 4.8.12 answers every query the checker asks). */
export const MIN_NATIVE_VERSION: readonly [number, number] = [4, 8];

export interface ResolvedSolver {
    kind: 'z3-wasm' | 'z3-native';
    /** The z3 executable (native). */
    z3Path?: string;
    /** Its version (native), e.g. "4.8.12". */
    version?: string;
    /** One line for --verbose, the server's log and the status menu: what runs, and why. */
    description: string;
}

const versions = new Map<string, string | undefined>();

/** `z3 --version` of an executable ("4.8.12"), or undefined when it does not run (cached per path). */
export function nativeZ3Version(z3Path: string): string | undefined {
    if (versions.has(z3Path)) return versions.get(z3Path);
    let version: string | undefined;
    try {
        const r = spawnSync(z3Path, ['--version'], { encoding: 'utf8', timeout: 5000 });
        version = !r.error && r.status === 0 ? parseZ3Version(r.stdout) : undefined;
    } catch { /* does not run */ }
    versions.set(z3Path, version);
    return version;
}

/**
 * Take the answer of a `z3 --version` the launcher started for the z3 `resolveSolver` will look
 * at (find-z3.ts), so that resolveSolver does not run it again; whether there was one.
 */
export async function awaitPrefetchedZ3Version(z3Path?: string): Promise<boolean> {
    const exe = z3Path !== undefined && z3Path !== '' ? z3Path : findNativeZ3();
    if (!exe || versions.has(exe)) return false;
    const pending = prefetchedNativeZ3Version(exe);
    if (!pending) return false;
    versions.set(exe, await pending);
    return true;
}

function atLeast(version: string, min: readonly [number, number]): boolean {
    const [a, b] = version.split('.').map(Number);
    return a > min[0] || (a === min[0] && b >= min[1]);
}

/**
 * The backend for a choice. `native` with no usable z3 throws (the message says
 * what to install); `auto` then falls back to WebAssembly and says why.
 */
export function resolveSolver(choice: SolverChoice | undefined, z3Path?: string): ResolvedSolver {
    const c = choice === 'z3-wasm' ? 'wasm' : choice === 'z3-native' ? 'native' : choice ?? 'auto';
    const wasm = (why: string): ResolvedSolver => ({ kind: 'z3-wasm', description: `Z3 in WebAssembly (${why})` });
    if (c === 'wasm') return wasm('as configured');
    const given = z3Path !== undefined && z3Path !== '';
    const exe = given ? z3Path : findNativeZ3();
    const problem = (): string | undefined => {
        if (!exe) return 'no `z3` on PATH';
        if (given && !fs.existsSync(exe)) return `${exe} does not exist`;
        const v = nativeZ3Version(exe);
        if (!v) return `${exe} --version did not answer`;
        if (!atLeast(v, MIN_NATIVE_VERSION)) return `${exe} is Z3 ${v}, older than ${MIN_NATIVE_VERSION.join('.')}`;
        return undefined;
    };
    const why = problem();
    if (why) {
        if (c === 'native') throw new SolverFailure('error', `native z3 requested, but ${why}; install Z3 ${MIN_NATIVE_VERSION.join('.')} or later (e.g. \`apt-get install z3\`) or use --solver wasm`);
        return wasm(`${why}`);
    }
    const version = nativeZ3Version(exe!)!;
    return { kind: 'z3-native', z3Path: exe, version, description: `native Z3 ${version} (${exe}), Z3 in WebAssembly for the queries it gives up on` };
}

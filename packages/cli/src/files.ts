import * as fs from 'node:fs';
import * as path from 'node:path';

/** Thrown for inputs the command cannot work with (exit code 2). */
export class UsageError extends Error { }

/** The `.calvin` files to check, and the paths skipped with the reason (a warning each). */
export interface CollectedFiles {
    files: string[];
    skipped: Array<{ path: string; why: string }>;
}

/**
 * Expand the command's FILE_OR_DIR arguments: directories give their
 * `.calvin` files, recursively (following links, once per real directory).
 * What is not a regular file (a FIFO, a device, a socket, a broken or looping
 * link) is skipped with a reason, never read; a directory named `x.calvin` is
 * a directory. An argument that names nothing, or a directory without any
 * `.calvin` file, is a usage error (exit 2): a mistyped path never passes.
 */
export function collectFiles(args: string[]): CollectedFiles {
    const out: CollectedFiles = { files: [], skipped: [] };
    const seenDirs = new Map<string, number>();
    for (const arg of args) {
        let stat: fs.Stats;
        try {
            stat = fs.statSync(arg);
        } catch (e) {
            const code = (e as NodeJS.ErrnoException).code;
            if (code === 'ELOOP') { out.skipped.push({ path: arg, why: 'a symbolic link loop' }); continue; }
            throw new UsageError(`cannot read '${arg}': no such file or directory`);
        }
        if (stat.isDirectory()) {
            if (walk(arg, out, seenDirs) === 0) throw new UsageError(`no .calvin files under '${arg}'`);
        } else if (stat.isFile()) {
            out.files.push(arg);
        } else {
            out.skipped.push({ path: arg, why: `not a regular file (${kindOf(stat)})` });
        }
    }
    // The same file named twice (`a.calvin ./a.calvin /abs/a.calvin`, or through a link)
    // is checked once, under the first name given.
    const seen = new Set<string>();
    out.files = out.files.filter(f => {
        const key = canonicalPath(f);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
    });
    if (out.files.length === 0 && out.skipped.length > 0) throw new UsageError(`nothing to check: ${out.skipped.map(s => `'${s.path}' is ${s.why}`).join('; ')}`);
    return out;
}

function kindOf(stat: fs.Stats | fs.Dirent): string {
    if (stat.isFIFO()) return 'a FIFO';
    if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
    if (stat.isSocket()) return 'a socket';
    return 'not a file';
}

/** The absolute path of a file with links resolved (the resolved path if that fails). */
export function canonicalPath(file: string): string {
    try {
        return fs.realpathSync.native(file);
    } catch {
        return path.resolve(file);
    }
}

/** Adds the `.calvin` files under a directory; returns how many there are (also when it was walked before). */
function walk(dir: string, out: CollectedFiles, seenDirs: Map<string, number>): number {
    const real = canonicalPath(dir);
    const seen = seenDirs.get(real);
    if (seen !== undefined) return seen; // walked already (named twice, or a link back to it)
    seenDirs.set(real, 0);
    const before = out.files.length;
    let entries: fs.Dirent[];
    try {
        entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
    } catch (e) {
        out.skipped.push({ path: dir, why: `an unreadable directory (${(e as Error).message})` });
        return 0;
    }
    for (const entry of entries) {
        if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
        const p = path.join(dir, entry.name);
        let stat: fs.Stats | fs.Dirent;
        try {
            stat = entry.isSymbolicLink() ? fs.statSync(p) : entry;
        } catch (e) {
            if (entry.name.endsWith('.calvin')) out.skipped.push({ path: p, why: (e as NodeJS.ErrnoException).code === 'ELOOP' ? 'a symbolic link loop' : 'a broken link' });
            continue;
        }
        if (stat.isDirectory()) walk(p, out, seenDirs);
        else if (entry.name.endsWith('.calvin')) {
            if (stat.isFile()) out.files.push(p);
            else out.skipped.push({ path: p, why: `not a regular file (${kindOf(stat)})` });
        }
    }
    const found = out.files.length - before;
    seenDirs.set(real, found);
    return found;
}

/** The text of a file, or undefined (with `tooLarge`) when it is larger than `limit` bytes and is not read. */
export function readSource(file: string, limit: number): { text: string; tooLarge?: number } {
    try {
        const size = fs.statSync(file).size;
        if (size > limit) return { text: '', tooLarge: size };
        return { text: fs.readFileSync(file, 'utf8') };
    } catch (e) {
        throw new UsageError(`cannot read '${file}': ${(e as Error).message}`);
    }
}

import * as fs from 'node:fs';
import * as path from 'node:path';

/** Thrown for inputs the command cannot work with (exit code 2). */
export class UsageError extends Error { }

/** Expand the command's FILE_OR_DIR arguments: directories give their `.calvin` files, recursively. */
export function collectFiles(args: string[]): string[] {
    const files: string[] = [];
    for (const arg of args) {
        let stat: fs.Stats;
        try {
            stat = fs.statSync(arg);
        } catch {
            throw new UsageError(`cannot read '${arg}': no such file or directory`);
        }
        if (stat.isDirectory()) files.push(...walk(arg));
        else files.push(arg);
    }
    // The same file named twice (`a.calvin ./a.calvin /abs/a.calvin`, or through a link)
    // is checked once, under the first name given.
    const seen = new Set<string>();
    return files.filter(f => {
        const key = canonicalPath(f);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
    });
}

/** The absolute path of a file with links resolved (the resolved path if that fails). */
export function canonicalPath(file: string): string {
    try {
        return fs.realpathSync.native(file);
    } catch {
        return path.resolve(file);
    }
}

function walk(dir: string): string[] {
    const out: string[] = [];
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
        const p = path.join(dir, entry.name);
        if (entry.isDirectory()) out.push(...walk(p));
        else if (entry.name.endsWith('.calvin')) out.push(p);
    }
    return out;
}

export function readSource(file: string): string {
    try {
        return fs.readFileSync(file, 'utf8');
    } catch (e) {
        throw new UsageError(`cannot read '${file}': ${(e as Error).message}`);
    }
}

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
    return [...new Set(files)];
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

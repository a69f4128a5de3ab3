import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoredResult } from './result-codec.js';

export interface CacheOptions {
    /** Directory of the persistent cache (`.calvin-cache` in the workspace); none: memory only. */
    dir?: string;
    /** Results kept in memory (least recently used ones are dropped first). */
    maxEntries?: number;
}

/**
 * Check results by fingerprint (plan.ts), in memory and on disk. The disk
 * cache is a directory of small JSON files, safe to delete at any time; it
 * ignores itself for git. Only decided results (verified or failed) are kept:
 * a time-out or a crash is worth another try.
 */
export class ResultCache {
    private readonly memory = new Map<string, StoredResult>();
    private readonly maxEntries: number;
    private dirReady = false;

    constructor(private readonly options: CacheOptions = {}) {
        this.maxEntries = options.maxEntries ?? 5000;
    }

    get(fingerprint: string): StoredResult | undefined {
        const hit = this.memory.get(fingerprint);
        if (hit) {
            // most recently used last
            this.memory.delete(fingerprint);
            this.memory.set(fingerprint, hit);
            return hit;
        }
        const file = this.file(fingerprint);
        if (!file) return undefined;
        let text: string;
        try {
            text = fs.readFileSync(file, 'utf8');
        } catch {
            return undefined; // not cached
        }
        let stored: unknown;
        try {
            stored = JSON.parse(text);
        } catch {
            stored = undefined;
        }
        if (!isStoredResult(stored) || stored.fingerprint !== fingerprint) {
            // damaged, or written by another version: a miss, and gone (files are written whole, by renaming)
            fs.rmSync(file, { force: true });
            return undefined;
        }
        this.remember(stored);
        return stored;
    }

    set(result: StoredResult): void {
        if (result.status !== 'verified' && result.status !== 'failed') return;
        this.remember(result);
        const file = this.file(result.fingerprint);
        if (!file) return;
        try {
            this.ensureDir();
            fs.mkdirSync(path.dirname(file), { recursive: true });
            // write then rename: a reader never sees half a file
            const tmp = `${file}.${process.pid}.tmp`;
            fs.writeFileSync(tmp, JSON.stringify(result));
            fs.renameSync(tmp, file);
        } catch {
            // a cache that cannot be written is only slower
        }
    }

    /** Forget everything (memory and disk). */
    clear(): void {
        this.memory.clear();
        if (this.options.dir) fs.rmSync(this.options.dir, { recursive: true, force: true });
        this.dirReady = false;
    }

    get size(): number {
        return this.memory.size;
    }

    private remember(result: StoredResult): void {
        this.memory.delete(result.fingerprint);
        this.memory.set(result.fingerprint, result);
        while (this.memory.size > this.maxEntries) this.memory.delete(this.memory.keys().next().value!);
    }

    private file(fingerprint: string): string | undefined {
        if (!this.options.dir || !/^[0-9a-f]+$/.test(fingerprint)) return undefined;
        return path.join(this.options.dir, fingerprint.slice(0, 2), `${fingerprint}.json`);
    }

    private ensureDir(): void {
        if (this.dirReady || !this.options.dir) return;
        fs.mkdirSync(this.options.dir, { recursive: true });
        const ignore = path.join(this.options.dir, '.gitignore');
        if (!fs.existsSync(ignore)) fs.writeFileSync(ignore, '# Calvin\'s cache of check results: safe to delete\n*\n');
        this.dirReady = true;
    }
}

const isArray = (x: unknown): x is unknown[] => Array.isArray(x);
const isRangeRef = (x: unknown) => typeof x === 'number' || (typeof x === 'object' && x !== null);

/** The shape a stored result must have to be shown (a file on disk may come from anywhere). */
export function isStoredResult(x: unknown): x is StoredResult {
    const r = x as Record<string, unknown>;
    if (typeof r !== 'object' || r === null || typeof r.fingerprint !== 'string') return false;
    if (r.status !== 'verified' && r.status !== 'failed') return false;
    if (typeof r.key !== 'string' || typeof r.name !== 'string' || typeof r.timeMs !== 'number') return false;
    if (![r.diagnostics, r.environment, r.invariant, r.inferredLoopInvariants, r.loopInvariants, r.accesses].every(isArray)) return false;
    return (r.diagnostics as Array<Record<string, unknown>>).every(d => typeof d === 'object' && d !== null
        && typeof d.code === 'string' && typeof d.message === 'string' && typeof d.severity === 'string' && isRangeRef(d.range)
        && isArray(d.related) && (d.related as Array<Record<string, unknown>>).every(x => typeof x === 'object' && x !== null && isRangeRef(x.range)));
}

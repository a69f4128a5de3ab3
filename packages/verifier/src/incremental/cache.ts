import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { StoredResult } from './result-codec.js';

export interface CacheOptions {
    /** Directory of the persistent cache (`.calvin-cache` in the workspace); none: memory only. */
    dir?: string;
    /** The workspace the directory must stay inside (no link out of it). Default: the directory's parent. */
    root?: string;
    /**
     * The secret that authenticates the entries on disk (`userCacheKey`): an
     * entry whose MAC does not match (written by hand, or shipped in a
     * repository) is a miss. Without a key, nothing is read from or written to disk.
     */
    key?: Buffer;
    /** Results kept in memory (least recently used ones are dropped first). */
    maxEntries?: number;
    /** Told once when the disk cache cannot be used (a link out of the workspace, say). */
    warn?: (message: string) => void;
}

/** An entry on disk: the result and its MAC (HMAC-SHA256 with the user's key). */
interface DiskEntry { mac: string; result: StoredResult }

/**
 * Check results by fingerprint (plan.ts), in memory and on disk. The disk
 * cache is a directory of small JSON files, safe to delete at any time; it
 * ignores itself for git. Only decided results (verified or failed) are kept:
 * a time-out or a crash is worth another try.
 *
 * Nothing in a workspace can forge a verdict: every entry carries an HMAC
 * under a key of the user's, kept outside the workspace (`userCacheKey`),
 * and an entry that fails it is a miss; the cache never follows a link
 * (the directory, a subdirectory or an entry) and never touches a file
 * outside the workspace.
 */
/** The results kept in memory, as JSON characters (about 4 bytes each once parsed). */
const MAX_MEMORY_CHARS = 8_000_000;

export class ResultCache {
    private readonly memory = new Map<string, StoredResult>();
    private readonly sizes = new WeakMap<StoredResult, number>();
    /** The JSON size of the results in memory. */
    private chars = 0;
    private readonly maxEntries: number;
    private dirReady = false;
    /** Disk use refused (and said why, once). */
    private refused = false;

    constructor(private readonly options: CacheOptions = {}) {
        this.maxEntries = options.maxEntries ?? 5000;
        if (options.dir && !options.key) this.refuse('no key to authenticate the disk cache with; results are kept in memory only');
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
        const text = this.readNoFollow(file);
        if (text === undefined) return undefined;
        let entry: unknown;
        try {
            entry = JSON.parse(text);
        } catch {
            entry = undefined;
        }
        const e = entry as DiskEntry | undefined;
        if (!e || typeof e !== 'object' || typeof e.mac !== 'string' || !isStoredResult(e.result) || e.result.fingerprint !== fingerprint || !this.authentic(e)) {
            // damaged, forged, or written by another version or key: a miss, recomputed and rewritten
            return undefined;
        }
        this.remember(e.result);
        return e.result;
    }

    set(result: StoredResult): void {
        if (result.status !== 'verified' && result.status !== 'failed') return;
        this.remember(result);
        const file = this.file(result.fingerprint);
        if (!file) return;
        try {
            if (!this.ensureDir() || !this.safeDir(path.dirname(file), true)) return;
            const entry: DiskEntry = { mac: this.mac(result), result };
            // write then rename: a reader never sees half a file; the temporary file is new (never a link)
            const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
            fs.writeFileSync(tmp, JSON.stringify(entry), { flag: 'wx', mode: 0o600 });
            fs.renameSync(tmp, file);
        } catch {
            // a cache that cannot be written is only slower
        }
    }

    /** Forget everything (memory and disk). */
    clear(): void {
        this.memory.clear();
        this.chars = 0;
        if (this.options.dir && !this.refused && this.safeDir(this.options.dir, false)) fs.rmSync(this.options.dir, { recursive: true, force: true });
        this.dirReady = false;
    }

    get size(): number {
        return this.memory.size;
    }

    private remember(result: StoredResult): void {
        const old = this.memory.get(result.fingerprint);
        if (old) this.chars -= this.sizes.get(old) ?? 0;
        this.memory.delete(result.fingerprint);
        this.memory.set(result.fingerprint, result);
        // (bounded by entries and by their size: results that keep many loop candidates are large,
        // and a long editing session makes thousands of them)
        const size = JSON.stringify(result).length;
        this.sizes.set(result, size);
        this.chars += size;
        while (this.memory.size > this.maxEntries || (this.chars > MAX_MEMORY_CHARS && this.memory.size > 1)) {
            const oldest = this.memory.keys().next().value!;
            const r = this.memory.get(oldest)!;
            this.chars -= this.sizes.get(r) ?? 0;
            this.memory.delete(oldest);
        }
    }

    private file(fingerprint: string): string | undefined {
        if (!this.options.dir || !this.options.key || this.refused || !/^[0-9a-f]+$/.test(fingerprint)) return undefined;
        return path.join(this.options.dir, fingerprint.slice(0, 2), `${fingerprint}.json`);
    }

    private mac(result: StoredResult): string {
        return crypto.createHmac('sha256', this.options.key!).update(`${result.fingerprint}\n${JSON.stringify(result)}`).digest('hex');
    }

    private authentic(e: DiskEntry): boolean {
        const expected = Buffer.from(this.mac(e.result), 'hex');
        const given = Buffer.from(e.mac, 'hex');
        return given.length === expected.length && crypto.timingSafeEqual(given, expected);
    }

    /** A file's text, unless it is (or is reached through) a link, or is too large to be an entry. */
    private readNoFollow(file: string): string | undefined {
        if (!this.safeDir(path.dirname(file), false)) return undefined;
        let fd: number | undefined;
        try {
            fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
            const stat = fs.fstatSync(fd);
            if (!stat.isFile() || stat.size > 4 << 20) return undefined;
            return fs.readFileSync(fd, 'utf8');
        } catch {
            return undefined; // not cached (or a link: refused)
        } finally {
            if (fd !== undefined) fs.closeSync(fd);
        }
    }

    /**
     * Whether a directory of the cache is a real directory inside the
     * workspace: neither it nor any directory between it and the workspace is
     * a link. A link at the cache's root disables the disk cache (one warning).
     */
    private safeDir(dir: string, create: boolean): boolean {
        const root = path.resolve(this.options.root ?? path.dirname(this.options.dir!));
        const rel = path.relative(root, path.resolve(dir));
        if (rel.startsWith('..') || path.isAbsolute(rel)) return false;
        let cur = root;
        for (const part of rel.split(path.sep).filter(Boolean)) {
            cur = path.join(cur, part);
            let stat: fs.Stats;
            try {
                stat = fs.lstatSync(cur);
            } catch {
                if (!create) return false;
                try { fs.mkdirSync(cur); } catch { return false; }
                continue;
            }
            if (stat.isSymbolicLink() || !stat.isDirectory()) {
                if (path.resolve(cur) === path.resolve(this.options.dir!)) this.refuse(`${cur} is ${stat.isSymbolicLink() ? 'a link' : 'not a directory'}; Calvin runs without its disk cache (it never writes outside the workspace)`);
                return false;
            }
        }
        return true;
    }

    private ensureDir(): boolean {
        if (this.dirReady) return true;
        if (!this.options.dir || !this.safeDir(this.options.dir, true)) return false;
        const ignore = path.join(this.options.dir, '.gitignore');
        try {
            fs.writeFileSync(ignore, '# Calvin\'s cache of check results: safe to delete\n*\n', { flag: 'wx' });
        } catch {
            // already there (or not writable: the entries still are)
        }
        this.dirReady = true;
        return true;
    }

    private refuse(why: string): void {
        if (this.refused) return;
        this.refused = true;
        this.options.warn?.(why);
    }
}

/**
 * The user's key for the result cache: 32 random bytes in the user's cache
 * directory (`$XDG_CACHE_HOME/calvin/cache-key`, `~/.cache/calvin/cache-key`,
 * `%LOCALAPPDATA%\calvin\cache-key`), created with mode 0600 on first use.
 * Never in a workspace: a repository cannot ship a key that matches its
 * entries. Undefined when there is no such directory (memory cache only).
 */
export function userCacheKey(env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
    const base = env.XDG_CACHE_HOME || (process.platform === 'win32' ? env.LOCALAPPDATA : undefined) || path.join(os.homedir(), '.cache');
    if (!base) return undefined;
    const file = path.join(base, 'calvin', 'cache-key');
    try {
        const key = fs.readFileSync(file);
        if (key.length >= 32) return key;
    } catch {
        // created below
    }
    try {
        fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
        const key = crypto.randomBytes(32);
        fs.writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
        return key;
    } catch {
        // another process wrote it meanwhile, or the directory is not writable
        try {
            const key = fs.readFileSync(file);
            return key.length >= 32 ? key : undefined;
        } catch {
            return undefined;
        }
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

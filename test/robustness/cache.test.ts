// The result cache cannot be forged by a workspace (issue 10): entries are
// authenticated with the user's key, kept outside the workspace; the cache
// never follows a link; entries that do not fit their plan are misses.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ResultCache, userCacheKey } from '../../packages/verifier/src/incremental/cache.js';
import { storedResultFits, type StoredResult } from '../../packages/verifier/src/incremental/result-codec.js';
import type { CheckPlan } from '../../packages/verifier/src/incremental/plan.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-cache-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const FP = 'ab'.repeat(16);

function failed(): StoredResult {
    return {
        fingerprint: FP, key: 'thread:T', name: 'T', kind: 'thread', status: 'failed', timeMs: 5, solverMs: 4, queries: 2,
        diagnostics: [{ range: 0, severity: 'error', code: 'race', message: 'read of x may race', related: [] }],
        environment: [], invariant: [], inferredLoopInvariants: [], loopInvariants: [], accesses: [], envStar: '',
    } as unknown as StoredResult;
}

function workspace(name: string): { root: string; dir: string } {
    const root = path.join(tmp, name);
    fs.mkdirSync(root, { recursive: true });
    return { root, dir: path.join(root, '.calvin-cache') };
}

const KEY = Buffer.alloc(32, 7);

describe('the disk cache authenticates its entries', () => {
    it('an entry written with the key is read back by a new cache with the same key', () => {
        const { root, dir } = workspace('roundtrip');
        new ResultCache({ dir, root, key: KEY }).set(failed());
        const hit = new ResultCache({ dir, root, key: KEY }).get(FP);
        assert.equal(hit?.status, 'failed');
        const mode = fs.statSync(path.join(dir, FP.slice(0, 2), `${FP}.json`)).mode & 0o777;
        assert.equal(mode, 0o600);
    });
    it('an entry edited to say "verified" (the MAC no longer matches) is a miss', () => {
        const { root, dir } = workspace('forged');
        new ResultCache({ dir, root, key: KEY }).set(failed());
        const file = path.join(dir, FP.slice(0, 2), `${FP}.json`);
        const entry = JSON.parse(fs.readFileSync(file, 'utf8'));
        entry.result.status = 'verified';
        entry.result.diagnostics = [];
        fs.writeFileSync(file, JSON.stringify(entry));
        assert.equal(new ResultCache({ dir, root, key: KEY }).get(FP), undefined);
    });
    it('an entry written under another key (another user, or shipped in a repository) is a miss', () => {
        const { root, dir } = workspace('other-key');
        new ResultCache({ dir, root, key: Buffer.alloc(32, 1) }).set(failed());
        assert.equal(new ResultCache({ dir, root, key: KEY }).get(FP), undefined);
    });
    it('without a key nothing is read from or written to disk', () => {
        const { root, dir } = workspace('no-key');
        const warnings: string[] = [];
        const c = new ResultCache({ dir, root, warn: m => warnings.push(m) });
        c.set(failed());
        assert.equal(c.get(FP)?.status, 'failed'); // memory
        assert.ok(!fs.existsSync(dir));
        assert.equal(warnings.length, 1);
    });
});

describe('the disk cache never follows a link out of the workspace', () => {
    it('a .calvin-cache that is a link is refused with one warning; nothing is written or deleted there', { skip: process.platform === 'win32' }, () => {
        const { root, dir } = workspace('linked');
        const elsewhere = path.join(tmp, 'elsewhere');
        fs.mkdirSync(path.join(elsewhere, FP.slice(0, 2)), { recursive: true });
        const planted = path.join(elsewhere, FP.slice(0, 2), `${FP}.json`);
        fs.writeFileSync(planted, 'not json');
        fs.symlinkSync(elsewhere, dir);
        const warnings: string[] = [];
        const c = new ResultCache({ dir, root, key: KEY, warn: m => warnings.push(m) });
        assert.equal(c.get(FP), undefined);
        c.set(failed());
        c.set({ ...failed(), fingerprint: 'cd'.repeat(16) });
        assert.deepEqual(fs.readdirSync(elsewhere), [FP.slice(0, 2)]);
        assert.equal(fs.readFileSync(planted, 'utf8'), 'not json');
        assert.equal(warnings.length, 1);
        assert.match(warnings[0], /is a link; Calvin runs without its disk cache/);
    });
    it('an entry or a subdirectory that is a link is not followed', { skip: process.platform === 'win32' }, () => {
        const { root, dir } = workspace('linked-entry');
        const outside = path.join(tmp, 'outside-entry.json');
        new ResultCache({ dir, root, key: KEY }).set(failed());
        const file = path.join(dir, FP.slice(0, 2), `${FP}.json`);
        fs.renameSync(file, outside);
        fs.symlinkSync(outside, file);
        assert.equal(new ResultCache({ dir, root, key: KEY }).get(FP), undefined);
    });
});

describe('stored results that do not fit their plan are misses', () => {
    const plan = { ranges: [{ file: 'f', startLine: 0, startChar: 0, endLine: 0, endChar: 1 }] } as unknown as CheckPlan;
    it('fits: indices into the range table, known codes', () => assert.ok(storedResultFits(failed(), plan)));
    it('a range index out of the table', () => {
        const r = failed();
        (r.diagnostics[0] as { range: unknown }).range = 7;
        assert.ok(!storedResultFits(r, plan));
    });
    it('a range given as positions (not an index)', () => {
        const r = failed();
        (r.diagnostics[0] as { range: unknown }).range = { file: 'elsewhere', startLine: 1e9, startChar: 0, endLine: 0, endChar: 0 };
        assert.ok(!storedResultFits(r, plan));
    });
    it('an unknown code', () => {
        const r = failed();
        (r.diagnostics[0] as { code: unknown }).code = 'looks-fine';
        assert.ok(!storedResultFits(r, plan));
    });
});

describe("the user's key", () => {
    it('is created once in the user cache directory, mode 0600, and reused', { skip: process.platform === 'win32' }, () => {
        const home = path.join(tmp, 'xdg');
        const a = userCacheKey({ XDG_CACHE_HOME: home });
        const b = userCacheKey({ XDG_CACHE_HOME: home });
        assert.ok(a && a.length === 32);
        assert.deepEqual(a, b);
        assert.equal(fs.statSync(path.join(home, 'calvin', 'cache-key')).mode & 0o777, 0o600);
    });
});

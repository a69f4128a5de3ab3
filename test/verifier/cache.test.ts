// The result cache (packages/verifier/src/incremental/cache.ts): what it keeps,
// on disk, and what it does with files it cannot trust.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ResultCache } from '../../packages/verifier/src/incremental/cache.js';
import type { StoredResult } from '../../packages/verifier/src/incremental/result-codec.js';

const FP = 'ab'.repeat(16);

function result(status: StoredResult['status'], fingerprint = FP): StoredResult {
    return {
        fingerprint, key: 'thread:T1', name: 'T1', kind: 'thread', status, timeMs: 12, solverMs: 10, queries: 2,
        diagnostics: status === 'failed' ? [{ range: 3, severity: 'error', code: 'race', message: 'race on x', related: [] }] : [],
        environment: [], invariant: [], inferredLoopInvariants: [], loopInvariants: [], accesses: [], envStar: 'E* = E',
    };
}

describe('result cache', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-cache-'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const key = Buffer.alloc(32, 3);

    it('keeps decided results in memory and on disk, and ignores itself for git', () => {
        const cache = new ResultCache({ dir, key });
        cache.set(result('failed'));
        cache.set(result('unknown', 'cd'.repeat(16)));
        assert.deepEqual(cache.get(FP), result('failed'));
        assert.equal(cache.get('cd'.repeat(16)), undefined, 'a time-out is worth another try');
        assert.match(fs.readFileSync(path.join(dir, '.gitignore'), 'utf8'), /^\*$/m);
        assert.deepEqual(new ResultCache({ dir, key }).get(FP), result('failed'), 'a new session reads it from disk');
    });

    it('treats a damaged or foreign file as a miss (recomputed and rewritten)', () => {
        const file = path.join(dir, FP.slice(0, 2), `${FP}.json`);
        for (const bad of ['{', JSON.stringify({ fingerprint: FP, status: 'verified' }), JSON.stringify({ ...result('failed'), diagnostics: [{ code: 'race' }] }),
            JSON.stringify(result('failed', 'ef'.repeat(16)))]) {
            fs.writeFileSync(file, bad);
            const cache = new ResultCache({ dir, key });
            assert.equal(cache.get(FP), undefined, bad);
            cache.set(result('failed'));
            assert.deepEqual(new ResultCache({ dir, key }).get(FP), result('failed'), `${bad} is replaced`);
        }
    });
});

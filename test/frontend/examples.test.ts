import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES, SHARED_EXAMPLES } from '../util/paths.js';
import { diagnosticsOf, frontEnd } from '../util/frontend.js';

const shared = fs.readdirSync(SHARED_EXAMPLES).filter(f => f.endsWith('.calvin')).sort();

describe('shared examples', () => {
    for (const name of shared) {
        it(`${name} parses, links and type-checks with no diagnostics`, async () => {
            const diags = await diagnosticsOf(fs.readFileSync(path.join(SHARED_EXAMPLES, name), 'utf8'));
            assert.deepEqual(diags, []);
        });
    }

    it('the project copies in examples/ are identical to the shared ones', () => {
        for (const name of shared) {
            assert.equal(fs.readFileSync(path.join(EXAMPLES, name), 'utf8'), fs.readFileSync(path.join(SHARED_EXAMPLES, name), 'utf8'), name);
        }
    });

    it('all examples loaded together as one workspace stay independent programs', async () => {
        const files = Object.fromEntries(shared.map(n => [n, fs.readFileSync(path.join(SHARED_EXAMPLES, n), 'utf8')]));
        const result = await frontEnd(files);
        for (const name of shared) assert.deepEqual(result[name], [], name);
    });
});

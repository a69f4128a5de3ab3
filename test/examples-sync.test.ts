// The project's examples/ are its own copy of the specification's example
// programs. Where the specification sits next to this repository (as in the
// project's CI), the two must be identical; a clone on its own skips this.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES, SHARED_EXAMPLES } from './util/paths.js';

const present = fs.existsSync(SHARED_EXAMPLES);

describe('examples/ and the specification\'s examples', () => {
    it('are identical', { skip: present ? false : `${SHARED_EXAMPLES} is not there (a clone on its own)` }, () => {
        const shared = fs.readdirSync(SHARED_EXAMPLES).filter(f => f.endsWith('.calvin')).sort();
        const own = fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin')).sort();
        assert.deepEqual(own, shared);
        for (const name of shared) {
            assert.equal(fs.readFileSync(path.join(EXAMPLES, name), 'utf8'), fs.readFileSync(path.join(SHARED_EXAMPLES, name), 'utf8'), name);
        }
    });
});

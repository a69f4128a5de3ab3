import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES } from '../util/paths.js';
import { diagnosticsOf, frontEnd } from '../util/frontend.js';

const examples = fs.readdirSync(EXAMPLES).filter(f => f.endsWith('.calvin')).sort();

describe('examples', () => {
    for (const name of examples) {
        it(`${name} parses, links and type-checks with no diagnostics`, async () => {
            const diags = await diagnosticsOf(fs.readFileSync(path.join(EXAMPLES, name), 'utf8'));
            assert.deepEqual(diags, []);
        });
    }

    it('all examples loaded together as one workspace stay independent programs', async () => {
        const files = Object.fromEntries(examples.map(n => [n, fs.readFileSync(path.join(EXAMPLES, n), 'utf8')]));
        const result = await frontEnd(files);
        for (const name of examples) assert.deepEqual(result[name], [], name);
    });
});

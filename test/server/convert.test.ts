// The LSP conversion of verifier diagnostics (server/src/verification/convert.ts):
// the text a user reads is written from the structured diagnostic, and the
// counterexample command reads the structured data back, never the text.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { counterexampleText, shownOf, toLsp } from '../../server/src/verification/convert.js';
import type { CheckResult, VDiagnostic } from '../../packages/verifier/src/index.js';

const range = { file: 'file:///ws/p.calvin', startLine: 4, startChar: 2, endLine: 4, endChar: 14 };

const failure: VDiagnostic = {
    range, severity: 'error', code: 'assert', related: [],
    message: "assertion 'a[i] == b[j]' may fail",
    counterexample: {
        values: [{ name: 'a[i]', value: '1' }, { name: 'b[j]', value: '2' }],
        notes: ['another thread changed b[j] from 1 to 2 just before it was read on line 4'],
        hint: ". On this path step 2 ('x\\' == 1') never happened",
    },
};

describe('LSP conversion of verifier diagnostics', () => {
    it('writes the message, the counterexample in brackets and the hint, and keeps both as data', () => {
        const d = toLsp(failure);
        assert.equal(d.message, "assertion 'a[i] == b[j]' may fail [a[i] = 1, b[j] = 2; another thread changed b[j] from 1 to 2 just before it was read on line 4]. On this path step 2 ('x\\' == 1') never happened");
        assert.deepEqual(d.data, { message: failure.message, counterexample: failure.counterexample });
        assert.equal(d.source, 'calvin');
        assert.equal(d.code, 'assert');
        assert.deepEqual(d.range, { start: { line: 4, character: 2 }, end: { line: 4, character: 14 } });
    });

    it('the counterexample command reads the data, not the text (brackets in the message and the values stay)', () => {
        const text = counterexampleText(toLsp(failure));
        assert.equal(text, [
            "assertion 'a[i] == b[j]' may fail. On this path step 2 ('x\\' == 1') never happened",
            '  a[i] = 1',
            '  b[j] = 2',
            '  another thread changed b[j] from 1 to 2 just before it was read on line 4',
        ].join('\n'));
    });

    it('a shown diagnostic names its check and keeps the counterexample', () => {
        const result = { key: 'thread:T', diagnostics: [failure] } as CheckResult;
        const [shown] = shownOf(result);
        assert.equal(shown.uri, range.file);
        assert.deepEqual(shown.diagnostic.data, { message: failure.message, counterexample: failure.counterexample, check: 'thread:T' });
        assert.match(counterexampleText(shown.diagnostic), /^assertion 'a\[i\] == b\[j\]' may fail\. On this path/);
    });

    it('a diagnostic without counterexample says so', () => {
        const plain: VDiagnostic = { range, severity: 'warning', code: 'unknown', related: [], message: 'thread T is not verified: it ran out of time [limit 10 ms]' };
        const d = toLsp(plain);
        assert.equal(d.data, undefined);
        assert.equal(counterexampleText(d), 'thread T is not verified: it ran out of time [limit 10 ms]\n(no counterexample values)');
    });
});

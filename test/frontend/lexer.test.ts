// The lexer's first-character index for identifiers
// (language/src/parser/calvin-token-builder.ts): one unit per bucket of
// Chevrotain's index instead of every start character (issue 15).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildProgram, createCalvinCoreServices, identifierStartChars, lexerBucket } from '../../language/src/index.js';
// (not part of Chevrotain's API: its index, to compare the buckets with)
import { charCodeToOptimizedIndex } from '../../node_modules/chevrotain/lib/src/scan/lexer.js';

describe('identifier start characters for the lexer', () => {
    it('the buckets are Chevrotain\'s', async () => {
        createCalvinCoreServices().shared.ServiceRegistry.all[0].parser.Lexer; // (builds a lexer: Chevrotain fills its index)
        for (let c = 0; c <= 0xffff; c++) assert.equal(lexerBucket(c), charCodeToOptimizedIndex(c), `U+${c.toString(16)}`);
    });

    it('the hint: the start characters below 256, one unit of every bucket above', () => {
        const start = /^[$_\p{L}\p{Nl}\p{Sc}\p{Pc}]$/u;
        const hint = identifierStartChars();
        const below = hint.filter(c => c < 256);
        assert.deepEqual(below, Array.from({ length: 256 }, (_, c) => c).filter(c => start.test(String.fromCharCode(c))));
        const buckets = hint.filter(c => c >= 256).map(lexerBucket);
        assert.equal(new Set(buckets).size, buckets.length, 'one unit per bucket');
        for (let c = 256; c <= 0xffff; c++) assert.ok(buckets.includes(lexerBucket(c)), `U+${c.toString(16)}`);
    });

    it('identifiers that start in many buckets lex as identifiers', async () => {
        const names = ['zähler', '变量', 'Tâche', 'Ωmega', 'ⅫX', '€uro', '‿x', 'ﬁle', '𝑥', 'ℵ0', 'ꙮ', 'ｚ'];
        const text = names.map((n, i) => `int ${n} = ${i};`).join('\n') + '\nthread T { int s = ' + names.join(' + ') + '; }\n';
        const { shared } = createCalvinCoreServices();
        const res = await buildProgram(shared, [{ uri: 'file:///ids.calvin', text }]);
        assert.deepEqual((res.documents[0].diagnostics ?? []).map(d => d.message), []);
        // in buckets with start characters: a space (U+3000) is still a space, an arrow still no token
        const other = await buildProgram(createCalvinCoreServices().shared, [{ uri: 'file:///other.calvin', text: 'int\u3000x = 1;\nint y = 2 \u2192 3;\n' }]);
        const messages = (other.documents[0].diagnostics ?? []).map(d => `${d.range.start.line}:${d.message}`);
        assert.ok(messages.length > 0 && messages.every(m => m.startsWith('1:')), messages.join('\n'));
        assert.ok(messages.some(m => /unexpected character/i.test(m)), messages.join('\n'));
    });
});

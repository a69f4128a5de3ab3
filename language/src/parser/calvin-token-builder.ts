import { BIDI_CONTROLS } from '@calvin/verifier/text';
import type { Grammar } from 'langium';
import { DefaultTokenBuilder, type TokenBuilderOptions } from 'langium';
import { Lexer, type CustomPatternMatcherFunc, type IMultiModeLexerDefinition, type TokenType } from 'chevrotain';

/**
 * Calvin source is lexed in three modes (language.md §1):
 * - `java`: ordinary code; annotation keywords are plain identifiers here;
 * - `block`: inside `/*@ ... *\/`, left by `*\/`;
 * - `line`: inside `//@ ...`, left by the end of the line.
 * Primes and the annotation keywords exist only in the two annotation modes.
 * `\old`, `\result`, `\forall` and `\exists` are lexed everywhere (no identifier
 * starts with a backslash), so that in code they parse and the validator can
 * say in one diagnostic that they belong in annotations.
 */
export const ANNOTATION_KEYWORDS = [
    'writable_if', 'invariant', 'environment', 'requires', 'ensures', 'abstraction',
    'step', 'stutter', 'loop_invariant', 'ghost', 'set', 'assume', 'witness',
] as const;

const ANNOTATION_ONLY_TOKENS = new Set<string>([...ANNOTATION_KEYWORDS, 'PRIME']);

export const MODE_JAVA = 'java';
export const MODE_BLOCK = 'block';
export const MODE_LINE = 'line';

/** A leading `@` on a continuation line of a block annotation (or right before `*\/`) is ignored, as in JML. */
const continuationAt: CustomPatternMatcherFunc = (text, offset) => {
    if (text.charCodeAt(offset) !== 64 /* @ */) return null;
    let i = offset - 1;
    while (i >= 0 && (text[i] === ' ' || text[i] === '\t')) i--;
    const atLineStart = i < 0 || text[i] === '\n' || text[i] === '\r' || (i >= 2 && text.slice(i - 2, i + 1) === '/*@');
    let j = offset;
    while (text.charCodeAt(j) === 64) j++;
    if (!atLineStart && !text.startsWith('*/', j)) return null;
    const match = [text.slice(offset, j)] as unknown as RegExpExecArray;
    return match;
};

/**
 * A Java identifier (JLS §3.8; Character.isJavaIdentifierStart/Part): it starts
 * with a letter, a letter number (Ⅻ), a currency symbol (`$`, `€`) or a
 * connector (`_`, `‿`), and goes on with those, digits, combining marks and the
 * format characters Java ignores in names (the zero-width joiners, soft hyphen,
 * ...; see identifierName). Two deliberate differences: no control characters
 * (Java ignores NUL..BS and others; here they are the sign of a binary file and
 * a lexer error), and no bidirectional controls (U+202E and the like, which
 * reorder how the name is shown: "Trojan Source").
 */
const ID_START = '$_\\p{L}\\p{Nl}\\p{Sc}\\p{Pc}';
const ID_PART = `${ID_START}\\p{Nd}\\p{Mn}\\p{Mc}`;
const IDENTIFIER = new RegExp(`[${ID_START}](?:[${ID_PART}]|(?![${BIDI_CONTROLS}])\\p{Cf})*`, 'uy');

/** The format characters (Unicode category Cf) an identifier may hold and that its name ignores. */
const IGNORABLE = /\p{Cf}/gu;

/**
 * The name an identifier stands for: as in Java, two identifiers are the same
 * name when they are equal once their ignorable format characters are removed
 * (`a\u200bb` is `ab`).
 */
export function identifierName(image: string): string {
    return /[^\x00-\x7f]/.test(image) ? image.replace(IGNORABLE, '') : image;
}

const javaIdentifier: CustomPatternMatcherFunc = (text, offset) => {
    IDENTIFIER.lastIndex = offset;
    return IDENTIFIER.exec(text);
};

let startChars: number[] | undefined;

/**
 * Chevrotain's lexer indexes the first character of a token by code unit below
 * 256 and, above, by buckets of 255 (`charCodeToOptimizedIndex` in its
 * scan/lexer.js; it keeps one entry per bucket of a START_CHARS_HINT).
 */
export function lexerBucket(c: number): number {
    return c > 255 ? 255 + Math.floor(c / 255) : c;
}

/**
 * The UTF-16 units an identifier may start with, as the lexer's first-character
 * index uses them: every start character below 256 and, above, one unit of
 * every bucket (issue 15: testing each of the 65,536 units took 15 ms of every
 * start). A bucket without a start character only makes the lexer try an
 * identifier where it cannot match (its pattern tests the first character)
 * before the other tokens: the lexer's answers are those of an exact index,
 * whatever Unicode version the runtime has.
 */
export function identifierStartChars(): number[] {
    if (startChars) return startChars;
    const out: number[] = [];
    const one = new RegExp(`^[${ID_START}]$`, 'u');
    for (let c = 0; c < 256; c++) if (one.test(String.fromCharCode(c))) out.push(c);
    for (let c = 256; c < 0x10000; c++) if (lexerBucket(c) !== lexerBucket(c - 1)) out.push(c);
    return startChars = out;
}

export class CalvinTokenBuilder extends DefaultTokenBuilder {

    override buildTokens(grammar: Grammar, options?: TokenBuilderOptions): IMultiModeLexerDefinition {
        const all = super.buildTokens(grammar, options) as TokenType[];
        const byName = new Map(all.map(t => [t.name, t]));
        const get = (name: string): TokenType => {
            const t = byName.get(name);
            if (!t) throw new Error(`Calvin grammar has no token ${name}`);
            return t;
        };
        // Identifiers as in Java: Unicode letters too (the grammar's regex is the ASCII part of it).
        const id = get('ID');
        id.PATTERN = javaIdentifier;
        id.START_CHARS_HINT = identifierStartChars();
        id.LINE_BREAKS = false;
        const blockStart = get('/*@');
        const lineStart = get('//@');
        const blockEnd = get('*/');
        const eol = get('ANNOT_EOL');
        const ws = get('WS');
        blockStart.PUSH_MODE = MODE_BLOCK;
        lineStart.PUSH_MODE = MODE_LINE;
        blockEnd.POP_MODE = true;
        eol.POP_MODE = true;
        eol.LINE_BREAKS = true;

        const special = new Set(['/*@', '//@', '*/', 'ANNOT_EOL', 'WS', 'SL_COMMENT', 'ML_COMMENT']);
        const common = all.filter(t => !special.has(t.name) && !ANNOTATION_ONLY_TOKENS.has(t.name));
        const annotationOnly = all.filter(t => ANNOTATION_ONLY_TOKENS.has(t.name));
        const slComment = get('SL_COMMENT');
        const mlComment = get('ML_COMMENT');

        const inlineWs: TokenType = { name: 'WS_INLINE', PATTERN: /[ \t\f]+/, GROUP: Lexer.SKIPPED };
        const atContinuation: TokenType = {
            name: 'AT_CONTINUATION', PATTERN: continuationAt, GROUP: Lexer.SKIPPED,
            LINE_BREAKS: false, START_CHARS_HINT: ['@'],
        };
        // Inside a block annotation a `//` comment must stop before `*/`.
        const blockSlComment: TokenType = {
            name: 'BLOCK_SL_COMMENT', PATTERN: /\/\/(?:(?!\*\/)[^\n\r])*/, GROUP: 'hidden',
        };

        // Keywords must come before ID (longest keyword first, as the default builder sorts them).
        const java = [blockStart, lineStart, ws, mlComment, slComment, ...common];
        const block = [blockEnd, ws, atContinuation, blockSlComment, mlComment, ...annotationOnly, ...common];
        const line = [eol, inlineWs, slComment, mlComment, ...annotationOnly, ...common];
        restrictLongerAlternatives([java, block, line]);
        return {
            modes: { [MODE_JAVA]: java, [MODE_BLOCK]: block, [MODE_LINE]: line },
            defaultMode: MODE_JAVA,
        };
    }
}

/**
 * Langium gives a keyword every terminal it is a prefix of as a "longer
 * alternative" (`/` gets SL_COMMENT and ML_COMMENT). Chevrotain resolves those
 * within the lexer mode and fails ("reading 'pattern'") on one that is missing
 * from the mode: block annotations have no SL_COMMENT (a `//` comment there
 * stops before `*\/`). Keep only the alternatives present in every mode that
 * holds the token. (Comments come before `/` in every mode anyway, so they
 * never needed to be tried as longer alternatives of it.)
 */
function restrictLongerAlternatives(modes: TokenType[][]): void {
    const sets = modes.map(m => new Set(m));
    for (const token of new Set(modes.flat())) {
        const alts = token.LONGER_ALT;
        if (alts === undefined) continue;
        const list = Array.isArray(alts) ? alts : [alts];
        const kept = list.filter(a => sets.every(s => !s.has(token) || s.has(a)));
        if (kept.length === list.length) continue;
        if (kept.length === 0) delete token.LONGER_ALT;
        else token.LONGER_ALT = kept;
    }
}

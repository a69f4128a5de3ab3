/**
 * Text from the user's files or file names inside a message, made printable:
 * control characters (from a binary file, say) are shown escaped (`\x01`,
 * `\u2028`), line breaks too, so that a message is always one line; and so are
 * the invisible format characters (a zero-width space, a soft hyphen), which
 * would make two different names look the same, and the bidirectional controls
 * (U+202E and the like), which would reorder what a terminal or an editor
 * shows ("Trojan Source"). The zero-width (non-)joiners stay: some scripts
 * need them to render a word.
 */
export function escapeControl(text: string): string {
    return text.replace(ESCAPED, c => {
        if (c === '\n') return '\\n';
        if (c === '\r') return '\\r';
        if (c === '\t') return '\\t';
        const code = c.codePointAt(0)!;
        if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
        if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
        return `\\u{${code.toString(16)}}`;
    });
}

/**
 * The Unicode bidirectional controls: ALM, LRM, RLM, the embeddings and
 * overrides (LRE RLE PDF LRO RLO) and the isolates (LRI RLI FSI PDI), as the
 * body of a character class.
 */
export const BIDI_CONTROLS = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

// Controls (C0, DEL, C1), the line and paragraph separators, and the format
// characters but the joiners (the bidi controls are format characters).
const ESCAPED = /[\p{Cc}\u2028\u2029]|(?![\u200c\u200d])\p{Cf}/gu;

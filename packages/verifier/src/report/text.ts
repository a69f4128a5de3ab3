/**
 * Text from the user's files inside a message: control characters (from a
 * binary file, say) are shown escaped (`\x01`, `\u2028`), and line breaks too,
 * so that a message is always one printable line.
 */
export function escapeControl(text: string): string {
    // C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators
    // eslint-disable-next-line no-control-regex
    return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, c => {
        if (c === '\n') return '\\n';
        if (c === '\r') return '\\r';
        if (c === '\t') return '\\t';
        const code = c.charCodeAt(0);
        return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    });
}

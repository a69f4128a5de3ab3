// Lexical checks on SMT-LIB 2.6 text, used by the native backend: an eval whose
// text leaves a parenthesis, string or |quoted symbol| open would swallow the
// sentinel that marks the end of its output.

/** Undefined when the text is complete; otherwise what is left open. */
export function unbalancedReason(text: string): string | undefined {
    let depth = 0;
    let i = 0;
    const n = text.length;
    while (i < n) {
        const c = text[i];
        if (c === ';') {
            const eol = text.indexOf('\n', i);
            if (eol < 0) return undefined; // a final comment is closed by the newline the backend appends
            i = eol + 1;
        } else if (c === '"') {
            // SMT-LIB 2.6 strings: "" is an escaped quote.
            i++;
            for (;;) {
                if (i >= n) return 'a string literal is not closed';
                if (text[i] === '"') {
                    if (text[i + 1] === '"') { i += 2; continue; }
                    i++;
                    break;
                }
                i++;
            }
        } else if (c === '|') {
            const end = text.indexOf('|', i + 1);
            if (end < 0) return 'a |quoted symbol| is not closed';
            i = end + 1;
        } else {
            if (c === '(') depth++;
            else if (c === ')') {
                depth--;
                if (depth < 0) return 'unbalanced parentheses (too many closing)';
            }
            i++;
        }
    }
    return depth > 0 ? 'unbalanced parentheses (not closed)' : undefined;
}

/** An SMT-LIB error response, as Z3 would print it. */
export function smtError(message: string): string {
    return `(error "${message.replace(/"/g, '""')}")\n`;
}

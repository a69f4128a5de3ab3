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

/** Commands that ask something of the solver and change nothing of its state. */
const QUERIES = new Set(['check-sat', 'check-sat-assuming', 'get-value', 'get-model', 'get-info', 'get-unsat-core', 'get-assertions', 'get-assignment', 'get-proof', 'get-option', 'echo', 'eval']);

/**
 * The commands of SMT-LIB text that make the solver's state (declarations,
 * assertions, options, push/pop), without its queries: the text that puts
 * another solver in the same state (solver-host/fallback.ts). Comments go too.
 */
export function stateCommands(text: string): string {
    const out: string[] = [];
    let i = 0;
    const n = text.length;
    while (i < n) {
        const c = text[i];
        if (c === ';') {
            const eol = text.indexOf('\n', i);
            i = eol < 0 ? n : eol + 1;
        } else if (c === '(') {
            const start = i;
            let depth = 0;
            while (i < n) {
                const d = text[i];
                if (d === ';') {
                    const eol = text.indexOf('\n', i);
                    i = eol < 0 ? n : eol + 1;
                    continue;
                }
                if (d === '"') {
                    i++;
                    while (i < n && !(text[i] === '"' && text[i + 1] !== '"')) i += text[i] === '"' ? 2 : 1;
                } else if (d === '|') {
                    const end = text.indexOf('|', i + 1);
                    i = end < 0 ? n - 1 : end;
                } else if (d === '(') depth++;
                else if (d === ')' && --depth === 0) { i++; break; }
                i++;
            }
            const command = text.slice(start, i);
            const head = /^\(\s*([^\s()|";]+)/.exec(command)?.[1];
            if (!head || !QUERIES.has(head)) out.push(command);
        } else i++;
    }
    return out.join('\n') + (out.length > 0 ? '\n' : '');
}

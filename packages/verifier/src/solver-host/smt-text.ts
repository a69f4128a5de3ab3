// Lexical work on SMT-LIB 2.6 text: the native backend refuses an eval whose
// text leaves a parenthesis, string or |quoted symbol| open (it would swallow
// the sentinel that marks the end of its output); the fallback replays the
// commands that make a session's state.

/**
 * Walks SMT-LIB 2.6 text past its comments, strings and |quoted symbols|,
 * telling `paren` of each parenthesis outside them (its position, and whether
 * it opens); `paren` may stop the walk with a reason. The reason, or what is
 * left open (a string or a quoted symbol), or undefined.
 */
function scan(text: string, paren: (open: boolean, at: number) => string | undefined): string | undefined {
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
            if (c === '(' || c === ')') {
                const stop = paren(c === '(', i);
                if (stop) return stop;
            }
            i++;
        }
    }
    return undefined;
}

/** Undefined when the text is complete; otherwise what is left open. */
export function unbalancedReason(text: string): string | undefined {
    let depth = 0;
    const open = scan(text, opens => {
        depth += opens ? 1 : -1;
        return depth < 0 ? 'unbalanced parentheses (too many closing)' : undefined;
    });
    return open ?? (depth > 0 ? 'unbalanced parentheses (not closed)' : undefined);
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
    let depth = 0;
    let start = 0;
    scan(text, (opens, at) => {
        if (opens && depth++ === 0) start = at;
        if (!opens && --depth === 0) {
            const command = text.slice(start, at + 1);
            const head = /^\(\s*([^\s()|";]+)/.exec(command)?.[1];
            if (!head || !QUERIES.has(head)) out.push(command);
        }
        return depth < 0 ? 'unbalanced' : undefined;
    });
    return out.join('\n') + (out.length > 0 ? '\n' : '');
}

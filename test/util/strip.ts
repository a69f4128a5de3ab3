/**
 * A program without its protection annotations: every `writable_if` and
 * `environment` clause deleted (in `//@` lines and in `/*@ … *\/` blocks),
 * everything else kept at its place (clauses are blanked, not removed, so that
 * line numbers stay the same; the other clauses of an annotation stay).
 */
export function stripProtection(text: string): string {
    // clauses inside /*@ ... */ blocks
    let out = text.replace(/\/\*@[\s\S]*?\*\//g, block => {
        const kept = blankClauses(block.slice(3, -2));
        const blank = kept.replace(/[\s@]/g, '') === '';
        return blank ? block.replace(/[^\n]/g, ' ') : `/*@${kept}*/`;
    });
    // //@ lines
    out = out.split('\n').map(line => {
        const at = line.indexOf('//@');
        if (at < 0 || !/\b(writable_if|environment)\b/.test(line.slice(at))) return line;
        const kept = blankClauses(line.slice(at + 3));
        return kept.trim() === '' ? line.slice(0, at).replace(/\s+$/, '') : `${line.slice(0, at)}//@${kept}`;
    }).join('\n');
    return out;
}

/** The annotation text with each protection clause (up to its `;` outside parentheses, or the end) blanked. */
function blankClauses(inner: string): string {
    let out = '';
    let i = 0;
    while (i < inner.length) {
        const m = /(^|[;\n])(\s*@?\s*)(writable_if|environment)\b/.exec(inner.slice(i));
        if (!m) { out += inner.slice(i); break; }
        const start = i + m.index + m[1].length + m[2].length;
        out += inner.slice(i, start);
        let j = start, depth = 0;
        for (; j < inner.length; j++) {
            const c = inner[j];
            if (c === '(' || c === '[' || c === '{') depth++;
            else if (c === ')' || c === ']' || c === '}') depth--;
            else if (c === ';' && depth <= 0) { j++; break; }
        }
        out += inner.slice(start, j).replace(/[^\n]/g, ' ');
        i = j;
    }
    return out;
}

/**
 * A program without its protection annotations: every `writable_if` and
 * `environment` clause deleted (in `//@` lines and in `/*@ … *\/` blocks),
 * everything else kept at its place (lines are blanked, not removed, so that
 * line numbers stay the same).
 */
export function stripProtection(text: string): string {
    // clauses inside /*@ ... */ blocks
    let out = text.replace(/\/\*@[\s\S]*?\*\//g, block => {
        const inner = block.slice(3, -2);
        const kept = inner.replace(/(^|;|\n)(\s*@?\s*)(writable_if|environment)\b[^;]*(;|$)/g, (_m, pre: string, ws: string) => `${pre}${ws.replace(/[^\n]/g, ' ')}`);
        const blank = kept.replace(/[\s@]/g, '') === '';
        return blank ? block.replace(/[^\n]/g, ' ') : `/*@${kept}*/`;
    });
    // //@ lines
    out = out.split('\n').map(line => {
        const m = /^(.*?)\/\/@\s*(writable_if|environment)\b.*$/.exec(line);
        return m ? m[1].replace(/\s+$/, '') : line;
    }).join('\n');
    return out;
}

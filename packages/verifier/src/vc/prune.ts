// Declarations nobody reads are left out of a script (issue 15). A check of
// one thread of a program with n globals declares every global's incarnations
// (the field initializers, the environment's steps) although its formulas read
// only a few of them: n declarations per check, n² text for the program. A
// declaration that no assertion, no other kept declaration and no term asked
// about later (`get-value`) names constrains nothing, and leaving it out
// changes no answer of the solver.

const DECL = /^\((?:declare-const|declare-fun|define-fun) (\|[^|]*\||[^\s()|]+)/;
const TOKEN = /\|[^|]*\||[^\s()|"]+/g;

function tokens(text: string, into: (name: string) => void): void {
    TOKEN.lastIndex = 0;
    for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) into(m[0]);
}

/**
 * The declarations (in their order) that `roots` (every other line of the
 * script, and the terms later queries name) reach, directly or through the
 * bodies of other kept declarations. Lines that are not single declarations
 * are kept.
 */
export function reachableDeclarations(decls: readonly string[], roots: readonly string[]): string[] {
    const byName = new Map<string, number>();
    const keep = new Uint8Array(decls.length);
    const work: number[] = [];
    decls.forEach((d, i) => {
        const m = DECL.exec(d);
        if (m && !d.includes('\n') && !byName.has(m[1])) byName.set(m[1], i);
        else { keep[i] = 1; work.push(i); } // not one declaration: kept as it is
    });
    const reach = (name: string) => {
        const i = byName.get(name);
        if (i === undefined || keep[i]) return;
        keep[i] = 1;
        work.push(i);
    };
    for (const r of roots) tokens(r, reach);
    while (work.length > 0) {
        const d = decls[work.pop()!];
        const m = DECL.exec(d);
        tokens(m ? d.slice(m[0].length) : d, reach);
    }
    return decls.filter((_, i) => keep[i]);
}

// Random edits inside method and thread bodies, as typing makes them: for the
// tests of the incremental front end (test/frontend/incremental.test.ts, and
// in the language server, test/lsp/typing.test.ts).
import * as ast from '../../language/src/generated/ast.js';

/**
 * One random edit inside a body of `root`, or undefined when the program has
 * no body; `syntaxErrors: false` makes only edits that parse (statements,
 * unknown names, type errors, annotations, comments, calls, numbers).
 */
export function randomBodyEdit(text: string, root: ast.Program, rnd: () => number, k: number, options: { syntaxErrors?: boolean } = {}): string | undefined {
    const syntaxErrors = options.syntaxErrors ?? true;
    const bodies: ast.Block[] = [];
    const methods: string[] = [];
    for (const d of root.decls) {
        if ((ast.isMethodDecl(d) || ast.isThreadDecl(d)) && d.body?.$cstNode) bodies.push(d.body);
        if (ast.isMethodDecl(d) && d.name) methods.push(d.name);
        if (ast.isClassDecl(d)) {
            for (const m of d.members) {
                if (ast.isMethodDecl(m) && m.body?.$cstNode) bodies.push(m.body);
                if (ast.isMethodDecl(m) && m.name) methods.push(m.name);
            }
        }
    }
    if (bodies.length === 0) return undefined;
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
    const body = pick(bodies).$cstNode!;
    const inner = text.slice(body.offset + 1, body.end - 1);
    // statement boundaries: right after '{' of the body, and after each ';' or '}' inside it
    const boundaries = [body.offset + 1];
    for (let i = 0; i < inner.length; i++) if (inner[i] === ';' || inner[i] === '}') boundaries.push(body.offset + 2 + i);
    const at = pick(boundaries);
    const snippets = [
        `\n    int zz${k} = ${k};`,
        `\n    zz${k} = zz${k} + 1;`,
        `\n    //@ assert ${k} > 0;`,
        `\n    /* a comment { ( */`,
        `\n    if (true) { int q${k} = 1; } else { }`,
        `\n    boolean bb${k} = ${k};`,
        `\n    while (false) { }`,
        `\n    ${methods.length > 0 ? pick(methods) : 'nothing'}();`,
        `\n\n\n`,
        ...(syntaxErrors ? [`\n    int e${k} = ;`, `x`] : []),
    ];
    switch (Math.floor(rnd() * 4)) {
        case 0: case 1:
            return text.slice(0, at) + pick(snippets) + text.slice(at);
        case 2: {
            if (!syntaxErrors) return text.slice(0, at) + pick(snippets) + text.slice(at);
            // remove the statement that starts at a boundary (up to the next ';')
            const end = text.indexOf(';', at);
            if (end < 0 || end >= body.end - 1) return text.slice(0, at) + pick(snippets) + text.slice(at);
            return text.slice(0, at) + text.slice(end + 1);
        }
        default: {
            // change a number in the body, or add one character
            const m = /[0-9]+/.exec(inner);
            if (m) {
                const from = body.offset + 1 + m.index;
                return text.slice(0, from) + String(Number(m[0]) + 1 + k) + text.slice(from + m[0].length);
            }
            return text.slice(0, at) + ' ' + text.slice(at);
        }
    }
}

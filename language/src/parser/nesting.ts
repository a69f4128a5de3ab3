import type { AstNode } from 'langium';
import type { ILexingError, IToken } from 'chevrotain';

/**
 * Limits on nesting, so that no input can exhaust the stack of the parser or
 * of the recursive stages after it (validation, the program model, lowering,
 * the solver's terms): deeper input gets a `syntax` error "nested too
 * deeply" at the place, and the rest of the file is checked as usual.
 *
 * - Brackets: `(`, `[` and `{` nested more than MAX_BRACKETS deep. The
 *   parser recurses through a dozen rules per parenthesis and overflows
 *   Node's stack at about 115 levels; the content of a bracket opened deeper
 *   than the limit is blanked (same line structure, so positions stay) before
 *   parsing, and the parser's complaints inside it are dropped.
 * - Syntax trees: a node deeper than MAX_TREE_DEPTH (a sum of thousands of
 *   terms is a left-deep tree of that depth) is cut from its parent after
 *   parsing, so no later stage sees it.
 * - What the parser still cannot take (thousands of `else if`s, or of prefix
 *   operators) fails with a stack overflow that becomes the same error at the
 *   longest such run.
 */
export const MAX_BRACKETS = 48;
export const MAX_TREE_DEPTH = 200;
/** Tokens in one statement or clause (between `;`, `{` and `}`): a longer one is cut before parsing. */
export const MAX_STATEMENT_TOKENS = 1000;
/** Larger files are not parsed at all (the front end takes about 4 s and 350 MB per MB). */
export const MAX_FILE_BYTES = 2_000_000;
/** Longest run of prefix operators or `else if`s reported when the parser overflows anyway. */
const MAX_RUN = 48;

export interface NestingGuard {
    /** The text to parse: over-deep brackets blanked. */
    text: string;
    errors: ILexingError[];
    /** Offsets [from, to) whose parser errors are consequences of the blanking. */
    blanked: Array<[number, number]>;
}

const OPEN = new Set(['(', '[', '{']);
const CLOSE: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

function errorAt(text: string, offset: number, length: number, message: string): ILexingError {
    let line = 1, column = 1;
    for (let i = 0; i < offset && i < text.length; i++) {
        if (text.charCodeAt(i) === 10) { line++; column = 1; } else column++;
    }
    return { offset, line, column, length, message };
}

/** Blanks the content of brackets nested deeper than MAX_BRACKETS (line breaks kept). */
export function guardBrackets(text: string, tokens: IToken[]): NestingGuard {
    const errors: ILexingError[] = [];
    const blanked: Array<[number, number]> = [];
    const stack: IToken[] = [];
    let cutFrom: IToken | undefined;
    let outer: IToken | undefined;
    const chars = text.split('');
    let changed = false;
    // the blanked content, and (for the parser's complaints) the whole bracket run around it
    const blank = (from: number, to: number, outer: number) => {
        for (let i = from; i < to; i++) if (chars[i] !== '\n' && chars[i] !== '\r' && chars[i] !== ' ') { chars[i] = ' '; changed = true; }
        blanked.push([outer, to + 1]);
    };
    let statement = 0;
    let statementStart: IToken | undefined;
    let cutStatement: IToken | undefined;
    tokens.forEach((t, i) => {
        const image = t.image;
        // statements and clauses too long to parse: blanked up to their end
        if (image === ';' || image === '{' || image === '}' || image === '*/' || image === '/*@' || image === '//@' || /^\r?\n$/.test(image)) {
            if (cutStatement) {
                blank(cutStatement.startOffset, t.startOffset, statementStart!.startOffset);
                errors.push(errorAt(text, cutStatement.startOffset, 1,
                    `Too long: a statement or clause of more than ${MAX_STATEMENT_TOKENS} tokens; Calvin does not check it. Split it with local variables.`));
                cutStatement = undefined;
            }
            statement = 0;
            statementStart = tokens[i + 1];
        } else if (++statement === MAX_STATEMENT_TOKENS + 1 && !cutStatement) {
            cutStatement = t;
        }
        if (OPEN.has(image)) {
            stack.push(t);
            // the parser may complain at the token before the outermost bracket (`invariant (((...`)
            if (stack.length === 1) outer = tokens[i - 1] ?? t;
            if (stack.length === MAX_BRACKETS + 1 && !cutFrom) cutFrom = t;
        } else if (CLOSE[image]) {
            const open = stack.pop();
            if (cutFrom && open === cutFrom) {
                blank(cutFrom.endOffset! + 1, t.startOffset, outer!.startOffset);
                errors.push(errorAt(text, cutFrom.startOffset, t.endOffset! + 1 - cutFrom.startOffset,
                    `Nested too deeply: more than ${MAX_BRACKETS} levels of parentheses, brackets and braces; Calvin does not check what is inside. Simplify the expression or statement.`));
                cutFrom = undefined;
            }
        }
    });
    if (cutStatement) {
        blank(cutStatement.startOffset, text.length, statementStart!.startOffset);
        errors.push(errorAt(text, cutStatement.startOffset, 1, `Too long: a statement or clause of more than ${MAX_STATEMENT_TOKENS} tokens (and not ended); Calvin does not check the rest of the file.`));
    }
    if (cutFrom) {
        // never closed: blank to the end
        blank(cutFrom.endOffset! + 1, text.length, outer!.startOffset);
        errors.push(errorAt(text, cutFrom.startOffset, 1, `Nested too deeply: more than ${MAX_BRACKETS} levels of parentheses, brackets and braces (and not closed); Calvin does not check the rest of the file.`));
    }
    return { text: changed ? chars.join('') : text, errors, blanked };
}

/** Where a stack overflow of the parser most likely comes from: the longest run of prefix operators or of `else if`s. */
export function overflowError(text: string, tokens: IToken[]): ILexingError {
    let best: { start: IToken; length: number; what: string } | undefined;
    const consider = (start: IToken | undefined, length: number, what: string) => {
        if (start && length > (best?.length ?? MAX_RUN)) best = { start, length, what };
    };
    let prefix = 0, prefixStart: IToken | undefined;
    let elseIf = 0, elseIfStart: IToken | undefined;
    tokens.forEach((t, i) => {
        if (t.image === '!' || t.image === '-') {
            if (prefix === 0) prefixStart = t;
            prefix++;
        } else {
            consider(prefixStart, prefix, 'prefix operators');
            prefix = 0;
        }
        if (t.image === 'else' && tokens[i + 1]?.image === 'if') {
            if (elseIf === 0) elseIfStart = t;
            elseIf++;
        } else if (t.image === '}' && tokens[i + 1]?.image === 'else') {
            // the chain goes on
        } else if (t.image === 'if' && tokens[i - 1]?.image === 'else') {
            // part of the chain
        } else if (elseIf > 0 && t.image === '}' && tokens[i + 1]?.image !== 'else') {
            consider(elseIfStart, elseIf, "'else if's");
            elseIf = 0;
        }
    });
    consider(prefixStart, prefix, 'prefix operators');
    consider(elseIfStart, elseIf, "'else if's");
    if (!best) {
        return errorAt(text, 0, 0, `Nested too deeply: this file is too deeply nested for Calvin's parser; it is not checked. Split deeply nested statements or expressions.`);
    }
    return errorAt(text, best.start.startOffset, best.start.image.length,
        `Nested too deeply: ${best.length} ${best.what} in a row are more than Calvin's parser can take; the file is not checked. Split the chain.`);
}

/**
 * Cuts every node deeper than MAX_TREE_DEPTH from its parent (iteratively: the
 * tree may be far too deep for recursion); returns an error per cut.
 */
export function pruneDeepNodes(root: AstNode, text: string): ILexingError[] {
    const errors: ILexingError[] = [];
    const stack: Array<{ node: AstNode; depth: number }> = [{ node: root, depth: 0 }];
    while (stack.length > 0) {
        const { node, depth } = stack.pop()!;
        const record = node as unknown as Record<string, unknown>;
        for (const key of Object.keys(record)) {
            if (key.startsWith('$')) continue;
            const value = record[key];
            // a child at the limit that has children of its own is cut, with everything below it
            const tooDeep = (child: AstNode) => depth + 1 >= MAX_TREE_DEPTH && hasChildren(child);
            if (Array.isArray(value)) {
                for (let i = 0; i < value.length; i++) {
                    const child = value[i];
                    if (!isNode(child)) continue;
                    if (tooDeep(child)) {
                        errors.push(cutError(child, text));
                        value.splice(i, 1);
                        i--;
                    } else stack.push({ node: child, depth: depth + 1 });
                }
            } else if (isNode(value)) {
                if (tooDeep(value)) {
                    errors.push(cutError(value, text));
                    record[key] = undefined;
                } else stack.push({ node: value, depth: depth + 1 });
            }
        }
    }
    return errors;
}

function hasChildren(node: AstNode): boolean {
    const record = node as unknown as Record<string, unknown>;
    return Object.keys(record).some(k => !k.startsWith('$') && (isNode(record[k]) || (Array.isArray(record[k]) && (record[k] as unknown[]).some(isNode))));
}

function isNode(x: unknown): x is AstNode {
    return typeof x === 'object' && x !== null && typeof (x as { $type?: unknown }).$type === 'string';
}

function cutError(node: AstNode, text: string): ILexingError {
    const cst = node.$cstNode;
    const offset = cst?.offset ?? 0;
    return errorAt(text, offset, cst?.length ?? 0, `Nested too deeply: an expression or statement more than ${MAX_TREE_DEPTH} levels deep (a long chain of operators counts one level per operator); Calvin does not check it. Split it with local variables.`);
}

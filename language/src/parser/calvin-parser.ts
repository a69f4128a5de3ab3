import type { AstNode, LangiumCoreServices, LexerResult, ParseResult, ParserOptions, TokenizeOptions } from 'langium';
import { createParser, DefaultLexer, LangiumParser } from 'langium';
import type { ILexingError, IToken } from 'chevrotain';
import { identifierName } from './calvin-token-builder.js';
import { guardBrackets, MAX_FILE_BYTES, overflowError, pruneDeepNodes } from './nesting.js';
import { recordParsedText } from './parsed-text.js';

/** The message of an internal failure, for a diagnostic (first line only). */
function failure(e: unknown): string {
    const message = e instanceof Error ? e.message : String(e);
    return message.split('\n')[0];
}

/** A lexer error at the start of the file that says the file could not be read. */
function internalError(what: string, e: unknown): ILexingError {
    return {
        offset: 0, line: 1, column: 1, length: 0,
        message: `Internal error: the ${what} failed on this file (${failure(e)}), so it is not checked; please report this.`,
    };
}

function tooLarge(length: number): ILexingError {
    const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
    return { offset: 0, line: 1, column: 1, length: 0, message: `This file is too large for Calvin (${mb(length)}; the limit is ${mb(MAX_FILE_BYTES)}): it is not checked. Split it into several files.` };
}

/**
 * Never throws: a failure of the Chevrotain lexer becomes a lexer error (and no tokens).
 * An identifier whose name (without its invisible format characters) is a keyword is
 * an error: `i\u200bf` would show as `if` and be a name.
 */
export class CalvinLexer extends DefaultLexer {
    private keywords: Set<string> | undefined;

    override tokenize(text: string, options?: TokenizeOptions): LexerResult {
        let result: LexerResult;
        try {
            result = super.tokenize(text, options);
        } catch (e) {
            return { tokens: [], hidden: [], errors: [internalError('lexer', e)] };
        }
        for (const t of result.tokens) {
            if (t.tokenType.name !== 'ID') continue;
            const name = identifierName(t.image);
            if (name === t.image || !this.keywordSet().has(name)) continue;
            result.errors.push({
                offset: t.startOffset, line: t.startLine, column: t.startColumn, length: t.image.length,
                message: `This name reads as the keyword '${name}' once its invisible characters are removed: write '${name}' or another name.`,
            });
        }
        unknownClauses(result);
        // A block comment that is never closed lexes as '/' and '*' (a closed one is a hidden token):
        // one error, and the rest of the file is the comment, as a compiler reads it.
        const open = result.tokens.findIndex((t, i) => t.image === '/' && result.tokens[i + 1]?.startOffset === t.startOffset + 1 && result.tokens[i + 1].image.startsWith('*'));
        if (open >= 0) {
            const t = result.tokens[open];
            result.errors.push({
                offset: t.startOffset, line: t.startLine, column: t.startColumn, length: 2,
                message: `This comment is never closed: everything after '/*' is part of it. Add '*/' where the comment ends.`,
            });
            result.tokens = result.tokens.slice(0, open);
        }
        return result;
    }

    private keywordSet(): Set<string> {
        // Langium names a keyword's token after the keyword; terminals are in capitals.
        return this.keywords ??= new Set(Object.keys(this.definition).filter(n => /^[a-z_][A-Za-z0-9_]*$/.test(n)));
    }
}

const CLAUSE_LIST = 'writable_if, ghost, invariant, environment, requires, ensures, abstraction, loop_invariant, assert, assume, set or witness';

/**
 * An annotation that starts with a word that is no clause keyword (`//@
 * invarient n >= 0;`): one error at the word, and the rest of the annotation
 * is dropped (parsed, it reads as a field `n` of a type `invarient`, which
 * clashes with the real n).
 */
function unknownClauses(result: LexerResult): void {
    const tokens = result.tokens;
    for (let i = 0; i < tokens.length - 1; i++) {
        const start = tokens[i].tokenType.name;
        if (start !== '//@' && start !== '/*@') continue;
        const word = tokens[i + 1];
        if (word.tokenType.name !== 'ID') continue;
        result.errors.push({
            offset: word.startOffset, line: word.startLine, column: word.startColumn, length: word.image.length,
            message: `'${word.image}' is not an annotation clause: a clause starts with ${CLAUSE_LIST}.`,
        });
        const end = start === '//@' ? 'ANNOT_EOL' : '*/';
        let j = i + 1;
        while (j < tokens.length && tokens[j].tokenType.name !== end) j++;
        tokens.splice(i + 1, j - (i + 1));
    }
}

type ParserInternals = {
    construct(): unknown;
    stack: unknown[];
    lexerResult: unknown;
};

/**
 * Langium's parser, made safe for error recovery:
 *
 * - An infix rule (BinaryExpr) whose operands all failed to parse constructs
 *   to `undefined`. Langium's `subrule` takes an `undefined` result for "the
 *   rule threw" and constructs (pops) once more, which unbalances the parser's
 *   node stack: the next assignment then fails ("reading 'decls'", "setting
 *   '$cstNode'", e.g. on `/*@ requires ==`). Here such an empty infix node
 *   constructs to `null`, which Langium assigns nowhere.
 * - Should parsing still throw, the file parses as an empty program with one
 *   error saying so, and the parser's state is reset for the next file.
 */
export class CalvinParser extends LangiumParser {
    constructor(services: LangiumCoreServices) {
        super(services);
        const self = this as unknown as ParserInternals;
        const construct = self.construct;
        self.construct = function (this: ParserInternals): unknown {
            const top = this.stack[this.stack.length - 1] as Record<string, unknown> | undefined;
            const result = construct.call(this);
            if (result === undefined && top !== undefined && '$infixName' in top) return null;
            return result;
        };
    }

    override parse<T extends AstNode = AstNode>(input: string, options: ParserOptions = {}): ParseResult<T> {
        const result = this.parseText<T>(input, options);
        recordParsedText(result.value, input);
        return result;
    }

    private parseText<T extends AstNode>(input: string, options: ParserOptions): ParseResult<T> {
        if (input.length > MAX_FILE_BYTES) {
            const empty = super.parse<T>('', options);
            return { ...empty, lexerErrors: [tooLarge(input.length), ...empty.lexerErrors] };
        }
        // Over-deep input is cut before and after parsing (nesting.ts): no input exhausts the stack.
        let tokens: IToken[] = [];
        try {
            tokens = this.lexer.tokenize(input).tokens;
        } catch {
            // the parse below reports the lexer's failure
        }
        const guard = guardBrackets(input, tokens);
        try {
            const result = super.parse<T>(guard.text, options);
            completeMembers(result.value);
            const inBlank = (offset: number) => guard.blanked.some(([from, to]) => offset >= from - 1 && offset <= to);
            const parserErrors = result.parserErrors.filter(e => !inBlank(e.token.startOffset));
            return { ...result, parserErrors, lexerErrors: [...guard.errors, ...pruneDeepNodes(result.value, input), ...result.lexerErrors] };
        } catch (e) {
            this.resetAfterFailure();
            const empty = super.parse<T>('', options);
            const error = e instanceof RangeError ? overflowError(input, tokens) : internalError('parser', e);
            return { ...empty, lexerErrors: [error, ...empty.lexerErrors] };
        }
    }

    private resetAfterFailure(): void {
        const self = this as unknown as ParserInternals;
        self.stack = [];
        self.lexerResult = undefined;
        this.unorderedGroups.clear();
    }
}

/**
 * A field or method cut short by a syntax error before `(`, `=` or `;`
 * (`int g` followed by the next declaration) is a `Member` of neither kind:
 * make it a field, so that its uses do not also become unknown names.
 */
function completeMembers(root: AstNode): void {
    const decls = (root as { decls?: AstNode[] }).decls;
    if (!Array.isArray(decls)) return;
    for (const d of decls) {
        if (d.$type === 'Member') (d as { $type: string }).$type = 'FieldDecl';
        else if (d.$type === 'ClassDecl') {
            for (const m of (d as { members?: AstNode[] }).members ?? []) {
                if (m.$type === 'Member') (m as { $type: string }).$type = 'FieldDecl';
            }
        }
    }
}

/** Like Langium's `createLangiumParser`, with a `CalvinParser`. */
export function createCalvinParser(services: LangiumCoreServices): CalvinParser {
    const parser = new CalvinParser(services);
    createParser(services.Grammar, parser, services.parser.Lexer.definition);
    parser.finalize();
    return parser;
}

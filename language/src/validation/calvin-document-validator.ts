import type { AstNode, LangiumDocument, Reference, ValidationAcceptor, ValidationOptions } from 'langium';
import type { Lexer } from 'langium';
import { AstUtils, Cancellation, DefaultDocumentValidator, DocumentValidator, interruptAndCheck, type ParseResult } from 'langium';
import { calleesOf, pendingBodyEdit, shiftRange, type BodyEdit } from '../workspace/incremental.js';
import type { IRecognitionException, IToken } from 'chevrotain';
import type { Diagnostic } from 'vscode-languageserver-types';
import * as ast from '../generated/ast.js';
import { isBuiltinUri } from '../builtins.js';
import type { CalvinServices } from '../calvin-module.js';
import type { CalvinTypeSystem } from '../types/calvin-types.js';
import { ANNOTATION_KEYWORDS } from '../parser/calvin-token-builder.js';
import { escapeControl } from '@calvin/verifier/text';

/**
 * Gives Langium's built-in diagnostics Calvin's codes (checking.md): lexer and
 * parser errors become `syntax`, unresolved references `name`, with messages
 * that say what to do.
 */
export class CalvinDocumentValidator extends DefaultDocumentValidator {
    private readonly types: CalvinTypeSystem;
    private readonly lexer: Lexer;

    constructor(services: CalvinServices) {
        super(services);
        this.types = services.types.TypeSystem;
        this.lexer = services.parser.Lexer;
    }

    override async validateDocument(document: LangiumDocument, options: ValidationOptions = {}, cancelToken = Cancellation.CancellationToken.None): Promise<Diagnostic[]> {
        const diagnostics = await this.collect(document, options, cancelToken);
        // text from the file inside a message (an unexpected character, a name) is shown escaped
        for (const d of diagnostics) d.message = escapeControl(String(d.message));
        return diagnostics;
    }

    private async collect(document: LangiumDocument, options: ValidationOptions, cancelToken: Cancellation.CancellationToken): Promise<Diagnostic[]> {
        if (isBuiltinUri(document.uri)) return [];
        // the unresolved references of the previous validation, if it reported them
        this.previousUnresolved.set(document, this.unresolved.get(document));
        this.unresolved.delete(document);
        const diagnostics = await super.validateDocument(document, options, cancelToken);
        for (const d of diagnostics) {
            const langiumCode = (d.data as { code?: string } | undefined)?.code;
            d.source = 'calvin';
            if (langiumCode === DocumentValidator.LexingError) {
                d.code = 'syntax';
                d.message = lexerMessage(String(d.message));
            } else if (langiumCode === DocumentValidator.LinkingError) {
                d.code = 'name';
                const refText = (d.data as { refText?: string }).refText ?? '';
                d.message = `Unknown name '${refText}': declare it before use or check its spelling.`;
            } else if (d.code === undefined && String(d.message).startsWith('An error occurred during validation')) {
                d.code = 'internal'; // a check crashed (Langium logs its stack trace)
            }
        }
        // Parser errors (processParsingErrors leaves them out) go right after the lexer's.
        if (!options.categories || options.categories.includes('built-in')) {
            const { syntax, cuts, resumes } = this.parserDiagnostics(document);
            if (syntax.length > 0) {
                let at = 0;
                while (at < diagnostics.length && (diagnostics[at].data as { code?: string } | undefined)?.code === DocumentValidator.LexingError) at++;
                diagnostics.splice(at, 0, ...syntax);
                // An expression cut short by a syntax error (`//@ assert x ==`) is not also ill-typed,
                // and what the parser's recovery made of the rest of the line (`x = = 0;` gives a
                // statement `0;` right after the error) is no statement to type-check.
                return diagnostics.filter(d => d.code !== 'type' || (!cuts.has(positionKey(d.range.end)) && !resumes.has(positionKey(d.range.start))));
            }
        }
        return diagnostics;
    }

    /**
     * The checks of every node, as Langium runs them, in the order of the
     * nodes in the file; the diagnostics are recorded per node so that after a
     * body edit (incremental.ts) only the new body and the nodes around it
     * (the method, its class, the program) are checked again: the checks of
     * any other node do not look into that body, except the recursion check,
     * which is why a change of the calls it makes checks everything again.
     */
    protected override async validateAst(root: AstNode, options: ValidationOptions, cancelToken = Cancellation.CancellationToken.None): Promise<Diagnostic[]> {
        const document = root.$document;
        const items: Diagnostic[] = [];
        const acceptor: ValidationAcceptor = (severity, message, info) => { items.push(this.toDiagnostic(severity, message, info)); };
        await this.validateAstBefore(root, options, acceptor, cancelToken);
        const categories = JSON.stringify(options.categories ?? null);
        const previous = document ? this.recorded.get(document) : undefined;
        const edit = document ? pendingBodyEdit(document) : undefined;
        const groups = (edit && previous?.categories === categories && await this.incrementalGroups(previous.groups, edit, options, cancelToken))
            || await this.allGroups(root, options, cancelToken);
        groups.sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1]);
        if (document) this.recorded.set(document, { categories, groups: groups.map(g => ({ ...g, diagnostics: g.diagnostics.map(copyDiagnostic) })) });
        for (const g of groups) items.push(...g.diagnostics);
        await this.validateAstAfter(root, options, acceptor, cancelToken);
        return items;
    }

    private readonly recorded = new WeakMap<LangiumDocument, { categories: string; groups: CheckGroup[] }>();

    private async allGroups(root: AstNode, options: ValidationOptions, cancelToken: Cancellation.CancellationToken): Promise<CheckGroup[]> {
        const groups: CheckGroup[] = [];
        for (const node of AstUtils.streamAst(root)) {
            await interruptAndCheck(cancelToken);
            const group = await this.checkNode(node, options, cancelToken);
            if (group) groups.push(group);
        }
        return groups;
    }

    private async incrementalGroups(previous: CheckGroup[], edit: BodyEdit, options: ValidationOptions, cancelToken: Cancellation.CancellationToken): Promise<CheckGroup[] | undefined> {
        const callees = calleesOf(edit.newBody);
        if (callees.size !== edit.oldCallees.size || [...callees].some(c => !edit.oldCallees.has(c))) return undefined;
        const around: AstNode[] = [];
        for (let n: AstNode | undefined = edit.owner; n; n = n.$container) around.push(n);
        const groups: CheckGroup[] = [];
        for (const g of previous) {
            if (around.includes(g.node) || isWithin(g.node, edit.oldBody)) continue;
            // a diagnostic of another node inside the old body would be stale: check everything
            if (g.diagnostics.some(d => overlapsBody(d.range, edit))) return undefined;
            groups.push({ node: g.node, key: nodeKey(g.node), diagnostics: g.diagnostics.map(d => shiftDiagnostic(d, edit)) });
        }
        for (const node of [...around, ...AstUtils.streamAst(edit.newBody)]) {
            await interruptAndCheck(cancelToken);
            const group = await this.checkNode(node, options, cancelToken);
            if (group) groups.push(group);
        }
        return groups;
    }

    private async checkNode(node: AstNode, options: ValidationOptions, cancelToken: Cancellation.CancellationToken): Promise<CheckGroup | undefined> {
        const diagnostics: Diagnostic[] = [];
        const acceptor: ValidationAcceptor = (severity, message, info) => { diagnostics.push(this.toDiagnostic(severity, message, info)); };
        for (const check of this.validationRegistry.getChecks(node.$type, options.categories)) {
            await check(node, acceptor, cancelToken);
        }
        return diagnostics.length > 0 ? { node, key: nodeKey(node), diagnostics } : undefined;
    }

    /** Reported by `parserDiagnostics`, which also needs the document's text. */
    protected override processParsingErrors(_parseResult: ParseResult, _diagnostics: Diagnostic[], _options: ValidationOptions): void {
        // see parserDiagnostics
    }

    /**
     * Unresolved references, except members of a receiver whose type has no
     * members (int, boolean, void, null) or is unknown because of an earlier
     * error: the type check of the receiver (or that earlier error) already
     * explains the mistake.
     */
    protected override processLinkingErrors(document: LangiumDocument, diagnostics: Diagnostic[], _options: ValidationOptions): void {
        const unresolved = this.unresolvedReferences(document);
        for (const reference of unresolved) {
            const linkingError = reference.error;
            if (!linkingError) continue;
            const container = linkingError.info.container;
            if (ast.isMemberAccess(container) && linkingError.info.property === 'member' && container.receiver) {
                const kind = this.types.typeOf(container.receiver).kind;
                if (kind === 'int' || kind === 'boolean' || kind === 'void' || kind === 'null' || kind === 'error') continue;
            }
            diagnostics.push(this.toDiagnostic('error', linkingError.message, {
                node: container,
                range: reference.$refNode?.range,
                property: linkingError.info.property,
                index: linkingError.info.index,
                data: {
                    code: DocumentValidator.LinkingError,
                    containerType: container.$type,
                    property: linkingError.info.property,
                    refText: linkingError.info.reference.$refText,
                },
            }));
        }
    }

    /**
     * The references that did not resolve, in the order of the file (links
     * resolved on demand come first in `references`). After a body edit, those
     * of the rest of the file are the same as before (incremental.ts).
     */
    private unresolvedReferences(document: LangiumDocument): Reference[] {
        const edit = pendingBodyEdit(document);
        const previous = this.previousUnresolved.get(document);
        let unresolved: Reference[];
        if (edit && previous) {
            unresolved = previous.filter(r => !isWithin(r.error!.info.container, edit.oldBody));
            for (const node of AstUtils.streamAst(edit.newBody)) {
                for (const refInfo of AstUtils.streamReferences(node)) if (refInfo.reference.error) unresolved.push(refInfo.reference as Reference);
            }
        } else {
            unresolved = document.references.filter((r): r is Reference => r.error !== undefined);
        }
        unresolved.sort((a, b) => (a.$refNode?.offset ?? 0) - (b.$refNode?.offset ?? 0));
        this.unresolved.set(document, unresolved);
        return unresolved;
    }

    private readonly unresolved = new WeakMap<LangiumDocument, Reference[]>();
    private readonly previousUnresolved = new WeakMap<LangiumDocument, Reference[] | undefined>();

    /**
     * One `syntax` diagnostic per line (the first: later ones are usually
     * the parser's recovery), the ends of the tokens right before the errors
     * (where an expression may have been cut short) and the starts of the
     * tokens right after them (where the parser's recovery resumed).
     */
    private parserDiagnostics(document: LangiumDocument): { syntax: Diagnostic[]; cuts: Set<string>; resumes: Set<string> } {
        const errors = document.parseResult.parserErrors;
        const result: Diagnostic[] = [];
        const cuts = new Set<string>();
        const resumes = new Set<string>();
        if (errors.length === 0) return { syntax: result, cuts, resumes };
        let tokens: IToken[] | undefined;
        const allTokens = (): IToken[] => tokens ??= this.lexer.tokenize(document.textDocument.getText()).tokens;
        const seen = new Set<string>();
        for (const e of errors) {
            const i = Number.isNaN(e.token.startOffset) ? -1 : tokenIndex(allTokens(), e.token.startOffset);
            const before = i > 0 ? allTokens()[i - 1] : undefined;
            if (before?.endLine !== undefined && before.endColumn !== undefined) cuts.add(positionKey({ line: before.endLine - 1, character: before.endColumn }));
            const after = i >= 0 ? allTokens()[i + 1] : undefined;
            if (after?.startLine !== undefined && after.startColumn !== undefined) resumes.add(positionKey({ line: after.startLine - 1, character: after.startColumn - 1 }));
            const described = describeParserError(e, allTokens);
            // One per line: the parser's recovery often reports the rest of the line again.
            const key = String(described.range.start.line);
            if (seen.has(key)) continue;
            seen.add(key);
            result.push({
                severity: 1,
                range: described.range,
                message: described.message,
                code: 'syntax',
                source: 'calvin',
                data: { code: DocumentValidator.ParsingError },
            });
        }
        return { syntax: result, cuts, resumes };
    }
}

/** The diagnostics of one node's checks; `key` orders nodes as in the file (offset, then depth: outer first). */
interface CheckGroup {
    node: AstNode;
    key: [number, number];
    diagnostics: Diagnostic[];
}

function nodeKey(node: AstNode): [number, number] {
    let depth = 0;
    let offset: number | undefined;
    for (let n: AstNode | undefined = node; n; n = n.$container) {
        offset ??= n.$cstNode?.offset;
        depth++;
    }
    return [offset ?? 0, depth];
}

function isWithin(node: AstNode, ancestor: AstNode): boolean {
    for (let n: AstNode | undefined = node; n; n = n.$container) if (n === ancestor) return true;
    return false;
}

function before(a: Range['start'], b: Range['start']): boolean {
    return a.line < b.line || (a.line === b.line && a.character < b.character);
}

function overlapsBody(r: Range, edit: BodyEdit): boolean {
    return before(edit.startPos, r.end) && before(r.start, edit.oldEndPos);
}

/** A copy that shares no position with the tree (incremental.ts moves the tokens' positions in place). */
function copyDiagnostic(d: Diagnostic): Diagnostic {
    const range = (r: Range): Range => ({ start: { ...r.start }, end: { ...r.end } });
    const copy: Diagnostic = { ...d, range: range(d.range) };
    if (d.relatedInformation) copy.relatedInformation = d.relatedInformation.map(ri => ({ ...ri, location: { ...ri.location, range: range(ri.location.range) } }));
    return copy;
}

function shiftDiagnostic(d: Diagnostic, edit: BodyEdit): Diagnostic {
    const shifted: Diagnostic = { ...d, range: shiftRange(d.range, edit) };
    if (d.relatedInformation) {
        shifted.relatedInformation = d.relatedInformation.map(ri => ri.location.uri !== edit.uri ? ri : ({ ...ri, location: { ...ri.location, range: shiftRange(ri.location.range, edit) } }));
    }
    return shifted;
}

function lexerMessage(m: string): string {
    const match = /unexpected character: ->(.)<-/.exec(m);
    if (match) {
        const ch = match[1];
        if (ch === "'") return `Unexpected character "'": primes (x') are only allowed inside annotations, right after a name.`;
        if (ch === '\\') return `Unexpected character '\\': only \\old, \\result, \\forall and \\exists start with a backslash (and they belong in annotations).`;
        return `Unexpected character '${ch}': it is not part of the Calvin language; remove it.`;
    }
    return m.replace(/\s*[\r\n]+\s*/g, ' ');
}

// ---------------------------------------------------------------- parser errors

type Range = Diagnostic['range'];

function positionKey(p: { line: number; character: number }): string {
    return `${p.line}:${p.character}`;
}

/** The form of each clause (and abstraction item), by its keyword. */
const CLAUSE_FORMS: Record<string, string> = {
    writable_if: 'writable_if <condition>;', invariant: 'invariant <condition>;', environment: 'environment <action>;',
    requires: 'requires <condition>;', ensures: 'ensures <condition>;', abstraction: 'abstraction { ... }',
    loop_invariant: 'loop_invariant <condition>;', ghost: 'ghost <type> <name> = <value>;', set: 'set <ghost field> = <value>;',
    witness: 'witness step <number>;', step: 'step [<frame>] <action>;', stutter: 'stutter [<frame>] <action>;',
};

/** Operators after which an operand must follow. */
const INFIX_OPERATORS = new Set(['*', '/', '%', '+', '-', '<', '<=', '>', '>=', '==', '!=', '&&', '||', '==>', '<==>', '?', ':']);
/** Tokens that can end an operand. */
const OPERAND_ENDS = new Set(['ID', 'INT', ')', ']', 'true', 'false', 'null', 'this', 'tid', 'PRIME', '\\result']);
/** Tokens that cannot start an operand. */
const NO_OPERAND_START = new Set([';', ')', ']', '}', ',', 'ANNOT_EOL', '*/', 'EOF']);

/** What a token type stands for, in words (token types are named by their keyword, or ID, INT, ...). */
function describeTokenType(name: string): string {
    switch (name) {
        case 'ID': return 'a name';
        case 'INT': return 'a number';
        case 'ANNOT_EOL': return 'the end of the line';
        case 'EOF': return 'the end of the file';
        case 'PRIME': return "a prime (')";
        default: return `'${name.endsWith(':KW') ? name.slice(0, -3) : name}'`;
    }
}

/** A found token, in words: its text, or what it stands for when that text is not printable (end of line, end of file). */
function describeToken(t: IToken | undefined): string {
    if (!t || t.tokenType.name === 'EOF' || t.image === '' || Number.isNaN(t.startOffset)) return 'the end of the file';
    if (t.tokenType.name === 'ANNOT_EOL') return 'the end of the line';
    return `'${t.image.replace(/[\r\n]+/g, ' ')}'`;
}

/** "unexpected ';'", "unexpected end of the file" (not "unexpected the end of the file"). */
function unexpected(found: string): string {
    return found.startsWith('the end of ') ? `unexpected end of ${found.slice('the end of '.length)}` : `unexpected ${found}`;
}

function tokenRange(t: IToken): Range | undefined {
    if (t.startLine === undefined || t.startColumn === undefined || t.endLine === undefined || t.endColumn === undefined
        || Number.isNaN(t.startOffset) || t.startOffset < 0) return undefined;
    // ANNOT_EOL spans a line break: point at the end of the line instead.
    if (t.tokenType.name === 'ANNOT_EOL') {
        const p = { line: t.startLine - 1, character: t.startColumn - 1 };
        return { start: p, end: p };
    }
    return { start: { line: t.startLine - 1, character: t.startColumn - 1 }, end: { line: t.endLine - 1, character: t.endColumn } };
}

function list(expected: string[]): string {
    const shown = expected.slice(0, 6).map(describeTokenType);
    return shown.join(', ') + (expected.length > 6 ? ' (or others)' : '');
}

/** Do the expected tokens say "an expression"? (all of them can start one, and both literals can) */
function isExpressionStart(expected: string[]): boolean {
    return expected.includes('INT') && expected.includes('ID') && expected.includes('true');
}

function distinct<T>(xs: T[]): T[] {
    return [...new Set(xs)];
}

/** The index of the token starting at `offset` (binary search), or -1. */
function tokenIndex(tokens: IToken[], offset: number): number {
    let lo = 0, hi = tokens.length - 1;
    while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const o = tokens[mid].startOffset;
        if (o === offset) return mid;
        if (o < offset) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/** The token sequences of Chevrotain's "one of these possible Token sequences" message. */
function lookaheadPaths(message: string): string[][] {
    const paths: string[][] = [];
    for (const m of message.matchAll(/^\s*\d+\. \[(.*)\]$/gm)) paths.push(m[1].split(', '));
    if (paths.length === 0) {
        // "expecting at least one iteration which starts with one of these possible Token sequences::\n  <[a,b] ,[c]>"
        const iter = /<(.*)>/s.exec(message);
        if (iter) for (const p of iter[1].split(' ,')) paths.push(p.replace(/^\[|\]$/g, '').split(','));
    }
    return paths.filter(p => p.length > 0 && p[0] !== '');
}

/**
 * A readable message (one line) and range for a Chevrotain error: what was
 * expected, in words, and what was found, named by its token (never a raw
 * line break).
 */
/**
 * `m(` at the start of a member (a declaration without its type): its name,
 * and whether it reads as a Java constructor (m is the enclosing class, the
 * innermost `class m {` before it).
 */
function memberWithoutType(tokens: IToken[], offset: number): { name: string; constructor: boolean } | undefined {
    const i = tokenIndex(tokens, offset);
    const name = i > 1 ? tokens[i - 1] : undefined;
    const before = i > 1 ? tokens[i - 2].tokenType.name : undefined;
    if (!name || name.tokenType.name !== 'ID' || !(before === '{' || before === ';' || before === '}' || before === '*/')) return undefined;
    let depth = 0;
    for (let k = i - 2; k >= 0; k--) {
        const t = tokens[k].tokenType.name;
        if (t === '}') depth++;
        else if (t === '{') {
            if (depth > 0) { depth--; continue; }
            const cls = k >= 2 && tokens[k - 2].tokenType.name === 'class' ? tokens[k - 1].image : undefined;
            return { name: name.image, constructor: cls === name.image };
        }
    }
    return { name: name.image, constructor: false };
}

const MODIFIERS = new Set(['static', 'final', 'volatile']);

/**
 * The declaration `[modifiers] T [[]] name` that opens the annotation comment
 * the error token is in (`//@ int g = 0;`), if it does (without `ghost`).
 */
function declarationInAnnotation(tokens: IToken[], at: IToken): { type: IToken; text: string } | undefined {
    if (Number.isNaN(at.startOffset)) return undefined;
    let i = tokens.findIndex(t => t.startOffset >= at.startOffset);
    if (i < 0) i = tokens.length;
    // back to the opener of the annotation, if the error is inside one
    let k = i - 1;
    if (i < tokens.length && (tokens[i].tokenType.name === '//@' || tokens[i].tokenType.name === '/*@')) return undefined;
    while (k >= 0 && !['//@', '/*@', 'ANNOT_EOL', '*/'].includes(tokens[k].tokenType.name)) k--;
    if (k < 0 || (tokens[k].tokenType.name !== '//@' && tokens[k].tokenType.name !== '/*@')) return undefined;
    let j = k + 1;
    while (j < tokens.length && MODIFIERS.has(tokens[j].tokenType.name)) j++;
    const type = tokens[j];
    if (!type || !['int', 'boolean', 'ID'].includes(type.tokenType.name)) return undefined;
    let n = j + 1;
    while (tokens[n]?.tokenType.name === '[' && tokens[n + 1]?.tokenType.name === ']') n += 2;
    const name = tokens[n];
    const after = tokens[n + 1]?.tokenType.name;
    if (name?.tokenType.name !== 'ID' || !(after === '=' || after === ';' || after === 'ANNOT_EOL' || after === '*/')) return undefined;
    return { type, text: tokens.slice(j, n + 1).map(t => t.image).join(' ').replace(/ \[ \]/g, '[]') };
}

function describeParserError(e: IRecognitionException, allTokens: () => IToken[]): { range: Range; message: string } {
    const token = e.token;
    let range = tokenRange(token);
    if (!range) {
        // A token inserted by error recovery: report right after the previous token.
        const prev = (e as IRecognitionException & { previousToken?: IToken }).previousToken;
        const p = prev && prev.tokenType.name === 'ANNOT_EOL' && prev.startLine !== undefined && prev.startColumn !== undefined
            ? { line: prev.startLine - 1, character: prev.startColumn - 1 } // the end of the line, not past its line break
            : prev && prev.endLine !== undefined && prev.endColumn !== undefined && !Number.isNaN(prev.endOffset ?? NaN)
                ? { line: prev.endLine - 1, character: prev.endColumn }
                : { line: 0, character: 0 };
        range = { start: p, end: p };
    }
    const m = e.message;
    const found = describeToken(token);

    // `//@ int g = 0;`: a field declared inside an annotation comment, which only ghost fields may be.
    const declared = declarationInAnnotation(allTokens(), token);
    if (declared) {
        return {
            range: tokenRange(declared.type) ?? range,
            message: `Syntax error: a field declared inside an annotation comment must be a ghost field: write 'ghost ${declared.text}' (specification only), or declare it outside the comment.`,
        };
    }

    // `//@ invariant x = 0;`, `if (x = 1)`: an assignment where a condition was expected.
    if (token.image === '=') {
        const tokens = allTokens();
        const i = tokenIndex(tokens, token.startOffset);
        if (i > 0 && OPERAND_ENDS.has(tokens[i - 1].tokenType.name)) {
            return { range, message: `Syntax error: unexpected '=' here; to compare two values, write '=='.` };
        }
    }

    // `//@ invariant` (end of line): the parser did not start the clause, as it cannot be completed.
    const form = CLAUSE_FORMS[token.tokenType.name];
    if (form && (e.name === 'NotAllInputParsedException' || /^Expecting|^Redundant input/.test(m))) {
        const tokens = allTokens();
        const i = tokenIndex(tokens, token.startOffset);
        const prev = i > 0 ? tokens[i - 1].tokenType.name : undefined;
        if (prev === '//@' || prev === '/*@' || prev === ';' || prev === '{') {
            const next = i >= 0 ? tokens[i + 1] : undefined;
            return {
                range,
                message: `Syntax error: incomplete '${token.image}' clause (found ${describeToken(next)} after it); write '${form}'.`,
            };
        }
    }

    const mismatch = /^Expecting (?:token of type|keyword) '(.+?)' but found `[\s\S]*`\.?$/.exec(m);
    if (mismatch) {
        // `x = 1 + ;`: the operand after an operator is missing (the parser only sees that the statement does not end).
        if (INFIX_OPERATORS.has(token.tokenType.name)) {
            const tokens = allTokens();
            const i = tokenIndex(tokens, token.startOffset);
            const prev = i > 0 ? tokens[i - 1] : undefined;
            const next: IToken | undefined = i >= 0 ? tokens[i + 1] : undefined;
            if (prev && OPERAND_ENDS.has(prev.tokenType.name) && (!next || NO_OPERAND_START.has(next.tokenType.name))) {
                return {
                    range: (next && tokenRange(next)) ?? range,
                    message: `Syntax error: expected an expression after '${token.image}' but found ${describeToken(next)}.`,
                };
            }
        }
        // `new C(60)`: arguments to a constructor
        if (mismatch[1] === ')') {
            const tokens = allTokens();
            const i = tokenIndex(tokens, token.startOffset);
            if (i >= 3 && tokens[i - 1].tokenType.name === '(' && tokens[i - 2].tokenType.name === 'ID' && tokens[i - 3].tokenType.name === 'new') {
                const cls = tokens[i - 2].image;
                return { range, message: `Syntax error: 'new ${cls}()' takes no arguments: Calvin has no constructors; give the fields of '${cls}' their initial values where they are declared, or set them in a method called after 'new ${cls}()'.` };
            }
        }
        if (mismatch[1] === 'ID' && token.tokenType.name === '(') {
            const member = memberWithoutType(allTokens(), token.startOffset);
            if (member?.constructor) return { range, message: `Syntax error: Calvin has no constructors: give the fields of '${member.name}' their initial values where they are declared ('int f = 0;'), or set them in a method called after 'new ${member.name}()'.` };
            if (member) return { range, message: `Syntax error: expected a name but found '('; a method needs its result type before its name: 'void ${member.name}(...)' or 'int ${member.name}(...)'.` };
        }
        if (mismatch[1] === 'ID' && (ANNOTATION_KEYWORDS as readonly string[]).includes(token.tokenType.name)) {
            return { range, message: `Syntax error: expected a name but found '${token.image}', which is a keyword inside annotations: a field or variable named '${token.image}' cannot be used there; rename it.` };
        }
        return { range, message: `Syntax error: expected ${describeTokenType(mismatch[1])} but found ${found}.` };
    }

    if (e.name === 'NotAllInputParsedException' || /^Expecting end of file|^Redundant input/.test(m)) {
        return { range, message: `Syntax error: ${unexpected(found)}; a declaration (class, field, method, thread or annotation) was expected.` };
    }

    const paths = lookaheadPaths(m);
    if (paths.length > 0) {
        // Follow the input along the lookahead paths: the error is where the last of them stops matching.
        let depth = 0;
        let candidates = paths;
        let at: IToken | undefined = token;
        if (paths.some(p => p[0] === token.tokenType.name)) {
            const tokens = allTokens();
            const start = tokenIndex(tokens, token.startOffset);
            if (start >= 0) {
                for (; ;) {
                    const t: IToken | undefined = tokens[start + depth];
                    const name = t ? t.tokenType.name : 'EOF';
                    const next = candidates.filter(p => p.length > depth && p[depth] === name);
                    if (next.length === 0) break;
                    candidates = next;
                    depth++;
                }
                at = tokens[start + depth];
                if (candidates.every(p => p.length <= depth)) {
                    // Every path matched: the lookahead was too short to say more.
                    depth = 0;
                    candidates = paths;
                    at = token;
                }
            }
        }
        const expected = distinct(candidates.filter(p => p.length > depth).map(p => p[depth]));
        const where = depth > 0 && at ? tokenRange(at) ?? range : range;
        const foundHere = depth > 0 ? describeToken(at) : found;
        const message = expected.length === 1
            ? `Syntax error: expected ${describeTokenType(expected[0])} but found ${foundHere}.`
            : isExpressionStart(expected)
                ? `Syntax error: ${unexpected(foundHere)}; expected an expression.`
                : `Syntax error: ${unexpected(foundHere)}; expected one of ${list(expected)}.`;
        return { range: where, message };
    }
    return { range, message: `Syntax error: ${unexpected(found)}.` };
}

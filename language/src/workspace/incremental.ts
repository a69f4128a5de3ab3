import type { AstNode, CstNode, LangiumDocument } from 'langium';
import { AstUtils, CompositeCstNodeImpl, CstUtils, isCompositeCstNode } from 'langium';
import type { Position, Range } from 'vscode-languageserver-types';
import * as ast from '../generated/ast.js';
import type { CalvinParser } from '../parser/calvin-parser.js';
import { callsIn } from '../ast-utils.js';
import { MAX_BRACKETS, MAX_FILE_BYTES, MAX_TREE_DEPTH } from '../parser/nesting.js';
import { recordParsedText } from '../parser/parsed-text.js';

/**
 * Incremental front end for the common edit: a change inside one method's or
 * thread's body. Only that body is parsed again (as a `Block`, at its own
 * offsets), spliced into the existing syntax tree, and the positions of
 * everything after it shifted; the later phases then work on the new body
 * only (scopes, linking, validation: see their `BodyEdit` branches) and keep
 * the rest, which a body cannot change: locals declared in a body are visible
 * in that body only, and the method keeps its object, signature and
 * annotations, so every reference from outside still points at the right node.
 *
 * The splice is taken only when it is sure to give the tree a full parse
 * would: the body's braces are unchanged, the new body parses without error
 * to exactly its closing brace, the rest of the file had no syntax error, and
 * the body is far from the nesting limits (nesting.ts counts from the file's
 * start). Anything else is a full rebuild. test/incremental compares both on
 * many edits.
 */
export interface BodyEdit {
    /** The method or thread whose body was replaced (same object as before). */
    readonly owner: ast.MethodDecl | ast.ThreadDecl;
    readonly oldBody: ast.Block;
    readonly newBody: ast.Block;
    /** Old offset of the end of the old body: text from here on is unchanged, shifted by `delta`. */
    readonly oldEnd: number;
    readonly delta: number;
    /** Offset of the body's opening brace (the same before and after). */
    readonly start: number;
    /** Position of the body's opening brace. */
    readonly startPos: Position;
    readonly oldEndPos: Position;
    readonly newEndPos: Position;
    /** The document's URI (related information elsewhere is not shifted). */
    readonly uri: string;
    /** Methods the old body called (recursion checks depend on the call graph). */
    readonly oldCallees: ReadonlySet<AstNode>;
}

const edits = new WeakMap<LangiumDocument, BodyEdit>();

/** The body edit the current build of `document` applies, if it is an incremental one. */
export function pendingBodyEdit(document: LangiumDocument): BodyEdit | undefined {
    return edits.get(document);
}

export function clearBodyEdit(document: LangiumDocument): void {
    edits.delete(document);
}

/** Whether incremental rebuilds are on (CALVIN_INCREMENTAL=0 turns them off, to compare). */
export function incrementalEnabled(): boolean {
    return process.env.CALVIN_INCREMENTAL !== '0';
}

/**
 * Tries to apply `newText` to `document` (fully built from its previous text)
 * by re-parsing one body. On success the tree is updated in place and the edit
 * is recorded for the later phases; otherwise nothing is changed.
 */
export function tryBodyEdit(document: LangiumDocument, newText: string, parser: CalvinParser): BodyEdit | undefined {
    const root = document.parseResult.value as ast.Program;
    const rootCst = root.$cstNode;
    if (!rootCst || !ast.isProgram(root) || newText.length > MAX_FILE_BYTES) return undefined;
    const oldText = rootCst.root.fullText;
    if (oldText === newText) return undefined;

    // The changed span: after the common prefix, before the common suffix.
    const min = Math.min(oldText.length, newText.length);
    let prefix = 0;
    while (prefix < min && oldText.charCodeAt(prefix) === newText.charCodeAt(prefix)) prefix++;
    let suffix = 0;
    while (suffix < min - prefix && oldText.charCodeAt(oldText.length - 1 - suffix) === newText.charCodeAt(newText.length - 1 - suffix)) suffix++;
    const changeEnd = oldText.length - suffix;

    const owner = ownerOfChange(root, prefix, changeEnd);
    const oldBody = owner?.body;
    const bodyCst = oldBody?.$cstNode;
    if (!owner || !oldBody || !bodyCst) return undefined;
    const start = bodyCst.offset;
    const oldEnd = bodyCst.end;
    // Both braces unchanged: the change starts after '{' and ends at the latest at '}'.
    if (!(prefix > start && changeEnd <= oldEnd - 1)) return undefined;
    // Earlier syntax errors must all lie in the replaced body (the rest then parses as before).
    const inBody = (offset: number) => Number.isFinite(offset) && offset > start && offset < oldEnd;
    const { lexerErrors, parserErrors } = document.parseResult;
    if (!lexerErrors.every(e => inBody(e.offset)) || !parserErrors.every(e => inBody(e.token.startOffset))) return undefined;

    const delta = newText.length - oldText.length;
    const newEnd = oldEnd + delta;
    if (lineAnnotationAcross(newText, start, newEnd)) return undefined;
    const newBody = parseBody(parser, newText, start, newEnd, bodyCst.range.start);
    if (!newBody) return undefined;

    const oldCallees = calleesOf(oldBody);
    const oldEndPos = bodyCst.range.end;
    const newEndPos = newBody.$cstNode!.range.end;
    const edit: BodyEdit = { uri: document.uri.toString(), owner, oldBody, newBody, oldEnd, delta, start, startPos: bodyCst.range.start, oldEndPos, newEndPos, oldCallees };
    splice(document, edit, newText);
    edits.set(document, edit);
    return edit;
}

/**
 * Whether a line annotation (`//@`, lexed in a mode of its own up to the end
 * of its line) may be open at either end of the body: then the text around
 * the body lexes differently with it than without it (`//@ assert p; }` takes
 * the body's `}` into the annotation, and the line break after it ends the
 * annotation outside the body). Conservative: any `//@` on those lines counts.
 */
function lineAnnotationAcross(text: string, start: number, end: number): boolean {
    const lineStart = Math.max(text.lastIndexOf('\n', start - 1), text.lastIndexOf('\r', start - 1)) + 1;
    if (text.slice(lineStart, start).includes('//@')) return true;
    const last = text.lastIndexOf('//@', end - 1);
    return last >= start && !/[\r\n]/.test(text.slice(last, end));
}

/** The innermost method or thread whose body's extent contains [from, to). */
function ownerOfChange(root: ast.Program, from: number, to: number): ast.MethodDecl | ast.ThreadDecl | undefined {
    const contains = (n: AstNode) => n.$cstNode !== undefined && n.$cstNode.offset <= from && to <= n.$cstNode.end;
    for (const d of root.decls) {
        if (!contains(d)) continue;
        if (ast.isMethodDecl(d) || ast.isThreadDecl(d)) return d;
        if (ast.isClassDecl(d)) return d.members.find((m): m is ast.MethodDecl => ast.isMethodDecl(m) && contains(m));
        return undefined;
    }
    return undefined;
}

/**
 * Parses `text[start, end)` as a `Block`, then moves its tokens to where they
 * are in the file (`startPos` is the position of `start`).
 */
function parseBody(parser: CalvinParser, text: string, start: number, end: number, startPos: Position): ast.Block | undefined {
    const result = parser.parse<ast.Block>(text.slice(start, end), { rule: 'Block' });
    const block = result.value;
    if (result.lexerErrors.length > 0 || result.parserErrors.length > 0 || !ast.isBlock(block)) return undefined;
    const cst = block.$cstNode;
    if (!cst || cst.offset !== 0 || cst.end !== end - start) return undefined;
    // The nesting limits count from the start of the file: stay well inside them.
    if (bracketDepth(cst) > MAX_BRACKETS - 6 || treeDepth(block) > MAX_TREE_DEPTH - 12) return undefined;
    const move = (p: Position): Position => ({ line: p.line + startPos.line, character: p.line === 0 ? p.character + startPos.character : p.character });
    for (const n of CstUtils.streamCst(cst)) {
        if ((n as unknown as MutableComposite).content) {
            (n as unknown as MutableComposite)._rangeCache = undefined;
            continue;
        }
        const l = n as unknown as MutableLeaf;
        l._offset += start;
        l._range = { start: move(l._range.start), end: move(l._range.end) };
    }
    return block;
}

function bracketDepth(cst: CstNode): number {
    let depth = 0, max = 0;
    for (const leaf of leaves(cst)) {
        const t = leaf.text;
        if (t === '(' || t === '[' || t === '{') max = Math.max(max, ++depth);
        else if (t === ')' || t === ']' || t === '}') depth--;
    }
    return max;
}

function treeDepth(root: AstNode): number {
    let max = 0;
    const stack: Array<[AstNode, number]> = [[root, 0]];
    while (stack.length > 0) {
        const [node, depth] = stack.pop()!;
        max = Math.max(max, depth);
        for (const child of AstUtils.streamContents(node)) stack.push([child, depth + 1]);
    }
    return max;
}

/** The tokens (leaves, comments included) under a node, in file order. */
function leaves(cst: CstNode): CstNode[] {
    return CstUtils.streamCst(cst).filter(n => !isCompositeCstNode(n)).toArray();
}

/** The methods a body calls (the recursion check depends on them). */
export function calleesOf(body: ast.Block): Set<ast.MethodDecl> {
    return new Set(callsIn(body).map(c => c.callee));
}

type MutableLeaf = { _offset: number; _range: Range };
type MutableComposite = { content: CstNode[]; _rangeCache?: Range; root: CstNode };

/** Puts the new body in place of the old one, in the tree and in the concrete syntax tree. */
function splice(document: LangiumDocument, edit: BodyEdit, newText: string): void {
    const rootCst = document.parseResult.value.$cstNode! as unknown as MutableComposite & { _text: string };
    const oldCst = edit.oldBody.$cstNode!;
    // The body was parsed as the entry rule, so its node is the root of its own tree: move its
    // tokens (comments included, where the parser put them) into an ordinary composite node,
    // with the grammar element of the old one.
    const parsedRoot = edit.newBody.$cstNode as unknown as MutableComposite;
    const newCst = new CompositeCstNodeImpl();
    newCst.grammarSource = oldCst.grammarSource;
    newCst.astNode = edit.newBody;
    newCst.content.push(...parsedRoot.content);
    (edit.newBody as { $cstNode?: CstNode }).$cstNode = newCst;

    // Shift everything after the old body (whose comments go with it).
    shiftAfter(rootCst as unknown as CstNode, oldCst, leaves(newCst), edit);

    // The body's node in its parent's content, and the tree.
    const parent = oldCst.container as unknown as MutableComposite;
    parent.content.splice(parent.content.indexOf(oldCst), 1, newCst);
    for (const n of CstUtils.streamCst(newCst)) (n as unknown as MutableComposite).root = rootCst as unknown as CstNode;
    (edit.owner as { body?: ast.Block }).body = edit.newBody;
    const body = edit.newBody as { $container?: AstNode; $containerProperty?: string; $containerIndex?: number };
    body.$container = edit.owner;
    body.$containerProperty = 'body';
    body.$containerIndex = undefined;
    rootCst._text = newText;
    recordParsedText(document.parseResult.value, newText);
    // The body's syntax errors (the only ones) are gone with it.
    document.parseResult = { ...document.parseResult, lexerErrors: [], parserErrors: [] };
}


/**
 * The tokens (leaves, comments included) of a tree in file order, kept per
 * root across body edits: shifting the tokens after an edit is then one pass
 * over an array instead of a walk through the whole tree (which has about
 * three times as many inner nodes as tokens).
 */
const tokensByRoot = new WeakMap<CstNode, CstNode[]>();

function tokensOf(root: CstNode): CstNode[] {
    let tokens = tokensByRoot.get(root);
    if (!tokens) {
        tokens = leaves(root);
        // (the parser puts comments where they occur, so this is file order; make sure)
        for (let i = 1; i < tokens.length; i++) {
            if (tokens[i].offset < tokens[i - 1].offset) {
                tokens.sort((x, y) => x.offset - y.offset);
                break;
            }
        }
        tokensByRoot.set(root, tokens);
    }
    return tokens;
}

/** The first index whose token starts at or after `offset`. */
function firstAtOrAfter(tokens: CstNode[], offset: number): number {
    let lo = 0, hi = tokens.length;
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (tokens[mid].offset < offset) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/**
 * Moves the tokens after the old body by the edit (offsets and, in place,
 * positions: each position belongs to one token, and the cached ranges of the
 * nodes after the body, and names in the index, share them, so they move
 * too), puts the new body's tokens in place of the old one's, and drops the
 * cached ranges of the nodes that contain the body.
 */
function shiftAfter(root: CstNode, bodyCst: CstNode, newTokens: CstNode[], edit: BodyEdit): void {
    const tokens = tokensOf(root);
    const from = firstAtOrAfter(tokens, edit.start);
    const to = firstAtOrAfter(tokens, edit.oldEnd);
    for (let i = to; i < tokens.length; i++) {
        const leaf = tokens[i] as unknown as MutableLeaf;
        leaf._offset += edit.delta;
        movePosition(leaf._range.start, edit);
        movePosition(leaf._range.end, edit);
    }
    tokens.splice(from, to - from, ...newTokens);
    for (let n = bodyCst.container; n; n = n.container) (n as unknown as MutableComposite)._rangeCache = undefined;
}

/** Where a position at or after the old body's end is now. */
export function shiftPosition(p: Position, edit: BodyEdit): Position {
    const { oldEndPos } = edit;
    if (p.line < oldEndPos.line || (p.line === oldEndPos.line && p.character < oldEndPos.character)) return p;
    const moved = { line: p.line, character: p.character };
    movePosition(moved, edit);
    return moved;
}

/** Moves, in place, a position at or after the old body's end to where it is now. */
function movePosition(p: Position, edit: BodyEdit): void {
    const { oldEndPos, newEndPos } = edit;
    if (p.line === oldEndPos.line) p.character += newEndPos.character - oldEndPos.character;
    p.line += newEndPos.line - oldEndPos.line;
}

/** Where a range outside the replaced body is now. */
export function shiftRange(r: Range, edit: BodyEdit): Range {
    return { start: shiftPosition(r.start, edit), end: shiftPosition(r.end, edit) };
}

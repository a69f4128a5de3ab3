import type { AstNode, AstNodeDescription, CstNode, LangiumDocument, LeafCstNode, MaybePromise } from 'langium';
import { AstUtils, CstUtils, GrammarAST, isAstNode } from 'langium';
import type { CompletionAcceptor, CompletionContext, GoToLink, LangiumServices } from 'langium/lsp';
import { DefaultCompletionProvider, DefaultDefinitionProvider, DefaultFoldingRangeProvider, DefaultNodeKindProvider, DefaultReferencesProvider, DefaultRenameProvider } from 'langium/lsp';
import {
    CompletionItemKind, SymbolKind, type CancellationToken, type Location, type Position, type Range, type ReferenceParams,
    type RenameParams, type TextDocumentPositionParams, type TextEdit, type WorkspaceEdit, type FoldingRange, type FoldingRangeParams, ErrorCodes, ResponseError,
} from 'vscode-languageserver';
import type { IToken } from 'chevrotain';
import * as ast from '@calvin/language';
import { ANNOTATION_KEYWORDS, isBuiltinUri, programOf, topLevelDeclarations } from '@calvin/language';

function typeOf(node: AstNode | AstNodeDescription): string {
    return isAstNode(node) ? node.$type : node.type;
}

/** Symbol and completion kinds by declaration (as in the outline): classes, methods, fields, threads (events), variables. */
export class CalvinNodeKindProvider extends DefaultNodeKindProvider {
    override getSymbolKind(node: AstNode | AstNodeDescription): SymbolKind {
        switch (typeOf(node)) {
            case 'ClassDecl': return SymbolKind.Class;
            case 'MethodDecl': return SymbolKind.Method;
            case 'FieldDecl': case 'GhostField': return SymbolKind.Field;
            case 'ThreadDecl': return SymbolKind.Event;
            case 'Param': case 'LocalVarDecl': case 'QuantVar': return SymbolKind.Variable;
            default: return SymbolKind.Field;
        }
    }

    override getCompletionItemKind(node: AstNode | AstNodeDescription): CompletionItemKind {
        switch (typeOf(node)) {
            case 'ClassDecl': return CompletionItemKind.Class;
            case 'MethodDecl': return CompletionItemKind.Method;
            case 'FieldDecl': case 'GhostField': return CompletionItemKind.Field;
            case 'ThreadDecl': return CompletionItemKind.Event;
            case 'Param': case 'LocalVarDecl': case 'QuantVar': return CompletionItemKind.Variable;
            default: return CompletionItemKind.Reference;
        }
    }
}

/** Where a position is: in code, or in an annotation (and in which clause, by its last keyword). */
interface AnnotationContext {
    inAnnotation: boolean;
    clause?: string;
}

const ANNOTATION_KEYWORD_SET = new Set<string>(ANNOTATION_KEYWORDS);
/** Words the lexer knows everywhere but that belong in annotations: `\old`/`\result` in ensures, quantifiers in any annotation. */
const ENSURES_ONLY = new Set(['\\old', '\\result']);
const ANNOTATION_ONLY = new Set(['\\forall', '\\exists']);
/** Expressions with an effect (or no value): the validator refuses them in annotations (language.md §4). */
const CODE_ONLY = new Set(['cas', 'new', 'nondet']);

/**
 * Keyword completion that knows about annotations: `\old` and `\result` are
 * offered only in `ensures` clauses, `\forall` and `\exists` only in
 * annotations (the parser accepts them in code too, so that the validator can
 * explain the mistake), and wherever an annotation expression may start (with
 * their opening parenthesis); `cas`, `new` and `nondet` only in code. A word
 * typed after a backslash (`\fo`) completes to the backslash words only.
 */
export class CalvinCompletionProvider extends DefaultCompletionProvider {
    private lastTokens: { text: string; tokens: IToken[] } | undefined;

    protected override filterKeyword(context: CompletionContext, keyword: GrammarAST.Keyword): boolean {
        const word = keyword.value;
        if (ENSURES_ONLY.has(word) || ANNOTATION_ONLY.has(word) || CODE_ONLY.has(word)) {
            const where = this.annotationContext(context.textDocument.getText(), context.tokenOffset);
            if (CODE_ONLY.has(word)) return !where.inAnnotation;
            if (!where.inAnnotation) return false;
            if (ENSURES_ONLY.has(word)) return where.clause === 'ensures';
            return true;
        }
        return super.filterKeyword(context, keyword);
    }

    protected override completionForKeyword(context: CompletionContext, keyword: GrammarAST.Keyword, acceptor: CompletionAcceptor): MaybePromise<void> {
        const done = super.completionForKeyword(context, keyword, acceptor);
        // `tid` may start here: so may a quantifier, `(\forall int j; range; body)`, unless the grammar offers it itself (after its `(`)
        if (keyword.value === 'tid' && this.annotationContext(context.textDocument.getText(), context.tokenOffset).inAnnotation
            && !context.features.some(f => GrammarAST.isKeyword(f.feature) && ANNOTATION_ONLY.has(f.feature.value))) {
            for (const q of ANNOTATION_ONLY) {
                acceptor(context, { label: q, kind: CompletionItemKind.Keyword, detail: 'Quantifier', insertText: `(${q} `, sortText: '1', documentation: `\`(${q} int j; range; body)\``});
            }
        }
        return done;
    }

    protected override buildCompletionTextEdit(context: CompletionContext, label: string, newText: string): TextEdit | undefined {
        const text = context.textDocument.getText();
        // the lexer drops a lone `\`: the word typed after it is what the items must complete, backslash included
        if (context.tokenOffset > 0 && text[context.tokenOffset - 1] === '\\') {
            if (!label.startsWith('\\') || !this.fuzzyMatcher.match(text.substring(context.tokenOffset - 1, context.offset), label)) return undefined;
            return { newText, range: { start: context.textDocument.positionAt(context.tokenOffset - 1), end: context.position } };
        }
        return super.buildCompletionTextEdit(context, label, newText);
    }

    private annotationContext(text: string, offset: number): AnnotationContext {
        if (this.lastTokens?.text !== text) this.lastTokens = { text, tokens: this.lexer.tokenize(text).tokens };
        let inAnnotation = false;
        let clause: string | undefined;
        for (const t of this.lastTokens.tokens) {
            if (t.startOffset >= offset) break;
            const name = t.tokenType.name;
            if (name === '/*@' || name === '//@') {
                inAnnotation = true;
                clause = undefined;
            } else if (name === '*/' || name === 'ANNOT_EOL') {
                inAnnotation = false;
                clause = undefined;
            } else if (inAnnotation && ANNOTATION_KEYWORD_SET.has(name)) {
                clause = name;
            }
        }
        return { inAnnotation, clause };
    }
}

/** Is `node` declared in the built-in document (the implicit `holder` and `length`)? */
function isBuiltinDeclaration(node: AstNode): boolean {
    return isBuiltinUri(AstUtils.getDocument(node).uri);
}

/** The built-in members cannot be renamed (their declaration is not a user file). */
export class CalvinRenameProvider extends DefaultRenameProvider {
    private readonly lexer: LangiumServices['parser']['Lexer'];
    private readonly documents: LangiumServices['shared']['workspace']['LangiumDocuments'];

    constructor(services: LangiumServices) {
        super(services);
        this.lexer = services.parser.Lexer;
        this.documents = services.shared.workspace.LangiumDocuments;
    }

    override async rename(document: LangiumDocument, params: RenameParams, cancelToken?: CancellationToken): Promise<WorkspaceEdit | undefined> {
        if (this.targetsBuiltin(document, params.position)) return undefined;
        // the new name must be one name, not a keyword (`int`, `tid`, `writable_if`) nor two tokens (`1abc`)
        const tokens = this.lexer.tokenize(params.newName).tokens;
        if (tokens.length !== 1 || tokens[0].tokenType.name !== 'ID' || tokens[0].image !== params.newName || (ANNOTATION_KEYWORDS as readonly string[]).includes(params.newName)) {
            throw new ResponseError(ErrorCodes.InvalidParams, `'${params.newName}' is not a name Calvin accepts (a keyword, or not an identifier)`);
        }
        // nor a name already declared where the renamed one is (the program would get a duplicate-name error)
        const target = this.targetAt(document, params.position);
        if (target && target.name !== params.newName) {
            const clash = renameClash(target, params.newName, AstUtils.getDocument(target), this.documents.all);
            if (clash) {
                const cstNode = clash.$cstNode;
                const clashDoc = AstUtils.getDocument(clash);
                const where = clashDoc === document ? '' : ` in ${clashDoc.uri.path.split('/').pop()}`;
                const line = cstNode ? ` at line ${clashDoc.textDocument.positionAt(cstNode.offset).line + 1}` : '';
                throw new ResponseError(ErrorCodes.InvalidParams, `'${params.newName}' is already declared in the same scope${where}${line}; renaming '${target.name}' to it would declare it twice`);
            }
        }
        return super.rename(document, params, cancelToken);
    }

    private targetAt(document: LangiumDocument, position: Position): NamedNode | undefined {
        const root = document.parseResult.value.$cstNode;
        if (!root) return undefined;
        const leaf = CstUtils.findDeclarationNodeAtOffset(root, document.textDocument.offsetAt(position), this.grammarConfig.nameRegexp);
        const target = leaf ? this.references.findDeclarations(leaf)[0] : undefined;
        return target && typeof (target as Partial<NamedNode>).name === 'string' ? target as NamedNode : undefined;
    }

    override prepareRename(document: LangiumDocument, params: TextDocumentPositionParams, cancelToken?: CancellationToken): MaybePromise<Range | undefined> {
        if (this.targetsBuiltin(document, params.position)) return undefined;
        return super.prepareRename(document, params, cancelToken);
    }

    private targetsBuiltin(document: LangiumDocument, position: Position): boolean {
        const root = document.parseResult.value.$cstNode;
        if (!root) return false;
        const leaf = CstUtils.findDeclarationNodeAtOffset(root, document.textDocument.offsetAt(position), this.grammarConfig.nameRegexp);
        return leaf !== undefined && this.references.findDeclarations(leaf).some(isBuiltinDeclaration);
    }
}

type NamedNode = AstNode & { name: string };

/**
 * A declaration named `name` that renaming `target` to it would clash with,
 * by the front end's duplicate rules (structure-checks.ts): top-level names
 * across the files of the program, a class's members, a method's parameters,
 * and a local or quantified variable with any other one whose scope holds it
 * (or holding it in its own scope), parameters included.
 */
export function renameClash(target: NamedNode, name: string, document: LangiumDocument, all: Iterable<LangiumDocument>): NamedNode | undefined {
    const named = (n: AstNode): n is NamedNode => n !== target && (n as Partial<NamedNode>).name === name;
    // a ghost field is declared in an annotation clause: its place is the annotation's container
    const holder = ast.isGhostField(target) ? target.$container?.$container?.$container : target.$container;
    if (ast.isClassDecl(target) || ast.isThreadDecl(target) || ((ast.isMethodDecl(target) || ast.isFieldDecl(target) || ast.isGhostField(target)) && ast.isProgram(holder))) {
        for (const doc of programOf(document, all)) {
            const found = topLevelDeclarations(doc.parseResult.value as ast.Program).find(named);
            if (found) return found;
        }
        return undefined;
    }
    if ((ast.isMethodDecl(target) || ast.isFieldDecl(target) || ast.isGhostField(target)) && ast.isClassDecl(holder)) {
        for (const m of holder.members) {
            if ((ast.isFieldDecl(m) || ast.isMethodDecl(m)) && named(m)) return m;
            if (ast.isAnnotation(m)) for (const c of m.clauses) if (ast.isGhostFieldClause(c) && c.field && named(c.field)) return c.field;
        }
        return undefined;
    }
    if (ast.isParam(target)) {
        const m = target.$container;
        return m.params.find(named) ?? (m.body ? AstUtils.streamAst(m.body).find(n => (ast.isLocalVarDecl(n) || ast.isQuantVar(n)) && named(n)) as NamedNode | undefined : undefined);
    }
    if (ast.isLocalVarDecl(target) || ast.isQuantVar(target)) {
        // declared before it, in a scope that holds it (as the validator's checkLocal looks)
        let child: AstNode = target;
        for (let current = target.$container as AstNode | undefined; current; child = current, current = current.$container) {
            let found: NamedNode | undefined;
            if (ast.isBlock(current)) {
                const idx = current.stmts.indexOf(child as ast.Statement);
                found = current.stmts.slice(0, idx < 0 ? 0 : idx).filter(ast.isLocalVarDecl).find(named);
            } else if (ast.isForStmt(current) && ast.isLocalVarDecl(current.init) && named(current.init)) {
                found = current.init;
            } else if (ast.isMethodDecl(current)) {
                found = current.params.find(named);
            } else if (ast.isQuantifiedExpr(current) && current.variable && named(current.variable)) {
                found = current.variable;
            }
            if (found) return found;
            if (ast.isMethodDecl(current) || ast.isThreadDecl(current) || ast.isClassDecl(current)) break;
        }
        // declared in its own scope, after it
        const container = target.$container;
        const scope: AstNode[] = ast.isBlock(container) ? container.stmts.slice(container.stmts.indexOf(target as ast.Statement) + 1) : container ? [container] : [];
        for (const s of scope) {
            const found = AstUtils.streamAst(s).find(n => (ast.isLocalVarDecl(n) || ast.isQuantVar(n)) && named(n));
            if (found) return found as NamedNode;
        }
    }
    return undefined;
}

/** Folding: one range per region (a declaration and its block span the same lines). */
export class CalvinFoldingRangeProvider extends DefaultFoldingRangeProvider {
    override async getFoldingRanges(document: LangiumDocument, params: FoldingRangeParams, cancelToken?: CancellationToken): Promise<FoldingRange[]> {
        const seen = new Set<string>();
        return (await super.getFoldingRanges(document, params, cancelToken)).filter(r => {
            const key = `${r.startLine}:${r.endLine}:${r.kind ?? ''}`;
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
        });
    }
}

/** Go to definition does not lead into the built-in document. */
export class CalvinDefinitionProvider extends DefaultDefinitionProvider {
    protected override findLinks(source: CstNode): GoToLink[] {
        return super.findLinks(source).filter(link => !isBuiltinUri(link.targetDocument.uri));
    }
}

/** References: no locations in the built-in document. */
export class CalvinReferencesProvider extends DefaultReferencesProvider {
    protected override getReferences(selectedNode: LeafCstNode, params: ReferenceParams, document: LangiumDocument): Location[] {
        return super.getReferences(selectedNode, params, document).filter(l => !isBuiltinUri(l.uri));
    }
}

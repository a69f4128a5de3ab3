import type { AstNode, CstNode } from 'langium';
import type { SemanticTokenAcceptor } from 'langium/lsp';
import { AbstractSemanticTokenProvider } from 'langium/lsp';
import { SemanticTokenModifiers, SemanticTokenTypes } from 'vscode-languageserver';
import * as ast from '@calvin/language';
import { ANNOTATION_KEYWORDS } from '@calvin/language';

const ANNOTATION_WORDS = new Set<string>([...ANNOTATION_KEYWORDS, '\\old', '\\result', '\\forall', '\\exists']);

/**
 * Semantic colouring: annotation keywords (as decorators) and primed
 * variables (as modified variables) stand out from Java code; declarations
 * and references get their kind.
 */
export class CalvinSemanticTokenProvider extends AbstractSemanticTokenProvider {
    protected override highlightElement(node: AstNode, acceptor: SemanticTokenAcceptor): void {
        // Annotation keywords owned directly by this node
        if (ast.isClause(node) || ast.isAbstractionItem(node) || ast.isOldExpr(node) || ast.isResultExpr(node) || ast.isQuantifiedExpr(node)) {
            for (const child of node.$cstNode ? directLeaves(node.$cstNode) : []) {
                if (ANNOTATION_WORDS.has(child.text)) {
                    acceptor({ cst: child, type: SemanticTokenTypes.decorator });
                }
            }
        }
        if (ast.isNameExpr(node) || ast.isMemberAccess(node)) {
            const target = ast.isNameExpr(node) ? node.ref?.ref : node.member?.ref;
            const property = ast.isNameExpr(node) ? 'ref' : 'member';
            const modifiers = node.primed ? [SemanticTokenModifiers.modification] : [];
            const type = tokenTypeOf(target);
            if (type) acceptor({ node, property: property as never, type, modifier: modifiers });
            if (node.primed) {
                const prime = directLeaves(node.$cstNode!).find(l => l.text === "'");
                if (prime) acceptor({ cst: prime, type: SemanticTokenTypes.operator, modifier: [SemanticTokenModifiers.modification] });
            }
        } else if (ast.isFieldDecl(node) || ast.isGhostField(node)) {
            acceptor({ node, property: 'name', type: SemanticTokenTypes.property, modifier: [SemanticTokenModifiers.declaration] });
        } else if (ast.isMethodDecl(node)) {
            acceptor({ node, property: 'name', type: SemanticTokenTypes.method, modifier: [SemanticTokenModifiers.declaration] });
        } else if (ast.isClassDecl(node)) {
            acceptor({ node, property: 'name', type: SemanticTokenTypes.class, modifier: [SemanticTokenModifiers.declaration] });
        } else if (ast.isThreadDecl(node)) {
            acceptor({ node, property: 'name', type: SemanticTokenTypes.namespace, modifier: [SemanticTokenModifiers.declaration] });
        } else if (ast.isParam(node)) {
            acceptor({ node, property: 'name', type: SemanticTokenTypes.parameter, modifier: [SemanticTokenModifiers.declaration] });
        } else if (ast.isLocalVarDecl(node) || ast.isQuantVar(node)) {
            acceptor({ node, property: 'name', type: SemanticTokenTypes.variable, modifier: [SemanticTokenModifiers.declaration] });
        } else if (ast.isTypeRef(node) && node.cls) {
            acceptor({ node, property: 'cls', type: SemanticTokenTypes.class });
        }
    }
}

function tokenTypeOf(target: AstNode | undefined): string | undefined {
    if (!target) return undefined;
    if (ast.isFieldDecl(target) || ast.isGhostField(target)) return SemanticTokenTypes.property;
    if (ast.isMethodDecl(target)) return SemanticTokenTypes.method;
    if (ast.isClassDecl(target)) return SemanticTokenTypes.class;
    if (ast.isThreadDecl(target)) return SemanticTokenTypes.namespace;
    if (ast.isParam(target)) return SemanticTokenTypes.parameter;
    return SemanticTokenTypes.variable;
}

/** Leaf tokens that belong to this node itself, not to child AST nodes. */
function directLeaves(cst: CstNode): CstNode[] {
    const out: CstNode[] = [];
    const owner = cst.astNode;
    const visit = (n: CstNode) => {
        if (n.astNode !== owner) return;
        const content = (n as { content?: CstNode[] }).content;
        if (content) content.forEach(visit);
        else out.push(n);
    };
    visit(cst);
    return out;
}

// Stable values (for the abstraction stub): expressions that no step of any
// thread changes while a method runs, so that their text means the same in
// every state of the method's abstraction — an element frame `a[i]` or an
// `ensures \result == e` may use them.
import type { AstNode } from 'langium';
import { AstUtils } from 'langium';
import * as ast from '@calvin/language';

/**
 * The variables of the code being walked whose value is known and stable:
 * parameters never assigned, locals set from stable values, a callee's
 * parameters bound to stable arguments; `'this'` when the receiver is stable.
 */
export type Stable = Set<AstNode | 'this'>;

/** The stability of a method's own code: its parameters and `this`. */
export function stableOf(method: ast.MethodDecl): Stable {
    return new Set<AstNode | 'this'>(['this', ...method.params]);
}

/**
 * An expression that reads no shared state that may change: literals, `tid`,
 * stable variables, final fields (and `length`) of stable objects, arithmetic.
 */
export function isStable(e: ast.Expression, stable: Stable): boolean {
    return AstUtils.streamAst(e).every(n => {
        if (ast.isNameExpr(n)) {
            if (n.isCall || n.primed) return false;
            const d = n.ref.ref;
            if (ast.isThreadDecl(d) || ast.isClassDecl(d)) return true; // a thread's id; `C` of `C.f`
            if (ast.isFieldDecl(d)) return isFinal(d) && (d.modifiers.includes('static') || !AstUtils.getContainerOfType(d, ast.isClassDecl) || stable.has('this'));
            return d !== undefined && stable.has(d);
        }
        if (ast.isMemberAccess(n)) return !n.isCall && !n.primed && ast.isFieldDecl(n.member.ref) && isFinal(n.member.ref); // the receiver is checked as a node of its own
        if (ast.isThisExpr(n)) return stable.has('this');
        return ast.isIntLiteral(n) || ast.isBoolLiteral(n) || ast.isNullLiteral(n) || ast.isTidExpr(n) || ast.isUnaryExpr(n) || ast.isBinaryExpr(n) || ast.isConditionalExpr(n);
    });
}

function isFinal(f: ast.FieldDecl): boolean {
    return f.modifiers.includes('final');
}

import type { AstNode } from 'langium';
import { AstUtils } from 'langium';
import * as ast from './generated/ast.js';

/** The clauses of an annotation. */
export function clausesOf(annotation: ast.Annotation): ast.Clause[] {
    return annotation.clauses;
}

/** Is the node inside an annotation (`/*@ ... *\/` or `//@ ...`)? */
export function isInAnnotation(node: AstNode): boolean {
    return AstUtils.getContainerOfType(node, ast.isAnnotation) !== undefined;
}

/** The siblings list (class members, top-level decls or block statements) that holds `node`. */
export function siblingsOf(node: AstNode): AstNode[] | undefined {
    const container = node.$container;
    if (!container) return undefined;
    if (ast.isProgram(container)) return container.decls;
    if (ast.isClassDecl(container)) return container.members;
    if (ast.isBlock(container)) return container.stmts;
    return undefined;
}

/** The annotations written directly before a declaration or statement (only annotations in between). */
export function precedingAnnotations(node: AstNode): ast.Annotation[] {
    const siblings = siblingsOf(node);
    if (!siblings) return [];
    const index = siblings.indexOf(node);
    const result: ast.Annotation[] = [];
    for (let i = index - 1; i >= 0; i--) {
        const s = siblings[i];
        if (!ast.isAnnotation(s)) break;
        result.unshift(s);
    }
    return result;
}

/** The declaration or statement an annotation is written directly before (skipping further annotations). */
export function annotatedTarget(annotation: ast.Annotation): AstNode | undefined {
    const siblings = siblingsOf(annotation);
    if (!siblings) return undefined;
    for (let i = siblings.indexOf(annotation) + 1; i < siblings.length; i++) {
        const s = siblings[i];
        if (!ast.isAnnotation(s)) return s;
    }
    return undefined;
}

/** Clauses written directly before a field, method or statement. */
export function attachedClauses(node: AstNode): ast.Clause[] {
    return precedingAnnotations(node).flatMap(a => a.clauses);
}

export function isStatic(decl: ast.FieldDecl | ast.MethodDecl | ast.GhostField): boolean {
    return decl.modifiers.includes('static') || isTopLevel(decl);
}

export function isTopLevel(decl: AstNode): boolean {
    const container = ast.isGhostField(decl) ? decl.$container.$container?.$container : decl.$container;
    return ast.isProgram(container);
}

/** The class declaring a member (ghost fields live inside annotation clauses). */
export function declaringClass(decl: AstNode): ast.ClassDecl | undefined {
    return AstUtils.getContainerOfType(decl, ast.isClassDecl);
}

export function enclosingMethod(node: AstNode): ast.MethodDecl | undefined {
    return AstUtils.getContainerOfType(node, ast.isMethodDecl);
}

export function enclosingThread(node: AstNode): ast.ThreadDecl | undefined {
    return AstUtils.getContainerOfType(node, ast.isThreadDecl);
}

/** The method an annotation clause (requires/ensures/abstraction) is attached to. */
export function methodOfClause(clause: AstNode): ast.MethodDecl | undefined {
    const annotation = AstUtils.getContainerOfType(clause, ast.isAnnotation);
    if (!annotation) return undefined;
    const target = annotatedTarget(annotation);
    return ast.isMethodDecl(target) ? target : undefined;
}

/** The clause (top-level annotation item) that contains a node, if any. */
export function enclosingClause(node: AstNode): ast.Clause | ast.AbstractionItem | undefined {
    let n: AstNode | undefined = node;
    while (n) {
        if (ast.isAbstractionItem(n)) return n;
        if (ast.isClause(n)) return n;
        n = n.$container;
    }
    return undefined;
}

/** Does the expression sit in a two-state action (environment, step, stutter), where primes are allowed? */
export function isInAction(node: AstNode): boolean {
    const clause = enclosingClause(node);
    return ast.isEnvironmentClause(clause) || ast.isAbsStep(clause) || ast.isAbsStutter(clause);
}

/** Does the expression sit in an `ensures` (inside or outside an abstraction)? */
export function isInEnsures(node: AstNode): boolean {
    const clause = enclosingClause(node);
    return ast.isEnsuresClause(clause) || ast.isAbsEnsures(clause);
}

/** All fields of a class, including ghost fields declared in its annotations. */
export function classFields(cls: ast.ClassDecl): Array<ast.FieldDecl | ast.GhostField> {
    const fields: Array<ast.FieldDecl | ast.GhostField> = [];
    for (const m of cls.members) {
        if (ast.isFieldDecl(m)) fields.push(m);
        else if (ast.isAnnotation(m)) {
            for (const c of m.clauses) if (ast.isGhostFieldClause(c)) fields.push(c.field);
        }
    }
    return fields;
}

export function classMethods(cls: ast.ClassDecl): ast.MethodDecl[] {
    return cls.members.filter(ast.isMethodDecl);
}

/** Top-level fields (globals), including top-level ghost fields. */
export function globalFields(program: ast.Program): Array<ast.FieldDecl | ast.GhostField> {
    const fields: Array<ast.FieldDecl | ast.GhostField> = [];
    for (const d of program.decls) {
        if (ast.isFieldDecl(d)) fields.push(d);
        else if (ast.isAnnotation(d)) {
            for (const c of d.clauses) if (ast.isGhostFieldClause(c)) fields.push(c.field);
        }
    }
    return fields;
}

export function isGhost(decl: AstNode | undefined): decl is ast.GhostField {
    return ast.isGhostField(decl);
}

export function isFieldDeclaration(decl: AstNode | undefined): decl is ast.FieldDecl | ast.GhostField {
    return ast.isFieldDecl(decl) || ast.isGhostField(decl);
}

/** Is the method's body to be run as one synchronized(this) block? */
export function isSynchronized(method: ast.MethodDecl): boolean {
    return method.modifiers.includes('synchronized');
}

/** The abstraction-related clauses attached to a method. */
export interface MethodSpec {
    abstraction?: ast.AbstractionClause;
    requires: Array<ast.RequiresClause | ast.AbsRequires>;
    ensures: Array<ast.EnsuresClause | ast.AbsEnsures>;
}

export function methodSpec(method: ast.MethodDecl): MethodSpec {
    const spec: MethodSpec = { requires: [], ensures: [] };
    for (const c of attachedClauses(method)) {
        if (ast.isAbstractionClause(c)) {
            spec.abstraction ??= c;
            for (const item of c.items) {
                if (ast.isAbsRequires(item)) spec.requires.push(item);
                else if (ast.isAbsEnsures(item)) spec.ensures.push(item);
            }
        } else if (ast.isRequiresClause(c)) spec.requires.push(c);
        else if (ast.isEnsuresClause(c)) spec.ensures.push(c);
    }
    return spec;
}

/** A method "has an abstraction" when it has an abstraction block or requires/ensures written before it. */
export function hasAbstraction(method: ast.MethodDecl): boolean {
    const spec = methodSpec(method);
    return spec.abstraction !== undefined || spec.requires.length > 0 || spec.ensures.length > 0;
}

export function isLoop(node: AstNode | undefined): node is ast.WhileStmt | ast.ForStmt {
    return ast.isWhileStmt(node) || ast.isForStmt(node);
}

/**
 * Ids of single-instance threads: 1..k in declaration order (language.md §2),
 * over the files of the program ordered by URI.
 */
export function threadIds(programs: Iterable<ast.Program>): Map<ast.ThreadDecl, number> {
    const ordered = [...programs].sort((a, b) => uriOf(a).localeCompare(uriOf(b)));
    const ids = new Map<ast.ThreadDecl, number>();
    let next = 1;
    for (const p of ordered) {
        for (const d of p.decls) {
            if (ast.isThreadDecl(d) && d.count === undefined && !d.star) ids.set(d, next++);
        }
    }
    return ids;
}

function uriOf(p: ast.Program): string {
    return p.$document?.uri.toString() ?? '';
}

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

/** The clause of an annotation that is, or contains, `node` (undefined outside annotations). */
export function topClauseOf(node: AstNode): ast.Clause | undefined {
    let n: AstNode = node;
    while (n.$container && !ast.isAnnotation(n.$container)) n = n.$container;
    return n.$container && ast.isClause(n) ? n : undefined;
}

/** Clauses that belong to the method written after them: requires, ensures and abstraction. */
export function isMethodSpecClause(c: AstNode | undefined): c is ast.RequiresClause | ast.EnsuresClause | ast.AbstractionClause {
    return ast.isRequiresClause(c) || ast.isEnsuresClause(c) || ast.isAbstractionClause(c);
}

/**
 * The method whose spec contains `node`: `node` is (or is inside) a
 * requires/ensures/abstraction clause written directly before that method.
 * Other clauses before a method (invariant, environment, ...) are not part of
 * its spec, so they give undefined.
 */
export function methodOfClause(node: AstNode): ast.MethodDecl | undefined {
    const clause = topClauseOf(node);
    if (!isMethodSpecClause(clause)) return undefined;
    const target = annotatedTarget(clause.$container);
    return ast.isMethodDecl(target) ? target : undefined;
}

/**
 * The field a `writable_if` protects: the next field declared after it, a
 * ghost field later in the same annotation or in a following annotation, or
 * the field declaration after the annotations (only annotations in between).
 */
export function protectedField(clause: ast.WritableIfClause): ast.FieldDecl | ast.GhostField | undefined {
    const annotation = clause.$container;
    const own = annotation.clauses;
    for (let j = own.indexOf(clause) + 1; j < own.length; j++) {
        const c = own[j];
        if (ast.isGhostFieldClause(c)) return c.field;
    }
    const siblings = siblingsOf(annotation);
    if (!siblings) return undefined;
    for (let i = siblings.indexOf(annotation) + 1; i < siblings.length; i++) {
        const s = siblings[i];
        if (ast.isAnnotation(s)) {
            const ghost = s.clauses.find(ast.isGhostFieldClause);
            if (ghost) return ghost.field;
        } else {
            return ast.isFieldDecl(s) ? s : undefined;
        }
    }
    return undefined;
}

/**
 * The `writable_if` clauses protecting a field (see `protectedField`): those
 * written after the previous field declared (ghost or not), with only
 * annotations between them and the field.
 */
export function writableIfClauses(field: ast.FieldDecl | ast.GhostField): ast.WritableIfClause[] {
    const result: ast.WritableIfClause[] = [];
    // Clauses before the field, latest first, until the previous field.
    let annotation: ast.Annotation | undefined;
    let siblingIndex: number;
    const siblings = ast.isGhostField(field) ? siblingsOf(field.$container.$container) : siblingsOf(field);
    if (ast.isGhostField(field)) {
        const clause = field.$container;
        annotation = clause.$container;
        const own = annotation.clauses;
        for (let j = own.indexOf(clause) - 1; j >= 0; j--) {
            const c = own[j];
            if (ast.isGhostFieldClause(c)) return result;
            if (ast.isWritableIfClause(c)) result.unshift(c);
        }
        if (!siblings) return result;
        siblingIndex = siblings.indexOf(annotation);
    } else {
        if (!siblings) return result;
        siblingIndex = siblings.indexOf(field);
    }
    for (let i = siblingIndex - 1; i >= 0; i--) {
        const s = siblings[i];
        if (!ast.isAnnotation(s)) break;
        for (let j = s.clauses.length - 1; j >= 0; j--) {
            const c = s.clauses[j];
            if (ast.isGhostFieldClause(c)) return result;
            if (ast.isWritableIfClause(c)) result.unshift(c);
        }
    }
    return result;
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
            for (const c of m.clauses) if (ast.isGhostFieldClause(c) && c.field) fields.push(c.field);
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
            for (const c of d.clauses) if (ast.isGhostFieldClause(c) && c.field) fields.push(c.field);
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
        for (const d of p.decls ?? []) {
            if (ast.isThreadDecl(d) && d.count === undefined && !d.star) ids.set(d, next++);
        }
    }
    return ids;
}

function uriOf(p: ast.Program): string {
    return p.$document?.uri.toString() ?? '';
}

/** A call of a method (through a name or member access) and the method it calls. */
export interface MethodCall { node: ast.NameExpr | ast.MemberAccess; callee: ast.MethodDecl }

/** The method calls in a body (the recursion check's call graph; incremental.ts compares them). */
export function callsIn(body: ast.Block | undefined): MethodCall[] {
    const calls: MethodCall[] = [];
    if (!body) return calls;
    for (const n of AstUtils.streamAllContents(body)) {
        if ((ast.isNameExpr(n) || ast.isMemberAccess(n)) && n.isCall) {
            const d = ast.isNameExpr(n) ? n.ref?.ref : n.member?.ref;
            if (ast.isMethodDecl(d)) calls.push({ node: n, callee: d });
        }
    }
    return calls;
}

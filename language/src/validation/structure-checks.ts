import type { AstNode, CstNode, IndexManager, LangiumDocuments, ValidationAcceptor } from 'langium';
import { AstUtils } from 'langium';
import * as ast from '../generated/ast.js';
import { callsIn, hasAbstraction, isFieldDeclaration, isInAnnotation, isLoop } from '../ast-utils.js';
import { isBuiltinUri } from '../builtins.js';
import { programOf, topLevelDeclarations } from '../workspace/programs.js';
import { isBuiltinMember, typeOfTypeRef } from '../types/calvin-types.js';
import { error } from './codes.js';

type Named = AstNode & { name: string };

/**
 * Structural rules: duplicate declarations, assignability, `atomic`
 * restrictions, `break`/`continue` placement, missing returns and recursion
 * through methods without abstraction.
 */
export class StructureChecks {
    constructor(private readonly index: IndexManager, private readonly documents: LangiumDocuments) { }

    // ------------------------------------------------------------ duplicates

    /** Top-level names are global across the workspace's files. */
    checkTopLevelDuplicates(program: ast.Program, accept: ValidationAcceptor): void {
        const doc = AstUtils.getDocument(program);
        const seen = new Map<string, Named>();
        const decls: Named[] = [];
        for (const d of program.decls) {
            if ((ast.isClassDecl(d) || ast.isThreadDecl(d) || ast.isMethodDecl(d) || ast.isFieldDecl(d)) && d.name) decls.push(d);
            if (ast.isAnnotation(d)) for (const c of d.clauses) if (ast.isGhostFieldClause(c) && c.field?.name) decls.push(c.field);
        }
        for (const d of decls) {
            const prev = seen.get(d.name);
            if (prev) {
                error(accept, 'name', d, `'${d.name}' is already declared at line ${line(prev)}; rename one of them.`, 'name' as never);
            } else {
                seen.set(d.name, d);
            }
        }
        // Other files of the same program (files linked by references, see programs.ts)
        const others = programOf(doc, this.documents.all).filter(d => d !== doc);
        for (const other of others) {
            for (const od of topLevelDeclarations(other.parseResult.value as ast.Program)) {
                const mine = seen.get(od.name);
                if (!mine) continue;
                const file = other.uri.path.split('/').pop();
                error(accept, 'name', mine, `'${mine.name}' is also declared in ${file}:${line(od)}, which belongs to the same program; rename one of them.`, 'name' as never);
            }
        }
    }

    /** A name this file does not declare must be declared by exactly one other file. */
    checkCrossFileReference(node: ast.NameExpr | ast.TypeRef, accept: ValidationAcceptor): void {
        const target = ast.isNameExpr(node) ? node.ref?.ref : node.cls?.ref;
        if (!target || !ast.isProgram(target.$container)) return;
        const doc = AstUtils.getDocument(node);
        const targetDoc = AstUtils.getDocument(target);
        if (targetDoc === doc || isBuiltinUri(targetDoc.uri)) return;
        const name = (target as Named).name;
        const files = this.index.allElements().filter(e => e.name === name && !isBuiltinUri(e.documentUri)
            && e.documentUri.toString() !== doc.uri.toString()).map(e => e.documentUri.path.split('/').pop()).distinct().toArray();
        if (files.length > 1) {
            const property = ast.isNameExpr(node) ? 'ref' : 'cls';
            error(accept, 'name', node, `'${name}' is declared in several files (${files.join(', ')}); declare it in this file or keep one declaration.`, property as never);
        }
    }

    checkClassDuplicates(cls: ast.ClassDecl, accept: ValidationAcceptor): void {
        const seen = new Map<string, Named>();
        // In source order, so that the later declaration is the duplicate.
        const members: Array<ast.FieldDecl | ast.GhostField | ast.MethodDecl> = [];
        for (const m of cls.members) {
            if (ast.isFieldDecl(m) || ast.isMethodDecl(m)) members.push(m);
            else if (ast.isAnnotation(m)) for (const c of m.clauses) if (ast.isGhostFieldClause(c) && c.field) members.push(c.field);
        }
        for (const m of members) {
            if (!m.name) continue;
            const prev = seen.get(m.name);
            if (prev) error(accept, 'name', m, `'${m.name}' is already declared in class ${cls.name} at line ${line(prev)}; rename one of them.`, 'name' as never);
            else seen.set(m.name, m);
            if (m.name === 'holder' && !isBuiltinMember(m)) {
                error(accept, 'name', m, `'holder' is the implicit monitor field of every object; choose another name.`, 'name' as never);
            }
        }
    }

    checkParams(method: ast.MethodDecl, accept: ValidationAcceptor): void {
        const seen = new Set<string>();
        for (const p of method.params) {
            if (!p.name) continue;
            if (seen.has(p.name)) error(accept, 'name', p, `Parameter '${p.name}' is declared twice.`, 'name');
            seen.add(p.name);
        }
    }

    /** Java forbids a local that redeclares a local or parameter still in scope. */
    checkLocal(decl: ast.LocalVarDecl | ast.QuantVar, accept: ValidationAcceptor): void {
        if (!decl.name) return;
        let child: AstNode = decl;
        let current = decl.$container as AstNode | undefined;
        while (current) {
            let clash: Named | undefined;
            if (ast.isBlock(current)) {
                const idx = current.stmts.indexOf(child as ast.Statement);
                clash = current.stmts.slice(0, idx < 0 ? 0 : idx).filter(ast.isLocalVarDecl).find(l => l.name === decl.name);
            } else if (ast.isForStmt(current) && ast.isLocalVarDecl(current.init) && current.init !== child && current.init.name === decl.name) {
                clash = current.init;
            } else if (ast.isMethodDecl(current)) {
                clash = current.params.find(p => p.name === decl.name);
            } else if (ast.isQuantifiedExpr(current) && current.variable !== decl && current.variable?.name === decl.name) {
                clash = current.variable;
            }
            if (clash) {
                error(accept, 'name', decl, `'${decl.name}' is already declared in this scope (line ${line(clash)}); choose another name.`, 'name');
                return;
            }
            if (ast.isMethodDecl(current) || ast.isThreadDecl(current) || ast.isClassDecl(current)) return;
            child = current;
            current = current.$container;
        }
    }

    // ------------------------------------------------------------ modifiers

    checkFieldModifiers(f: ast.FieldDecl | ast.GhostField, accept: ValidationAcceptor): void {
        this.checkRepeatedModifiers(f, accept);
        if (f.modifiers.includes('synchronized')) error(accept, 'type', f, `Fields cannot be synchronized; only methods and blocks can.`, 'modifiers');
        if (ast.isFieldDecl(f) && f.modifiers.includes('final') && f.modifiers.includes('volatile')) {
            error(accept, 'type', f, `A field cannot be both final and volatile.`, 'modifiers');
        }
        if (ast.isFieldDecl(f) && f.modifiers.includes('final') && !f.init && !isBuiltinMember(f)) {
            error(accept, 'type', f, `Final field '${f.name}' needs an initializer: it can only be assigned there.`, 'name');
        }
    }

    checkMethodModifiers(m: ast.MethodDecl, accept: ValidationAcceptor): void {
        this.checkRepeatedModifiers(m, accept);
        for (const bad of ['volatile', 'final'] as const) {
            if (m.modifiers.includes(bad)) error(accept, 'type', m, `Methods cannot be ${bad}.`, 'modifiers');
        }
        if (ast.isProgram(m.$container) && m.modifiers.includes('synchronized')) {
            error(accept, 'type', m, `A top-level procedure has no object to lock; use a synchronized block on a shared object instead.`, 'modifiers');
        }
        // (Java locks the class object; Calvin has no class objects, and checking it unlocked would report races Java rules out)
        if (ast.isClassDecl(m.$container) && m.modifiers.includes('synchronized') && m.modifiers.includes('static')) {
            error(accept, 'type', m, `A static method has no object to lock (Calvin has no class objects); use a synchronized block on an object a static final field references instead.`, 'modifiers');
        }
    }

    private checkRepeatedModifiers(d: ast.FieldDecl | ast.MethodDecl | ast.GhostField, accept: ValidationAcceptor): void {
        const seen = new Set<string>();
        d.modifiers.forEach((m, i) => {
            if (seen.has(m)) error(accept, 'syntax', d, `Modifier '${m}' is repeated.`, 'modifiers', i);
            seen.add(m);
        });
    }

    checkThread(t: ast.ThreadDecl, accept: ValidationAcceptor): void {
        if (t.count !== undefined && t.count < 1) error(accept, 'type', t, `A thread needs at least one instance.`, 'count');
    }

    // ------------------------------------------------------------ assignments

    /** What can be written: locals, parameters, fields (not final, ghost or built-in) and array elements. */
    checkAssignTarget(target: ast.Expression | undefined, accept: ValidationAcceptor, what: string): void {
        if (!target) return;
        if (ast.isTidExpr(target)) {
            error(accept, 'type', target, `'tid' is the running thread's id and cannot be assigned.`);
            return;
        }
        if (ast.isIndexAccess(target)) return;
        const d = ast.isNameExpr(target) && !target.isCall ? target.ref?.ref
            : ast.isMemberAccess(target) && !target.isCall ? target.member?.ref : undefined;
        if (!d) {
            if ((ast.isNameExpr(target) && target.ref?.error) || (ast.isMemberAccess(target) && target.member?.error)) return;
            error(accept, 'type', target, `${what} needs a variable, field or array element on the left.`);
            return;
        }
        if (isBuiltinMember(d)) {
            const name = (d as Named).name;
            error(accept, 'type', target, name === 'holder'
                ? `'holder' is changed only by entering and leaving synchronized code; it cannot be assigned.`
                : `An array's length is fixed when it is created and cannot be assigned.`);
            return;
        }
        if (ast.isFieldDecl(d) && d.modifiers.includes('final')) {
            error(accept, 'type', target, `'${d.name}' is final: it can only be assigned by its initializer.`);
        } else if (ast.isParam(d) && d.final) {
            error(accept, 'type', target, `Parameter '${d.name}' is final and cannot be assigned.`);
        } else if (ast.isGhostField(d) && !ast.isSetClause(target.$container)) {
            error(accept, 'type', target, `Ghost field '${d.name}' is updated with '//@ set ${d.name} = ...;', not by program code.`);
        } else if (!isFieldDeclaration(d) && !ast.isLocalVarDecl(d) && !ast.isParam(d)) {
            error(accept, 'type', target, `'${(d as Named).name}' is not a variable and cannot be assigned.`);
        }
    }

    /** `cas(lv, e, u)`: lv must be a shared location a program may write. */
    checkCasTarget(c: ast.CasExpr, accept: ValidationAcceptor): void {
        const t = c.target;
        if (!t) return;
        if (ast.isIndexAccess(t)) return;
        const d = ast.isNameExpr(t) && !t.isCall ? t.ref?.ref : ast.isMemberAccess(t) && !t.isCall ? t.member?.ref : undefined;
        if (!d) {
            if ((ast.isNameExpr(t) && t.ref?.error) || (ast.isMemberAccess(t) && t.member?.error)) return;
            error(accept, 'type', t, `The first argument of cas must be a shared location: a field, a global or an array element.`);
            return;
        }
        if (ast.isLocalVarDecl(d) || ast.isParam(d)) {
            error(accept, 'type', t, `The first argument of cas must be a shared location; '${d.name}' is local to the thread, so an ordinary assignment does the same.`);
        } else if (isBuiltinMember(d) || (ast.isFieldDecl(d) && d.modifiers.includes('final')) || ast.isGhostField(d) || !isFieldDeclaration(d)) {
            error(accept, 'type', t, `The first argument of cas must be a location the program may write; '${(d as Named).name}' cannot be assigned.`);
        }
    }

    // ------------------------------------------------------------ control flow

    checkBreakContinue(s: ast.BreakStmt | ast.ContinueStmt, accept: ValidationAcceptor): void {
        const kw = ast.isBreakStmt(s) ? 'break' : 'continue';
        let n: AstNode | undefined = s.$container;
        while (n && !isLoop(n) && !ast.isMethodDecl(n) && !ast.isThreadDecl(n)) {
            if (ast.isAtomicStmt(n)) {
                error(accept, 'type', s, `'${kw}' cannot leave an atomic block.`);
                return;
            }
            n = n.$container;
        }
        if (!isLoop(n)) error(accept, 'type', s, `'${kw}' is only allowed inside a 'while' or 'for' loop.`);
    }

    /** `atomic { S }`: S may hold assignments, if, assume/assert, ghost set; no loops, calls, synchronized, return. */
    checkAtomic(a: ast.AtomicStmt, accept: ValidationAcceptor): void {
        if (!a.body) return;
        for (const n of AstUtils.streamAllContents(a.body)) {
            if (isLoop(n)) error(accept, 'type', n, `Loops are not allowed in an atomic block: it must run as one step.`);
            else if (ast.isSyncStmt(n)) error(accept, 'type', n, `'synchronized' is not allowed in an atomic block.`);
            else if (ast.isReturnStmt(n)) error(accept, 'type', n, `'return' is not allowed in an atomic block.`);
            else if ((ast.isNameExpr(n) || ast.isMemberAccess(n)) && n.isCall && !isInAnnotation(n)) {
                error(accept, 'type', n, `Calls are not allowed in an atomic block; inline the code or give the callee an abstraction and call it outside.`);
            } else if (ast.isLoopInvariantClause(n)) {
                error(accept, 'type', n, `'loop_invariant' is not allowed in an atomic block (it has no loops).`);
            }
        }
    }

    /** A non-void method must not fall off the end of its body. */
    checkMissingReturn(m: ast.MethodDecl, accept: ValidationAcceptor): void {
        // (a method without a name is a syntax error, reported as such)
        if (!m.name || !m.body || typeOfTypeRef(m.type).kind === 'void' || typeOfTypeRef(m.type).kind === 'error') return;
        if (canCompleteNormally(m.body)) {
            const close = lastLeaf(m.body.$cstNode);
            accept('error', `'${m.name}' must return a value on every path: add a 'return' at the end of its body.`, {
                node: m, property: 'name', code: 'type',
                range: close?.range,
            });
        }
    }

    // ------------------------------------------------------------ recursion

    /**
     * A method without abstraction is inlined at its call sites, so recursion
     * through such methods cannot be checked (language.md §5): report the cycle.
     */
    checkRecursion(m: ast.MethodDecl, accept: ValidationAcceptor): void {
        if (hasAbstraction(m)) return;
        for (const call of callsIn(m.body)) {
            const callee = call.callee;
            if (hasAbstraction(callee)) continue;
            const path = findPath(callee, m, new Set());
            if (path) {
                const cycle = [m, ...path].map(qualifiedName).join(' → ');
                error(accept, 'type', call.node, `Recursion through methods without abstraction cannot be inlined: ${cycle}. Give one of them an abstraction (/*@ abstraction { ... } */).`);
            }
        }
    }
}

/** A call path from `from` to `to` through methods without abstraction (DFS). */
function findPath(from: ast.MethodDecl, to: ast.MethodDecl, visited: Set<ast.MethodDecl>): ast.MethodDecl[] | undefined {
    if (from === to) return [to];
    if (visited.has(from)) return undefined;
    visited.add(from);
    for (const c of callsIn(from.body)) {
        if (hasAbstraction(c.callee) && c.callee !== to) continue;
        const rest = findPath(c.callee, to, visited);
        if (rest) return [from, ...rest];
    }
    return undefined;
}

function qualifiedName(m: ast.MethodDecl): string {
    return ast.isClassDecl(m.$container) ? `${m.$container.name}.${m.name}` : m.name;
}

function line(n: AstNode): number {
    const named = n as Named;
    const cst = n.$cstNode;
    if (!cst) return 0;
    void named;
    return cst.range.start.line + 1;
}

/** Java's "can complete normally", simplified to Calvin's statements. */
export function canCompleteNormally(s: ast.Statement | undefined): boolean {
    if (!s) return true;
    switch (s.$type) {
        case 'ReturnStmt': return false;
        case 'Block': return s.stmts.every(canCompleteNormally);
        case 'IfStmt': return !s.else || canCompleteNormally(s.then) || canCompleteNormally(s.else);
        case 'WhileStmt': return !(isTrue(s.condition) && !hasBreak(s.body));
        case 'ForStmt': return !((s.condition === undefined || isTrue(s.condition)) && !hasBreak(s.body));
        case 'SyncStmt': return canCompleteNormally(s.body);
        case 'AtomicStmt': return canCompleteNormally(s.body);
        default: return true;
    }
}

function isTrue(e: ast.Expression | undefined): boolean {
    return ast.isBoolLiteral(e) && e.value;
}

/** Does the loop body contain a `break` that leaves this loop (not a nested one)? */
function hasBreak(body: ast.Statement | undefined): boolean {
    if (!body) return false;
    for (const n of AstUtils.streamAllContents(body)) {
        if (ast.isBreakStmt(n)) {
            let c: AstNode | undefined = n.$container;
            while (c && c !== body && !isLoop(c)) c = c.$container;
            if (c === body) return true;
        }
    }
    return ast.isBreakStmt(body);
}

/** The last token of a node (e.g. the closing brace of a block). */
export function lastLeaf(cst: CstNode | undefined): CstNode | undefined {
    let n = cst;
    while (n && 'content' in n && Array.isArray((n as { content: CstNode[] }).content) && (n as { content: CstNode[] }).content.length > 0) {
        const content = (n as { content: CstNode[] }).content;
        n = content[content.length - 1];
    }
    return n;
}

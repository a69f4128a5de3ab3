import type { AstNode, ValidationAcceptor } from 'langium';
import { AstUtils } from 'langium';
import * as ast from '../generated/ast.js';
import { enclosingMethod, isFieldDeclaration, isInAnnotation, isStatic, methodOfClause, protectedField } from '../ast-utils.js';
import {
    BOOLEAN, ERROR, INT, type CalvinType, type CalvinTypeSystem, isAssignable, isBuiltinMember, isComparable, isRefType,
    typeOfTypeRef, typeToString,
} from '../types/calvin-types.js';
import { error } from './codes.js';

/**
 * Typing rules (language.md §2-§4): operand types, conditions, assignments,
 * calls, returns, `new`, arrays, `this` and static contexts.
 */
export class TypeChecks {
    constructor(private readonly types: CalvinTypeSystem) { }

    private t(e: ast.Expression | undefined): CalvinType {
        return this.types.typeOf(e);
    }

    typeOf(e: ast.Expression | undefined): CalvinType {
        return this.types.typeOf(e);
    }

    /** Report unless `e` has type `expected` (errors in sub-expressions are not repeated). */
    expectType(accept: ValidationAcceptor, e: ast.Expression | undefined, expected: CalvinType, what: string): void {
        if (!e) return;
        const actual = this.t(e);
        if (actual.kind === 'error') return;
        if (!isAssignable(actual, expected)) {
            error(accept, 'type', e, `${what} must be ${typeToString(expected)}, but this expression is ${typeToString(actual)}.`);
        }
    }

    checkBinary(e: ast.BinaryExpr, accept: ValidationAcceptor): void {
        const op = e.operator;
        switch (op) {
            case '*': case '/': case '%': case '+': case '-':
            case '<': case '<=': case '>': case '>=':
                this.expectType(accept, e.left, INT, `The left operand of '${op}'`);
                this.expectType(accept, e.right, INT, `The right operand of '${op}'`);
                break;
            case '&&': case '||': case '==>': case '<==>':
                this.expectType(accept, e.left, BOOLEAN, `The left operand of '${op}'`);
                this.expectType(accept, e.right, BOOLEAN, `The right operand of '${op}'`);
                break;
            case '==': case '!=': {
                const a = this.t(e.left), b = this.t(e.right);
                if (!isComparable(a, b)) {
                    error(accept, 'type', e, `Cannot compare ${typeToString(a)} with ${typeToString(b)} using '${op}': both sides must have the same type.`);
                }
                break;
            }
        }
    }

    checkUnary(e: ast.UnaryExpr, accept: ValidationAcceptor): void {
        if (e.op === '!') this.expectType(accept, e.operand, BOOLEAN, `The operand of '!'`);
        else this.expectType(accept, e.operand, INT, `The operand of unary '-'`);
    }

    checkConditional(e: ast.ConditionalExpr, accept: ValidationAcceptor): void {
        this.expectType(accept, e.condition, BOOLEAN, 'The condition of \'?:\'');
        const a = this.t(e.then), b = this.t(e.else);
        if (a.kind !== 'error' && b.kind !== 'error' && !isAssignable(a, b) && !isAssignable(b, a)) {
            error(accept, 'type', e, `The branches of '?:' have different types (${typeToString(a)} and ${typeToString(b)}).`);
        }
    }

    checkIndex(e: ast.IndexAccess, accept: ValidationAcceptor): void {
        const arr = this.t(e.array);
        if (arr.kind !== 'array' && arr.kind !== 'error') {
            error(accept, 'type', e.array, `Only arrays can be indexed, but this expression is ${typeToString(arr)}.`);
        }
        if (e.allElements && !ast.isFrameLocation(e.$container)) {
            error(accept, 'type', e, `'[*]' (all the elements of an array) is only allowed in the frame of an abstraction step, as a whole entry such as 'step [a[*]] ...'.`);
        }
        this.expectType(accept, e.index, INT, 'An array index');
    }

    checkMemberAccess(e: ast.MemberAccess, accept: ValidationAcceptor): void {
        const recv = this.t(e.receiver);
        if (recv.kind === 'int' || recv.kind === 'boolean' || recv.kind === 'void' || recv.kind === 'null') {
            error(accept, 'type', e.receiver, `A value of type ${typeToString(recv)} has no members; '.${e.member?.$refText ?? ''}' needs an object or array.`);
            return;
        }
        const member = e.member?.ref;
        if (!member) return;
        if (recv.kind === 'classref' && (ast.isFieldDecl(member) || ast.isGhostField(member) || ast.isMethodDecl(member)) && !isStatic(member)) {
            error(accept, 'type', e, `'${member.name}' is an instance member of ${recv.decl.name}; use an object (e.g. 'o.${member.name}'), or declare it static.`, 'member');
        }
        const assigned = ast.isAssignStmt(e.$container) && e.$container.target === e;
        if (!(assigned && !e.isCall)) this.checkCallShape(e, member, e.isCall, e.args, accept); // else reported as not assignable
    }

    checkNameExpr(e: ast.NameExpr, accept: ValidationAcceptor): void {
        const decl = e.ref?.ref;
        if (!decl) return;
        // `p = 1` with a method or class p: the assignment check says it cannot be assigned
        const assigned = ast.isAssignStmt(e.$container) && e.$container.target === e;
        if (!(assigned && !e.isCall)) this.checkCallShape(e, decl, e.isCall, e.args, accept);
        if (ast.isClassDecl(decl) && !ast.isMemberAccess(e.$container) && !assigned) {
            error(accept, 'type', e, `'${decl.name}' is a class, not a value; use it as 'new ${decl.name}()' or to reach a static member ('${decl.name}.f').`);
        }
        if (ast.isThreadDecl(decl)) {
            if (!isInAnnotation(e)) {
                error(accept, 'type', e, `Thread name '${decl.name}' can only be used in annotations, where it stands for the thread's id.`);
            } else if (decl.count !== undefined || decl.star) {
                error(accept, 'type', e, `'${decl.name}' is a replicated thread and has no single id; compare 'tid' with the ids you need instead.`);
            }
        }
        // Instance members used without a receiver need an object: not available in static code.
        if ((isFieldDeclaration(decl) || ast.isMethodDecl(decl)) && !isStatic(decl) && !isBuiltinMember(decl) && this.inStaticContext(e)) {
            error(accept, 'type', e, `Instance member '${decl.name}' cannot be used here without an object: this code is static (use 'o.${decl.name}' or make it static).`);
        }
        if (isBuiltinMember(decl) && this.inStaticContext(e)) {
            error(accept, 'type', e, `'${decl.name}' needs an object here: write 'o.${decl.name}'.`);
        }
    }

    private checkCallShape(e: ast.NameExpr | ast.MemberAccess, decl: ast.NamedElement, isCall: boolean, args: ast.Expression[], accept: ValidationAcceptor): void {
        if (ast.isMethodDecl(decl)) {
            if (!isCall) {
                error(accept, 'type', e, `'${decl.name}' is a method: call it with '${decl.name}(...)'.`);
                return;
            }
            if (args.length !== decl.params.length) {
                error(accept, 'type', e, `'${decl.name}' takes ${decl.params.length} argument${decl.params.length === 1 ? '' : 's'}, but ${args.length} ${args.length === 1 ? 'is' : 'are'} given.`);
                return;
            }
            decl.params.forEach((p, i) => {
                this.expectType(accept, args[i], typeOfTypeRef(p.type), `Argument ${i + 1} of '${decl.name}' (parameter '${p.name}')`);
            });
        } else if (isCall) {
            error(accept, 'type', e, `'${decl.name}' is not a method and cannot be called.`);
        }
    }

    /** Code of top-level procedures, static methods, threads, static/global field initializers and top-level annotations. */
    inStaticContext(node: AstNode): boolean {
        const cls = AstUtils.getContainerOfType(node, ast.isClassDecl);
        if (!cls) return true;
        // Statements of a method, and the requires/ensures/abstraction written before it.
        const method = enclosingMethod(node) ?? methodOfClause(node);
        if (method) return isStatic(method);
        const field = AstUtils.getContainerOfType(node, (n): n is ast.FieldDecl | ast.GhostField => ast.isFieldDecl(n) || ast.isGhostField(n));
        if (field) return isStatic(field);
        // writable_if is about the object of the field it protects
        const writableIf = AstUtils.getContainerOfType(node, ast.isWritableIfClause);
        const protectedDecl = writableIf && protectedField(writableIf);
        if (protectedDecl) return isStatic(protectedDecl);
        return false; // class-level invariant/environment (also before a static method): about `this`
    }

    checkThis(e: ast.ThisExpr, accept: ValidationAcceptor): void {
        if (this.inStaticContext(e)) {
            error(accept, 'type', e, `'this' is not available here: the code is static (a thread, a top-level procedure, a static method or field).`);
        }
    }

    checkNew(e: ast.NewExpr, accept: ValidationAcceptor): void {
        if (!e.type) return; // `new` cut short: a syntax error
        if (e.isObject) {
            if (e.type.primitive || e.type.dims.length > 0) {
                error(accept, 'type', e, `'new ${e.type.primitive ?? ''}()' is not allowed: only classes are created with 'new C()'; arrays with 'new T[n]'.`);
            }
        } else {
            if (e.type.primitive === 'void') error(accept, 'type', e, `Arrays of void do not exist.`);
            this.expectType(accept, e.size, INT, 'An array size');
        }
    }

    checkCas(e: ast.CasExpr, accept: ValidationAcceptor): void {
        const target = this.t(e.target);
        if (target.kind === 'error') return;
        if (target.kind !== 'int' && target.kind !== 'boolean' && !isRefType(target)) {
            error(accept, 'type', e.target, `cas needs an int, boolean or reference location, not ${typeToString(target)}.`);
            return;
        }
        this.expectType(accept, e.expected, target, `The expected value of cas`);
        this.expectType(accept, e.update, target, `The new value of cas`);
    }

    checkSync(s: ast.SyncStmt, accept: ValidationAcceptor): void {
        const t = this.t(s.lock);
        if (t.kind !== 'error' && t.kind !== 'class' && t.kind !== 'array') {
            error(accept, 'type', s.lock, `synchronized needs an object or array to lock, but this expression is ${typeToString(t)}.`);
        }
    }

    checkVariableType(decl: ast.FieldDecl | ast.LocalVarDecl | ast.GhostField | ast.Param, accept: ValidationAcceptor): void {
        const t = typeOfTypeRef(decl.type);
        if (t.kind === 'void' || (t.kind === 'array' && containsVoid(t))) {
            error(accept, 'type', decl.type, `A variable cannot have type void; use int, boolean, a class or an array type.`);
            return;
        }
        if (!ast.isParam(decl) && decl.init) this.expectType(accept, decl.init, t, `The initial value of '${decl.name}'`);
    }

    checkReturn(r: ast.ReturnStmt, accept: ValidationAcceptor): void {
        const method = enclosingMethod(r);
        if (!method) {
            if (r.value) error(accept, 'type', r.value, `A thread body cannot return a value; write 'return;'.`);
            return;
        }
        const t = typeOfTypeRef(method.type);
        if (t.kind === 'void') {
            if (r.value) error(accept, 'type', r.value, `'${method.name}' is void and cannot return a value; write 'return;' or change its return type.`);
        } else if (!r.value) {
            error(accept, 'type', r, `'${method.name}' must return a value of type ${typeToString(t)}.`);
        } else {
            this.expectType(accept, r.value, t, `The value returned by '${method.name}'`);
        }
    }

    checkExprStmt(s: ast.ExprStmt, accept: ValidationAcceptor): void {
        const e = s.expr;
        if (!e) return;
        const isCall = (ast.isNameExpr(e) || ast.isMemberAccess(e)) && e.isCall;
        if (!isCall && !ast.isCasExpr(e)) {
            error(accept, 'type', s, `Not a statement: only calls and cas(...) can stand alone; assign the value or remove it.`);
        }
    }

    checkAssign(s: ast.AssignStmt, accept: ValidationAcceptor): void {
        let target = this.t(s.target);
        if (target.kind === 'classref') target = ERROR; // `C = 1`: reported as not assignable
        if (s.op === '++' || s.op === '--' || s.op === '+=' || s.op === '-=') {
            if (target.kind !== 'error' && target.kind !== 'int') {
                error(accept, 'type', s.target, `'${s.op}' needs an int variable, but this is ${typeToString(target)}.`);
            }
            if (s.value) this.expectType(accept, s.value, INT, `The right side of '${s.op}'`);
        } else if (s.value) {
            this.expectType(accept, s.value, target, `The value assigned`);
        }
    }
}

function containsVoid(t: CalvinType): boolean {
    return t.kind === 'void' || (t.kind === 'array' && containsVoid(t.element));
}


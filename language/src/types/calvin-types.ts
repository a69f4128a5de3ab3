import type { AstNode, LangiumSharedCoreServices } from 'langium';
import { AstUtils } from 'langium';
import * as ast from '../generated/ast.js';
import { methodOfClause } from '../ast-utils.js';
import { BUILTIN_CLASS_NAME, isBuiltinUri } from '../builtins.js';

/** Calvin's types (language.md §2): int, boolean, void, classes, arrays, and the type of `null`. */
export type CalvinType =
    | { kind: 'int' }
    | { kind: 'boolean' }
    | { kind: 'void' }
    | { kind: 'null' }
    | { kind: 'class'; decl: ast.ClassDecl }
    | { kind: 'array'; element: CalvinType }
    /** A class name used as a receiver (`Mutex.m`): gives access to static members. */
    | { kind: 'classref'; decl: ast.ClassDecl }
    /** Unknown because of an earlier error: never reported again. */
    | { kind: 'error' };

export const INT: CalvinType = { kind: 'int' };
export const BOOLEAN: CalvinType = { kind: 'boolean' };
export const VOID: CalvinType = { kind: 'void' };
export const NULL: CalvinType = { kind: 'null' };
export const ERROR: CalvinType = { kind: 'error' };

export function typeToString(t: CalvinType): string {
    switch (t.kind) {
        case 'class': return t.decl.name;
        case 'classref': return `class ${t.decl.name}`;
        case 'array': return `${typeToString(t.element)}[]`;
        default: return t.kind;
    }
}

export function isRefType(t: CalvinType): boolean {
    return t.kind === 'class' || t.kind === 'array' || t.kind === 'null';
}

export function sameType(a: CalvinType, b: CalvinType): boolean {
    if (a.kind !== b.kind) return false;
    if (a.kind === 'class' && b.kind === 'class') return a.decl === b.decl;
    if (a.kind === 'array' && b.kind === 'array') return sameType(a.element, b.element);
    return true;
}

/** Can a value of type `from` be stored in a location of type `to`? */
export function isAssignable(from: CalvinType, to: CalvinType): boolean {
    if (from.kind === 'error' || to.kind === 'error') return true;
    if (from.kind === 'null') return to.kind === 'class' || to.kind === 'array';
    return sameType(from, to);
}

/** Can the two types be compared with `==` / `!=`? */
export function isComparable(a: CalvinType, b: CalvinType): boolean {
    if (a.kind === 'error' || b.kind === 'error') return true;
    if (isRefType(a) && isRefType(b)) return a.kind === 'null' || b.kind === 'null' || sameType(a, b);
    return sameType(a, b) && (a.kind === 'int' || a.kind === 'boolean');
}

export function typeOfTypeRef(ref: ast.TypeRef | undefined): CalvinType {
    if (!ref) return ERROR;
    let base: CalvinType;
    if (ref.primitive === 'int') base = INT;
    else if (ref.primitive === 'boolean') base = BOOLEAN;
    else if (ref.primitive === 'void') base = VOID;
    else {
        const decl = ref.cls?.ref;
        base = decl ? { kind: 'class', decl } : ERROR;
    }
    for (let i = 0; i < (ref.dims?.length ?? 0); i++) base = { kind: 'array', element: base };
    return base;
}

/** Is this a member of the built-in class (`holder`, `length`), declared in the built-in document? */
export function isBuiltinMember(decl: AstNode | undefined): boolean {
    const cls = decl && AstUtils.getContainerOfType(decl, ast.isClassDecl);
    if (cls?.name !== BUILTIN_CLASS_NAME) return false;
    const uri = (cls.$container as AstNode | undefined)?.$document?.uri;
    return uri === undefined || isBuiltinUri(uri);
}

/** The type a declaration gives to a name that refers to it. */
export function typeOfDeclaration(decl: ast.NamedElement): CalvinType {
    switch (decl.$type) {
        case 'FieldDecl':
        case 'GhostField':
        case 'LocalVarDecl':
        case 'Param':
        case 'QuantVar':
            return typeOfTypeRef(decl.type);
        case 'ThreadDecl':
            return INT; // a thread's name is an int constant (its id) in annotations
        case 'ClassDecl':
            return { kind: 'classref', decl };
        case 'MethodDecl':
            return typeOfTypeRef(decl.type);
    }
}

/**
 * Infers expression types. Results are cached per node until the workspace
 * changes: a re-parse replaces the nodes, but an edit of another file may
 * relink a file without re-parsing it (its names may now resolve elsewhere),
 * so the cache is dropped on every update of the workspace.
 */
export class CalvinTypeSystem {
    private cache = new WeakMap<AstNode, CalvinType>();

    constructor(shared?: LangiumSharedCoreServices) {
        shared?.workspace.DocumentBuilder.onUpdate(() => { this.cache = new WeakMap(); });
    }

    /** The type of an expression; ERROR for a missing one (cut short by a syntax error). */
    typeOf(expr: ast.Expression | undefined): CalvinType {
        if (!expr) return ERROR;
        let t = this.cache.get(expr);
        if (!t) {
            t = this.infer(expr);
            this.cache.set(expr, t);
        }
        return t;
    }

    private infer(e: ast.Expression): CalvinType {
        // Error recovery may leave nodes of the abstract type (`Expression`) or missing parts.
        switch (e.$type) {
            case 'IntLiteral': return INT;
            case 'BoolLiteral': return BOOLEAN;
            case 'NullLiteral': return NULL;
            case 'TidExpr': return INT;
            case 'NondetExpr': return BOOLEAN;
            case 'CasExpr': return BOOLEAN;
            case 'QuantifiedExpr': return BOOLEAN;
            case 'ThisExpr': {
                const cls = AstUtils.getContainerOfType(e, ast.isClassDecl);
                return cls ? { kind: 'class', decl: cls } : ERROR;
            }
            case 'OldExpr': return e.expr ? this.typeOf(e.expr) : ERROR;
            case 'ResultExpr': {
                // Outside an ensures, or in the spec of a void method, `\result` is an error (reported once, by its check).
                const method = methodOfClause(e);
                const t = method ? typeOfTypeRef(method.type) : ERROR;
                return t.kind === 'void' ? ERROR : t;
            }
            case 'NewExpr': {
                // `new int()`, `new C[]()` and `new void[n]` are reported by their check: no type.
                if (!e.type || e.type.primitive === 'void') return ERROR;
                const base = typeOfTypeRef(e.type);
                if (e.isObject) return e.type.primitive || e.type.dims.length > 0 ? ERROR : base;
                let t: CalvinType = { kind: 'array', element: base };
                for (let i = 0; i < e.dims.length; i++) t = { kind: 'array', element: t };
                return t;
            }
            case 'NameExpr': {
                const decl = e.ref?.ref;
                if (!decl) return ERROR;
                if (ast.isMethodDecl(decl)) return e.isCall ? typeOfTypeRef(decl.type) : ERROR;
                return typeOfDeclaration(decl);
            }
            case 'MemberAccess': {
                const decl = e.member?.ref;
                if (!decl) return ERROR;
                if (ast.isMethodDecl(decl)) return e.isCall ? typeOfTypeRef(decl.type) : ERROR;
                if (ast.isClassDecl(decl) || ast.isThreadDecl(decl)) return ERROR;
                return typeOfDeclaration(decl);
            }
            case 'IndexAccess': {
                const arr = this.typeOf(e.array);
                return arr.kind === 'array' ? arr.element : ERROR;
            }
            case 'UnaryExpr': return e.op === '!' ? BOOLEAN : INT;
            case 'BinaryExpr':
                switch (e.operator) {
                    case '*': case '/': case '%': case '+': case '-': return INT;
                    default: return BOOLEAN;
                }
            case 'ConditionalExpr': {
                const a = this.typeOf(e.then);
                const b = this.typeOf(e.else);
                if (a.kind === 'null') return b;
                if (a.kind === 'error') return b;
                return a;
            }
            default:
                return ERROR;
        }
    }
}

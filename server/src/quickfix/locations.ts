// Shared locations and expressions as the quick fixes see them: paths such as
// `this.lock.held` or `Mutex.m`, moved between a callee's scope and its
// caller's (receiver for `this`, arguments for parameters), and rendered as
// Calvin text in the scope of a class (or the top level).
import type { AstNode } from 'langium';
import { AstUtils } from 'langium';
import * as ast from '@calvin/language';
import { isStatic } from '@calvin/language';

export type Field = ast.FieldDecl | ast.GhostField;

/** An object reference: `this`, a variable, a static/global field, or a field of another path. */
export type Path =
    | { k: 'this' }
    | { k: 'var'; decl: ast.Param | ast.LocalVarDecl }
    | { k: 'global'; field: Field }
    | { k: 'field'; base: Path; field: Field };

/** A shared location: a static/global field, or an instance field (or `holder`) of an object. */
export type SourceLoc = { k: 'static'; field: Field } | { k: 'inst'; base: Path; field: Field };

export function ownerClass(f: Field): ast.ClassDecl | undefined {
    return AstUtils.getContainerOfType(f, ast.isClassDecl);
}

/** A top-level global or a static field. */
export function isStaticField(f: Field): boolean {
    return ownerClass(f) === undefined || isStatic(f);
}

function isField(n: unknown): n is Field {
    return ast.isFieldDecl(n) || ast.isGhostField(n);
}

/** The path an expression denotes, if it is one (no calls, no array elements). */
export function pathOf(e: ast.Expression | undefined): Path | undefined {
    if (!e) return undefined;
    if (ast.isThisExpr(e)) return { k: 'this' };
    if (ast.isNameExpr(e) && !e.isCall && !e.primed) {
        const d = e.ref.ref;
        if (ast.isParam(d) || ast.isLocalVarDecl(d)) return { k: 'var', decl: d };
        if (isField(d)) return isStaticField(d) ? { k: 'global', field: d } : { k: 'field', base: { k: 'this' }, field: d };
        return undefined;
    }
    if (ast.isMemberAccess(e) && !e.isCall && !e.primed) {
        const d = e.member.ref;
        if (!isField(d)) return undefined;
        if (isStaticField(d)) return { k: 'global', field: d };
        const base = pathOf(e.receiver);
        return base ? { k: 'field', base, field: d } : undefined;
    }
    return undefined;
}

/** The location an expression denotes (primes ignored: `m'` is `m`). */
export function locOf(e: ast.Expression | undefined): SourceLoc | undefined {
    if (!e) return undefined;
    if (ast.isNameExpr(e) && !e.isCall) {
        const d = e.ref.ref;
        if (!isField(d)) return undefined;
        return isStaticField(d) ? { k: 'static', field: d } : { k: 'inst', base: { k: 'this' }, field: d };
    }
    if (ast.isMemberAccess(e) && !e.isCall) {
        const d = e.member.ref;
        if (!isField(d)) return undefined;
        if (isStaticField(d)) return { k: 'static', field: d };
        const base = pathOf(e.receiver);
        return base ? { k: 'inst', base, field: d } : undefined;
    }
    return undefined;
}

/** The field an assignment target writes (array elements: the array's field). */
export function writtenField(target: ast.Expression): Field | undefined {
    if (ast.isIndexAccess(target)) return writtenField(target.array);
    const l = locOf(target);
    return l?.field;
}

export function samePath(a: Path, b: Path): boolean {
    if (a.k !== b.k) return false;
    switch (a.k) {
        case 'this': return true;
        case 'var': return a.decl === (b as typeof a).decl;
        case 'global': return a.field === (b as typeof a).field;
        case 'field': return a.field === (b as typeof a).field && samePath(a.base, (b as typeof a).base);
    }
}

/** How a call maps the callee's `this` and parameters to the caller's paths. */
export interface CallMap {
    /** The receiver's path in the caller (undefined: not a path, or a static call). */
    receiver?: Path;
    /** Argument paths by parameter (undefined: not a path). */
    args: Map<ast.Param, Path | undefined>;
}

export function callMap(call: ast.NameExpr | ast.MemberAccess, callee: ast.MethodDecl): CallMap {
    const receiver = isStatic(callee) ? undefined : ast.isMemberAccess(call) ? pathOf(call.receiver) : { k: 'this' as const };
    const args = new Map<ast.Param, Path | undefined>();
    callee.params.forEach((p, i) => args.set(p, pathOf(call.args[i])));
    return { receiver, args };
}

/** A path of the callee, seen from the caller. */
export function pathToCaller(p: Path, m: CallMap): Path | undefined {
    switch (p.k) {
        case 'this': return m.receiver;
        case 'var': return ast.isParam(p.decl) ? m.args.get(p.decl) : undefined;
        case 'global': return p;
        case 'field': {
            const base = pathToCaller(p.base, m);
            return base ? { k: 'field', base, field: p.field } : undefined;
        }
    }
}

/** A path of the caller, seen from the callee (`this` for the receiver, a parameter for an argument). */
export function pathToCallee(p: Path, m: CallMap): Path | undefined {
    if (m.receiver && samePath(p, m.receiver)) return { k: 'this' };
    for (const [param, arg] of m.args) if (arg && samePath(p, arg)) return { k: 'var', decl: param };
    switch (p.k) {
        case 'global': return p;
        case 'field': {
            const base = pathToCallee(p.base, m);
            return base ? { k: 'field', base, field: p.field } : undefined;
        }
        default: return undefined;
    }
}

export function locToCaller(l: SourceLoc, m: CallMap): SourceLoc | undefined {
    if (l.k === 'static') return l;
    const base = pathToCaller(l.base, m);
    return base ? { k: 'inst', base, field: l.field } : undefined;
}

export function locToCallee(l: SourceLoc, m: CallMap): SourceLoc | undefined {
    if (l.k === 'static') return l;
    const base = pathToCallee(l.base, m);
    return base ? { k: 'inst', base, field: l.field } : undefined;
}

/** A static field or global as written in the scope of class `scope` (undefined: top level). */
function staticName(f: Field, scope: ast.ClassDecl | undefined): string {
    const owner = ownerClass(f);
    return !owner || owner === scope ? f.name : `${owner.name}.${f.name}`;
}

export function pathText(p: Path, scope: ast.ClassDecl | undefined): string {
    switch (p.k) {
        case 'this': return 'this';
        case 'var': return p.decl.name;
        case 'global': return staticName(p.field, scope);
        case 'field': return p.base.k === 'this' && p.field.name !== 'holder' ? p.field.name : `${pathText(p.base, scope)}.${p.field.name}`;
    }
}

/** A location as Calvin text in a scope: `m`, `Mutex.m`, `held`, `a.held`, `this.holder`. */
export function locText(l: SourceLoc, scope: ast.ClassDecl | undefined): string {
    if (l.k === 'static') return staticName(l.field, scope);
    if (l.base.k === 'this' && l.field.name !== 'holder') return l.field.name;
    return `${pathText(l.base, scope)}.${l.field.name}`;
}

/** A key that identifies a location (whatever the scope). */
export function locKey(l: SourceLoc): string {
    return locText(l, undefined) + (l.k === 'inst' && l.base.k === 'this' ? '@this' : '');
}

/** A frame entry for a location written in a method of class `scope`: `f`, `p.f`, `m`, `Mutex.m`, or `*.f`. */
export function frameText(l: SourceLoc, scope: ast.ClassDecl | undefined): string {
    if (l.k === 'static') return staticName(l.field, scope);
    if (l.base.k === 'this') return l.field.name;
    if (l.base.k === 'var' && ast.isParam(l.base.decl)) return `${l.base.decl.name}.${l.field.name}`;
    return `*.${l.field.name}`;
}

/** A path that a method's annotations can mention: not through a local variable. */
export function inMethodScope(p: Path): boolean {
    switch (p.k) {
        case 'var': return ast.isParam(p.decl);
        case 'field': return inMethodScope(p.base);
        default: return true;
    }
}

/**
 * The array reference of an element frame entry (`a` of `a[e]`, `a[*]`) for an
 * array that path p references: a global or static field, a field of this or
 * of a parameter, or a parameter (undefined: none of these).
 */
export function frameArrayText(p: Path, scope: ast.ClassDecl | undefined): string | undefined {
    switch (p.k) {
        case 'global': return staticName(p.field, scope);
        case 'var': return ast.isParam(p.decl) ? p.decl.name : undefined;
        case 'field':
            if (p.base.k === 'this') return p.field.name;
            return p.base.k === 'var' && ast.isParam(p.base.decl) ? `${p.base.decl.name}.${p.field.name}` : undefined;
        default: return undefined;
    }
}

/** The class a node is written in (undefined: top level or a thread). */
export function scopeOf(node: AstNode): ast.ClassDecl | undefined {
    return AstUtils.getContainerOfType(node, ast.isClassDecl);
}

/**
 * How to write a callee's expression in the caller: `this` as the receiver's
 * text, parameters as the arguments' texts, the callee's locals with known
 * values as those values; the callee's class members qualified where needed.
 */
export interface TextSubst {
    /** The receiver's text in the target scope (undefined: `this`). */
    receiver?: string;
    args: Map<AstNode, string>;
    /** Locals with a known value (its text in the target scope). */
    locals: Map<AstNode, string>;
    /** The class the text is for (undefined: the top level). */
    target: ast.ClassDecl | undefined;
}

export function identitySubst(target: ast.ClassDecl | undefined): TextSubst {
    return { args: new Map(), locals: new Map(), target };
}

/** `x` stays `x`; anything else gets parentheses. */
export function atom(text: string): string {
    return /^[\w$.']+$/.test(text) ? text : `(${text})`;
}

/**
 * The text of an expression in the target scope, or undefined when it cannot
 * be written there (a call, `new`, `cas`, `nondet()`, a local without a known
 * value): the quick fixes then say less rather than something wrong.
 */
export function renderExpr(node: AstNode, s: TextSubst): string | undefined {
    const cst = node.$cstNode;
    if (!cst) return undefined;
    const edits: Array<{ start: number; end: number; text: string }> = [];
    for (const n of AstUtils.streamAst(node)) {
        if (ast.isCasExpr(n) || ast.isNewExpr(n) || ast.isNondetExpr(n)) return undefined;
        if ((ast.isNameExpr(n) || ast.isMemberAccess(n)) && n.isCall) return undefined;
        if (ast.isThisExpr(n) && n.$cstNode) {
            if (s.receiver !== undefined) edits.push({ start: n.$cstNode.offset, end: n.$cstNode.end, text: s.receiver });
            continue;
        }
        if (!ast.isNameExpr(n)) continue;
        const ref = n.ref.$refNode;
        const d = n.ref.ref;
        if (!ref || !d) return undefined;
        let text: string | undefined;
        if (ast.isParam(d)) text = s.args.get(d) ?? d.name;
        else if (ast.isLocalVarDecl(d)) {
            const v = s.locals.get(d);
            if (v === undefined) return undefined;
            text = v;
        } else if (isField(d)) {
            if (isStaticField(d)) text = staticName(d, s.target);
            else text = s.receiver === undefined || s.receiver === 'this' ? (ownerClass(d) === s.target ? d.name : `this.${d.name}`) : `${s.receiver}.${d.name}`;
        } else continue; // classes, threads, quantified variables: as written
        if (text !== ref.text) edits.push({ start: ref.offset, end: ref.end, text });
    }
    let text = cst.text;
    for (const e of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, e.start - cst.offset) + e.text + text.slice(e.end - cst.offset);
    return text.replace(/\s*\n\s*/g, ' ');
}

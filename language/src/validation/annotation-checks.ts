import type { AstNode, ValidationAcceptor } from 'langium';
import { AstUtils } from 'langium';
import * as ast from '../generated/ast.js';
import {
    annotatedTarget, isFieldDeclaration, isInAction, isInAnnotation, isInEnsures, isLoop, isStatic,
    methodOfClause, methodSpec, protectedField,
} from '../ast-utils.js';
import { BOOLEAN, isBuiltinMember, typeOfTypeRef } from '../types/calvin-types.js';
import { error } from './codes.js';
import type { TypeChecks } from './type-checks.js';

type Level = 'top' | 'class' | 'statement';

/** Where each clause may appear (language.md §5). */
const CLAUSE_LEVELS: Record<ast.Clause['$type'], Level[]> = {
    WritableIfClause: ['top', 'class'],
    GhostFieldClause: ['top', 'class'],
    InvariantClause: ['top', 'class'],
    EnvironmentClause: ['top', 'class'],
    RequiresClause: ['top', 'class'],
    EnsuresClause: ['top', 'class'],
    AbstractionClause: ['top', 'class'],
    LoopInvariantClause: ['statement'],
    AssertClause: ['statement'],
    AssumeClause: ['statement'],
    SetClause: ['statement'],
    WitnessClause: ['statement'],
};

const CLAUSE_KEYWORD: Record<ast.Clause['$type'], string> = {
    WritableIfClause: 'writable_if', GhostFieldClause: 'ghost', InvariantClause: 'invariant',
    EnvironmentClause: 'environment', RequiresClause: 'requires', EnsuresClause: 'ensures',
    AbstractionClause: 'abstraction', LoopInvariantClause: 'loop_invariant', AssertClause: 'assert',
    AssumeClause: 'assume', SetClause: 'set', WitnessClause: 'witness',
};

const LEVEL_TEXT: Record<Level, string> = {
    top: 'at the top level', class: 'in a class body', statement: 'among statements',
};

/** Whether an expression mentions a primed name. */
function hasPrime(e: ast.Expression): boolean {
    return AstUtils.streamAst(e).some(n => (n as { primed?: boolean }).primed === true);
}

/**
 * The field a frame entry names: a global or a field of this (`g`, `f`), or
 * `this.f`, `p.f` (p a parameter), `C.f`; not `length` or `holder`.
 * Undefined: not such an entry; 'unresolved': a name the linker reports.
 */
function namedField(e: ast.Expression): ast.FieldDecl | ast.GhostField | 'unresolved' | undefined {
    if ((!ast.isNameExpr(e) && !ast.isMemberAccess(e)) || e.isCall) return undefined;
    const d = ast.isNameExpr(e) ? e.ref?.ref : e.member?.ref;
    if (!d) return 'unresolved';
    if (!isFieldDeclaration(d) || isBuiltinMember(d)) return undefined;
    if (ast.isNameExpr(e)) return d;
    const recv = e.receiver;
    const recvOk = ast.isThisExpr(recv) || (ast.isNameExpr(recv) && (ast.isParam(recv.ref?.ref) || ast.isClassDecl(recv.ref?.ref)));
    return recvOk ? d : undefined;
}

/** Checks of annotations: placement, primes, `\old`, purity, abstraction blocks and frames, ghost state. */
export class AnnotationChecks {
    constructor(private readonly typeChecks: TypeChecks) { }

    checkAnnotation(a: ast.Annotation, accept: ValidationAcceptor): void {
        const level: Level = ast.isProgram(a.$container) ? 'top' : ast.isClassDecl(a.$container) ? 'class' : 'statement';
        const target = annotatedTarget(a);
        for (const c of a.clauses) {
            const kw = CLAUSE_KEYWORD[c.$type];
            const levels = CLAUSE_LEVELS[c.$type] as Level[] | undefined;
            if (!levels) continue; // not a clause: left by error recovery
            if (!levels.includes(level)) {
                const allowed = levels.map(l => LEVEL_TEXT[l]).join(' or ');
                error(accept, 'type', c, `'${kw}' is not allowed ${LEVEL_TEXT[level]}; it belongs ${allowed}.`);
                continue;
            }
            switch (c.$type) {
                case 'WritableIfClause':
                    if (!protectedField(c)) {
                        error(accept, 'type', c, `'writable_if' must be written directly before the field it protects.`);
                    }
                    break;
                case 'RequiresClause': case 'EnsuresClause': case 'AbstractionClause':
                    if (!ast.isMethodDecl(target)) {
                        error(accept, 'type', c, `'${kw}' must be written directly before a method or procedure.`);
                    }
                    break;
                case 'LoopInvariantClause':
                    if (!isLoop(target)) {
                        error(accept, 'type', c, `'loop_invariant' must be written directly before a 'while' or 'for' loop.`);
                    }
                    break;
                case 'WitnessClause': {
                    const method = AstUtils.getContainerOfType(a, ast.isMethodDecl);
                    const abs = method && methodSpec(method).abstraction;
                    const steps = abs ? abs.items.filter(ast.isAbsStep).length : 0;
                    if (!abs) {
                        error(accept, 'type', c, `'witness step' only makes sense in a method with an abstraction.`);
                    } else if (c.step < 1 || c.step > steps) {
                        error(accept, 'type', c, `The abstraction of '${method.name}' has ${steps} step${steps === 1 ? '' : 's'}; 'witness step ${c.step}' names none of them.`, 'step');
                    } else if (target && !ast.isAnnotation(target) && !accessesSharedState(target)) {
                        error(accept, 'type', c, `'witness step ${c.step}' marks a statement that accesses no shared state: it takes no atomic step, so it cannot perform a step of the abstraction. Mark the statement that reads or writes the state the step is about.`);
                    }
                    break;
                }
            }
        }
        this.checkSemicolons(a, accept);
    }

    /** Clauses end with ';' (the last one before the end of the annotation may omit it). */
    private checkSemicolons(a: ast.Annotation, accept: ValidationAcceptor): void {
        const text = a.$cstNode?.root.fullText;
        if (!text) return;
        for (let i = 0; i + 1 < a.clauses.length; i++) {
            const c = a.clauses[i];
            if (ast.isAbstractionClause(c)) continue;
            const end = c.$cstNode?.end, next = a.clauses[i + 1].$cstNode?.offset;
            if (end === undefined || next === undefined) continue;
            if (!text.slice(end, next).includes(';')) {
                error(accept, 'syntax', c, `Missing ';' after this clause.`);
            }
        }
    }

    checkAbstraction(abs: ast.AbstractionClause, accept: ValidationAcceptor): void {
        let seenStep = false, seenEnsures = false, stutters = 0;
        const method = methodOfClause(abs);
        for (const item of abs.items) {
            if (ast.isAbsRequires(item) && (seenStep || seenEnsures)) {
                error(accept, 'type', item, `'requires' must come before the steps and the 'ensures' of an abstraction.`);
            }
            if (ast.isAbsStep(item)) {
                if (seenEnsures) error(accept, 'type', item, `'step' must come before 'ensures' in an abstraction.`);
                seenStep = true;
            }
            if (ast.isAbsEnsures(item)) seenEnsures = true;
            if (ast.isAbsStutter(item) && ++stutters > 1) {
                error(accept, 'type', item, `An abstraction has at most one 'stutter' action; combine them with '||'.`);
            }
        }
        if (method) {
            const others = methodSpec(method);
            if (others.abstraction !== abs) {
                error(accept, 'type', abs, `'${method.name}' already has an abstraction; merge the two blocks.`);
            }
        }
    }

    checkFrameLocation(f: ast.FrameLocation, accept: ValidationAcceptor): void {
        const loc = f.location;
        if (!loc) return; // cut short: a syntax error
        // `a[*]` and `a[e]`: elements of the array a global, field or parameter references
        if (ast.isIndexAccess(loc)) {
            const array = loc.array;
            if (!array || (!loc.index && !loc.allElements)) return; // cut short
            if (!this.isArrayReference(array)) {
                error(accept, 'type', f, `In a frame, '${loc.allElements ? 'a[*]' : 'a[e]'}' names elements of an array that a global, a field (of this, of a parameter, or static) or a parameter references; '${array.$cstNode?.text ?? '?'}' is not one.`);
                return;
            }
            // (the array and an index are typed as any index expression's)
            if (hasPrime(loc)) {
                error(accept, 'type', loc, `A frame entry's array and index are evaluated before the step: they cannot be primed.`);
            }
            return;
        }
        const named = namedField(loc);
        if (named === 'unresolved') return; // reported by the linker
        if (!named) {
            error(accept, 'type', f, `A frame entry names a shared location: a global, a field of this ('f' or 'this.f'), a field of a parameter ('p.f'), a static field ('C.f'), '*.f', or array elements ('a[i]', 'a[*]').`);
            return;
        }
        if (hasPrime(loc)) {
            error(accept, 'type', loc, `A frame entry names a location, not its value after the step: remove the prime.`);
        }
        if (ast.isFieldDecl(named) && named.modifiers.includes('final')) {
            // the elements of a final array field do change: say how to frame them
            const elements = typeOfTypeRef(named.type).kind === 'array' ? ` (its array's elements are framed with '${named.name}[*]')` : '';
            error(accept, 'type', f, `'${named.name}' is final and never changes; remove it from the frame${elements}.`);
        }
    }

    /** A global, a field of this, of a parameter or static, or a parameter: what an element frame entry's array may be. */
    private isArrayReference(e: ast.Expression): boolean {
        return (ast.isNameExpr(e) && !e.isCall && ast.isParam(e.ref?.ref)) || namedField(e) !== undefined;
    }

    checkAnyObjectField(f: ast.AnyObjectField, accept: ValidationAcceptor): void {
        const d = f.field?.ref;
        if (d && ast.isFieldDecl(d) && d.modifiers.includes('final')) {
            error(accept, 'type', f, `'${d.name}' is final and never changes; remove it from the frame.`);
        }
    }

    /** Conditions and actions of clauses must be boolean. */
    checkClauseCondition(node: { condition?: ast.Expression } | { action?: ast.Expression }, accept: ValidationAcceptor, what: string): void {
        const e = 'condition' in node ? node.condition : (node as { action?: ast.Expression }).action;
        this.typeChecks.expectType(accept, e, BOOLEAN, what);
    }

    checkPrimed(e: ast.NameExpr | ast.MemberAccess | ast.IndexAccess, accept: ValidationAcceptor): void {
        if (!e.primed) return;
        if (!isInAction(e)) {
            error(accept, 'type', e, `A primed name (post-state value) is only allowed in two-state actions: 'environment', 'step' and 'stutter'.`);
            return;
        }
        const d = ast.isNameExpr(e) ? e.ref?.ref : ast.isMemberAccess(e) ? e.member?.ref : undefined;
        if (ast.isNameExpr(e) || ast.isMemberAccess(e)) {
            if (d && !isFieldDeclaration(d)) {
                error(accept, 'type', e, `Only shared variables (fields and globals) have a post-state value; '${e.$cstNode?.text ?? ''}' is not one.`);
            }
        }
    }

    checkOld(e: ast.OldExpr, accept: ValidationAcceptor): void {
        if (!isInAnnotation(e)) error(accept, 'type', e, `'\\old' is only allowed inside annotations, in 'ensures' clauses.`);
        else if (!isInEnsures(e)) error(accept, 'type', e, `'\\old' is only allowed in 'ensures' clauses.`);
    }

    checkResult(e: ast.ResultExpr, accept: ValidationAcceptor): void {
        if (!isInAnnotation(e)) {
            error(accept, 'type', e, `'\\result' is only allowed inside annotations, in 'ensures' clauses.`);
            return;
        }
        if (!isInEnsures(e)) {
            error(accept, 'type', e, `'\\result' is only allowed in 'ensures' clauses.`);
            return;
        }
        const m = methodOfClause(e);
        if (m && typeOfTypeRef(m.type).kind === 'void') {
            error(accept, 'type', e, `'${m.name}' is void, so its 'ensures' cannot mention '\\result'.`);
        }
    }

    /** Annotation expressions must be side-effect free; quantifiers belong in annotations only. */
    checkPurity(e: ast.Expression, accept: ValidationAcceptor): void {
        const inAnnotation = isInAnnotation(e);
        if (ast.isQuantifiedExpr(e) && !inAnnotation) {
            error(accept, 'type', e, `Quantifiers are only allowed in annotations.`);
        }
        if (!inAnnotation) return;
        if (ast.isSetClause(e.$container) && e.$container.target === e) return;
        if ((ast.isNameExpr(e) || ast.isMemberAccess(e)) && e.isCall) {
            if (ast.isFrameLocation(e.$container)) return; // reported as not a location
            error(accept, 'type', e, `Annotations must be side-effect free: calls are not allowed here; state the property over fields and variables.`);
        } else if (ast.isNewExpr(e)) {
            // (ghost state is fields only: what the user meant by `ghost int[] g = new int[8]` cannot be had)
            const ghostValue = (ast.isGhostField(e.$container) && e.$container.init === e) || (ast.isSetClause(e.$container) && e.$container.value === e);
            error(accept, 'type', e, ghostValue
                ? `Ghost code allocates nothing: 'new' cannot give a ghost field its value (ghost arrays and objects are not supported; a ghost field holds an int, a boolean, or a reference to a real object).`
                : `Annotations must be side-effect free: 'new' is not allowed here.`);
        } else if (ast.isCasExpr(e)) {
            error(accept, 'type', e, `Annotations must be side-effect free: 'cas' is not allowed here.`);
        } else if (ast.isNondetExpr(e)) {
            error(accept, 'type', e, `'nondet()' is not allowed in annotations; use a quantifier to speak of any value.`);
        }
    }

    checkQuantifier(q: ast.QuantifiedExpr, accept: ValidationAcceptor): void {
        const t = typeOfTypeRef(q.variable?.type);
        if (t.kind === 'void') error(accept, 'type', q.variable, `A quantified variable cannot be void.`);
        if (q.range) this.typeChecks.expectType(accept, q.range, BOOLEAN, 'The range of a quantifier');
        this.typeChecks.expectType(accept, q.body, BOOLEAN, 'The body of a quantifier');
    }

    checkSet(s: ast.SetClause, accept: ValidationAcceptor): void {
        const t = s.target;
        if (!t) return; // cut short: a syntax error
        const d = ast.isNameExpr(t) ? t.ref?.ref : ast.isMemberAccess(t) ? t.member?.ref : undefined;
        if (!d) {
            if (!ast.isNameExpr(t) && !ast.isMemberAccess(t)) error(accept, 'type', t, `'set' updates a ghost field: write 'set g = e;'.`);
            return;
        }
        if (isBuiltinMember(d)) {
            const name = 'name' in d ? d.name : '';
            error(accept, 'type', t, name === 'holder'
                ? `'holder' is changed only by entering and leaving synchronized code; 'set' cannot change it.`
                : `'set' only updates ghost fields; an array's length is fixed when the array is created.`);
            return;
        }
        if (!ast.isGhostField(d)) {
            const name = 'name' in d ? d.name : '';
            error(accept, 'type', t, `'set' only updates ghost fields, and '${name}' is not one; use an ordinary assignment for program variables.`);
            return;
        }
        this.typeChecks.expectType(accept, s.value, typeOfTypeRef(d.type), `The value of '${d.name}'`);
    }

    /** Ghost state (including `holder`) may only be used by annotations. */
    checkGhostUse(e: ast.NameExpr | ast.MemberAccess, accept: ValidationAcceptor): void {
        const d = ast.isNameExpr(e) ? e.ref?.ref : e.member?.ref;
        if (!ast.isGhostField(d) || isInAnnotation(e)) return;
        if (ast.isAssignStmt(e.$container) && e.$container.target === e) return; // reported as an invalid assignment
        // Initializers of ghost fields are specification code too.
        if (AstUtils.getContainerOfType(e, ast.isGhostField)) return;
        error(accept, 'type', e, `Ghost field '${d.name}' can only be used in annotations; program code cannot read or write it.`);
    }

    /** `tid` has no value while initializers of globals and static fields (ghost or not) run, before any thread starts. */
    checkTid(e: ast.TidExpr, accept: ValidationAcceptor): void {
        const field = AstUtils.getContainerOfType(e, (n): n is ast.FieldDecl | ast.GhostField => ast.isFieldDecl(n) || ast.isGhostField(n));
        if (field && isStatic(field)) {
            error(accept, 'type', e, `'tid' has no value in the initializer of a global or static field, which runs before the threads start.`);
        }
    }

}

/**
 * Whether a statement may take an atomic step: it reads or writes a field, a
 * global or an array element, calls a method, uses a monitor, `atomic`, `cas`
 * or `new`, or holds an annotation (a ghost `set`). (A statement over locals
 * only, `return false;`, takes none.)
 */
function accessesSharedState(node: AstNode): boolean {
    return AstUtils.streamAst(node).some(n =>
        ast.isMemberAccess(n) || ast.isIndexAccess(n) || ast.isCasExpr(n) || ast.isSyncStmt(n) || ast.isAtomicStmt(n) || ast.isNewExpr(n) || ast.isAnnotation(n)
        || (ast.isNameExpr(n) && (n.isCall || ast.isFieldDecl(n.ref?.ref) || ast.isGhostField(n.ref?.ref))));
}

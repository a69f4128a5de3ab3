import type { ValidationAcceptor, ValidationChecks } from 'langium';
import type { CalvinAstType } from '../generated/ast.js';
import * as ast from '../generated/ast.js';
import type { CalvinServices } from '../calvin-module.js';
import { BOOLEAN } from '../types/calvin-types.js';
import { isBuiltinUri } from '../builtins.js';
import { AstUtils } from 'langium';
import { AnnotationChecks } from './annotation-checks.js';
import { StructureChecks } from './structure-checks.js';
import { TypeChecks } from './type-checks.js';

/** Registers the front-end checks (codes `syntax`, `name`, `type` of checking.md). */
export function registerValidationChecks(services: CalvinServices): void {
    const registry = services.validation.ValidationRegistry;
    const types = services.types.TypeSystem;
    const typeChecks = new TypeChecks(types);
    const annotations = new AnnotationChecks(typeChecks);
    const structure = new StructureChecks(services.shared.workspace.IndexManager, services.shared.workspace.LangiumDocuments);
    const cond = (what: string) => (n: { condition?: ast.Expression }, accept: ValidationAcceptor) =>
        typeChecks.expectType(accept, n.condition, BOOLEAN, what);
    const action = (what: string) => (n: { action?: ast.Expression }, accept: ValidationAcceptor) =>
        typeChecks.expectType(accept, n.action, BOOLEAN, what);

    const checks: ValidationChecks<CalvinAstType> = {
        Program: (p, accept) => {
            if (isBuiltinUri(AstUtils.getDocument(p).uri)) return;
            structure.checkTopLevelDuplicates(p, accept);
        },
        ClassDecl: (c, accept) => structure.checkClassDuplicates(c, accept),
        FieldDecl: [
            (f, accept) => typeChecks.checkVariableType(f, accept),
            (f, accept) => structure.checkFieldModifiers(f, accept),
        ],
        GhostField: [
            (f, accept) => typeChecks.checkVariableType(f, accept),
            (f, accept) => structure.checkFieldModifiers(f, accept),
        ],
        MethodDecl: [
            (m, accept) => structure.checkParams(m, accept),
            (m, accept) => structure.checkMethodModifiers(m, accept),
            (m, accept) => structure.checkMissingReturn(m, accept),
            (m, accept) => structure.checkRecursion(m, accept),
        ],
        Param: (p, accept) => typeChecks.checkVariableType(p, accept),
        ThreadDecl: (t, accept) => structure.checkThread(t, accept),
        LocalVarDecl: [
            (d, accept) => typeChecks.checkVariableType(d, accept),
            (d, accept) => structure.checkLocal(d, accept),
        ],
        QuantVar: (d, accept) => structure.checkLocal(d, accept),
        TypeRef: (t, accept) => structure.checkCrossFileReference(t, accept),
        AssignStmt: [
            (s, accept) => typeChecks.checkAssign(s, accept),
            (s, accept) => structure.checkAssignTarget(s.target, accept, `Assignment with '${s.op}'`),
        ],
        ExprStmt: (s, accept) => typeChecks.checkExprStmt(s, accept),
        IfStmt: cond('The condition of \'if\''),
        WhileStmt: cond('The condition of \'while\''),
        ForStmt: cond('The condition of \'for\''),
        AssertStmt: cond('An assertion'),
        ReturnStmt: (r, accept) => typeChecks.checkReturn(r, accept),
        BreakStmt: (s, accept) => structure.checkBreakContinue(s, accept),
        ContinueStmt: (s, accept) => structure.checkBreakContinue(s, accept),
        SyncStmt: (s, accept) => typeChecks.checkSync(s, accept),
        AtomicStmt: (a, accept) => structure.checkAtomic(a, accept),
        BinaryExpr: (e, accept) => typeChecks.checkBinary(e, accept),
        UnaryExpr: (e, accept) => typeChecks.checkUnary(e, accept),
        ConditionalExpr: (e, accept) => typeChecks.checkConditional(e, accept),
        IndexAccess: [
            (e, accept) => typeChecks.checkIndex(e, accept),
            (e, accept) => annotations.checkPrimed(e, accept),
        ],
        MemberAccess: [
            (e, accept) => typeChecks.checkMemberAccess(e, accept),
            (e, accept) => annotations.checkPrimed(e, accept),
            (e, accept) => annotations.checkGhostUse(e, accept),
        ],
        NameExpr: [
            (e, accept) => typeChecks.checkNameExpr(e, accept),
            (e, accept) => structure.checkCrossFileReference(e, accept),
            (e, accept) => annotations.checkPrimed(e, accept),
            (e, accept) => annotations.checkGhostUse(e, accept),
        ],
        ThisExpr: (e, accept) => typeChecks.checkThis(e, accept),
        TidExpr: (e, accept) => annotations.checkTid(e, accept),
        NewExpr: (e, accept) => typeChecks.checkNew(e, accept),
        CasExpr: [
            (e, accept) => typeChecks.checkCas(e, accept),
            (e, accept) => structure.checkCasTarget(e, accept),
        ],
        OldExpr: (e, accept) => annotations.checkOld(e, accept),
        ResultExpr: (e, accept) => annotations.checkResult(e, accept),
        QuantifiedExpr: (q, accept) => annotations.checkQuantifier(q, accept),
        Expression: (e, accept) => annotations.checkPurity(e, accept),
        BlockAnnotation: (a, accept) => annotations.checkAnnotation(a, accept),
        LineAnnotation: (a, accept) => annotations.checkAnnotation(a, accept),
        WritableIfClause: cond('A writable_if condition'),
        InvariantClause: cond('An invariant'),
        EnvironmentClause: action('An environment action'),
        RequiresClause: cond('A precondition'),
        EnsuresClause: cond('A postcondition'),
        LoopInvariantClause: cond('A loop invariant'),
        AssertClause: cond('An assertion'),
        AssumeClause: cond('An assumption'),
        AbsRequires: cond('A precondition'),
        AbsEnsures: cond('A postcondition'),
        AbsStep: action('An abstraction step'),
        AbsStutter: action('A stutter action'),
        AbstractionClause: (a, accept) => annotations.checkAbstraction(a, accept),
        FrameLocation: (f, accept) => annotations.checkFrameLocation(f, accept),
        AnyObjectField: (f, accept) => annotations.checkAnyObjectField(f, accept),
        SetClause: (s, accept) => annotations.checkSet(s, accept),
    };
    registry.register(checks);
}

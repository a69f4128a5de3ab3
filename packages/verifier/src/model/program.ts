/**
 * The typed program model: what the verifier consumes. The front end
 * (language/src/model) builds it from the Langium AST with every name resolved
 * and every expression typed, so the verifier is independent of Langium and
 * LSP, and a model can be serialized (to a worker, or into a fingerprint).
 */

/** 0-based line/character positions, end exclusive (as LSP). */
export interface Range {
    file: string;
    startLine: number;
    startChar: number;
    endLine: number;
    endChar: number;
}

export type Type =
    | { kind: 'int' }
    | { kind: 'boolean' }
    | { kind: 'void' }
    | { kind: 'null' }
    | { kind: 'class'; name: string }
    | { kind: 'array'; element: Type };

export interface ProgramModel {
    /** Files of the program (ordered by path). */
    files: string[];
    classes: ClassModel[];
    /** Globals: top-level fields, ghost ones included. */
    globals: FieldModel[];
    /** Top-level procedures. */
    procedures: MethodModel[];
    threads: ThreadModel[];
    /** Top-level `invariant` clauses. */
    invariants: Clause[];
    /** Top-level `environment` clauses. */
    environments: Clause[];
    /** Set by the inference (infer/): fields written by threads that share no protection. */
    unprotected?: UnprotectedField[];
    /**
     * Set by the inference: the element types whose arrays threads write only while the array
     * is private to the writer (so the elements of a published array never change).
     */
    privateElements?: Array<'Int' | 'Bool' | 'Ref'>;
}

export interface ClassModel {
    name: string;
    fields: FieldModel[];
    methods: MethodModel[];
    invariants: Clause[];
    environments: Clause[];
    range: Range;
}

/** An annotation clause with its expression and where it is written. */
export interface Clause {
    expr: Expr;
    range: Range;
    /** The source text of the expression, for messages and hover. */
    text: string;
    /** Not written by the user: inferred from the code (infer/), with where it comes from. */
    inferred?: InferredClause;
}

/** What an inferred `writable_if` rests on: the writes it was inferred from and, per write, what the thread knows there. */
export interface InferredClause {
    kind: 'writable_if' | 'environment' | 'invariant';
    /** The field it is about (for candidates from assertions: the candidate's key). */
    field: string;
    origin: string;
    sites: Array<{
        range: Range;
        /** The single-instance threads that perform the write (undefined: any thread). */
        threads?: number[];
        /** The facts the write is checked against, one at a time (the guard's disjunct for it). */
        atoms: Array<{ key: string; text: string; expr: Expr }>;
        /** For messages: who writes there and what it holds ("T1, holding Mutex.m"). */
        held: string;
    }>;
}

/** The writes of a field that the inference found no protection for (race messages name them). */
export interface UnprotectedField {
    field: string;
    sites: Array<{ range: Range; held: string }>;
}

export interface FieldModel {
    /** Unique: `x` for a global, `C.f` for a field of class C. */
    id: string;
    name: string;
    /** Declaring class; undefined for globals. */
    owner?: string;
    isStatic: boolean;
    isVolatile: boolean;
    isFinal: boolean;
    isGhost: boolean;
    type: Type;
    init?: Expr;
    writableIf: Clause[];
    range: Range;
    nameRange: Range;
}

export interface VarDecl {
    /** Unique within its method/thread (the front end numbers shadowing-free names). */
    id: string;
    name: string;
    type: Type;
    range: Range;
}

export interface AbstractionModel {
    requires: Clause[];
    ensures: Clause[];
    stutter?: Action;
    steps: Action[];
    range: Range;
    /** True when given as an `abstraction { }` block, false when only requires/ensures are written. */
    explicit: boolean;
}

export interface Action {
    /** Whether a frame `[...]` was written (an empty one means nothing may change). */
    hasFrame: boolean;
    frame: FrameEntry[];
    /** undefined = frame given without a predicate never happens; the grammar requires one. */
    expr: Expr;
    range: Range;
    text: string;
}

export type FrameEntry =
    | { kind: 'global'; field: string }
    | { kind: 'this'; field: string }
    | { kind: 'param'; param: string; field: string }
    | { kind: 'any'; field: string }
    /**
     * Elements of the array that `array` references in the pre-state (a global,
     * a field of `this` or of a parameter, or an array-typed parameter): one
     * element (`a[e]`, `index` evaluated in the pre-state) or all (`a[*]`).
     */
    | { kind: 'elems'; array: Expr; index?: Expr };

export interface MethodModel {
    /** Unique: `C.m` or `p` for a top-level procedure. */
    id: string;
    name: string;
    owner?: string;
    isStatic: boolean;
    isSynchronized: boolean;
    params: VarDecl[];
    returnType: Type;
    body: Stmt[];
    abstraction?: AbstractionModel;
    range: Range;
    nameRange: Range;
    /** The closing brace of the body (where a method that falls off the end is reported). */
    endRange: Range;
}

export interface ThreadModel {
    name: string;
    /** Ids of single-instance threads (1..k); undefined for replicated ones. */
    id?: number;
    /** `T[n]` gives n, `T[*]` gives '*', a single thread undefined. */
    count?: number | '*';
    body: Stmt[];
    range: Range;
    nameRange: Range;
}

// ------------------------------------------------------------------ statements

interface StmtBase { range: Range }

export type Stmt =
    | StmtBase & { kind: 'local'; decl: VarDecl; init?: Expr }
    | StmtBase & { kind: 'assign'; target: Expr; op: '=' | '+=' | '-=' | '++' | '--'; value?: Expr }
    | StmtBase & { kind: 'expr'; expr: Expr }
    | StmtBase & { kind: 'if'; cond: Expr; then: Stmt[]; else: Stmt[] }
    | StmtBase & { kind: 'while'; cond: Expr; body: Stmt[]; invariants: Clause[]; update: Stmt[] }
    | StmtBase & { kind: 'return'; value?: Expr }
    | StmtBase & { kind: 'break' }
    | StmtBase & { kind: 'continue' }
    | StmtBase & { kind: 'sync'; lock: Expr; body: Stmt[]; closeRange: Range }
    | StmtBase & { kind: 'atomic'; body: Stmt[] }
    | StmtBase & { kind: 'assert'; cond: Expr; annotation: boolean; text: string }
    | StmtBase & { kind: 'assume'; cond: Expr; text: string }
    | StmtBase & { kind: 'set'; target: Expr; value: Expr }
    | StmtBase & { kind: 'witness'; step: number }
    | StmtBase & { kind: 'block'; body: Stmt[] };

// ------------------------------------------------------------------ expressions

interface ExprBase { type: Type; range: Range }

export type BinaryOp = '*' | '/' | '%' | '+' | '-' | '<' | '<=' | '>' | '>=' | '==' | '!=' | '&&' | '||' | '==>' | '<==>';

export type Expr =
    | ExprBase & { kind: 'int'; value: string }
    | ExprBase & { kind: 'bool'; value: boolean }
    | ExprBase & { kind: 'null' }
    | ExprBase & { kind: 'this' }
    | ExprBase & { kind: 'tid' }
    | ExprBase & { kind: 'nondet' }
    /** A thread's name in an annotation: its id. */
    | ExprBase & { kind: 'threadId'; thread: string; id: number }
    /** A local, parameter or quantified variable. */
    | ExprBase & { kind: 'var'; id: string; name: string }
    /** A global or static field. */
    | ExprBase & { kind: 'global'; field: string; primed: boolean }
    /** An instance field of an object (`receiver.f`, or `f` meaning `this.f`). */
    | ExprBase & { kind: 'field'; receiver: Expr; field: string; primed: boolean }
    /** The monitor's holder of an object. */
    | ExprBase & { kind: 'holder'; receiver: Expr; primed: boolean }
    | ExprBase & { kind: 'length'; array: Expr }
    | ExprBase & { kind: 'index'; array: Expr; index: Expr; primed: boolean }
    | ExprBase & { kind: 'unary'; op: '!' | '-'; operand: Expr }
    | ExprBase & { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
    | ExprBase & { kind: 'cond'; cond: Expr; then: Expr; else: Expr }
    | ExprBase & { kind: 'call'; method: string; receiver?: Expr; args: Expr[] }
    | ExprBase & { kind: 'new'; class: string }
    | ExprBase & { kind: 'newArray'; element: Type; size: Expr }
    | ExprBase & { kind: 'cas'; target: Expr; expected: Expr; update: Expr }
    | ExprBase & { kind: 'old'; expr: Expr }
    | ExprBase & { kind: 'result' }
    | ExprBase & { kind: 'quant'; quantifier: 'forall' | 'exists'; variable: VarDecl; range_?: Expr; body: Expr };

export function sameType(a: Type, b: Type): boolean {
    if (a.kind !== b.kind) return false;
    if (a.kind === 'class' && b.kind === 'class') return a.name === b.name;
    if (a.kind === 'array' && b.kind === 'array') return sameType(a.element, b.element);
    return true;
}

export function typeString(t: Type): string {
    switch (t.kind) {
        case 'class': return t.name;
        case 'array': return `${typeString(t.element)}[]`;
        default: return t.kind;
    }
}

/** The field a frame entry lets change (undefined for array elements: the array's field itself does not change). */
export function frameField(e: FrameEntry): string | undefined {
    return e.kind === 'elems' ? undefined : e.field;
}

/** The array-typed field whose array's elements a frame entry lets change (`[f]` on an array field, `f[e]`, `f[*]`, `p.f[*]`). */
export function frameElementsField(e: FrameEntry): string | undefined {
    if (e.kind !== 'elems') return undefined;
    return e.array.kind === 'global' || e.array.kind === 'field' ? e.array.field : undefined;
}

/** The actions of a method's abstraction: its steps, then its stutter (none without an abstraction). */
export function abstractionActions(m: MethodModel): Action[] {
    const a = m.abstraction;
    return a ? [...a.steps, ...(a.stutter ? [a.stutter] : [])] : [];
}

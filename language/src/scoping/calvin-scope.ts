import type { AstNode, AstNodeDescription, LangiumCoreServices, LangiumDocument, LangiumDocuments, LocalSymbols, ReferenceInfo, Scope, ScopeOptions, Stream } from 'langium';
import { AstUtils, Cancellation, DefaultScopeComputation, DefaultScopeProvider, EMPTY_SCOPE, interruptAndCheck, MultiMap, MultiMapScope, stream, WorkspaceCache } from 'langium';
import { pendingBodyEdit } from '../workspace/incremental.js';
import * as ast from '../generated/ast.js';
import { annotatedTarget, classFields, classMethods, globalFields, isMethodSpecClause } from '../ast-utils.js';
import { topLevelDeclarations } from '../workspace/programs.js';
import { BUILTIN_CLASS_NAME, BUILTIN_URI, isBuiltinUri } from '../builtins.js';
import type { CalvinTypeSystem } from '../types/calvin-types.js';

/**
 * Exports the program-wide names of a file: classes, globals (also ghost
 * ones), top-level procedures and threads. Declarations are global across the
 * files of a workspace (language.md §2).
 */
export class CalvinScopeComputation extends DefaultScopeComputation {
    override async collectExportedSymbols(document: LangiumDocument, cancelToken = Cancellation.CancellationToken.None): Promise<AstNodeDescription[]> {
        const program = document.parseResult.value as ast.Program;
        const exports: AstNodeDescription[] = [];
        // The built-in class is internal: its members are found through the
        // receiver's type (memberScope), never by name (no completion, no workspace symbol).
        if (isBuiltinUri(document.uri)) return exports;
        for (const d of program.decls) {
            await interruptAndCheck(cancelToken);
            if (ast.isClassDecl(d) || ast.isThreadDecl(d) || ast.isMethodDecl(d) || ast.isFieldDecl(d)) {
                if (d.name) exports.push(this.descriptions.createDescription(d, d.name, document));
            }
        }
        for (const g of globalFields(program)) {
            if (ast.isGhostField(g) && g.name) exports.push(this.descriptions.createDescription(g, g.name, document));
        }
        return exports;
    }

    /** After a body edit (incremental.ts), only the body's entries change. */
    override async collectLocalSymbols(document: LangiumDocument, cancelToken = Cancellation.CancellationToken.None): Promise<LocalSymbols> {
        const edit = pendingBodyEdit(document);
        const previous = document.localSymbols;
        if (!edit || !(previous instanceof MultiMap)) return super.collectLocalSymbols(document, cancelToken);
        const symbols = previous as MultiMap<AstNode, AstNodeDescription>;
        for (const node of AstUtils.streamAst(edit.oldBody)) symbols.delete(node);
        for (const node of AstUtils.streamAst(edit.newBody)) this.addLocalSymbol(node, document, symbols);
        return symbols;
    }
}

/**
 * A scope over AST nodes that describes a node when it is found, not every
 * node before it: Langium's scope over nodes maps each lookup's nodes to
 * descriptions (each with its path and text segment) until one has the name
 * (issue 15: a third of the linking time). The same answers: the first node
 * with the name, then the outer scope's; descriptions made once per scope.
 */
export class NodeScope implements Scope {
    private readonly described = new Map<AstNode, AstNodeDescription>();

    constructor(
        private readonly nodes: Iterable<AstNode>,
        private readonly nameOf: (node: AstNode) => string | undefined,
        private readonly describe: (node: AstNode, name: string) => AstNodeDescription,
        private readonly outerScope?: Scope,
        private readonly concatOuterScope = true,
    ) { }

    private description(node: AstNode, name: string): AstNodeDescription {
        let d = this.described.get(node);
        if (!d) this.described.set(node, d = this.describe(node, name));
        return d;
    }

    private local(name?: string): Stream<AstNodeDescription> {
        return stream(this.nodes).map(n => {
            const own = this.nameOf(n);
            return own && (name === undefined || own === name) ? this.description(n, own) : undefined;
        }).nonNullable();
    }

    getElement(name: string): AstNodeDescription | undefined {
        for (const n of this.nodes) if (this.nameOf(n) === name) return this.description(n, name);
        return this.outerScope?.getElement(name);
    }

    getElements(name: string): Stream<AstNodeDescription> {
        const local = this.local(name);
        return (this.concatOuterScope || local.isEmpty()) && this.outerScope ? local.concat(this.outerScope.getElements(name)) : local;
    }

    getAllElements(): Stream<AstNodeDescription> {
        return this.outerScope ? this.local().concat(this.outerScope.getAllElements()) : this.local();
    }
}

/**
 * Name resolution with Java's rules: locals declared earlier in enclosing
 * blocks, parameters, quantifier variables, members of the enclosing class,
 * then globals. Member access resolves against the receiver's static type.
 */
export class CalvinScopeProvider extends DefaultScopeProvider {
    private readonly types: () => CalvinTypeSystem;
    private readonly documents: LangiumDocuments;
    /** Scopes that only change when the workspace does (keys are AST nodes, replaced on every re-parse). */
    private readonly fileScopes: WorkspaceCache<ast.Program, Map<string, Scope>>;
    private readonly classScopes: WorkspaceCache<ast.ClassDecl, Scope>;

    constructor(services: LangiumCoreServices & { types: { TypeSystem: CalvinTypeSystem } }) {
        super(services);
        this.types = () => services.types.TypeSystem;
        this.documents = services.shared.workspace.LangiumDocuments;
        this.fileScopes = new WorkspaceCache(services.shared);
        this.classScopes = new WorkspaceCache(services.shared);
    }

    /**
     * The names of every file, in the order of the files' URIs: where several
     * files declare a name (each is its own program), which one another file
     * sees does not depend on the order in which the files were loaded or
     * edited (the editor and the CLI agree).
     */
    protected override getGlobalScope(referenceType: string, _context: ReferenceInfo): Scope {
        return this.globalScopeCache.get(referenceType, () => {
            const elements = this.indexManager.allElements(referenceType).toArray();
            const uri = (d: AstNodeDescription) => d.documentUri.toString();
            elements.sort((a, b) => (uri(a) < uri(b) ? -1 : uri(a) > uri(b) ? 1 : 0));
            return new MultiMapScope(elements);
        });
    }

    override createScopeForNodes(elements: Iterable<AstNode>, outerScope?: Scope, options?: ScopeOptions): Scope {
        if (options?.caseInsensitive) return super.createScopeForNodes(elements, outerScope, options);
        return new NodeScope(elements, n => this.nameProvider.getName(n), (n, name) => this.descriptions.createDescription(n, name), outerScope, options?.concatOuterScope ?? true);
    }

    override getScope(context: ReferenceInfo): Scope {
        const container = context.container;
        if (ast.isMemberAccess(container) && context.property === 'member') {
            return this.memberScope(container);
        }
        if (ast.isTypeRef(container) || (ast.isNewExpr(container))) {
            return this.ownFileFirst(container, this.getGlobalScope(ast.ClassDecl.$type, context), ast.isClassDecl, 'class');
        }
        if (ast.isAnyObjectField(container)) {
            // `*.f`: the fields of the file's own classes first, as for top-level names (a field
            // of another file's class would make the two files one program)
            const program = AstUtils.findRootNode(container) as ast.Program;
            const all = this.allInstanceFields();
            const own = all.filter(f => AstUtils.findRootNode(f) === program);
            return this.createScopeForNodes(own, this.createScopeForNodes(all.filter(f => !own.includes(f))));
        }
        if (ast.isNameExpr(container)) {
            return this.lexicalScope(container, this.ownFileFirst(container, this.getGlobalScope('NamedElement', context), () => true, 'any'));
        }
        return super.getScope(context);
    }

    /** A file's own top-level declarations shadow those of other files (see programs.ts). Cached until the workspace changes. */
    private ownFileFirst(node: AstNode, globals: Scope, filter: (d: AstNode) => boolean, key: string): Scope {
        const program = AstUtils.findRootNode(node) as ast.Program;
        let perProgram = this.fileScopes.get(program);
        if (!perProgram) this.fileScopes.set(program, perProgram = new Map());
        let scope = perProgram.get(key);
        if (!scope) {
            scope = this.createScopeForNodes(topLevelDeclarations(program).filter(filter), globals);
            perProgram.set(key, scope);
        }
        return scope;
    }

    /** Members of a class (and the implicit `holder`), chained to the file's names. Cached until the workspace changes. */
    private classScope(cls: ast.ClassDecl, outer: Scope): Scope {
        let scope = this.classScopes.get(cls);
        if (!scope) {
            scope = this.createScopeForNodes([...classFields(cls), ...classMethods(cls), ...this.builtinHolder()], outer);
            this.classScopes.set(cls, scope);
        }
        return scope;
    }

    /** Locals, parameters, quantifier variables and class members visible at `node`, outside-in chained to globals. */
    private lexicalScope(node: AstNode, globals: Scope): Scope {
        const layers: AstNode[][] = [];
        let cls: ast.ClassDecl | undefined;
        let child: AstNode = node;
        let current: AstNode | undefined = node.$container;
        while (current) {
            if (ast.isQuantifiedExpr(current) && current.variable) layers.push([current.variable]);
            else if (ast.isBlock(current)) {
                const index = current.stmts.indexOf(child as ast.Statement);
                const locals = current.stmts.slice(0, index < 0 ? current.stmts.length : index).filter(ast.isLocalVarDecl);
                layers.push(locals);
            } else if (ast.isForStmt(current) && ast.isLocalVarDecl(current.init) && child !== current.init) {
                layers.push([current.init]);
            } else if (ast.isMethodDecl(current)) {
                layers.push(current.params);
            } else if (ast.isAnnotation(current)) {
                // `child` is the clause. requires/ensures/abstraction written before a
                // method see its parameters (other clauses before a method do not);
                // a loop_invariant before `for (int i = ...)` may mention i.
                if (isMethodSpecClause(child)) {
                    const target = annotatedTarget(current);
                    if (ast.isMethodDecl(target)) layers.push(target.params);
                } else if (ast.isLoopInvariantClause(child)) {
                    const target = annotatedTarget(current);
                    if (ast.isForStmt(target) && ast.isLocalVarDecl(target.init)) layers.push([target.init]);
                }
            } else if (ast.isClassDecl(current)) {
                cls = current;
            }
            child = current;
            current = current.$container;
        }
        let scope = cls ? this.classScope(cls, globals) : globals;
        for (let i = layers.length - 1; i >= 0; i--) {
            if (layers[i].length > 0) scope = this.createScopeForNodes(layers[i], scope);
        }
        return scope;
    }

    private memberScope(access: ast.MemberAccess): Scope {
        const receiverType = this.types().typeOf(access.receiver);
        switch (receiverType.kind) {
            case 'class': {
                const cls = receiverType.decl;
                return this.createScopeForNodes([...classFields(cls), ...classMethods(cls), ...this.builtinHolder()]);
            }
            case 'classref': {
                const cls = receiverType.decl;
                return this.createScopeForNodes([...classFields(cls), ...classMethods(cls)]);
            }
            case 'array':
                return this.createScopeForNodes(this.builtinMembers());
            default:
                return EMPTY_SCOPE;
        }
    }

    private builtinClass(): ast.ClassDecl | undefined {
        if (!this.documents.hasDocument(BUILTIN_URI)) return undefined;
        const program = this.documents.getDocument(BUILTIN_URI)!.parseResult.value as ast.Program;
        return (program.decls ?? []).find((d): d is ast.ClassDecl => ast.isClassDecl(d) && d.name === BUILTIN_CLASS_NAME);
    }

    private builtinMembers(): Array<ast.FieldDecl | ast.GhostField> {
        const cls = this.builtinClass();
        return cls ? classFields(cls) : [];
    }

    private builtinHolder(): Array<ast.FieldDecl | ast.GhostField> {
        return this.builtinMembers().filter(f => f.name === 'holder');
    }

    private allInstanceFields(): Array<ast.FieldDecl | ast.GhostField> {
        const result: Array<ast.FieldDecl | ast.GhostField> = [];
        for (const doc of this.documents.all) {
            if (isBuiltinUri(doc.uri)) continue;
            for (const cls of ((doc.parseResult.value as ast.Program).decls ?? []).filter(ast.isClassDecl)) {
                result.push(...classFields(cls).filter(f => !f.modifiers.includes('static')));
            }
        }
        return result;
    }
}

import type { AstNode, LangiumDocuments, MaybePromise } from 'langium';
import { AstUtils } from 'langium';
import type { LangiumServices } from 'langium/lsp';
import { AstNodeHoverProvider } from 'langium/lsp';
import * as ast from '@calvin/language';
import { isBuiltinMember, isStatic, precedingAnnotations, threadIds, typeOfDeclaration, typeOfTypeRef, typeToString, writableIfClauses } from '@calvin/language';

/**
 * Hover on a declaration or a reference: the declaration, its type and, for
 * fields and methods, the annotations that govern them (Markdown, Calvin code
 * in fenced blocks).
 */
export class CalvinHoverProvider extends AstNodeHoverProvider {
    private readonly documents: LangiumDocuments;

    constructor(services: LangiumServices) {
        super(services);
        this.documents = services.shared.workspace.LangiumDocuments;
    }

    protected override getAstNodeHoverContent(node: AstNode): MaybePromise<string | undefined> {
        const programs = this.documents.all.map(d => d.parseResult.value as ast.Program);
        const parts = describe(node, threadIds(programs));
        return parts.length > 0 ? parts.join('\n\n') : undefined;
    }
}

function code(text: string): string {
    return '```calvin\n' + text.trim() + '\n```';
}

function text(node: AstNode | undefined): string {
    return node?.$cstNode?.text ?? '';
}

function annotationTexts(node: AstNode): string[] {
    return precedingAnnotations(node).map(a => text(a));
}

export function describe(node: AstNode, ids: Map<ast.ThreadDecl, number>): string[] {
    switch (node.$type) {
        case ast.FieldDecl.$type:
        case ast.GhostField.$type: {
            const f = node as ast.FieldDecl | ast.GhostField;
            const owner = AstUtils.getContainerOfType(f, ast.isClassDecl);
            const kind = isBuiltinMember(f) ? 'built-in field' : ast.isGhostField(f) ? 'ghost field'
                : owner ? (isStatic(f) ? 'static field' : 'instance field') : 'global';
            const out = [code(`${f.modifiers.join(' ')} ${ast.isGhostField(f) ? 'ghost ' : ''}${text(f.type)} ${f.name}`.trim()),
                `*${kind}*${owner && !isBuiltinMember(f) ? ` of class \`${owner.name}\`` : ''}, type \`${typeToString(typeOfTypeRef(f.type))}\``];
            if (isBuiltinMember(f)) {
                out.push(f.name === 'holder'
                    ? '0 when the object\'s monitor is free, else the id of the thread holding it. Changed only by `synchronized`.'
                    : 'The number of elements of the array; fixed when the array is created.');
                return out;
            }
            const protections: string[] = [];
            if (f.modifiers.includes('final')) protections.push('`final`: immutable after its initializer, never racy');
            if (f.modifiers.includes('volatile')) protections.push('`volatile`: a synchronization variable, exempt from stability checks (its writes still obey `writable_if`)');
            for (const w of writableIfClauses(f)) protections.push(`\`writable_if ${text(w.condition)}\`: only a thread for which this holds may write it`);
            if (protections.length === 0 && !ast.isGhostField(f)) protections.push('no `writable_if`: any thread may write it unless the checker infers a guard');
            out.push(protections.map(p => `- ${p}`).join('\n'));
            return out;
        }
        case ast.MethodDecl.$type: {
            const m = node as ast.MethodDecl;
            const owner = AstUtils.getContainerOfType(m, ast.isClassDecl);
            const sig = `${m.modifiers.join(' ')} ${text(m.type)} ${m.name}(${m.params.map(p => text(p)).join(', ')})`.trim();
            const out = [code(sig), owner ? `*method* of class \`${owner.name}\`` : '*procedure*'];
            const annotations = annotationTexts(m);
            if (annotations.length > 0) out.push(code(annotations.join('\n')));
            else out.push('No abstraction: its body is inlined at each call site and checked there.');
            return out;
        }
        case ast.ThreadDecl.$type: {
            const t = node as ast.ThreadDecl;
            const id = ids.get(t);
            const instances = t.star ? 'any number of instances' : t.count !== undefined ? `${t.count} instances` : 'one instance';
            return [code(`thread ${t.name}${t.star ? '[*]' : t.count !== undefined ? `[${t.count}]` : ''}`),
                `*thread*, ${instances}${id !== undefined ? `; in annotations \`${t.name}\` is its id, \`${id}\`` : ''}`];
        }
        case ast.ClassDecl.$type: {
            const c = node as ast.ClassDecl;
            return [code(`class ${c.name}`), `*class* with ${c.members.filter(ast.isFieldDecl).length} fields and ${c.members.filter(ast.isMethodDecl).length} methods`];
        }
        case ast.Param.$type:
        case ast.LocalVarDecl.$type:
        case ast.QuantVar.$type: {
            const d = node as ast.Param | ast.LocalVarDecl | ast.QuantVar;
            const kind = ast.isParam(d) ? 'parameter' : ast.isQuantVar(d) ? 'quantified variable' : 'local variable';
            return [code(`${text(d.type)} ${d.name}`), `*${kind}*, type \`${typeToString(typeOfDeclaration(d))}\`, private to its thread`];
        }
        default:
            return [];
    }
}

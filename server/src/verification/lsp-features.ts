// The editor features of incremental verification (issue 4): code lenses with
// each check's state, and the commands they run (through
// workspace/executeCommand, so that every LSP editor can use them).
import type { LangiumDocument } from 'langium';
import { AstUtils, CstUtils } from 'langium';
import * as ast from '@calvin/language';
import type { InferredAnnotation, Range } from '@calvin/verifier';
import type { LangiumServices, LangiumSharedServices } from 'langium/lsp';
import { AbstractExecuteCommandHandler, type CodeLensProvider, type ExecuteCommandAcceptor } from 'langium/lsp';
import type { CodeLens, CodeLensParams } from 'vscode-languageserver';
import { lspRange, type TrackedCheck } from './service.js';
import { verificationOf } from '../calvin-lsp-module.js';

export const COMMANDS = {
    /** Run one check now, bypassing the cache: [uri, key, timeLimitMs?]. */
    runCheck: 'calvin.check.run',
    /** Run every check of a file, bypassing the cache: [uri]. */
    runFile: 'calvin.check.runFile',
    /** Cancel the queued and running checks: [uri?]. */
    cancel: 'calvin.check.cancel',
    /** A diagnostic's environment step as Markdown (`{ markdown }`; VS Code opens it): [uri, diagnostic]. */
    showCounterexample: 'calvin.counterexample.show',
    /** A diagnostic's witness (a concrete interleaving) as Markdown, with its steps (`{ markdown, steps }`): [uri, diagnostic]. */
    showWitness: 'calvin.witness.show',
} as const;

/** A code lens title for a check's state. */
export function lensTitle(c: TrackedCheck, verifyOn: string): string {
    const r = c.result;
    switch (c.state) {
        case 'verified': {
            const n = inferredCount(c);
            const inferred = n > 0 ? `, ${n} inferred` : '';
            return c.cached ? `✓ verified (cached${inferred})` : `✓ verified in ${r?.timeMs ?? 0} ms${n > 0 ? ` (${n} inferred)` : ''}`;
        }
        case 'failed': {
            const n = shownProblems(c);
            return `✗ ${n} problem${n === 1 ? '' : 's'} ${c.cached ? '(cached)' : `in ${r?.timeMs ?? 0} ms`}`;
        }
        case 'queued': case 'running': return '⏳ checking';
        case 'unknown':
            return r?.unknown?.reason === 'timeout' ? '? time-out — raise calvin.timeLimitMs' : '? not decided — click to check again';
        case 'error': return '⚠ not checked — click to try again';
        case 'stale': {
            // (changed: since the result it had; a check that never ran did not change)
            if (verifyOn === 'never') return '… not checked (calvin.verifyOn is never)';
            if (r === undefined) return verifyOn === 'save' ? '… not checked yet: checked on save' : '… not checked yet';
            return verifyOn === 'save' ? '… changed: checked on save' : '… changed, not checked yet';
        }
    }
}

/** How many of the annotations a check assumed were inferred (its E(p) and I(p)): "✓ verified (3 inferred)". */
export function inferredCount(c: TrackedCheck): number {
    const r = c.result;
    if (!r) return 0;
    return [...r.environment, ...r.invariant].filter(x => x.origin.startsWith('inferred ')).length;
}

/** The number of diagnostics a check shows: one per range and code (as the tracker shows them), infos aside. */
export function shownProblems(c: TrackedCheck): number {
    const keys = new Set<string>();
    for (const s of c.shown) {
        if (s.diagnostic.severity === 3 || s.diagnostic.severity === 4) continue;
        const r = s.diagnostic.range;
        keys.add(`${s.uri}:${r.start.line}:${r.start.character}:${r.end.line}:${r.end.character}:${String(s.diagnostic.code)}`);
    }
    return keys.size;
}

export class CalvinCodeLensProvider implements CodeLensProvider {
    constructor(private readonly services: LangiumServices) { }

    provideCodeLens(document: LangiumDocument, _params: CodeLensParams): CodeLens[] | undefined {
        const service = verificationOf(this.services.shared);
        const uri = document.uri.toString();
        const lenses: CodeLens[] = [];
        for (const c of service.checksOf(uri)) {
            const title = c.plan.kind === 'init' ? `${lensTitle(c, service.settings.verifyOn)} (initialization)` : lensTitle(c, service.settings.verifyOn);
            const range = c.plan.kind === 'init' ? initLensRange(document, c.plan.range, service.inferredAnnotations(uri)) : c.plan.range;
            if (range) lenses.push({ range: lspRange(range), command: { title, command: COMMANDS.runCheck, arguments: [uri, c.plan.key] } });
        }
        // Methods without abstraction: which checks cover them (they are inlined there).
        const all = service.programChecksOf(uri);
        for (const m of service.methodsWithoutAbstraction(uri)) {
            const by = all.filter(c => c.plan.inlines.includes(m.id)).map(c => c.plan.name);
            const title = by.length > 0 ? `covered by ${by.join(', ')} (inlined there)` : 'not checked: no thread reaches it (give it an abstraction or call it from a thread)';
            lenses.push({ range: lspRange(m.nameRange), command: by.length > 0 ? { title, command: COMMANDS.runFile, arguments: [uri] } : { title, command: '' } });
        }
        return lenses;
    }
}

/**
 * Where the initialization check's lens goes: the check's range, which is its
 * first invariant clause or, for an inferred invariant, the declaration above
 * which `calvin infer` writes it (the service plans it there; calvin/checkStatus
 * gives the same range). Never over a statement: a range that is neither is
 * replaced by the declaration of this file's first inferred invariant, or the
 * lens is not shown.
 */
function initLensRange(document: LangiumDocument, range: Range, inferred: InferredAnnotation[]): Range | undefined {
    const root = document.parseResult.value.$cstNode;
    const leaf = root ? CstUtils.findLeafNodeAtOffset(root, document.textDocument.offsetAt({ line: range.startLine, character: range.startChar })) : undefined;
    if (leaf && AstUtils.getContainerOfType(leaf.astNode, ast.isInvariantClause)) return range;
    const uri = document.uri.toString();
    const invariants = inferred.filter(a => a.kind === 'invariant' && a.before.file === uri);
    const same = (r: Range) => r.file === range.file && r.startLine === range.startLine && r.startChar === range.startChar;
    return (invariants.find(a => same(a.before)) ?? invariants[0])?.before;
}

export class CalvinCommandHandler extends AbstractExecuteCommandHandler {
    constructor(private readonly shared: LangiumSharedServices) {
        super();
    }

    registerCommands(accept: ExecuteCommandAcceptor): void {
        const service = () => verificationOf(this.shared);
        accept(COMMANDS.runCheck, async ([uri, key, timeLimitMs]) => service().verifyCheck(String(uri), String(key), typeof timeLimitMs === 'number' ? timeLimitMs : undefined));
        accept(COMMANDS.runFile, async ([uri]) => service().verifyFile(String(uri)));
        accept(COMMANDS.cancel, async ([uri]) => ({ cancelled: service().cancelChecks(typeof uri === 'string' ? uri : undefined) }));
        accept(COMMANDS.showCounterexample, async ([uri, diagnostic]) => service().environmentStep(String(uri), diagnostic));
        accept(COMMANDS.showWitness, async ([uri, diagnostic]) => service().witnessMarkdown(String(uri), diagnostic) ?? { markdown: 'No interleaving is known for this diagnostic yet.', steps: [] });
    }
}

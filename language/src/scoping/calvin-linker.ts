import type { LangiumDocument } from 'langium';
import { AstUtils, Cancellation, DefaultLinker, interruptAndCheck } from 'langium';
import { pendingBodyEdit } from '../workspace/incremental.js';

/**
 * Langium's linker; after a body edit (incremental.ts) it links the new body
 * only: the references of the rest keep their targets, which a body cannot
 * change (its locals are visible in it alone; the method keeps its object).
 */
export class CalvinLinker extends DefaultLinker {
    override async link(document: LangiumDocument, cancelToken = Cancellation.CancellationToken.None): Promise<void> {
        const edit = pendingBodyEdit(document);
        if (!edit) return super.link(document, cancelToken);
        for (const node of AstUtils.streamAst(edit.newBody)) {
            await interruptAndCheck(cancelToken);
            AstUtils.streamReferences(node).forEach(ref => this.doLink(ref, document));
        }
    }
}

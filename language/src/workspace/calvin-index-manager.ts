import type { AstNode, LangiumDocument, LangiumSharedCoreServices, ReferenceDescription, ReferenceInfo, Stream, URI } from 'langium';
import { AstUtils, DefaultIndexManager, DocumentState } from 'langium';

type InfoDescriptions = { createInfoDescriptions(refInfo: ReferenceInfo): ReferenceDescription[] };

/**
 * Langium's index, with the references of a document indexed when first
 * asked for (find references, or whether an edit elsewhere affects the
 * document), not on every rebuild: indexing all references of a large file
 * took longer than the rest of an incremental rebuild, and most rebuilds
 * never ask.
 */
export class CalvinIndexManager extends DefaultIndexManager {
    private readonly unindexed = new Map<string, LangiumDocument>();

    constructor(services: LangiumSharedCoreServices) {
        super(services);
    }

    override async updateReferences(document: LangiumDocument): Promise<void> {
        const key = document.uri.toString();
        this.referenceIndex.delete(key);
        this.unindexed.set(key, document);
    }

    override removeReferences(uri: URI): void {
        this.unindexed.delete(uri.toString());
        super.removeReferences(uri);
    }

    override findAllReferences(targetNode: AstNode, astNodePath: string): Stream<ReferenceDescription> {
        for (const key of [...this.unindexed.keys()]) this.indexNow(key);
        return super.findAllReferences(targetNode, astNodePath);
    }

    override isAffected(document: LangiumDocument, changedUris: Set<string>): boolean {
        this.indexNow(document.uri.toString());
        return super.isAffected(document, changedUris);
    }

    private indexNow(key: string): void {
        const document = this.unindexed.get(key);
        if (!document) return;
        this.unindexed.delete(key);
        // A document whose rebuild has reset its links is indexed when it is linked again.
        if (document.state < DocumentState.IndexedReferences) return;
        const provider = this.serviceRegistry.getServices(document.uri).workspace.ReferenceDescriptionProvider as unknown as InfoDescriptions;
        const descriptions: ReferenceDescription[] = [];
        for (const node of AstUtils.streamAst(document.parseResult.value)) {
            for (const refInfo of AstUtils.streamReferences(node)) {
                if (!refInfo.reference.error) descriptions.push(...provider.createInfoDescriptions(refInfo));
            }
        }
        this.referenceIndex.set(key, descriptions);
    }
}

// The text a document's tree was built from. The CST's own text is not it
// when the parser refused the input (too large: an empty tree) or blanked
// part of it (over-deep brackets); a publication compares this one with the
// editor's text to know whether it is about that text.
import type { AstNode } from 'langium';

const texts = new WeakMap<AstNode, string>();

export function recordParsedText(root: AstNode, text: string): void {
    texts.set(root, text);
}

/** The text `root` was parsed from (or, for a tree built elsewhere, its CST's text). */
export function parsedText(root: AstNode): string | undefined {
    return texts.get(root) ?? root.$cstNode?.root.fullText;
}

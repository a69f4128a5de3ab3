import type { AstNode, Properties, ValidationAcceptor } from 'langium';

/** Diagnostic codes of the front end (checking.md, "Diagnostics"). */
export type FrontEndCode = 'syntax' | 'name' | 'type';

/** Report a front-end error on a node (or one of its properties) with a stable code. */
export function error<N extends AstNode>(accept: ValidationAcceptor, code: FrontEndCode, node: N | undefined, message: string, property?: Properties<N>, index?: number): void {
    // A part missing after a syntax error (reported already) has nothing to report on.
    if (!node) return;
    accept('error', message, { node, property, index, code });
}

export function warning<N extends AstNode>(accept: ValidationAcceptor, code: FrontEndCode, node: N | undefined, message: string, property?: Properties<N>): void {
    if (!node) return;
    accept('warning', message, { node, property, code });
}

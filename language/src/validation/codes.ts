import type { AstNode, Properties, ValidationAcceptor } from 'langium';

/** Diagnostic codes of the front end (checking.md, "Diagnostics"). */
export type FrontEndCode = 'syntax' | 'name' | 'type';

/** Report a front-end error on a node (or one of its properties) with a stable code. */
export function error<N extends AstNode>(accept: ValidationAcceptor, code: FrontEndCode, node: N, message: string, property?: Properties<N>, index?: number): void {
    accept('error', message, { node, property, index, code });
}

export function warning<N extends AstNode>(accept: ValidationAcceptor, code: FrontEndCode, node: N, message: string, property?: Properties<N>): void {
    accept('warning', message, { node, property, code });
}

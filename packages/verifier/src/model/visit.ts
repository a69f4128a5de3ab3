import type { Expr } from './program.js';

/** Calls `f` on `e` and on each of its subexpressions, parents first. */
export function visit(e: Expr, f: (e: Expr) => void): void {
    f(e);
    switch (e.kind) {
        case 'field': case 'holder': visit(e.receiver, f); break;
        case 'length': visit(e.array, f); break;
        case 'index': visit(e.array, f); visit(e.index, f); break;
        case 'unary': visit(e.operand, f); break;
        case 'binary': visit(e.left, f); visit(e.right, f); break;
        case 'cond': visit(e.cond, f); visit(e.then, f); visit(e.else, f); break;
        case 'call': if (e.receiver) visit(e.receiver, f); e.args.forEach(a => visit(a, f)); break;
        case 'newArray': visit(e.size, f); break;
        case 'cas': visit(e.target, f); visit(e.expected, f); visit(e.update, f); break;
        case 'old': visit(e.expr, f); break;
        case 'quant': if (e.range_) visit(e.range_, f); visit(e.body, f); break;
        default: break;
    }
}

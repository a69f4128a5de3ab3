import type { Expr } from '../model/program.js';
import type { Vocabulary } from '../heap/vocabulary.js';
import type { Term } from '../smt/term.js';
import type { StateFn } from '../spec/environment.js';
import { translate } from '../spec/translate.js';

export interface Atom {
    text: string;
    build(vocab: Vocabulary, pre: StateFn, tid: Term, obj: Term | undefined): Term;
}

/** The boolean atoms of a guard: the comparisons and boolean reads under its connectives and conditionals. */
export function atomsOf(e: Expr, out: Atom[] = []): Atom[] {
    if (e.kind === 'binary' && (e.op === '&&' || e.op === '||' || e.op === '==>' || e.op === '<==>')) {
        atomsOf(e.left, out);
        atomsOf(e.right, out);
    } else if (e.kind === 'unary' && e.op === '!') {
        atomsOf(e.operand, out);
    } else if (e.kind === 'cond') {
        atomsOf(e.cond, out);
        atomsOf(e.then, out);
        atomsOf(e.else, out);
    } else if (e.type.kind === 'boolean' && e.kind !== 'bool') {
        out.push({
            text: exprText(e),
            build: (vocab, pre, tid, obj) => translate(e, {
                vocab, state: n => pre(n), local: id => { throw new Error(`local ${id} in a guard`); }, thisTerm: obj, tid,
            }),
        });
    }
    return out;
}

/** A compact rendering of an expression (for hover and messages). */
export function exprText(e: Expr): string {
    switch (e.kind) {
        case 'int': return e.value;
        case 'bool': return String(e.value);
        case 'null': return 'null';
        case 'this': return 'this';
        case 'tid': return 'tid';
        case 'nondet': return 'nondet()';
        case 'threadId': return e.thread;
        case 'var': return e.name;
        case 'global': return e.field + (e.primed ? "'" : '');
        case 'field': return `${exprText(e.receiver)}.${e.field.split('.').pop()}${e.primed ? "'" : ''}`;
        case 'holder': return `${exprText(e.receiver)}.holder${e.primed ? "'" : ''}`;
        case 'length': return `${exprText(e.array)}.length`;
        case 'index': return `${exprText(e.array)}[${exprText(e.index)}]${e.primed ? "'" : ''}`;
        case 'unary': return `${e.op}${exprText(e.operand)}`;
        case 'binary': return `${exprText(e.left)} ${e.op} ${exprText(e.right)}`;
        case 'cond': return `${exprText(e.cond)} ? ${exprText(e.then)} : ${exprText(e.else)}`;
        case 'call': return `${e.receiver ? exprText(e.receiver) + '.' : ''}${e.method.split('.').pop()}(${e.args.map(exprText).join(', ')})`;
        case 'new': return `new ${e.class}()`;
        case 'newArray': return `new ...[${exprText(e.size)}]`;
        case 'cas': return `cas(${exprText(e.target)}, ${exprText(e.expected)}, ${exprText(e.update)})`;
        case 'old': return `\\old(${exprText(e.expr)})`;
        case 'result': return '\\result';
        case 'quant': return `(\\${e.quantifier} ${e.variable.name}; ...)`;
    }
}

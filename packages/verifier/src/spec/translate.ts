import type { Expr } from '../model/program.js';
import { elemsVar, HOLDER, lengthOf, sortOfType, typeKey, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import { visit } from '../model/visit.js';
import { expandSmallIntRange } from '../smt/int-range.js';

/**
 * How names of an annotation (or of a side-effect-free code expression) are
 * read: the states for unprimed and primed names, locals, `this`, `tid`,
 * `\result` and `\old`.
 */
export interface TrContext {
    vocab: Vocabulary;
    /** The state unprimed names are read in (undefined: the current state). */
    pre?: string;
    /** Primed names are allowed (an action), and read in state `post` (undefined: the current state). */
    twoState?: boolean;
    post?: string;
    local(id: string): Term;
    thisTerm?: Term;
    tid: Term;
    result?: Term;
    /** The context for `\old(e)`: the state at method entry. */
    old?: TrContext;
}


export class UnsupportedInAnnotation extends Error { }

/** Translate a pure expression to a term. Calls, `new`, `cas`, `nondet` are not pure (the front end rejects them in annotations). */
export function translate(e: Expr, ctx: TrContext): Term {
    const tr = (x: Expr) => translate(x, ctx);
    const stateOf = (primed: boolean): string | undefined => {
        if (!primed) return ctx.pre;
        if (!ctx.twoState) throw new UnsupportedInAnnotation('primed names are only allowed in actions');
        return ctx.post;
    };
    switch (e.kind) {
        case 'int': return T.int(BigInt(e.value));
        case 'bool': return T.bool(e.value);
        case 'null': return T.NULL;
        case 'this':
            if (!ctx.thisTerm) throw new UnsupportedInAnnotation(`'this' has no value here`);
            return ctx.thisTerm;
        case 'tid': return ctx.tid;
        case 'threadId': return T.int(e.id);
        case 'var': return ctx.local(e.id);
        case 'global': return ctx.vocab.read(ctx.vocab.varOfField(e.field), [], stateOf(e.primed));
        case 'field': return ctx.vocab.read(ctx.vocab.varOfField(e.field), [tr(e.receiver)], stateOf(e.primed));
        case 'holder': return ctx.vocab.read(HOLDER, [tr(e.receiver)], stateOf(e.primed));
        case 'length': return lengthOf(tr(e.array));
        case 'index': {
            const elemSort = e.type.kind === 'null' ? 'Ref' : sortOfType(e.type);
            return ctx.vocab.read(elemsVar(elemSort), [tr(e.array), tr(e.index)], stateOf(e.primed));
        }
        case 'unary': return e.op === '!' ? T.not(tr(e.operand)) : T.neg(tr(e.operand));
        case 'binary': return binary(e.op, tr(e.left), tr(e.right));
        case 'cond': return T.ite(tr(e.cond), tr(e.then), tr(e.else));
        case 'old':
            if (!ctx.old) throw new UnsupportedInAnnotation(`'\\old' has no pre-state here`);
            return translate(e.expr, ctx.old);
        case 'result':
            if (!ctx.result) throw new UnsupportedInAnnotation(`'\\result' has no value here`);
            return ctx.result;
        case 'quant': {
            const name = `q!${e.variable.name}`;
            const sort = sortOfType(e.variable.type);
            const bound = T.v(name, sort);
            const inner: TrContext = { ...ctx, local: id => (id === e.variable.id ? bound : ctx.local(id)) };
            const range = e.range_ ? translate(e.range_, inner) : T.TRUE;
            const body = translate(e.body, inner);
            const vars = [{ name, sort, type: typeKey(e.variable.type) }];
            // (over a small constant range of int: its instances, no quantifier for Z3 to instantiate)
            return expandSmallIntRange(e.quantifier === 'forall' ? T.forall(vars, T.implies(range, body)) : T.exists(vars, T.and(range, body)));
        }
        case 'call': case 'new': case 'newArray': case 'cas': case 'nondet':
            throw new UnsupportedInAnnotation(`'${e.kind}' is not allowed in a specification`);
    }
}

export function binary(op: string, l: Term, r: Term): Term {
    switch (op) {
        case '+': return T.arith('+', l, r);
        case '-': return T.arith('-', l, r);
        case '*': return T.arith('*', l, r);
        case '/': return T.call('jdiv', 'Int', l, r);
        case '%': return T.call('jmod', 'Int', l, r);
        case '<': case '<=': case '>': case '>=': return T.cmp(op, l, r);
        case '==': return T.eq(l, r);
        case '!=': return T.ne(l, r);
        case '&&': return T.and(l, r);
        case '||': return T.or(l, r);
        case '==>': return T.implies(l, r);
        case '<==>': return T.iff(l, r);
    }
    throw new Error(`unknown operator ${op}`);
}

/** Does the expression mention `this` (explicitly, or through an instance field or holder of this)? */
export function mentionsThis(e: Expr): boolean {
    let found = false;
    visit(e, x => { if (x.kind === 'this') found = true; });
    return found;
}

/** Does the expression mention a primed name? */
export function hasPrime(e: Expr): boolean {
    let found = false;
    visit(e, x => { if ((x.kind === 'global' || x.kind === 'field' || x.kind === 'holder' || x.kind === 'index') && x.primed) found = true; });
    return found;
}

/** State variables an expression mentions, split by primed/unprimed. */
export function stateVarsOf(e: Expr, vocab: Vocabulary): { pre: Set<string>; post: Set<string> } {
    const pre = new Set<string>(), post = new Set<string>();
    visit(e, x => {
        const add = (name: string, primed: boolean) => (primed ? post : pre).add(name);
        if (x.kind === 'global' || x.kind === 'field') add(vocab.varOfField(x.field), x.primed);
        else if (x.kind === 'holder') add(HOLDER, x.primed);
        else if (x.kind === 'index') add(elemsVar(x.type.kind === 'null' ? 'Ref' : sortOfType(x.type)), x.primed);
    });
    return { pre, post };
}

function paren(e: Expr): string {
    return e.kind === 'binary' || e.kind === 'cond' ? `(${exprText(e)})` : exprText(e);
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
        case 'unary': return `${e.op}${paren(e.operand)}`;
        case 'binary': return `${paren(e.left)} ${e.op} ${paren(e.right)}`;
        case 'cond': return `${paren(e.cond)} ? ${paren(e.then)} : ${paren(e.else)}`;
        case 'call': return `${e.receiver ? exprText(e.receiver) + '.' : ''}${e.method.split('.').pop()}(${e.args.map(exprText).join(', ')})`;
        case 'new': return `new ${e.class}()`;
        case 'newArray': return `new ...[${exprText(e.size)}]`;
        case 'cas': return `cas(${exprText(e.target)}, ${exprText(e.expected)}, ${exprText(e.update)})`;
        case 'old': return `\\old(${exprText(e.expr)})`;
        case 'result': return '\\result';
        case 'quant': return `(\\${e.quantifier} ${e.variable.name}; ...)`;
    }
}

import type { Expr } from '../model/program.js';
import { ALLOC, DTYPE, elemsVar, HOLDER, LEN, OWNER, sortOfType, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';

/**
 * How names of an annotation (or of a side-effect-free code expression) are
 * read: the state before (unprimed) and after (primed) the step, locals,
 * `this`, `tid`, `\result` and `\old`.
 */
export interface TrContext {
    vocab: Vocabulary;
    /** A state variable's term: `post` for primed names. */
    state(name: string, post: boolean): Term;
    local(id: string): Term;
    thisTerm?: Term;
    tid: Term;
    result?: Term;
    /** The context for `\old(e)`: the state at method entry. */
    old?: TrContext;
}

/** Wraps a context so that some locals (quantified variables) are bound to given terms. */
function withLocals(ctx: TrContext, bound: Map<string, Term>): TrContext {
    return { ...ctx, local: id => bound.get(id) ?? ctx.local(id) };
}

let quantCounter = 0;

export class UnsupportedInAnnotation extends Error { }

/** Translate a pure expression to a term. Calls, `new`, `cas`, `nondet` are not pure (the front end rejects them in annotations). */
export function translate(e: Expr, ctx: TrContext): Term {
    const tr = (x: Expr) => translate(x, ctx);
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
        case 'global': return ctx.state(ctx.vocab.varOfField(e.field), e.primed);
        case 'field': return T.select(ctx.state(ctx.vocab.varOfField(e.field), e.primed), tr(e.receiver));
        case 'holder': return T.select(ctx.state(HOLDER, e.primed), tr(e.receiver));
        case 'length': return T.call(LEN, 'Int', tr(e.array));
        case 'index': {
            const elemSort = e.type.kind === 'null' ? 'Ref' : sortOfType(e.type);
            return T.select(T.select(ctx.state(elemsVar(elemSort), e.primed), tr(e.array)), tr(e.index));
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
            const name = `q!${e.variable.name}!${quantCounter++}`;
            const sort = sortOfType(e.variable.type);
            const bound = T.v(name, sort);
            const inner = withLocals(ctx, new Map([[e.variable.id, bound]]));
            const range = e.range_ ? translate(e.range_, inner) : T.TRUE;
            const body = translate(e.body, inner);
            return e.quantifier === 'forall'
                ? T.forall([{ name, sort }], T.implies(range, body))
                : T.exists([{ name, sort }], T.and(range, body));
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

/** State variables an expression mentions, split by primed/unprimed. */
export function stateVarsOf(e: Expr, vocab: Vocabulary): { pre: Set<string>; post: Set<string> } {
    const pre = new Set<string>(), post = new Set<string>();
    visit(e, x => {
        const add = (name: string, primed: boolean) => (primed ? post : pre).add(name);
        if (x.kind === 'global') add(vocab.varOfField(x.field), x.primed);
        else if (x.kind === 'field') add(vocab.varOfField(x.field), x.primed);
        else if (x.kind === 'holder') add(HOLDER, x.primed);
        else if (x.kind === 'index') add(elemsVar(x.type.kind === 'null' ? 'Ref' : sortOfType(x.type)), x.primed);
    });
    return { pre, post };
}

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
    }
}

/** Published objects of a class: the objects class invariants and environment clauses range over. */
export function publishedOfClass(ctx: { state(name: string, post: boolean): Term }, vocab: Vocabulary, className: string, o: Term): Term {
    return T.and(
        T.select(ctx.state(ALLOC, false), o),
        T.eq(T.select(ctx.state(OWNER, false), o), T.int(0)),
        T.eq(T.call(DTYPE, 'Int', o), T.int(vocab.typeId({ kind: 'class', name: className }))),
    );
}

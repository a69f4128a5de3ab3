// What the field initializers tell about every object a program can reach:
// the fields that keep their initial value keep the initializer's constant,
// or a non-null object or array of its own (`madeFacts`).
import { append } from '../smt/append.js';
import type { Expr, Type } from '../model/program.js';
import { lengthOf, madeFacts, type Vocabulary } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import { translate } from './translate.js';

/**
 * What the field initializers of an object's class tell about it for ever:
 * the fields that keep their initial value (final, or written by no thread
 * after initialization) and whose initializer is a constant, a new array of
 * constant size, or a new object. (Every object a program can reach has
 * run its initializers: `new` publishes nothing before they finish.)
 */
export function initializedFacts(vocab: Vocabulary, o: Term, type: Type): Term {
    if (type.kind !== 'class') return T.TRUE;
    const cls = vocab.classes.get(type.name);
    if (!cls) return T.TRUE;
    const facts: Term[] = [];
    for (const f of cls.fields) {
        if (f.isStatic || !vocab.stableFields.has(f.id)) continue;
        const value = vocab.read(vocab.varOfField(f.id), [o]);
        const init = f.init;
        if (!init) facts.push(T.eq(value, defaultValue(f.type)));
        else if (init.kind === 'new') facts.push(T.ne(value, T.NULL), madeFacts(vocab, value, o, f.id));
        else if (init.kind === 'newArray') {
            const size = constantTerm(init.size, vocab);
            append(facts, [T.ne(value, T.NULL), madeFacts(vocab, value, o, f.id)], (size ? [T.eq(lengthOf(value), size)] : []));
        } else {
            const c = constantTerm(init, vocab);
            if (c) facts.push(T.eq(value, c));
        }
    }
    return facts.length === 0 ? T.TRUE : T.implies(T.ne(o, T.NULL), T.and(...facts));
}

/** An initializer's value when it reads no state (a literal, `null`, arithmetic over them). */
function constantTerm(e: Expr, vocab: Vocabulary): Term | undefined {
    try {
        const t = translate(e, { vocab, tid: T.v('tid', 'Int'), local: () => { throw new Error('not a constant'); } });
        return T.readsOf(t).length === 0 && [...T.freeVars(t)].every(v => v === 'null') ? t : undefined;
    } catch {
        return undefined;
    }
}

export function defaultValue(t: Type): Term {
    switch (t.kind) {
        case 'int': return T.int(0);
        case 'boolean': return T.FALSE;
        default: return T.NULL;
    }
}

import type { Clause, Expr, FieldModel } from '../model/program.js';
import type { Cmd, OpCmd } from '../il/il.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import type { VDiagnostic } from '../report/result.js';
import { visit } from '../model/visit.js';
import type { BoundedProgram } from './program.js';
import { sameRange } from './types.js';

/**
 * When no real execution reaches a failure, the modular check failed on an
 * assumption about the other threads (issue 14): this names the annotations
 * it relied on — the related clauses of the diagnostic, and the protection
 * (writable_if, environment clauses, invariants) of the fields its message
 * and counterexample mention.
 */
export function tooWeak(d: VDiagnostic, bp: BoundedProgram): string {
    const vocab = bp.ctx.vocab;
    const program = vocab.program;
    const names: string[] = [];
    const add = (s: string) => { if (!names.includes(s)) names.push(s); };
    const clauses: Array<{ kind: string; clause: Clause }> = [
        ...program.invariants.map(c => ({ kind: 'invariant', clause: c })),
        ...program.classes.flatMap(k => k.invariants.map(c => ({ kind: `invariant of class ${k.name}`, clause: c }))),
        ...program.environments.map(c => ({ kind: 'environment', clause: c })),
        ...program.classes.flatMap(k => k.environments.map(c => ({ kind: `environment of class ${k.name}`, clause: c }))),
    ];
    const fields = [...vocab.fields.values()];
    for (const r of d.related) {
        const c = clauses.find(x => sameRange(x.clause.range, r.range));
        if (c) add(`${c.kind} '${c.clause.text}'`);
        const f = fields.find(x => x.writableIf.some(w => sameRange(w.range, r.range)));
        if (f) add(`writable_if '${f.writableIf.map(w => w.text).join(' && ')}' of ${f.id}`);
        const m = vocab.allMethods().find(x => x.abstraction && sameRange(x.abstraction.range, r.range));
        if (m) add(`the abstraction of '${m.name}'`);
    }
    // the fields the message and the counterexample name, and those the failing check's values come from: what protects them
    const text = [d.message, ...(d.counterexample?.values.map(v => v.name) ?? []), ...(d.counterexample?.notes ?? [])].join(' ');
    const mentioned = fields.filter(f => new RegExp(`(^|[^\\w.])${escape(f.name)}(\\[\\])?($|[^\\w])`).test(text));
    const read = readsBehind(d, bp);
    for (const f of fields) if (read.has(vocab.varOfField(f.id)) && !mentioned.includes(f)) mentioned.push(f);
    for (const f of mentioned) {
        for (const p of protection(f, clauses, bp)) add(p);
    }
    // (no annotation to name: what is missing is one the program does not have)
    if (names.length === 0) return '; the check may need an annotation the program does not have (an invariant about the values it reads, or a loop invariant of a loop before it)';
    return `; the failure may come from an annotation that is too weak (or need larger bounds): ${names.join('; ')}`;
}

/**
 * The state variables whose values reach the failing check of a diagnostic
 * (through the locals of the bounded program's threads): what the check
 * assumed of the other threads is their protection.
 */
function readsBehind(d: VDiagnostic, bp: BoundedProgram): Set<string> {
    const defs = new Map<string, Term[]>();
    const conds: Term[] = [];
    const visitOp = (cs: OpCmd[]) => {
        for (const c of cs) {
            if (c.k === 'local') defs.set(c.var, [...(defs.get(c.var) ?? []), c.value]);
            else if (c.k === 'assert' && c.check.code === d.code && sameRange(c.check.range, d.range)) conds.push(c.cond);
            else if (c.k === 'if') { visitOp(c.then); visitOp(c.else); }
        }
    };
    const visitCmds = (cs: Cmd[]) => {
        for (const c of cs) {
            if (c.k === 'local') defs.set(c.var, [...(defs.get(c.var) ?? []), c.value]);
            else if (c.k === 'op') visitOp(c.op.body);
            else if ((c.k === 'checkLocal' || c.k === 'checkState') && c.check.code === d.code && sameRange(c.check.range, d.range)) conds.push(c.cond);
            else if (c.k === 'if') { visitCmds(c.then); visitCmds(c.else); }
            else if (c.k === 'loop' || c.k === 'scope') visitCmds(c.body);
        }
    };
    for (const t of bp.threads) visitCmds(t.body);
    const maps = new Set<string>();
    const seen = new Set<string>();
    const todo = [...conds];
    while (todo.length > 0) {
        const t = todo.pop()!;
        T.mapsOf(t, maps);
        for (const v of T.freeVars(t)) {
            if (seen.has(v)) continue;
            seen.add(v);
            todo.push(...(defs.get(v) ?? []));
        }
    }
    return maps;
}

function protection(f: FieldModel, clauses: Array<{ kind: string; clause: Clause }>, bp: BoundedProgram): string[] {
    const out: string[] = [];
    // a final field, or one no thread writes (inferred `false`): nothing another thread does can be assumed too weakly
    if (f.isFinal) return out;
    if (f.writableIf.length > 0) {
        const what = f.writableIf.every(w => w.inferred) ? 'the inferred protection' : 'writable_if';
        out.push(`${what} '${f.writableIf.map(w => w.text).join(' && ')}' of ${f.id}`);
    }
    else {
        const g = bp.ctx.spec.guards.get(f.id);
        if (g?.inferred && g.inferred.writers.length === 0 && g.clauses.length === 0) return out;
        if (g?.inferred) out.push(`the inferred protection '${g.inferred.text}' of ${f.id}`);
    }
    for (const c of clauses) if (mentions(c.clause.expr, f.id)) out.push(`${c.kind} '${c.clause.text}'`);
    if (out.length === 0) out.push(`${f.id} (no annotation protects it: any thread may write it at any time)`);
    return out;
}

function mentions(e: Expr, field: string): boolean {
    let found = false;
    visit(e, x => { if ((x.kind === 'global' || x.kind === 'field') && x.field === field) found = true; });
    return found;
}

function escape(s: string): string {
    return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

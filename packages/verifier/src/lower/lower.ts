import type { AbstractionModel, Clause, Expr, FieldModel, MethodModel, Range, Stmt, Type } from '../model/program.js';
import { typeString } from '../model/program.js';
import {
    ALLOC, DTYPE, elemsVar, HOLDER, LEN, OWNER, sortOfType, type Vocabulary,
} from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Sort, Term } from '../smt/term.js';
import { binary, translate, type TrContext } from '../spec/translate.js';
import type { Access, AtomicOp, CallFrame, CheckInfo, Cmd, LocalDecl, Loc, OpCmd, OpKind } from '../il/il.js';
import { preName } from '../il/il.js';
import { abstractionActions } from '../spec/abstraction.js';

/** Thrown when a program uses something the verifier cannot handle; reported, never ignored. */
export class LoweringError extends Error {
    constructor(message: string, readonly range?: Range) { super(message); }
}

/** What a lowered body runs as: a thread, a method checked against its abstraction, or the field initializers. */
export interface LowerTarget {
    kind: 'thread' | 'method' | 'init';
    /** The `tid` term (a constant of the check). */
    tid: Term;
}

interface MethodFrame {
    exitLabel: string;
    resultVar?: string;
    /** Monitors held by synchronized blocks/methods of this frame, innermost last: lock local and saved holder. */
    monitors: Array<{ lock: Term; prev: string; range: Range; loopDepth: number }>;
    thisTerm?: Term;
    /** model variable id → local name */
    vars: Map<string, string>;
    chain: CallFrame[];
    loops: Array<{ breakLabel: string; continueLabel: string; monitorDepth: number }>;
    method?: MethodModel;
}

const MAX_INLINE_DEPTH = 24;

/**
 * Lowering (pipeline stage 1): the typed program model to the intermediate
 * language of atomic operations (language.md §3): one atomic step per shared
 * read or write, local computation between steps, `cas`, `atomic`, monitor
 * enter/exit and allocation as single steps, implicit null/bounds/division
 * checks as asserted preconditions of the step that needs them.
 */
export class Lowerer {
    private opIds = 0;
    private labels = 0;
    private temps = 0;
    private readonly locals = new Map<string, LocalDecl>();
    private pendingWitness: number | undefined;
    private inlineCount = 0;

    constructor(private readonly vocab: Vocabulary, private readonly target: LowerTarget) { }

    get declaredLocals(): Map<string, LocalDecl> {
        return this.locals;
    }

    // ------------------------------------------------------------ entry points

    /** The field initializers of the program, in textual order (the store `Init`). */
    lowerInit(): Cmd[] {
        const frame = this.newFrame([], undefined, undefined);
        const cmds: Cmd[] = [];
        for (const g of this.vocab.program.globals) {
            if (!g.init) continue;
            const { cmds: c, term } = this.expr(g.init, frame);
            cmds.push(...c);
            cmds.push(this.op('write', g.range, frame, [this.access({ kind: 'global', var: this.vocab.varOfField(g.id) }, true, g, g.range, g.name)],
                [{ k: 'set', var: this.vocab.varOfField(g.id), value: term }, ...this.publishIfRef(g.type, T.TRUE)]));
        }
        return cmds;
    }

    /** A thread body. */
    lowerThread(body: Stmt[]): Cmd[] {
        const frame = this.newFrame([], undefined, undefined);
        return [{ k: 'scope', label: frame.exitLabel, body: this.stmts(body, frame) }];
    }

    /** A method body checked on its own (against its abstraction): parameters (locals named by `params`) and `this` are inputs. */
    lowerMethodBody(m: MethodModel, thisTerm: Term | undefined, params: string[], resultVar: string | undefined): Cmd[] {
        const frame = this.newFrame([], thisTerm, m);
        frame.resultVar = resultVar;
        m.params.forEach((p, i) => frame.vars.set(p.id, params[i]));
        const body = this.withMonitor(m, frame, thisTerm, () => this.stmts(m.body, frame));
        return [{ k: 'scope', label: frame.exitLabel, body }];
    }

    // ------------------------------------------------------------ helpers

    private newFrame(chain: CallFrame[], thisTerm: Term | undefined, method: MethodModel | undefined): MethodFrame {
        return { exitLabel: this.label('exit'), monitors: [], thisTerm, vars: new Map(), chain, loops: [], method };
    }

    private label(kind: string): string {
        return `${kind}${this.labels++}`;
    }

    /** A fresh local of the given sort. */
    fresh(hint: string, sort: Sort): string {
        const name = `l~${hint}~${this.temps++}`;
        this.locals.set(name, { name, sort });
        return name;
    }

    private localTerm(name: string): Term {
        const d = this.locals.get(name);
        if (!d) throw new Error(`undeclared local ${name}`);
        return T.v(name, d.sort);
    }

    private access(loc: Loc, write: boolean, field: FieldModel | undefined, range: Range, text: string, sync = false): Access {
        return { loc, write, sync: sync || (field?.isVolatile ?? false), field, range, text };
    }

    private op(kind: OpKind, range: Range, frame: MethodFrame, accesses: Access[], body: OpCmd[], label?: string): Cmd {
        const op: AtomicOp = {
            id: this.opIds++, kind, range, chain: frame.chain, accesses, body, label,
            init: this.target.kind === 'init' ? true : undefined,
        };
        if (this.pendingWitness !== undefined && kind !== 'read') op.witness = this.pendingWitness;
        return { k: 'op', op };
    }

    private check(code: CheckInfo['code'], range: Range, message: string, frame: MethodFrame, show?: Array<[string, Term]>): CheckInfo {
        return { code, range, message, chain: frame.chain, show };
    }

    /** Context to translate pure code/annotation expressions: state is current, locals through the frame. */
    private ctx(frame: MethodFrame, extra?: Partial<TrContext>): TrContext {
        return {
            vocab: this.vocab,
            state: (name, post) => {
                if (post) throw new LoweringError('primed names are only allowed in actions');
                return T.v(name, this.vocab.sortOfVar(name));
            },
            local: id => {
                const name = frame.vars.get(id);
                if (!name) throw new LoweringError(`unknown variable ${id}`);
                return this.localTerm(name);
            },
            thisTerm: frame.thisTerm,
            tid: this.target.tid,
            ...extra,
        };
    }

    private stateTerm(name: string): Term {
        return T.v(name, this.vocab.sortOfVar(name));
    }

    // ------------------------------------------------------------ statements

    stmts(stmts: Stmt[], frame: MethodFrame): Cmd[] {
        const out: Cmd[] = [];
        for (const s of stmts) {
            if (s.kind === 'witness') {
                this.pendingWitness = s.step;
                continue;
            }
            out.push(...this.stmt(s, frame));
            this.pendingWitness = undefined;
        }
        return out;
    }

    private stmt(s: Stmt, frame: MethodFrame): Cmd[] {
        switch (s.kind) {
            case 'block': return this.stmts(s.body, frame);
            case 'local': {
                const name = this.fresh(s.decl.id, sortOfType(s.decl.type));
                frame.vars.set(s.decl.id, name);
                if (!s.init) return [{ k: 'local', var: name, value: defaultValue(s.decl.type) }];
                const { cmds, term } = this.expr(s.init, frame);
                return [...cmds, { k: 'local', var: name, value: term }];
            }
            case 'assign': return this.assign(s, frame);
            case 'expr': return this.expr(s.expr, frame).cmds;
            case 'if': {
                const { cmds, term } = this.expr(s.cond, frame);
                return [...cmds, { k: 'if', cond: term, then: this.stmts(s.then, frame), else: this.stmts(s.else, frame) }];
            }
            case 'while': return this.loop(s, frame);
            case 'return': {
                const out: Cmd[] = [];
                if (s.value) {
                    const { cmds, term } = this.expr(s.value, frame);
                    out.push(...cmds);
                    if (frame.resultVar) out.push({ k: 'local', var: frame.resultVar, value: term });
                }
                out.push(...this.releaseAll(frame, 0), { k: 'exit', label: frame.exitLabel, range: s.range });
                return out;
            }
            case 'break': case 'continue': {
                const loop = frame.loops[frame.loops.length - 1];
                if (!loop) throw new LoweringError(`'${s.kind}' outside a loop`, s.range);
                return [...this.releaseAll(frame, loop.monitorDepth), s.kind === 'break'
                    ? { k: 'break', label: loop.breakLabel }
                    : { k: 'exit', label: loop.continueLabel }];
            }
            case 'sync': {
                const { cmds, term } = this.expr(s.lock, frame);
                const lock = this.fresh('lock', 'Ref');
                const out: Cmd[] = [...cmds, { k: 'local', var: lock, value: term }];
                out.push(...this.enter(this.localTerm(lock), s.range, frame));
                out.push(...this.stmts(s.body, frame));
                out.push(...this.exitMonitor(frame, s.closeRange));
                return out;
            }
            case 'atomic': return [this.atomicBlock(s.body, s.range, frame)];
            case 'assert': {
                if (s.annotation) {
                    return [{ k: 'checkState', cond: translate(s.cond, this.ctx(frame)), check: this.check('assert', s.range, `assertion '${s.text}' may fail`, frame) }];
                }
                const { cmds, term } = this.expr(s.cond, frame);
                return [...cmds, { k: 'checkLocal', cond: term, check: this.check('assert', s.range, `assertion '${s.text}' may fail`, frame) }];
            }
            case 'assume': return [{ k: 'assumeState', cond: translate(s.cond, this.ctx(frame)) }];
            case 'set': return [this.ghostSet(s.target, s.value, s.range, frame)];
            case 'witness': return [];
        }
    }

    private loop(s: Extract<Stmt, { kind: 'while' }>, frame: MethodFrame): Cmd[] {
        const breakLabel = this.label('loop');
        const continueLabel = this.label('continue');
        frame.loops.push({ breakLabel, continueLabel, monitorDepth: frame.monitors.length });
        const invariants = s.invariants.map(c => ({
            cond: translate(c.expr, this.ctx(frame)),
            check: { ...this.check('loop-invariant', c.range, `loop invariant '${c.text}' may not hold`, frame) },
        }));
        const { cmds: condCmds, term: cond } = this.expr(s.cond, frame);
        const body = this.stmts(s.body, frame);
        const update = this.stmts(s.update, frame);
        frame.loops.pop();
        return [{
            k: 'loop', label: breakLabel, invariants, range: s.range,
            body: [...condCmds, { k: 'if', cond: T.not(cond), then: [{ k: 'break', label: breakLabel }], else: [] },
                { k: 'scope', label: continueLabel, body }, ...update],
        }];
    }

    // ------------------------------------------------------------ monitors

    private enter(lock: Term, range: Range, frame: MethodFrame): Cmd[] {
        const prev = this.fresh('prevHolder', 'Int');
        const holder = this.stateTerm(HOLDER);
        frame.monitors.push({ lock, prev, range, loopDepth: frame.loops.length });
        return [this.op('enter', range, frame, [this.access({ kind: 'holder', obj: lock }, true, undefined, range, 'synchronized', true)], [
            { k: 'assert', cond: T.ne(lock, T.NULL), check: this.check('null', range, 'the lock of synchronized may be null', frame) },
            // block until the monitor is free or already ours (reentrant)
            { k: 'assume', cond: T.or(T.eq(T.select(holder, lock), T.int(0)), T.eq(T.select(holder, lock), this.target.tid)) },
            { k: 'set', var: prev, value: T.select(holder, lock) },
            { k: 'set', var: HOLDER, value: T.store(holder, lock, this.target.tid) },
        ], 'monitor enter')];
    }

    /** Release the innermost monitor (end of a synchronized block). */
    private exitMonitor(frame: MethodFrame, range: Range): Cmd[] {
        const m = frame.monitors.pop();
        if (!m) throw new Error('monitor stack underflow');
        return [this.releaseOp(m.lock, m.prev, range, frame)];
    }

    private releaseOp(lock: Term, prev: string, range: Range, frame: MethodFrame): Cmd {
        const holder = this.stateTerm(HOLDER);
        return this.op('exit', range, frame, [this.access({ kind: 'holder', obj: lock }, true, undefined, range, 'synchronized', true)], [
            { k: 'set', var: HOLDER, value: T.store(holder, lock, this.localTerm(prev)) },
        ], 'monitor exit');
    }

    /** Releases for leaving the monitors above `depth` (return, break, continue), innermost first; the stack is unchanged. */
    private releaseAll(frame: MethodFrame, depth: number): Cmd[] {
        const out: Cmd[] = [];
        for (let i = frame.monitors.length - 1; i >= depth; i--) {
            const m = frame.monitors[i];
            out.push(this.releaseOp(m.lock, m.prev, m.range, frame));
        }
        return out;
    }

    private withMonitor(m: MethodModel, frame: MethodFrame, thisTerm: Term | undefined, body: () => Cmd[]): Cmd[] {
        if (!m.isSynchronized || !thisTerm) return body();
        const enter = this.enter(thisTerm, m.nameRange, frame);
        const cmds = body();
        const exit = this.exitMonitor(frame, m.endRange);
        return [...enter, ...cmds, ...exit];
    }

    // ------------------------------------------------------------ assignments

    private assign(s: Extract<Stmt, { kind: 'assign' }>, frame: MethodFrame): Cmd[] {
        const t = s.target;
        const out: Cmd[] = [];
        // The value to store, given the old value when needed (compound assignment).
        const compute = (old: Term | undefined): { cmds: Cmd[]; term: Term } => {
            if (s.op === '++' || s.op === '--') return { cmds: [], term: T.arith(s.op === '++' ? '+' : '-', old!, T.int(1)) };
            const v = this.expr(s.value!, frame);
            if (s.op === '=') return v;
            return { cmds: v.cmds, term: T.arith(s.op === '+=' ? '+' : '-', old!, v.term) };
        };
        const compound = s.op !== '=';
        if (t.kind === 'var') {
            const name = frame.vars.get(t.id);
            if (!name) throw new LoweringError(`unknown variable ${t.name}`, t.range);
            const { cmds, term } = compute(compound ? this.localTerm(name) : undefined);
            return [...cmds, { k: 'local', var: name, value: term }];
        }
        // Shared location: evaluate the location's parts, then (for compound) read, then the value, then write.
        const loc = this.location(t, frame, out);
        let old: Term | undefined;
        if (compound) {
            const r = this.readLoc(loc, frame);
            out.push(...r.cmds);
            old = r.term;
        }
        const { cmds, term } = compute(old);
        out.push(...cmds);
        out.push(this.writeLoc(loc, term, s.range, frame));
        return out;
    }

    private ghostSet(target: Expr, value: Expr, range: Range, frame: MethodFrame): Cmd {
        const out: Cmd[] = [];
        const loc = this.location(target, frame, out, true);
        if (out.length > 0) throw new LoweringError('the target of set must be a ghost field of a simple object', range);
        const v = translate(value, this.ctx(frame));
        const w = this.writeLoc(loc, v, range, frame) as Extract<Cmd, { k: 'op' }>;
        w.op.kind = 'ghost';
        return w;
    }

    // ------------------------------------------------------------ locations

    /** A shared location, with the code evaluating its receiver/index appended to `out`. */
    private location(e: Expr, frame: MethodFrame, out: Cmd[], pure = false): LocInfo {
        const evalPart = (x: Expr): Term => {
            if (pure) return translate(x, this.ctx(frame));
            const r = this.expr(x, frame);
            out.push(...r.cmds);
            return r.term;
        };
        switch (e.kind) {
            case 'global': {
                const field = this.vocab.fields.get(e.field)!;
                return { loc: { kind: 'global', var: this.vocab.varOfField(e.field) }, field, type: e.type, range: e.range, text: field.name };
            }
            case 'field': {
                const obj = this.asLocal(evalPart(e.receiver), 'obj', out);
                const field = this.vocab.fields.get(e.field)!;
                return { loc: { kind: 'field', var: this.vocab.varOfField(e.field), obj }, field, type: e.type, range: e.range, text: field.name };
            }
            case 'index': {
                const arr = this.asLocal(evalPart(e.array), 'arr', out);
                const index = this.asLocal(evalPart(e.index), 'idx', out);
                return { loc: { kind: 'elem', var: elemsVar(sortOfType(e.type)), arr, index }, type: e.type, range: e.range, text: 'array element' };
            }
            case 'holder': {
                const obj = evalPart(e.receiver);
                return { loc: { kind: 'holder', obj }, type: e.type, range: e.range, text: 'holder' };
            }
            default:
                throw new LoweringError(`not an assignable location`, e.range);
        }
    }

    /** Keep a computed value in a local so later steps see the value, not a re-evaluation. */
    private asLocal(t: Term, hint: string, out: Cmd[]): Term {
        if (t.t === 'var' || t.t === 'int' || t.t === 'bool') return t;
        const name = this.fresh(hint, T.sortOf(t));
        out.push({ k: 'local', var: name, value: t });
        return this.localTerm(name);
    }

    /** Implicit checks of touching a location: non-null receiver, index in bounds. */
    private locChecks(l: LocInfo, frame: MethodFrame): OpCmd[] {
        const loc = l.loc;
        if (loc.kind === 'field') {
            return [{ k: 'assert', cond: T.ne(loc.obj, T.NULL), check: this.check('null', l.range, `possible null dereference: the object whose '${l.text}' is accessed may be null`, frame) }];
        }
        if (loc.kind === 'elem') {
            const len = T.call(LEN, 'Int', loc.arr);
            return [
                { k: 'assert', cond: T.ne(loc.arr, T.NULL), check: this.check('null', l.range, 'possible null dereference: the array may be null', frame) },
                {
                    k: 'assert', cond: T.and(T.cmp('<=', T.int(0), loc.index), T.cmp('<', loc.index, len)),
                    check: this.check('bounds', l.range, 'possible array index out of bounds', frame, [['index', loc.index], ['length', len]]),
                },
            ];
        }
        if (loc.kind === 'holder') {
            return [{ k: 'assert', cond: T.ne(loc.obj, T.NULL), check: this.check('null', l.range, 'possible null dereference', frame) }];
        }
        return [];
    }

    private locValue(loc: Loc): Term {
        switch (loc.kind) {
            case 'global': return this.stateTerm(loc.var);
            case 'field': return T.select(this.stateTerm(loc.var), loc.obj);
            case 'elem': return T.select(T.select(this.stateTerm(loc.var), loc.arr), loc.index);
            case 'holder': return T.select(this.stateTerm(HOLDER), loc.obj);
            case 'all': throw new Error('a whole map is not a value');
        }
    }

    private locStore(loc: Loc, value: Term): OpCmd {
        switch (loc.kind) {
            case 'global': return { k: 'set', var: loc.var, value };
            case 'field': return { k: 'set', var: loc.var, value: T.store(this.stateTerm(loc.var), loc.obj, value) };
            case 'elem': {
                const m = this.stateTerm(loc.var);
                return { k: 'set', var: loc.var, value: T.store(m, loc.arr, T.store(T.select(m, loc.arr), loc.index, value)) };
            }
            case 'holder': return { k: 'set', var: HOLDER, value: T.store(this.stateTerm(HOLDER), loc.obj, value) };
            case 'all': throw new Error('cannot store a whole map');
        }
    }

    /** A reference read from the heap is null or an allocated object of the static type. */
    private typing(t: Term, type: Type): OpCmd[] {
        if (type.kind !== 'class' && type.kind !== 'array') return [];
        return [{ k: 'assume', cond: T.or(T.eq(t, T.NULL), T.and(T.select(this.stateTerm(ALLOC), t), T.eq(T.call(DTYPE, 'Int', t), T.int(this.vocab.typeId(type))))) }];
    }

    private readLoc(l: LocInfo, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const tmp = this.fresh(`read_${l.text}`, sortOfType(l.type));
        const t = this.localTerm(tmp);
        const cmd = this.op('read', l.range, frame, [this.access(l.loc, false, l.field, l.range, l.text)], [
            ...this.locChecks(l, frame),
            { k: 'set', var: tmp, value: this.locValue(l.loc) },
            ...this.typing(t, l.type),
        ], `read of ${l.text}`);
        return { cmds: [cmd], term: t };
    }

    private writeLoc(l: LocInfo, value: Term, range: Range, frame: MethodFrame): Cmd {
        const priv = l.loc.kind === 'field' ? l.loc.obj : l.loc.kind === 'elem' ? l.loc.arr : undefined;
        return this.op('write', range, frame, [this.access(l.loc, true, l.field, l.range, l.text)], [
            ...this.locChecks(l, frame),
            this.locStore(l.loc, value),
            ...this.publishIfRef(l.type, priv ? T.ne(T.select(this.stateTerm(OWNER), priv), this.target.tid) : T.TRUE),
        ], `write of ${l.text}`);
    }

    /**
     * Storing a reference into a shared location publishes every object the
     * thread has allocated and not yet published (docs/semantics.md).
     */
    private publishIfRef(type: Type, shared: Term): OpCmd[] {
        if (type.kind !== 'class' && type.kind !== 'array' && type.kind !== 'null') return [];
        // During initialization every object is allocated by thread 0, i.e. published already.
        if (this.target.kind === 'init') return [];
        const owner = this.stateTerm(OWNER);
        const r = T.v('r!pub', 'Ref');
        const published = T.lambda('r!pub', 'Ref', T.ite(T.and(shared, T.eq(T.select(owner, r), this.target.tid)), T.int(0), T.select(owner, r)));
        return [{ k: 'set', var: OWNER, value: published }];
    }

    // ------------------------------------------------------------ atomic blocks

    private atomicBlock(body: Stmt[], range: Range, frame: MethodFrame): Cmd {
        const accesses: Access[] = [];
        const cmds = this.atomicStmts(body, frame, accesses);
        return this.op('atomic', range, frame, accesses, cmds, 'atomic block');
    }

    /** Statements of an atomic block run as one step: every read sees the current state. */
    private atomicStmts(body: Stmt[], frame: MethodFrame, accesses: Access[]): OpCmd[] {
        const out: OpCmd[] = [];
        for (const s of body) {
            switch (s.kind) {
                case 'block': out.push(...this.atomicStmts(s.body, frame, accesses)); break;
                case 'local': {
                    const name = this.fresh(s.decl.id, sortOfType(s.decl.type));
                    frame.vars.set(s.decl.id, name);
                    out.push({ k: 'set', var: name, value: s.init ? this.atomicExpr(s.init, frame, accesses, out) : defaultValue(s.decl.type) });
                    break;
                }
                case 'assign': {
                    const t = s.target;
                    const valueOf = (old: Term | undefined): Term => {
                        if (s.op === '++' || s.op === '--') return T.arith(s.op === '++' ? '+' : '-', old!, T.int(1));
                        const v = this.atomicExpr(s.value!, frame, accesses, out);
                        return s.op === '=' ? v : T.arith(s.op === '+=' ? '+' : '-', old!, v);
                    };
                    if (t.kind === 'var') {
                        const name = frame.vars.get(t.id)!;
                        out.push({ k: 'set', var: name, value: valueOf(this.localTerm(name)) });
                        break;
                    }
                    const l = this.atomicLocation(t, frame, accesses, out);
                    out.push(...this.locChecks(l, frame));
                    const value = valueOf(s.op === '=' ? undefined : this.locValue(l.loc));
                    accesses.push(this.access(l.loc, true, l.field, l.range, l.text, true));
                    out.push(this.locStore(l.loc, value));
                    const priv = l.loc.kind === 'field' ? l.loc.obj : l.loc.kind === 'elem' ? l.loc.arr : undefined;
                    out.push(...this.publishIfRef(l.type, priv ? T.ne(T.select(this.stateTerm(OWNER), priv), this.target.tid) : T.TRUE));
                    break;
                }
                case 'if': {
                    const c = this.atomicExpr(s.cond, frame, accesses, out);
                    out.push({ k: 'if', cond: c, then: this.atomicStmts(s.then, frame, accesses), else: this.atomicStmts(s.else, frame, accesses) });
                    break;
                }
                case 'assume': out.push({ k: 'assume', cond: translate(s.cond, this.ctx(frame)) }); break;
                case 'assert': {
                    const c = s.annotation ? translate(s.cond, this.ctx(frame)) : this.atomicExpr(s.cond, frame, accesses, out);
                    out.push({ k: 'assert', cond: c, check: this.check('assert', s.range, `assertion '${s.text}' may fail`, frame) });
                    break;
                }
                case 'set': {
                    const l = this.atomicLocation(s.target, frame, accesses, out);
                    accesses.push(this.access(l.loc, true, l.field, l.range, l.text, true));
                    out.push(this.locStore(l.loc, translate(s.value, this.ctx(frame))));
                    break;
                }
                case 'expr': this.atomicExpr(s.expr, frame, accesses, out); break;
                case 'witness': break;
                default:
                    throw new LoweringError(`'${s.kind}' is not allowed in an atomic block`, s.range);
            }
        }
        return out;
    }

    private atomicLocation(e: Expr, frame: MethodFrame, accesses: Access[], out: OpCmd[]): LocInfo {
        const part = (x: Expr) => this.atomicExpr(x, frame, accesses, out);
        switch (e.kind) {
            case 'global': {
                const field = this.vocab.fields.get(e.field)!;
                return { loc: { kind: 'global', var: this.vocab.varOfField(e.field) }, field, type: e.type, range: e.range, text: field.name };
            }
            case 'field': {
                const field = this.vocab.fields.get(e.field)!;
                return { loc: { kind: 'field', var: this.vocab.varOfField(e.field), obj: part(e.receiver) }, field, type: e.type, range: e.range, text: field.name };
            }
            case 'index':
                return { loc: { kind: 'elem', var: elemsVar(sortOfType(e.type)), arr: part(e.array), index: part(e.index) }, type: e.type, range: e.range, text: 'array element' };
            case 'holder':
                return { loc: { kind: 'holder', obj: part(e.receiver) }, type: e.type, range: e.range, text: 'holder' };
            default:
                throw new LoweringError('not an assignable location', e.range);
        }
    }

    /** An expression inside an atomic block: reads are part of the one step. */
    private atomicExpr(e: Expr, frame: MethodFrame, accesses: Access[], out: OpCmd[]): Term {
        const sub = (x: Expr) => this.atomicExpr(x, frame, accesses, out);
        switch (e.kind) {
            case 'global': case 'field': case 'index': case 'holder': {
                const l = this.atomicLocation(e, frame, accesses, out);
                out.push(...this.locChecks(l, frame));
                accesses.push(this.access(l.loc, false, l.field, l.range, l.text, true));
                return this.locValue(l.loc);
            }
            case 'length': {
                const a = sub(e.array);
                out.push({ k: 'assert', cond: T.ne(a, T.NULL), check: this.check('null', e.range, 'possible null dereference: the array may be null', frame) });
                return T.call(LEN, 'Int', a);
            }
            case 'unary': return e.op === '!' ? T.not(sub(e.operand)) : T.neg(sub(e.operand));
            case 'binary': {
                const l = sub(e.left), r = sub(e.right);
                if (e.op === '/' || e.op === '%') {
                    out.push({ k: 'assert', cond: T.ne(r, T.int(0)), check: this.check('div-zero', e.range, `possible division by zero`, frame) });
                }
                return binary(e.op, l, r);
            }
            case 'cond': return T.ite(sub(e.cond), sub(e.then), sub(e.else));
            case 'nondet': {
                const n = this.fresh('nondet', 'Bool');
                out.push({ k: 'havoc', vars: [n] });
                return this.localTerm(n);
            }
            case 'cas': {
                const l = this.atomicLocation(e.target, frame, accesses, out);
                out.push(...this.locChecks(l, frame));
                const expected = sub(e.expected), update = sub(e.update);
                accesses.push(this.access(l.loc, true, l.field, l.range, l.text, true));
                const ok = this.fresh('cas', 'Bool');
                out.push({ k: 'set', var: ok, value: T.eq(this.locValue(l.loc), expected) });
                out.push({ k: 'if', cond: this.localTerm(ok), then: [this.locStore(l.loc, update)], else: [] });
                return this.localTerm(ok);
            }
            case 'call': case 'new': case 'newArray':
                throw new LoweringError(`'${e.kind === 'call' ? 'calls' : 'new'}' are not supported inside atomic blocks`, e.range);
            default:
                return translate(e, this.ctx(frame));
        }
    }

    // ------------------------------------------------------------ expressions

    /** Code expression: the commands that evaluate it (shared reads as steps) and the term of its value. */
    expr(e: Expr, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        switch (e.kind) {
            case 'int': case 'bool': case 'null': case 'this': case 'tid': case 'threadId': case 'var':
                return { cmds: [], term: translate(e, this.ctx(frame)) };
            case 'global': case 'field': case 'index': case 'holder': {
                const cmds: Cmd[] = [];
                const l = this.location(e, frame, cmds);
                // final fields cannot change after initialization: reading one is not a step that can race
                const r = this.readLoc(l, frame);
                return { cmds: [...cmds, ...r.cmds], term: r.term };
            }
            case 'length': {
                const a = this.expr(e.array, frame);
                const arr = this.asLocal(a.term, 'arr', a.cmds);
                return {
                    cmds: [...a.cmds, { k: 'checkLocal', cond: T.ne(arr, T.NULL), check: this.check('null', e.range, 'possible null dereference: the array may be null', frame) }],
                    term: T.call(LEN, 'Int', arr),
                };
            }
            case 'unary': {
                const o = this.expr(e.operand, frame);
                return { cmds: o.cmds, term: e.op === '!' ? T.not(o.term) : T.neg(o.term) };
            }
            case 'binary': return this.binaryExpr(e, frame);
            case 'cond': {
                const c = this.expr(e.cond, frame);
                const a = this.expr(e.then, frame), b = this.expr(e.else, frame);
                if (a.cmds.length === 0 && b.cmds.length === 0) return { cmds: c.cmds, term: T.ite(c.term, a.term, b.term) };
                const res = this.fresh('cond', T.sortOf(a.term));
                return {
                    cmds: [...c.cmds, { k: 'if', cond: c.term, then: [...a.cmds, { k: 'local', var: res, value: a.term }], else: [...b.cmds, { k: 'local', var: res, value: b.term }] }],
                    term: this.localTerm(res),
                };
            }
            case 'nondet': {
                const n = this.fresh('nondet', 'Bool');
                return { cmds: [{ k: 'havocLocal', vars: [n] }], term: this.localTerm(n) };
            }
            case 'cas': return this.cas(e, frame);
            case 'new': return this.allocObject(e.class, e.range, frame);
            case 'newArray': return this.allocArray(e, frame);
            case 'call': return this.call(e, frame);
            case 'old': case 'result': case 'quant':
                return { cmds: [], term: translate(e, this.ctx(frame)) };
        }
    }

    private binaryExpr(e: Extract<Expr, { kind: 'binary' }>, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const l = this.expr(e.left, frame);
        const r = this.expr(e.right, frame);
        // Short-circuit: the right operand's steps only run when needed.
        if ((e.op === '&&' || e.op === '||' || e.op === '==>') && r.cmds.length > 0) {
            const res = this.fresh('sc', 'Bool');
            const left = this.asLocal(l.term, 'lhs', l.cmds);
            const evalRight: Cmd[] = [...r.cmds, { k: 'local', var: res, value: r.term }];
            const skip: Cmd[] = [{ k: 'local', var: res, value: e.op === '||' ? T.TRUE : e.op === '&&' ? T.FALSE : T.TRUE }];
            const cmds: Cmd[] = [...l.cmds, e.op === '||'
                ? { k: 'if', cond: left, then: skip, else: evalRight }
                : { k: 'if', cond: left, then: evalRight, else: skip }];
            return { cmds, term: this.localTerm(res) };
        }
        const cmds = [...l.cmds];
        const left = r.cmds.length > 0 ? this.asLocal(l.term, 'lhs', cmds) : l.term;
        cmds.push(...r.cmds);
        if (e.op === '/' || e.op === '%') {
            cmds.push({ k: 'checkLocal', cond: T.ne(r.term, T.int(0)), check: this.check('div-zero', e.range, `possible ${e.op === '/' ? 'division' : 'remainder'} by zero`, frame, [['divisor', r.term]]) });
        }
        return { cmds, term: binary(e.op, left, r.term) };
    }

    private cas(e: Extract<Expr, { kind: 'cas' }>, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const cmds: Cmd[] = [];
        const l = this.location(e.target, frame, cmds);
        const ex = this.expr(e.expected, frame);
        cmds.push(...ex.cmds);
        const expected = this.asLocal(ex.term, 'expected', cmds);
        const up = this.expr(e.update, frame);
        cmds.push(...up.cmds);
        const update = this.asLocal(up.term, 'update', cmds);
        const ok = this.fresh('cas', 'Bool');
        const priv = l.loc.kind === 'field' ? l.loc.obj : l.loc.kind === 'elem' ? l.loc.arr : undefined;
        cmds.push(this.op('cas', e.range, frame, [this.access(l.loc, false, l.field, l.range, l.text, true), this.access(l.loc, true, l.field, l.range, l.text, true)], [
            ...this.locChecks(l, frame),
            { k: 'set', var: ok, value: T.eq(this.locValue(l.loc), expected) },
            { k: 'if', cond: this.localTerm(ok), then: [this.locStore(l.loc, update), ...this.publishIfRef(l.type, priv ? T.ne(T.select(this.stateTerm(OWNER), priv), this.target.tid) : T.TRUE)], else: [] },
        ], `cas on ${l.text}`));
        return { cmds, term: this.localTerm(ok) };
    }

    // ------------------------------------------------------------ allocation

    /** A fresh object: not allocated before, private to the allocating thread, default fields, then C's initializers. */
    private allocObject(className: string, range: Range, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const cls = this.vocab.classes.get(className);
        if (!cls) throw new LoweringError(`unknown class ${className}`, range);
        const r = this.fresh(`new_${className}`, 'Ref');
        const obj = this.localTerm(r);
        const body: OpCmd[] = [
            { k: 'havoc', vars: [r] },
            ...this.freshObject(obj, { kind: 'class', name: className }),
        ];
        for (const f of cls.fields.filter(f => !f.isStatic)) {
            body.push({ k: 'set', var: this.vocab.varOfField(f.id), value: T.store(this.stateTerm(this.vocab.varOfField(f.id)), obj, defaultValue(f.type)) });
        }
        const cmds: Cmd[] = [this.op('alloc', range, frame, [], body, `new ${className}()`)];
        // Field initializers run with `this` = the new object (still private: never racy).
        const initFrame: MethodFrame = { ...frame, thisTerm: obj, vars: new Map(), loops: [], monitors: [] };
        for (const f of cls.fields.filter(f => !f.isStatic && f.init)) {
            const v = this.expr(f.init!, initFrame);
            cmds.push(...v.cmds);
            const l: LocInfo = { loc: { kind: 'field', var: this.vocab.varOfField(f.id), obj }, field: f, type: f.type, range: f.range, text: f.name };
            cmds.push(this.writeLoc(l, v.term, f.range, initFrame));
        }
        return { cmds, term: obj };
    }

    private freshObject(obj: Term, type: Type): OpCmd[] {
        const tid = this.target.tid;
        return [
            { k: 'assume', cond: T.and(T.ne(obj, T.NULL), T.not(T.select(this.stateTerm(ALLOC), obj)), T.eq(T.call(DTYPE, 'Int', obj), T.int(this.vocab.typeId(type)))) },
            { k: 'set', var: ALLOC, value: T.store(this.stateTerm(ALLOC), obj, T.TRUE) },
            { k: 'set', var: OWNER, value: T.store(this.stateTerm(OWNER), obj, tid) },
            ...(this.vocab.has(HOLDER) ? [{ k: 'set' as const, var: HOLDER, value: T.store(this.stateTerm(HOLDER), obj, T.int(0)) }] : []),
        ];
    }

    private allocArray(e: Extract<Expr, { kind: 'newArray' }>, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const size = this.expr(e.size, frame);
        const n = this.asLocal(size.term, 'size', size.cmds);
        const r = this.fresh('new_array', 'Ref');
        const arr = this.localTerm(r);
        const elemSort = sortOfType(e.element);
        const elems = elemsVar(elemSort);
        const body: OpCmd[] = [
            { k: 'assert', cond: T.cmp('>=', n, T.int(0)), check: this.check('bounds', e.size.range, 'the array size may be negative', frame, [['size', n]]) },
            { k: 'havoc', vars: [r] },
            ...this.freshObject(arr, { kind: 'array', element: e.element }),
            { k: 'assume', cond: T.eq(T.call(LEN, 'Int', arr), n) },
            { k: 'set', var: elems, value: T.store(this.stateTerm(elems), arr, T.constArray('Int', defaultValue(e.element))) },
        ];
        return { cmds: [...size.cmds, this.op('alloc', e.range, frame, [], body, `new ${typeString(e.element)}[]`)], term: arr };
    }

    // ------------------------------------------------------------ calls

    private call(e: Extract<Expr, { kind: 'call' }>, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const m = this.vocab.method(e.method);
        if (!m) throw new LoweringError(`unknown method ${e.method}`, e.range);
        const cmds: Cmd[] = [];
        let receiver: Term | undefined;
        if (e.receiver) {
            const r = this.expr(e.receiver, frame);
            cmds.push(...r.cmds);
            receiver = this.asLocal(r.term, 'recv', cmds);
            cmds.push({ k: 'checkLocal', cond: T.ne(receiver, T.NULL), check: this.check('null', e.receiver.range, `possible null dereference: the receiver of '${m.name}' may be null`, frame) });
        }
        const args: Term[] = [];
        for (const a of e.args) {
            const v = this.expr(a, frame);
            cmds.push(...v.cmds);
            args.push(this.asLocal(v.term, 'arg', cmds));
        }
        const chain = [...frame.chain, { method: m.id, range: e.range }];
        const resultVar = m.returnType.kind === 'void' ? undefined : this.fresh(`result_${m.name}`, sortOfType(m.returnType));
        if (m.abstraction) {
            cmds.push(...this.inlineAbstraction(m, m.abstraction, receiver, args, resultVar, e.range, frame));
        } else {
            if (chain.length > MAX_INLINE_DEPTH) throw new LoweringError(`calls nested deeper than ${MAX_INLINE_DEPTH} through methods without abstraction`, e.range);
            const callee: MethodFrame = this.newFrame(chain, receiver, m);
            callee.resultVar = resultVar;
            const bind: Cmd[] = [];
            m.params.forEach((p, i) => {
                const name = this.fresh(p.id, sortOfType(p.type));
                callee.vars.set(p.id, name);
                bind.push({ k: 'local', var: name, value: args[i] });
            });
            const body = this.withMonitor(m, callee, receiver, () => this.stmts(m.body, callee));
            cmds.push(...bind, { k: 'scope', label: callee.exitLabel, body });
        }
        return { cmds, term: resultVar ? this.localTerm(resultVar) : T.TRUE };
    }

    /**
     * InlineAbs: a call to a method with an abstraction becomes the
     * abstraction's actions with `this` and the parameters substituted:
     * check `requires`, then `K*; Y1; K*; ...; Yn; K*`, then assume `ensures`.
     */
    private inlineAbstraction(m: MethodModel, abs: AbstractionModel, receiver: Term | undefined, args: Term[], resultVar: string | undefined, range: Range, frame: MethodFrame): Cmd[] {
        const instance = this.inlineCount++;
        const vars = new Map<string, string>();
        const argLocals: Cmd[] = [];
        m.params.forEach((p, i) => {
            const name = this.fresh(p.id, sortOfType(p.type));
            vars.set(p.id, name);
            argLocals.push({ k: 'local', var: name, value: args[i] });
        });
        const callFrame: MethodFrame = { ...frame, vars, thisTerm: receiver };
        const oldPrefix = `old${instance}~`;
        const base = this.ctx(callFrame);
        const oldCtx: TrContext = { ...base, state: (name: string) => T.v(oldPrefix + name, this.vocab.sortOfVar(name)) };
        const out: Cmd[] = [...argLocals];
        for (const r of abs.requires) {
            out.push({
                k: 'checkState', cond: translate(r.expr, base),
                check: { ...this.check('abstraction', range, `the precondition '${r.text}' of '${m.name}' may not hold at this call`, frame), related: { range: r.range, message: `precondition of '${m.name}'` } },
            });
        }
        out.push({ k: 'snapshot', prefix: oldPrefix });
        const actions = abstractionActions(this.vocab, m, abs, { ...base, old: oldCtx }, this.target.tid);
        const stutter = (): Cmd[] => {
            if (!actions.stutter) return [];
            const label = this.label('stutter');
            const choice = this.fresh('choice', 'Bool');
            return [{
                k: 'loop', label, invariants: [], range,
                body: [{ k: 'havocLocal', vars: [choice] }, { k: 'if', cond: this.localTerm(choice), then: [{ k: 'break', label }], else: [] },
                    this.op('stutter', range, frame, actions.stutter.accesses(range), actions.stutter.body, `stutter of '${m.name}'`)],
            }];
        };
        actions.steps.forEach((step, i) => {
            out.push(...stutter());
            out.push(this.op('step', range, frame, step.accesses(range), step.body, `step ${i + 1} of '${m.name}'`));
        });
        out.push(...stutter());
        if (resultVar) out.push({ k: 'havocLocal', vars: [resultVar] });
        const resultTerm = resultVar ? this.localTerm(resultVar) : undefined;
        for (const en of abs.ensures) {
            out.push({ k: 'assumeState', cond: translate(en.expr, { ...base, old: oldCtx, result: resultTerm }) });
        }
        return out;
    }
}

interface LocInfo {
    loc: Loc;
    field?: FieldModel;
    type: Type;
    range: Range;
    text: string;
}

export function defaultValue(t: Type): Term {
    switch (t.kind) {
        case 'int': return T.int(0);
        case 'boolean': return T.FALSE;
        default: return T.NULL;
    }
}

export type { Clause };
export { preName };

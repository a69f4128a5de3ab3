import { append } from '../smt/append.js';
import type { AbstractionModel, Action, Expr, FieldModel, MethodModel, ProgramModel, Range, Stmt, Type } from '../model/program.js';
import { sameType, typeString } from '../model/program.js';
import {
    ALLOC, allocated, dtypeOf, elemsVar, HOLDER, holderOf, lengthOf, LINKED, linkedOf, madeFacts, OWNER, ownerOf, sortOfType, wellTyped, type Vocabulary,
} from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Sort, Term } from '../smt/term.js';
import { binary, translate, type TrContext } from '../spec/translate.js';
import { actionPredicate, frameOf, frameWhere, keyParams, type FrameInfo } from '../spec/abstraction.js';
import type { Access, AtomicOp, CallFrame, CheckInfo, Cmd, LocalDecl, Loc, OpCmd, OpKind } from '../il/il.js';
import { OP_PRE } from '../il/il.js';
import { allInvariants, stateCtx, type Invariant } from '../spec/environment.js';
import { defaultValue, initializedFacts } from '../spec/initialized.js';

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
    /** Monitors held by synchronized blocks/methods of this frame, innermost last: lock and saved holder. */
    monitors: Array<{ lock: Term; prev: string; range: Range }>;
    thisTerm?: Term;
    /** model variable id → local name */
    vars: Map<string, string>;
    chain: CallFrame[];
    loops: Array<{ breakLabel: string; continueLabel: string; monitorDepth: number }>;
    method?: MethodModel;
}

interface LocInfo {
    loc: Loc;
    field?: FieldModel;
    type: Type;
    range: Range;
    text: string;
}

const MAX_INLINE_DEPTH = 24;
/** Globals a new object is stated to differ from (those of its type that threads may change). */
const MAX_DISTINCT_GLOBALS = 8;

// ---- witness search option (witness/): begin
/** An inlined body of a method with an abstraction (`LowerOptions.inlineBodies`). */
export interface InlinedBody {
    method: MethodModel;
    /** The `scope` command of the body; its `exit` commands with a range are its returns. */
    scope: Cmd;
    receiver?: Term;
    /** Locals holding the arguments' values at entry (the body may assign its parameters), in parameter order. */
    params: string[];
    resultVar?: string;
    /** The call, and the calls that led to it. */
    range: Range;
    chain: CallFrame[];
}

/**
 * Options of the lowering; all off by default (the checker's lowering).
 * `inlineBodies`: the real program for the witness search — calls to methods
 * with an abstraction are inlined like the others (their `requires` checked at
 * the call) instead of replaced by the abstraction, and a call nested deeper
 * than `maxDepth` cuts the path (`assumeLocal false`) instead of failing.
 */
export interface LowerOptions {
    inlineBodies?: { maxDepth: number; onInline?: (body: InlinedBody) => void };
}
// ---- witness search option: end

/**
 * Lowering (pipeline stage 1): the typed program model to the intermediate
 * language of atomic operations (language.md §3): one atomic step per shared
 * read or write, local computation between steps, `cas`, `atomic`, monitor
 * enter/exit and allocation as single steps, implicit null/bounds/division
 * checks as asserted preconditions of the step that needs them, calls to
 * methods with an abstraction replaced by the abstraction (InlineAbs), other
 * calls by the callee's body.
 */
export class Lowerer {
    private opIds = 0;
    private labels = 0;
    private temps = 0;
    private readonly locals = new Map<string, LocalDecl>();
    private pendingWitness: number | undefined;
    private inlineCount = 0;
    private invariants?: Invariant[];

    constructor(private readonly vocab: Vocabulary, private readonly target: LowerTarget, private readonly options: LowerOptions = {}) { }

    get declaredLocals(): Map<string, LocalDecl> {
        return this.locals;
    }

    // ------------------------------------------------------------ entry points

    /** The field initializers of the program, in textual order (the store `Init`). */
    lowerInit(): Cmd[] {
        const frame = this.newFrame([], undefined, undefined);
        const cmds: Cmd[] = [];
        for (const g of staticFieldsInOrder(this.vocab.program)) {
            if (!g.init) continue;
            const { cmds: c, term } = this.expr(g.init, frame);
            append(cmds, c);
            const map = this.vocab.varOfField(g.id);
            cmds.push(this.op('write', g.range, frame, [this.access({ kind: 'global', map }, { write: true, field: g, range: g.range, text: g.name })],
                [{ k: 'store', map, keys: [], value: term }], `initializer of ${g.name}`));
        }
        return cmds;
    }

    /** A thread body. */
    lowerThread(body: Stmt[]): Cmd[] {
        const frame = this.newFrame([], undefined, undefined);
        return [{ k: 'scope', label: frame.exitLabel, body: this.stmts(body, frame) }];
    }

    /** A method body checked on its own (against its abstraction): parameters (locals named by `params`) and `this` are inputs. */
    lowerMethodBody(m: MethodModel, thisTerm: Term | undefined, params: string[], resultVar: string | undefined): { cmds: Cmd[]; exitLabel: string } {
        const frame = this.newFrame([], thisTerm, m);
        frame.resultVar = resultVar;
        m.params.forEach((p, i) => frame.vars.set(p.id, params[i]));
        const body = this.withMonitor(m, frame, thisTerm, () => this.stmts(m.body, frame));
        return { cmds: [{ k: 'scope', label: frame.exitLabel, body }], exitLabel: frame.exitLabel };
    }

    /** A fresh local of the given sort (and static type, for references). */
    fresh(hint: string, sort: Sort, type?: Type): string {
        const name = `l~${hint}~${this.temps++}`;
        this.locals.set(name, { name, sort, type: sort === 'Ref' ? type : undefined });
        return name;
    }

    // ------------------------------------------------------------ helpers

    private newFrame(chain: CallFrame[], thisTerm: Term | undefined, method: MethodModel | undefined): MethodFrame {
        return { exitLabel: this.label('exit'), monitors: [], thisTerm, vars: new Map(), chain, loops: [], method };
    }

    private label(kind: string): string {
        return `${kind}${this.labels++}`;
    }

    private localTerm(name: string): Term {
        const d = this.locals.get(name);
        if (!d) throw new Error(`undeclared local ${name}`);
        return T.v(name, d.sort);
    }

    /** An access to a location; `sync`: a synchronization access (volatile ones are anyway). */
    private access(loc: Loc, a: { write: boolean; sync?: boolean; field?: FieldModel; range: Range; text: string }): Access {
        return { loc, write: a.write, sync: (a.sync ?? false) || (a.field?.isVolatile ?? false), field: a.field, range: a.range, text: a.text };
    }

    private accessTo(l: LocInfo, how: { write: boolean; sync?: boolean; range?: Range }): Access {
        return this.access(l.loc, { field: l.field, text: l.text, ...how, range: how.range ?? l.range });
    }

    private op(kind: OpKind, range: Range, frame: MethodFrame, accesses: Access[], body: OpCmd[], label?: string, extra: Partial<AtomicOp> = {}): Cmd {
        let blocking = 0;
        while (blocking < body.length && body[blocking].k === 'assume') blocking++;
        const op: AtomicOp = {
            id: this.opIds++, kind, range, chain: frame.chain, accesses, body, label, blocking,
            init: this.target.kind === 'init' ? true : undefined, ...extra,
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

    private read(map: string, keys: Term[], state?: string): Term {
        return this.vocab.read(map, keys, state);
    }

    // ------------------------------------------------------------ statements

    stmts(stmts: Stmt[], frame: MethodFrame): Cmd[] {
        const out: Cmd[] = [];
        for (const s of stmts) {
            if (s.kind === 'witness') {
                this.pendingWitness = s.step;
                continue;
            }
            const cmds = this.stmt(s, frame);
            if (this.pendingWitness !== undefined) witnessOnRead(cmds, this.pendingWitness);
            append(out, cmds);
            this.pendingWitness = undefined;
        }
        return out;
    }

    private stmt(s: Stmt, frame: MethodFrame): Cmd[] {
        switch (s.kind) {
            case 'block': return this.stmts(s.body, frame);
            case 'local': {
                const name = this.fresh(s.decl.id, sortOfType(s.decl.type), s.decl.type);
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
                    append(out, cmds);
                    if (frame.resultVar) out.push({ k: 'local', var: frame.resultVar, value: term });
                }
                append(out, this.releaseAll(frame, 0), [{ k: 'exit', label: frame.exitLabel, range: s.range }]);
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
                const lock = this.fresh('lock', 'Ref', s.lock.type);
                const out: Cmd[] = [...cmds, { k: 'local', var: lock, value: term }];
                append(out, this.enter(this.localTerm(lock), s.range, frame));
                append(out, this.stmts(s.body, frame));
                append(out, this.exitMonitor(frame, s.closeRange));
                return out;
            }
            case 'atomic': return [this.atomicBlock(s.body, s.range, frame)];
            case 'assert': {
                const check = this.check('assert', s.range, `assertion '${s.text}' may fail`, frame);
                if (s.annotation) return [{ k: 'checkState', cond: translate(s.cond, this.ctx(frame)), check }];
                const { cmds, term } = this.expr(s.cond, frame);
                return [...cmds, { k: 'checkLocal', cond: term, check }];
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
            cond: translate(c.expr, this.ctx(frame)), text: c.text,
            check: { ...this.check('loop-invariant', c.range, `loop invariant '${c.text}' may not hold`, frame), related: undefined },
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
        const tid = this.target.tid;
        frame.monitors.push({ lock, prev, range });
        return [
            { k: 'checkLocal', cond: T.ne(lock, T.NULL), check: this.check('null', range, 'possible null dereference: the lock of synchronized may be null', frame) },
            this.op('enter', range, frame, [this.access({ kind: 'holder', obj: lock }, { write: true, sync: true, range, text: 'monitor' })], [
                // block until the monitor is free or already ours (reentrant)
                { k: 'assume', cond: T.or(T.eq(holderOf(lock), T.int(0)), T.eq(holderOf(lock), tid)) },
                { k: 'local', var: prev, value: holderOf(lock) },
                { k: 'store', map: HOLDER, keys: [lock], value: tid },
            ], 'monitor enter'),
        ];
    }

    /** Release the innermost monitor (end of a synchronized block). */
    private exitMonitor(frame: MethodFrame, range: Range): Cmd[] {
        const m = frame.monitors.pop();
        if (!m) throw new Error('monitor stack underflow');
        return [this.releaseOp(m.lock, m.prev, range, frame)];
    }

    private releaseOp(lock: Term, prev: string, range: Range, frame: MethodFrame): Cmd {
        return this.op('exit', range, frame, [this.access({ kind: 'holder', obj: lock }, { write: true, sync: true, range, text: 'monitor' })], [
            { k: 'store', map: HOLDER, keys: [lock], value: this.localTerm(prev) },
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
            const val = this.expr(s.value!, frame);
            if (s.op === '=') return val;
            return { cmds: val.cmds, term: T.arith(s.op === '+=' ? '+' : '-', old!, val.term) };
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
            // the read and the write are two accesses, reported apart (as in `x = x + 1`)
            const r = this.readLoc(loc, frame, s.range);
            append(out, r.cmds);
            old = r.term;
        }
        const { cmds, term } = compute(old);
        append(out, cmds);
        out.push(this.writeLoc(loc, this.asLocal(term, 'value', out, loc.type), s.range, frame));
        return out;
    }

    private ghostSet(target: Expr, value: Expr, range: Range, frame: MethodFrame): Cmd {
        const out: Cmd[] = [];
        const loc = this.location(target, frame, out, true);
        if (out.length > 0) throw new LoweringError('the target of set must be a ghost field of a simple object', range);
        const w = this.writeLoc(loc, translate(value, this.ctx(frame)), range, frame) as Extract<Cmd, { k: 'op' }>;
        w.op.kind = 'ghost';
        w.op.label = `set of ${loc.text}`;
        for (const a of w.op.accesses) a.sync = true;
        return w;
    }

    // ------------------------------------------------------------ locations

    /** A shared location, with the code evaluating its receiver/index appended to `out`. */
    private location(e: Expr, frame: MethodFrame, out: Cmd[], pure = false): LocInfo {
        const evalPart = (x: Expr, hint: string): Term => {
            if (pure) return translate(x, this.ctx(frame));
            const r = this.expr(x, frame);
            append(out, r.cmds);
            return this.asLocal(r.term, hint, out, x.type);
        };
        switch (e.kind) {
            case 'global': {
                const field = this.vocab.fields.get(e.field)!;
                return { loc: { kind: 'global', map: this.vocab.varOfField(e.field) }, field, type: e.type, range: e.range, text: field.name };
            }
            case 'field': {
                const obj = evalPart(e.receiver, 'obj');
                const field = this.vocab.fields.get(e.field)!;
                return { loc: { kind: 'field', map: this.vocab.varOfField(e.field), obj }, field, type: e.type, range: e.range, text: field.name };
            }
            case 'index': {
                // The array's field (if read from one) protects its elements: remember it.
                let via: { field: FieldModel; obj?: Term } | undefined;
                let arr: Term;
                if (!pure && (e.array.kind === 'field' || e.array.kind === 'global')) {
                    const inner = this.location(e.array, frame, out);
                    const r = this.readLoc(inner, frame);
                    append(out, r.cmds);
                    arr = r.term;
                    if (inner.field) via = { field: inner.field, obj: inner.loc.kind === 'field' ? inner.loc.obj : undefined };
                } else {
                    arr = evalPart(e.array, 'arr');
                }
                const index = evalPart(e.index, 'idx');
                const elemSort = e.type.kind === 'null' ? 'Ref' : sortOfType(e.type);
                const name = e.array.kind === 'field' || e.array.kind === 'global' ? `${e.array.field.split('.').pop()}[]` : 'array element';
                return { loc: { kind: 'elem', map: elemsVar(elemSort), arr, index, via }, type: e.type, range: e.range, text: name };
            }
            case 'holder': {
                const obj = evalPart(e.receiver, 'obj');
                return { loc: { kind: 'holder', obj }, type: e.type, range: e.range, text: 'holder' };
            }
            default:
                throw new LoweringError(`not an assignable location`, e.range);
        }
    }

    /** Keep a computed value in a local so later steps see the value, not a re-evaluation. */
    private asLocal(t: Term, hint: string, out: Cmd[], type?: Type): Term {
        if (t.t === 'var' || t.t === 'int' || t.t === 'bool') return t;
        const name = this.fresh(hint, T.sortOf(t), type);
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
            const len = lengthOf(loc.arr);
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
            case 'global': return this.read(loc.map, []);
            case 'field': return this.read(loc.map, [loc.obj]);
            case 'elem': return this.read(loc.map, [loc.arr, loc.index]);
            case 'holder': return holderOf(loc.obj);
            case 'all': throw new Error('a whole map is not a value');
        }
    }

    private locStore(loc: Loc, value: Term): OpCmd {
        switch (loc.kind) {
            case 'global': return { k: 'store', map: loc.map, keys: [], value };
            case 'field': return { k: 'store', map: loc.map, keys: [loc.obj], value };
            case 'elem': return { k: 'store', map: loc.map, keys: [loc.arr, loc.index], value };
            case 'holder': return { k: 'store', map: HOLDER, keys: [loc.obj], value };
            case 'all': throw new Error('cannot store a whole map');
        }
    }

    /** The object a location belongs to (for privacy), if any. */
    private objectOf(loc: Loc): Term | undefined {
        return loc.kind === 'field' || loc.kind === 'holder' ? loc.obj : loc.kind === 'elem' ? loc.arr : undefined;
    }

    /**
     * A read of a location; `accessRange`: where the read is reported when not at the location
     * (the read of `x++`, reported at the whole statement, apart from its write at `x`).
     */
    private readLoc(l: LocInfo, frame: MethodFrame, accessRange?: Range): { cmds: Cmd[]; term: Term } {
        // A final field never changes after initialization: its value is read without a step.
        if (l.field?.isFinal && this.target.kind !== 'init') {
            const cmds: Cmd[] = [];
            if (l.loc.kind === 'field') cmds.push({ k: 'checkLocal', cond: T.ne(l.loc.obj, T.NULL), check: this.check('null', l.range, `possible null dereference: the object whose '${l.text}' is accessed may be null`, frame) });
            const tmp = this.fresh(`final_${l.text}`, sortOfType(l.type), l.type);
            cmds.push({ k: 'local', var: tmp, value: this.locValue(l.loc) });
            const typed = this.typingCond(this.localTerm(tmp), l.type, this.objectOf(l.loc), true);
            if (typed.t !== 'bool') cmds.push({ k: 'assumeState', cond: typed });
            return { cmds, term: this.localTerm(tmp) };
        }
        const tmp = this.fresh(`read_${l.text.replace(/[^\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Sc}\p{Pc}]/gu, '')}`, sortOfType(l.type), l.type);
        const t = this.localTerm(tmp);
        const cmd = this.op('read', l.range, frame, [this.accessTo(l, { write: false, range: accessRange })], [
            ...this.locChecks(l, frame),
            { k: 'local', var: tmp, value: this.locValue(l.loc) },
            ...this.typing(t, l.type, this.objectOf(l.loc), false),
        ], `read of ${l.text}`);
        return { cmds: [cmd], term: t };
    }

    /**
     * A reference read from the heap is null or an allocated object of its
     * static type; read from a global or from a published object, it is null
     * or published (storing a reference into such a location publishes it);
     * it is never another thread's private object (no location this thread
     * can read holds one). That last fact is stated for the values of final
     * fields only (a private object's arrays, a lazily made object's parts):
     * stated at every read, it made Z3's memory in WebAssembly grow by about
     * 80 MB over the LSP soak test's 1,000 edits.
     */
    private typing(t: Term, type: Type, from: Term | undefined, notOthers: boolean): OpCmd[] {
        const cond = this.typingCond(t, type, from, notOthers);
        return cond.t === 'bool' ? [] : [{ k: 'assume', cond }];
    }

    private typingCond(t: Term, type: Type, from: Term | undefined, notOthersToo: boolean): Term {
        const w = wellTyped(this.vocab, t, type);
        if (w.t === 'bool') return T.TRUE;
        const published = T.or(T.eq(t, T.NULL), T.eq(ownerOf(t), T.int(0)));
        const shared = from ? T.and(allocated(from), T.eq(ownerOf(from), T.int(0))) : T.TRUE;
        const notOthers = !notOthersToo || this.target.kind === 'init' || !from ? T.TRUE : T.or(published, T.eq(ownerOf(t), this.target.tid));
        return T.and(w, T.implies(shared, published), notOthers, initializedFacts(this.vocab, t, type));
    }

    private writeLoc(l: LocInfo, value: Term, range: Range, frame: MethodFrame): Cmd {
        const obj = this.objectOf(l.loc);
        return this.op('write', range, frame, [this.accessTo(l, { write: true })], [
            ...this.locChecks(l, frame),
            this.locStore(l.loc, value),
            ...this.publishIfRef(l.type, obj, value),
        ], `write of ${l.text}`);
    }

    /**
     * Storing a reference `value` into a shared location publishes that object
     * and the private objects that may be reachable from it: those a field or
     * element of a private object references (`linked`), a sound
     * over-approximation of reachability (docs/semantics.md). Storing it into a
     * field or element of an object private to the thread publishes nothing and
     * links it.
     */
    private publishIfRef(type: Type, into: Term | undefined, value: Term): OpCmd[] {
        if (type.kind !== 'class' && type.kind !== 'array' && type.kind !== 'null') return [];
        if (value.t === 'var' && value.name === 'null') return []; // (storing null publishes nothing)
        // During initialization every object is published already.
        if (this.target.kind === 'init' || !this.vocab.has(OWNER)) return [];
        const shared = into ? T.ne(ownerOf(into), this.target.tid) : T.TRUE;
        const out: OpCmd[] = [{ ...this.publish(shared, r => T.or(T.eq(r, value), linkedOf(r))), ...(into ? { into } : {}) } as OpCmd];
        if (into) out.push({ k: 'if', cond: T.not(shared), then: [{ k: 'store', map: LINKED, keys: [value], value: T.TRUE }], else: [] });
        return out;
    }

    /** Where `when` holds, the thread's private objects for which `which` holds are published. */
    private publish(when: Term, which: (r: Term) => Term): OpCmd {
        const r = T.v('r!pub', 'Ref');
        const owner = ownerOf(r);
        return { k: 'update', map: OWNER, params: [{ name: 'r!pub', sort: 'Ref' }], value: T.ite(T.and(when, T.eq(owner, this.target.tid), which(r)), T.int(0), owner) };
    }

    /**
     * Publication by an abstraction step (as if the callee's body had run): the
     * references the step may have stored into shared locations of its frame.
     * A single framed location publishes its new value (or links it, in an
     * object private to the thread); a frame over many locations (`*.f`,
     * `a[*]`) publishes every private object of the thread.
     */
    private publishByAction(frame: FrameInfo): OpCmd[] {
        if (this.target.kind === 'init' || !this.vocab.has(OWNER)) return [];
        const out: OpCmd[] = [];
        for (const [map, where] of frame) {
            const sv = this.vocab.stateVar(map);
            if (sv.sort !== 'Ref' || (sv.kind !== 'global' && sv.kind !== 'field' && sv.kind !== 'elems')) continue;
            const type: Type = sv.field?.type ?? sv.element ?? { kind: 'null' };
            if (sv.kind === 'global') {
                append(out, this.publishIfRef(type, undefined, this.read(map, [])));
                continue;
            }
            const whole = where === 'all' ? [] : where.filter(keys => keys.length === sv.keys.length);
            if (where === 'all' || whole.length !== where.length) {
                out.push(this.publish(T.TRUE, () => T.TRUE));
                continue;
            }
            for (const keys of whole) append(out, this.publishIfRef(type, keys[0], this.read(map, keys)));
        }
        return out;
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
                case 'block': append(out, this.atomicStmts(s.body, frame, accesses)); break;
                case 'local': {
                    const name = this.fresh(s.decl.id, sortOfType(s.decl.type), s.decl.type);
                    frame.vars.set(s.decl.id, name);
                    out.push({ k: 'local', var: name, value: s.init ? this.atomicExpr(s.init, frame, accesses, out) : defaultValue(s.decl.type) });
                    break;
                }
                case 'assign': {
                    const t = s.target;
                    const valueOf = (old: Term | undefined): Term => {
                        if (s.op === '++' || s.op === '--') return T.arith(s.op === '++' ? '+' : '-', old!, T.int(1));
                        const val = this.atomicExpr(s.value!, frame, accesses, out);
                        return s.op === '=' ? val : T.arith(s.op === '+=' ? '+' : '-', old!, val);
                    };
                    if (t.kind === 'var') {
                        const name = frame.vars.get(t.id)!;
                        out.push({ k: 'local', var: name, value: valueOf(this.localTerm(name)) });
                        break;
                    }
                    const l = this.atomicLocation(t, frame, accesses, out);
                    append(out, this.locChecks(l, frame));
                    // the value is computed before the store (it may read the location stored into)
                    const value = this.fresh('value', sortOfType(l.type), l.type);
                    out.push({ k: 'local', var: value, value: valueOf(s.op === '=' ? undefined : this.locValue(l.loc)) });
                    accesses.push(this.accessTo(l, { write: true, sync: true }));
                    out.push(this.locStore(l.loc, this.localTerm(value)));
                    append(out, this.publishIfRef(l.type, this.objectOf(l.loc), this.localTerm(value)));
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
                    accesses.push(this.accessTo(l, { write: true, sync: true }));
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
                return { loc: { kind: 'global', map: this.vocab.varOfField(e.field) }, field, type: e.type, range: e.range, text: field.name };
            }
            case 'field': {
                const field = this.vocab.fields.get(e.field)!;
                return { loc: { kind: 'field', map: this.vocab.varOfField(e.field), obj: part(e.receiver) }, field, type: e.type, range: e.range, text: field.name };
            }
            case 'index': {
                const elemSort = e.type.kind === 'null' ? 'Ref' : sortOfType(e.type);
                return { loc: { kind: 'elem', map: elemsVar(elemSort), arr: part(e.array), index: part(e.index) }, type: e.type, range: e.range, text: 'array element' };
            }
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
                append(out, this.locChecks(l, frame));
                accesses.push(this.accessTo(l, { write: false, sync: true }));
                const typing = this.typing(this.locValue(l.loc), l.type, this.objectOf(l.loc), false);
                if (typing.length === 0) return this.locValue(l.loc);
                // a reference read here is typed (and published when read from shared memory) as any other read
                const tmp = this.fresh(`read_${l.text.replace(/[^\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Sc}\p{Pc}]/gu, '')}`, sortOfType(l.type), l.type);
                append(out, [{ k: 'local', var: tmp, value: this.locValue(l.loc) }], this.typing(this.localTerm(tmp), l.type, this.objectOf(l.loc), false));
                return this.localTerm(tmp);
            }
            case 'length': {
                const a = sub(e.array);
                out.push({ k: 'assert', cond: T.ne(a, T.NULL), check: this.check('null', e.range, 'possible null dereference: the array may be null', frame) });
                return lengthOf(a);
            }
            case 'unary': return e.op === '!' ? T.not(sub(e.operand)) : T.neg(sub(e.operand));
            case 'binary': {
                const l = sub(e.left), r = sub(e.right);
                if (e.op === '/' || e.op === '%') {
                    out.push({ k: 'assert', cond: T.ne(r, T.int(0)), check: this.check('div-zero', e.range, `possible ${e.op === '/' ? 'division' : 'remainder'} by zero`, frame) });
                }
                return binary(e.op, l, r);
            }
            case 'cond': return T.ite(sub(e.cond), sub(e.then), sub(e.else));
            case 'nondet': {
                const n = this.fresh('nondet', 'Bool');
                out.push({ k: 'havocLocal', vars: [n] });
                return this.localTerm(n);
            }
            case 'cas': {
                const l = this.atomicLocation(e.target, frame, accesses, out);
                append(out, this.locChecks(l, frame));
                const expected = sub(e.expected), update = sub(e.update);
                accesses.push(this.accessTo(l, { write: true, sync: true }));
                const ok = this.fresh('cas', 'Bool');
                out.push({ k: 'local', var: ok, value: T.eq(this.locValue(l.loc), expected) });
                out.push({ k: 'if', cond: this.localTerm(ok), then: [this.locStore(l.loc, update), ...this.publishIfRef(l.type, this.objectOf(l.loc), update)], else: [] });
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
                const r = this.readLoc(l, frame);
                return { cmds: [...cmds, ...r.cmds], term: r.term };
            }
            case 'length': {
                const a = this.expr(e.array, frame);
                const arr = this.asLocal(a.term, 'arr', a.cmds, e.array.type);
                return {
                    cmds: [...a.cmds, { k: 'checkLocal', cond: T.ne(arr, T.NULL), check: this.check('null', e.range, 'possible null dereference: the array may be null', frame) }],
                    term: lengthOf(arr),
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
                const res = this.fresh('cond', T.sortOf(a.term), e.type);
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
            const skip: Cmd[] = [{ k: 'local', var: res, value: e.op === '&&' ? T.FALSE : T.TRUE }];
            const cmds: Cmd[] = [...l.cmds, e.op === '||'
                ? { k: 'if', cond: left, then: skip, else: evalRight }
                : { k: 'if', cond: left, then: evalRight, else: skip }];
            return { cmds, term: this.localTerm(res) };
        }
        const cmds = [...l.cmds];
        const left = r.cmds.length > 0 ? this.asLocal(l.term, 'lhs', cmds, e.left.type) : l.term;
        append(cmds, r.cmds);
        if (e.op === '/' || e.op === '%') {
            cmds.push({ k: 'checkLocal', cond: T.ne(r.term, T.int(0)), check: this.check('div-zero', e.range, `possible ${e.op === '/' ? 'division' : 'remainder'} by zero`, frame, [['divisor', r.term]]) });
        }
        return { cmds, term: binary(e.op, left, r.term) };
    }

    private cas(e: Extract<Expr, { kind: 'cas' }>, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const cmds: Cmd[] = [];
        const l = this.location(e.target, frame, cmds);
        const ex = this.expr(e.expected, frame);
        append(cmds, ex.cmds);
        const expected = this.asLocal(ex.term, 'expected', cmds, e.expected.type);
        const up = this.expr(e.update, frame);
        append(cmds, up.cmds);
        const update = this.asLocal(up.term, 'update', cmds, e.update.type);
        const ok = this.fresh('cas', 'Bool');
        cmds.push(this.op('cas', e.range, frame, [this.accessTo(l, { write: false, sync: true }), this.accessTo(l, { write: true, sync: true })], [
            ...this.locChecks(l, frame),
            { k: 'local', var: ok, value: T.eq(this.locValue(l.loc), expected) },
            { k: 'if', cond: this.localTerm(ok), then: [this.locStore(l.loc, update), ...this.publishIfRef(l.type, this.objectOf(l.loc), update)], else: [] },
        ], `cas on ${l.text}`));
        return { cmds, term: this.localTerm(ok) };
    }

    // ------------------------------------------------------------ allocation

    /** A fresh object: not allocated before, private to the allocating thread, default fields, then C's initializers. */
    private allocObject(className: string, range: Range, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const cls = this.vocab.classes.get(className);
        if (!cls) throw new LoweringError(`unknown class ${className}`, range);
        const type: Type = { kind: 'class', name: className };
        const r = this.fresh(`new_${className}`, 'Ref', type);
        const obj = this.localTerm(r);
        const body: OpCmd[] = [{ k: 'havocLocal', vars: [r] }, ...this.freshObject(obj, type)];
        for (const f of cls.fields.filter(x => !x.isStatic)) {
            body.push({ k: 'store', map: this.vocab.varOfField(f.id), keys: [obj], value: defaultValue(f.type) });
        }
        const cmds: Cmd[] = [this.op('alloc', range, frame, [], body, `new ${className}()`, { fresh: [obj] })];
        // Field initializers run with `this` = the new object (still private: never racy).
        const initFrame: MethodFrame = { ...frame, thisTerm: obj, vars: new Map(), loops: [], monitors: [] };
        for (const f of cls.fields.filter(x => !x.isStatic && x.init)) {
            const val = this.expr(f.init!, initFrame);
            append(cmds, val.cmds);
            const l: LocInfo = { loc: { kind: 'field', map: this.vocab.varOfField(f.id), obj }, field: f, type: f.type, range: f.range, text: f.name };
            const value = this.asLocal(val.term, 'init', cmds, f.type);
            const w = this.writeLoc(l, value, f.range, initFrame) as Extract<Cmd, { k: 'op' }>;
            w.op.label = `initializer of ${f.name}`;
            cmds.push(w);
            // a field that keeps the object its initializer made holds one of its own (spec/initialized.ts)
            if (this.vocab.stableFields.has(f.id) && (f.init!.kind === 'new' || f.init!.kind === 'newArray')) cmds.push({ k: 'assumeLocal', cond: madeFacts(this.vocab, value, obj, f.id) });
        }
        return { cmds, term: obj };
    }

    private freshObject(obj: Term, type: Type): OpCmd[] {
        const owner = this.target.kind === 'init' ? T.int(0) : this.target.tid;
        // The new object is none of the objects the globals of its type hold: they hold null or
        // allocated objects, but after an environment step a global's arbitrary value is not
        // known to be allocated (without this, `new Msg()` could be the Msg in `slot`).
        const distinct: Term[] = this.target.kind === 'init' ? [] : [...this.vocab.fields.values()]
            .filter(f => f.isStatic && !this.vocab.stableFields.has(f.id) && sameType(f.type, type))
            .slice(0, MAX_DISTINCT_GLOBALS)
            .map(f => T.ne(obj, this.read(this.vocab.varOfField(f.id), [])));
        return [
            { k: 'assume', cond: T.and(T.ne(obj, T.NULL), T.not(allocated(obj)), T.eq(dtypeOf(obj), T.int(this.vocab.typeId(type))), ...distinct) },
            { k: 'store', map: ALLOC, keys: [obj], value: T.TRUE },
            { k: 'store', map: OWNER, keys: [obj], value: owner },
            { k: 'store', map: HOLDER, keys: [obj], value: T.int(0) },
            { k: 'store', map: LINKED, keys: [obj], value: T.FALSE },
        ];
    }

    private allocArray(e: Extract<Expr, { kind: 'newArray' }>, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const size = this.expr(e.size, frame);
        const n = this.asLocal(size.term, 'size', size.cmds);
        const type: Type = { kind: 'array', element: e.element };
        const r = this.fresh('new_array', 'Ref', type);
        const arr = this.localTerm(r);
        const elems = elemsVar(sortOfType(e.element));
        const [a, i] = keyParams(this.vocab, elems, 'k!new');
        const body: OpCmd[] = [
            { k: 'assert', cond: T.cmp('>=', n, T.int(0)), check: this.check('bounds', e.size.range, 'the array size may be negative', frame, [['size', n]]) },
            { k: 'havocLocal', vars: [r] },
            ...this.freshObject(arr, type),
            { k: 'assume', cond: T.eq(lengthOf(arr), n) },
            {
                k: 'update', map: elems, params: [a, i],
                value: T.ite(T.eq(T.v(a.name, 'Ref'), arr), defaultValue(e.element), this.read(elems, [T.v(a.name, 'Ref'), T.v(i.name, 'Int')])),
            },
        ];
        return { cmds: [...size.cmds, this.op('alloc', e.range, frame, [], body, `new ${typeString(e.element)}[]`, { fresh: [arr] })], term: arr };
    }

    // ------------------------------------------------------------ calls

    private call(e: Extract<Expr, { kind: 'call' }>, frame: MethodFrame): { cmds: Cmd[]; term: Term } {
        const m = this.vocab.method(e.method);
        if (!m) throw new LoweringError(`unknown method ${e.method}`, e.range);
        const cmds: Cmd[] = [];
        let receiver: Term | undefined;
        if (e.receiver) {
            const r = this.expr(e.receiver, frame);
            append(cmds, r.cmds);
            receiver = this.asLocal(r.term, 'recv', cmds, e.receiver.type);
            cmds.push({ k: 'checkLocal', cond: T.ne(receiver, T.NULL), check: this.check('null', e.receiver.range, `possible null dereference: the receiver of '${m.name}' may be null`, frame) });
        } else if (!m.isStatic && m.owner) {
            receiver = frame.thisTerm; // an instance method called on this
        }
        const args: Term[] = [];
        e.args.forEach((a, i) => {
            const val = this.expr(a, frame);
            append(cmds, val.cmds);
            args.push(this.asLocal(val.term, 'arg', cmds, m.params[i]?.type));
        });
        const chain = [...frame.chain, { method: m.id, range: e.range }];
        const resultVar = m.returnType.kind === 'void' ? undefined : this.fresh(`result_${m.name}`, sortOfType(m.returnType), m.returnType);
        const inline = this.options.inlineBodies;
        if (m.abstraction && !inline) {
            append(cmds, this.inlineAbstraction(m, m.abstraction, receiver, args, resultVar, e.range, frame));
        } else if (inline && chain.length > inline.maxDepth) {
            cmds.push({ k: 'assumeLocal', cond: T.FALSE }); // witness search: deeper calls are beyond the bound
        } else {
            if (chain.length > MAX_INLINE_DEPTH) throw new LoweringError(`calls nested deeper than ${MAX_INLINE_DEPTH} through methods without abstraction`, e.range);
            const callee: MethodFrame = this.newFrame(chain, receiver, m);
            callee.resultVar = resultVar;
            const bind: Cmd[] = [];
            // (witness search: the abstraction reads the parameters' values at entry, whatever the body assigns them)
            const entry: string[] = [];
            m.params.forEach((p, i) => {
                const name = this.fresh(p.id, sortOfType(p.type), p.type);
                callee.vars.set(p.id, name);
                bind.push({ k: 'local', var: name, value: args[i] });
                if (inline && m.abstraction) {
                    const copy = this.fresh(`${p.id}_entry`, sortOfType(p.type), p.type);
                    bind.push({ k: 'local', var: copy, value: args[i] });
                    entry.push(copy);
                }
            });
            // witness search only (inlined body of a method with an abstraction): the checks of the call
            // that the abstraction's own check relies on, as in inlineAbstraction
            if (inline && m.abstraction) append(bind, this.assumedInvariants(m, receiver, args, e.range, frame));
            for (const r of m.abstraction?.requires ?? []) {
                bind.push({
                    k: 'checkState', cond: translate(r.expr, this.ctx(callee)),
                    check: { ...this.check('abstraction', e.range, `the precondition '${r.text}' of '${m.name}' may not hold at this call`, frame), related: { range: r.range, message: `precondition of '${m.name}'` } },
                });
            }
            const saved = this.pendingWitness;
            this.pendingWitness = undefined;
            const body = this.withMonitor(m, callee, receiver, () => this.stmts(m.body, callee));
            this.pendingWitness = saved;
            const scope: Cmd = { k: 'scope', label: callee.exitLabel, body };
            append(cmds, bind, [scope]);
            if (m.abstraction) inline?.onInline?.({ method: m, scope, receiver, params: entry, resultVar, range: e.range, chain: frame.chain });
        }
        return { cmds, term: resultVar ? this.localTerm(resultVar) : T.TRUE };
    }

    /**
     * The check of a method with an abstraction assumes the invariants (its
     * `this` and reference parameters are published objects, and every
     * published object satisfies its class invariants): at a call, they must
     * hold. A receiver or argument (and what it links to) may still be private
     * to the thread, where its class invariants are not checked yet: they are
     * checked here for those objects, as at publication. During the
     * initializers, no invariant has to hold yet: each one the callee may
     * assume is checked at the call.
     */
    private assumedInvariants(m: MethodModel, receiver: Term | undefined, args: Term[], range: Range, frame: MethodFrame): Cmd[] {
        this.invariants ??= allInvariants(this.vocab);
        const out: Cmd[] = [];
        const related = (inv: Invariant) => ({ range: inv.clause.range, message: inv.origin });
        if (this.target.kind === 'init') {
            for (const inv of this.invariants) {
                out.push({
                    k: 'checkState', cond: inv.term,
                    check: { ...this.check('invariant', range, `'${m.name}' assumes the invariant '${inv.text}', which may not hold yet during the initializers`, frame), related: related(inv), ...inferredInvariant(inv) },
                });
            }
            return out;
        }
        if (!this.vocab.has(OWNER)) return []; // no objects: nothing private
        // the receiver and the reference arguments, with their static types
        const objects: Array<{ term: Term; type: Type }> = [];
        if (receiver && m.owner && !m.isStatic) objects.push({ term: receiver, type: { kind: 'class', name: m.owner } });
        m.params.forEach((p, i) => { if (p.type.kind === 'class' || p.type.kind === 'array') objects.push({ term: args[i], type: p.type }); });
        if (objects.length === 0) return [];
        const reachable = reachableClasses(this.vocab, objects.map(x => x.type));
        const tid = this.target.tid;
        const privateObj = (x: Term) => T.and(allocated(x), T.eq(ownerOf(x), tid));
        // (a published object references published objects only: what a private one references is linked)
        const somePrivate = T.or(...objects.map(x => privateObj(x.term)));
        for (const inv of this.invariants) {
            const t = inv.term;
            if (inv.className === undefined || !reachable.has(inv.className) || t.t !== 'quant' || t.vars.length !== 1) continue;
            const o = T.v(t.vars[0].name, 'Ref');
            const type: Type = { kind: 'class', name: inv.className };
            const ofClass = (x: Term) => T.and(privateObj(x), T.eq(dtypeOf(x), T.int(this.vocab.typeId(type))));
            const body = (x: Term) => translate(inv.clause.expr, stateCtx(this.vocab, tid, undefined, x));
            // the receiver and arguments of the class themselves (so their values are shown), and
            // the private objects of the class that a private object references
            const cond = T.and(
                ...objects.filter(x => x.type.kind === 'class' && x.type.name === inv.className).map(x => T.implies(ofClass(x.term), body(x.term))),
                T.implies(somePrivate, T.forall(t.vars, T.implies(T.and(ofClass(o), linkedOf(o)), body(o)))),
            );
            out.push({
                k: 'checkState', cond,
                check: {
                    ...this.check('invariant', range, `'${m.name}' assumes the invariant '${inv.text}' of its receiver and arguments, which may not hold here for an object still private to this thread`, frame),
                    related: related(inv), ...inferredInvariant(inv),
                },
            });
        }
        return out;
    }

    /**
     * InlineAbs: a call to a method with an abstraction becomes the
     * abstraction's actions with `this` and the parameters substituted:
     * check `requires`, then `K*; Y1; K*; ...; Yn; K*`, then assume `ensures`.
     */
    private inlineAbstraction(m: MethodModel, abs: AbstractionModel, receiver: Term | undefined, args: Term[], resultVar: string | undefined, range: Range, frame: MethodFrame): Cmd[] {
        const instance = this.inlineCount++;
        const vars = new Map<string, string>();
        const out: Cmd[] = [];
        m.params.forEach((p, i) => {
            const name = this.fresh(p.id, sortOfType(p.type), p.type);
            vars.set(p.id, name);
            out.push({ k: 'local', var: name, value: args[i] });
        });
        const callFrame: MethodFrame = { ...frame, vars, thisTerm: receiver };
        const oldState = `old${instance}`;
        const base = this.ctx(callFrame);
        append(out, this.assumedInvariants(m, receiver, args, range, frame));
        for (const r of abs.requires) {
            out.push({
                k: 'checkState', cond: translate(r.expr, base),
                check: { ...this.check('abstraction', range, `the precondition '${r.text}' of '${m.name}' may not hold at this call`, frame), related: { range: r.range, message: `precondition of '${m.name}'` } },
            });
        }
        out.push({ k: 'snapshot', name: oldState });
        const actionOp = (a: Action, step: number | 'stutter'): Cmd => {
            const ctx: TrContext = { ...base, pre: OP_PRE, old: { ...base, pre: oldState } };
            const frameInfo = frameOf(this.vocab, a, ctx);
            const body: OpCmd[] = [];
            const accesses: Access[] = [];
            for (const [map, where] of frameInfo) {
                const params = keyParams(this.vocab, map, `k!${map}!`);
                body.push({ k: 'havocMap', map, params, where: frameWhere(where, params) });
                const sv = this.vocab.stateVar(map);
                const loc: Loc = sv.kind === 'global' ? { kind: 'global', map } : { kind: 'all', map };
                accesses.push({ loc, write: true, sync: true, field: sv.field, range, text: sv.field?.name ?? map });
            }
            body.push({ k: 'assume', cond: actionPredicate(a, ctx) });
            append(body, this.publishByAction(frameInfo));
            const label = step === 'stutter' ? `stutter of '${m.name}'` : `step ${step} of '${m.name}'`;
            return this.op(step === 'stutter' ? 'stutter' : 'step', range, frame, accesses, body, label, { abstraction: { method: m, step } });
        };
        const stutter = (): Cmd[] => {
            if (!abs.stutter) return [];
            const label = this.label('stutter');
            const choice = this.fresh('choice', 'Bool');
            return [{
                k: 'loop', label, invariants: [], range,
                body: [{ k: 'havocLocal', vars: [choice] }, { k: 'if', cond: this.localTerm(choice), then: [{ k: 'break', label }], else: [] }, actionOp(abs.stutter, 'stutter')],
            }];
        };
        abs.steps.forEach((step, i) => {
            append(out, stutter());
            out.push(actionOp(step, i + 1));
        });
        append(out, stutter());
        if (resultVar) out.push({ k: 'havocLocal', vars: [resultVar] });
        const resultTerm = resultVar ? this.localTerm(resultVar) : undefined;
        for (const en of abs.ensures) {
            out.push({ k: 'assumeState', cond: translate(en.expr, { ...base, old: { ...base, pre: oldState }, result: resultTerm }) });
        }
        if (resultVar && m.returnType.kind !== 'int' && m.returnType.kind !== 'boolean') {
            const w = wellTyped(this.vocab, this.localTerm(resultVar), m.returnType);
            if (w.t !== 'bool') out.push({ k: 'assumeState', cond: T.and(w, initializedFacts(this.vocab, this.localTerm(resultVar), m.returnType)) });
        }
        return out;
    }
}

/** The classes whose objects can be reached from values of the given types (through fields and elements). */
function reachableClasses(vocab: Vocabulary, types: Type[]): Set<string> {
    const out = new Set<string>();
    const work = [...types];
    while (work.length > 0) {
        const t = work.pop()!;
        if (t.kind === 'array') work.push(t.element);
        if (t.kind !== 'class' || out.has(t.name)) continue;
        out.add(t.name);
        for (const f of vocab.classes.get(t.name)?.fields ?? []) if (!f.isStatic) work.push(f.type);
    }
    return out;
}

/**
 * `witness step N` before a statement that only reads: its last read is the
 * step (a step that changes nothing, such as an observation `step [] P`).
 */
function witnessOnRead(cmds: Cmd[], step: number): void {
    const ops: AtomicOp[] = [];
    const walk = (cs: Cmd[]) => {
        for (const c of cs) {
            if (c.k === 'op') ops.push(c.op);
            else if (c.k === 'if') { walk(c.then); walk(c.else); } else if (c.k === 'loop' || c.k === 'scope') walk(c.body);
        }
    };
    walk(cmds);
    if (ops.some(o => o.witness !== undefined)) return;
    const last = [...ops].reverse().find(o => o.kind === 'read');
    if (last) last.witness = step;
}

/** Globals and static fields, in the textual order of their initializers (files ordered as the program's). */
export function staticFieldsInOrder(program: ProgramModel): FieldModel[] {
    const all = [...program.globals, ...program.classes.flatMap(c => c.fields.filter(f => f.isStatic))];
    const pos = (f: FieldModel) => [program.files.indexOf(f.range.file), f.range.startLine, f.range.startChar];
    return all.sort((a, b) => {
        const [x, y] = [pos(a), pos(b)];
        return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
}

/** The value of an expression that reads no state and no variable (a constant), or undefined. */
/** An inferred invariant's obligation (infer/): its failure refutes the inference, it is not the program's. */
function inferredInvariant(inv: Invariant): Pick<CheckInfo, 'inferred'> {
    return inv.clause.inferred ? { inferred: { kind: 'invariant', field: inv.clause.inferred.field } } : {};
}

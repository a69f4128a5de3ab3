import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import { keysEqual, type ReadVar, type SymAssert, type SymEvent, type SymProgram, type SymWrite, type TimePoint } from './symbolic.js';

/**
 * The interleavings of the unrolled threads (issue 14), as constraints over
 * the events of symbolic.ts, in the style of the interference-abstractions
 * paper but quantifier-free and with context bounding:
 *
 * - The execution is `switches + 1` segments; segment k is run by thread
 *   `sched_k`. Each thread's events are cut by boundaries b_1 <= ... <= b_{S+1}
 *   on its event numbers: the events numbered in [b_k, b_{k+1}) run in
 *   segment k (an empty range unless `sched_k` is the thread), and the thread
 *   stops before b_{S+1}. An event is *taken* when its path condition holds
 *   and its number is below the stop; taken events are totally ordered by
 *   (segment, number).
 * - A read takes the value of the latest taken write to the same location
 *   before it (or the location's initial value): it chooses one write, the
 *   write is visible (taken, same keys, earlier), and every visible write is
 *   no later than the chosen one. This is the paper's reads-from with its
 *   sequential-consistency axioms, instantiated for every read and write
 *   (constraints linear in reads × writes).
 * - A taken event satisfies its blocking assumptions, and its checks hold
 *   unless the check is the failure searched for.
 */
export class Encoder {
    readonly lines: string[] = [];
    private readonly S: number;
    /** Event numbers per thread are below M. */
    private readonly M: number;
    private readonly byMap = new Map<string, SymWrite[]>();
    private n = 0;
    readonly selectors: Array<{ name: string }> = [];
    /** Asserts relaxed when a candidate is selected: assert → selector names. */
    private readonly relaxed = new Map<SymAssert, string[]>();

    constructor(readonly sp: SymProgram, switches: number) {
        this.S = switches;
        this.M = Math.max(1, ...sp.byThread.map(es => es.length)) + 1;
        for (const w of sp.writes) this.byMap.set(w.map, [...(this.byMap.get(w.map) ?? []), w]);
    }

    // ------------------------------------------------------------ names

    x(e: SymEvent): Term { return T.v(`x${e.id}`, 'Bool'); }
    bound(t: number, k: number): Term { return k === 0 ? T.int(0) : T.v(`b${t}_${k}`, 'Int'); }
    sched(k: number): Term { return T.v(`sched${k}`, 'Int'); }

    /** The event's segment is at least k (1 <= k <= S): a bound on the thread's boundary. */
    segAtLeast(e: SymEvent, k: number): Term {
        if (k <= 0) return T.TRUE;
        if (k > this.S) return T.FALSE;
        return T.cmp('<=', this.bound(e.thread.index, k), T.int(e.idx));
    }

    /** The event's segment is k. */
    segIs(e: SymEvent, k: number): Term {
        return T.and(this.segAtLeast(e, k), T.not(this.segAtLeast(e, k + 1)));
    }

    private readonly beforeMemo = new Map<string, Term>();

    /** seg(a) < seg(b) (a constant per pair of events, so that the many reads that ask share it). */
    segBefore(a: SymEvent, b: SymEvent): Term {
        const key = `${a.id}<${b.id}`;
        let t = this.beforeMemo.get(key);
        if (!t) {
            const parts: Term[] = [];
            for (let k = 1; k <= this.S; k++) parts.push(T.and(T.not(this.segAtLeast(a, k)), this.segAtLeast(b, k)));
            const def = T.or(...parts);
            t = def.t === 'bool' ? def : this.fresh(`bf${a.id}_${b.id}`, 'Bool');
            if (t !== def) this.lines.push(`(assert (= ${T.toSmt(t)} ${T.toSmt(def)}))`);
            this.beforeMemo.set(key, t);
        }
        return t;
    }

    /** seg(b) = seg(a) + 1. */
    segNext(a: SymEvent, b: SymEvent): Term {
        const parts: Term[] = [];
        for (let k = 0; k < this.S; k++) parts.push(T.and(this.segIs(a, k), this.segIs(b, k + 1)));
        return T.or(...parts);
    }

    /** Event a is taken before event b (both taken). */
    before(a: SymEvent, b: SymEvent): Term {
        if (a === b) return T.FALSE;
        if (a.thread === b.thread) return T.bool(a.idx < b.idx);
        return this.segBefore(a, b);
    }

    /** The write has happened at the point in time. */
    precedes(w: SymWrite, at: TimePoint): Term {
        if (w.event === at.event) return T.bool(at.phase === 'post');
        return this.before(w.event, at.event);
    }

    /** Write b happens after write a (both taken). */
    private writeAfter(b: SymWrite, a: SymWrite): Term {
        if (a.event === b.event) return T.bool(b.pos > a.pos);
        return this.before(a.event, b.event);
    }

    private fresh(prefix: string, sort: 'Int' | 'Bool'): Term {
        const name = `${prefix}~${this.n++}`;
        this.lines.push(`(declare-const ${T.symbol(name)} ${sort})`);
        return T.v(name, sort);
    }

    assert(t: Term): void {
        if (t.t === 'bool' && t.value) return;
        this.lines.push(`(assert ${T.toSmt(t)})`);
    }

    /** A candidate failure: a selector that, when chosen, makes `formula` hold and relaxes `relax` (the checks that fail). */
    candidate(formula: Term, relax: SymAssert[] = []): number {
        const i = this.selectors.length;
        const name = `sel~${i}`;
        this.selectors.push({ name });
        for (const a of relax) this.relaxed.set(a, [...(this.relaxed.get(a) ?? []), name]);
        this.candidateFormulas.push(formula);
        return i;
    }
    private readonly candidateFormulas: Term[] = [];

    // ------------------------------------------------------------ the script

    /**
     * The whole query (declarations, the program, the interleavings, the failure); `checkpoint`
     * is awaited now and then (the reads-from constraints of a large program take a while).
     */
    async script(checkpoint?: () => Promise<void>): Promise<string> {
        const sp = this.sp;
        const out: string[] = [
            '(declare-const sel~which Int)',
            '(define-fun jdiv ((a Int) (b Int)) Int (ite (= (>= a 0) (> b 0)) (div (abs a) (abs b)) (- (div (abs a) (abs b)))))',
            '(define-fun jmod ((a Int) (b Int)) Int (- a (* b (jdiv a b))))',
        ];
        for (const [name, sort] of sp.decls) out.push(`(declare-const ${T.symbol(name)} ${sort})`);
        const nThreads = sp.bp.threads.length;
        for (let k = 0; k <= this.S; k++) out.push(`(declare-const sched${k} Int)`);
        for (let t = 0; t < nThreads; t++) for (let k = 1; k <= this.S + 1; k++) out.push(`(declare-const b${t}_${k} Int)`);
        for (const e of sp.events) out.push(`(declare-const x${e.id} Bool)`);
        for (const s of this.selectors) out.push(`(define-fun ${s.name} () Bool (= sel~which ${this.selectors.indexOf(s)}))`);
        const body: string[] = [];
        const assert = (t: Term) => { if (!(t.t === 'bool' && t.value)) body.push(`(assert ${T.toSmt(t)})`); };
        for (const f of sp.facts) assert(f);
        // segments and boundaries
        for (let k = 0; k <= this.S; k++) assert(T.and(T.cmp('>=', this.sched(k), T.int(0)), T.cmp('<', this.sched(k), T.int(nThreads))));
        for (let t = 0; t < nThreads; t++) {
            for (let k = 1; k <= this.S + 1; k++) assert(T.cmp('<=', this.bound(t, k - 1), this.bound(t, k)));
            assert(T.cmp('<=', this.bound(t, this.S + 1), T.int(this.M)));
            for (let k = 0; k <= this.S; k++) assert(T.implies(T.ne(this.sched(k), T.int(t)), T.eq(this.bound(t, k + 1), this.bound(t, k))));
        }
        for (const e of sp.events) {
            const t = e.thread.index;
            assert(T.eq(this.x(e), T.and(e.guard, T.cmp('<', T.int(e.idx), this.bound(t, this.S + 1)))));
            if (e.blocks.length > 0) assert(T.implies(this.x(e), T.and(...e.blocks)));
            for (const a of e.asserts) {
                if (!FATAL.has(a.check.code)) continue;
                const off = this.relaxedBy(e, a);
                assert(T.implies(T.and(this.x(e), a.when, T.not(off)), a.cond));
            }
        }
        // reads from writes
        for (const [i, r] of sp.reads.entries()) {
            if (checkpoint && i % 16 === 15) await checkpoint();
            this.readsFrom(r, assert);
        }
        // the failure: exactly one candidate
        const sels = this.selectors.map(s => T.v(s.name, 'Bool'));
        assert(sels.length === 0 ? T.FALSE : T.and(T.cmp('>=', T.v('sel~which', 'Int'), T.int(0)), T.cmp('<', T.v('sel~which', 'Int'), T.int(sels.length))));
        this.candidateFormulas.forEach((f, i) => assert(T.implies(sels[i], f)));
        return [...out, ...this.lines, ...body, '(check-sat)', ''].join('\n');
    }

    /** The selectors under which an assert (or an earlier one of the same event) is the failure: then it need not hold. */
    private relaxedBy(e: SymEvent, a: SymAssert): Term {
        const names: string[] = [];
        for (const b of e.asserts) if (b.pos <= a.pos) names.push(...(this.relaxed.get(b) ?? []));
        return T.or(...names.map(n => T.v(n, 'Bool')));
    }

    private readsFrom(r: ReadVar, assert: (t: Term) => void): void {
        const v = T.v(r.name, r.sort);
        const init = this.initial(r.map, r.keys);
        const at = r.at;
        const cands = (this.byMap.get(r.map) ?? []).filter(w => {
            const same = keysEqual(w.keys, r.keys);
            if (same.t === 'bool' && !same.value) return false;
            if (!at) return true;
            if (w.event === at.event) return at.phase === 'post';
            return !(w.event.thread === at.event.thread && w.event.idx > at.event.idx);
        });
        if (cands.length === 0) { assert(T.eq(v, init)); return; }
        const vis = cands.map(w => {
            const c = this.fresh(`${r.name}~v`, 'Bool');
            assert(T.eq(c, T.and(this.x(w.event), w.when, keysEqual(w.keys, r.keys), at ? this.precedes(w, at) : T.TRUE)));
            return c;
        });
        const picks: Term[] = [];
        const fromInit = this.fresh(`${r.name}~i`, 'Bool');
        picks.push(fromInit);
        assert(T.implies(fromInit, T.and(T.eq(v, init), ...vis.map(x => T.not(x)))));
        cands.forEach((w, i) => {
            const pick = this.fresh(`${r.name}~p`, 'Bool');
            picks.push(pick);
            // the latest visible write: no visible write after it
            const later = cands.map((w2, j) => (j === i ? T.TRUE : T.not(T.and(vis[j], this.writeAfter(w2, w)))));
            assert(T.implies(pick, T.and(vis[i], T.eq(v, w.value), ...later)));
        });
        assert(T.or(...picks));
    }

    /** A location's value after the field initializers (the default where they did not write). */
    initial(map: string, keys: Term[]): Term {
        return this.sp.initialValue(map, keys);
    }

    /**
     * The object (a reference term) is published at the point in time: made by
     * the field initializers, or published by its thread before (as lower.ts
     * publishes: storing a reference into a shared location publishes it and
     * every object linked before — stored into a field or element of one of the
     * thread's own objects). Shared locations here are globals and the objects
     * of the field initializers (the checker counts more; the replay decides
     * exactly).
     */
    published(o: Term, at: TimePoint): Term {
        const sp = this.sp;
        const parts: Term[] = [T.and(T.cmp('>', o, T.int(0)), T.cmp('<=', o, T.int(sp.initRefMax)))];
        const refStores = sp.writes.filter(w => sp.bp.ctx.vocab.sortOfVar(w.map) === 'Ref');
        const initObject = (k: Term) => T.and(T.cmp('>', k, T.int(0)), T.cmp('<=', k, T.int(sp.initRefMax)));
        for (const a of sp.events) {
            if (a.allocRef === undefined) continue;
            const R = T.int(a.allocRef);
            const mine = refStores.filter(w => w.event.thread === a.thread && w.event.idx > a.idx);
            const taken = (w: SymWrite) => T.and(this.x(w.event), w.when);
            const sharedStore = (w: SymWrite) => (w.keys.length === 0 ? T.TRUE : initObject(w.keys[0]));
            const linkedBefore = (w: SymWrite) => T.or(...mine.filter(l => l !== w && l.keys.length > 0 && (l.event !== w.event || l.pos < w.pos) && l.event.idx <= w.event.idx)
                .map(l => T.and(taken(l), T.eq(l.value, R), T.cmp('>', l.keys[0], T.int(sp.initRefMax)))));
            const by = mine.map(w => T.and(taken(w), sharedStore(w), this.precedes(w, at), T.or(T.eq(w.value, R), linkedBefore(w))));
            parts.push(T.and(T.eq(o, R), T.or(...by)));
        }
        return T.or(...parts);
    }

    /** The object was allocated by the thread and is not (known to be) published: private to it. */
    privateTo(thread: number, o: Term, at: TimePoint): Term {
        const mine = this.sp.events.filter(a => a.allocRef !== undefined && a.thread.index === thread);
        return T.and(T.or(...mine.map(a => T.and(T.eq(o, T.int(a.allocRef!)), this.x(a), this.before(a, at.event)))), T.not(this.published(o, at)));
    }

    private readonly lastMemo = new Map<SymEvent, Term>();
    private readonly firstMemo = new Map<SymEvent, Term>();

    /** The event is taken and its thread takes nothing more in its segment. */
    lastInSegment(e: SymEvent): Term {
        let t = this.lastMemo.get(e);
        if (!t) {
            const later = this.sp.byThread[e.thread.index].filter(o => o.idx > e.idx);
            t = this.fresh(`last${e.id}`, 'Bool');
            this.lines.push(`(assert (= ${T.toSmt(t)} ${T.toSmt(T.and(...later.map(o => T.implies(this.x(o), this.segBefore(e, o)))))}))`);
            this.lastMemo.set(e, t);
        }
        return t;
    }

    /** Its thread took nothing before the event in the event's segment. */
    firstInSegment(e: SymEvent): Term {
        let t = this.firstMemo.get(e);
        if (!t) {
            const earlier = this.sp.byThread[e.thread.index].filter(o => o.idx < e.idx);
            t = this.fresh(`first${e.id}`, 'Bool');
            this.lines.push(`(assert (= ${T.toSmt(t)} ${T.toSmt(T.and(...earlier.map(o => T.implies(this.x(o), this.segBefore(o, e)))))}))`);
            this.firstMemo.set(e, t);
        }
        return t;
    }

    /** Names whose values a model must give for the trace. */
    modelNames(): string[] {
        const sp = this.sp;
        return [
            'sel~which',
            ...sp.events.map(e => `x${e.id}`),
            ...sp.bp.threads.flatMap(t => Array.from({ length: this.S }, (_, k) => `b${t.index}_${k + 1}`)),
            ...sp.havocs.flatMap(h => [h.name, (h.guard as { name?: string }).name ?? '']).filter(n => n !== '' && sp.decls.has(n)),
        ];
    }
}

/** Failed checks that stop a thread (an exception in Java): a witness passes none of them before its failure. */
export const FATAL = new Set(['assert', 'null', 'bounds', 'div-zero']);

/** Parses `((name value) ...)` from get-value. */
export function parseModel(text: string): Map<string, bigint | boolean> {
    const out = new Map<string, bigint | boolean>();
    const re = /\(\s*(\|[^|]*\||[^\s()]+)\s+(true|false|-?\d+|\(\s*-\s*\d+\s*\))\s*\)/g;
    for (let m = re.exec(text); m; m = re.exec(text)) {
        const name = m[1].replace(/^\||\|$/g, '');
        const v = m[2];
        out.set(name, v === 'true' ? true : v === 'false' ? false : BigInt(v.replace(/[()\s]/g, '').replace(/^-/, '-')));
    }
    return out;
}

// Held facts (for the quick fixes): the locations `L` for which `L == tid`
// surely holds at a point of the code — the monitors held (`o.holder == tid`),
// the lock variables this thread set to its id (`m == tid` after a successful
// `cas(m, 0, tid)` or a call whose abstraction step says `m' == tid`) — as far
// as a simple forward walk over the syntax can tell. They are guesses for
// annotations the checker then checks, never facts the checker relies on.
import type { AstNode } from 'langium';
import { AstUtils } from 'langium';
import * as ast from '@calvin/language';
import { enclosingMethod, enclosingThread, isInAnnotation, isSynchronized, methodSpec } from '@calvin/language';
import {
    callMap, locKey, locOf, locToCallee, locToCaller, pathOf, writtenField, type CallMap, type Field, type SourceLoc,
} from './locations.js';

/** A write: the field, and the location when known (callee's scope in a summary). */
export interface Write {
    field: Field;
    loc?: SourceLoc;
}

/** What a call does to the held facts: what it may write, the facts it establishes (callee's scope). */
interface Summary {
    kills: Write[];
    adds: SourceLoc[];
}

const MAX_DEPTH = 4;

/** The methods, calls and threads of a program (its documents' roots). */
export class ProgramIndex {
    private sites?: Map<ast.MethodDecl, Array<ast.NameExpr | ast.MemberAccess>>;
    private readonly summaries = new Map<ast.MethodDecl, Summary>();

    /**
     * With `constantLocks`, a spin lock that stores a constant (`while
     * (!cas(l, 0, 1))`) counts as if it stored the thread's id: the guard it
     * would give once it does (`constantSites` collects those cas).
     */
    readonly constantSites: ast.CasExpr[] = [];

    /** `roots`: the program's documents; `holder`: the built-in field of every object's monitor. */
    constructor(readonly roots: ast.Program[], readonly holder: Field | undefined, readonly constantLocks = false) { }

    /** Every call of `m` in code (not in annotations). */
    callSites(m: ast.MethodDecl): Array<ast.NameExpr | ast.MemberAccess> {
        if (!this.sites) {
            this.sites = new Map();
            for (const root of this.roots) {
                for (const n of AstUtils.streamAst(root)) {
                    if (!(ast.isNameExpr(n) || ast.isMemberAccess(n)) || !n.isCall) continue;
                    const callee = calleeOf(n);
                    if (!callee || isInAnnotation(n)) continue;
                    const list = this.sites.get(callee) ?? [];
                    list.push(n);
                    this.sites.set(callee, list);
                }
            }
        }
        return this.sites.get(m) ?? [];
    }

    /** Every read or write of a field in code (not in annotations, not in field initializers). */
    accessesOf(f: Field): Array<ast.NameExpr | ast.MemberAccess> {
        const out: Array<ast.NameExpr | ast.MemberAccess> = [];
        for (const root of this.roots) {
            for (const n of AstUtils.streamAst(root)) {
                if (ast.isNameExpr(n) && n.ref.ref === f && !isInAnnotation(n) && (enclosingMethod(n) || enclosingThread(n))) out.push(n);
                else if (ast.isMemberAccess(n) && n.member.ref === f && !isInAnnotation(n) && (enclosingMethod(n) || enclosingThread(n))) out.push(n);
            }
        }
        return out;
    }

    summary(m: ast.MethodDecl, depth: number): Summary {
        const known = this.summaries.get(m);
        if (known) return known;
        // provisional entry: a recursive call (an error anyway) sees nothing
        this.summaries.set(m, { kills: [], adds: [] });
        const s = computeSummary(m, this, depth);
        this.summaries.set(m, s);
        return s;
    }
}

export function calleeOf(call: ast.NameExpr | ast.MemberAccess): ast.MethodDecl | undefined {
    const d = ast.isNameExpr(call) ? call.ref.ref : call.member.ref;
    return ast.isMethodDecl(d) ? d : undefined;
}

/** A set of held locations, by key. */
export class Facts {
    readonly map = new Map<string, SourceLoc>();

    static of(locs: Iterable<SourceLoc>): Facts {
        const f = new Facts();
        for (const l of locs) f.add(l);
        return f;
    }

    add(l: SourceLoc): void { this.map.set(locKey(l), l); }
    has(l: SourceLoc): boolean { return this.map.has(locKey(l)); }
    /**
     * Forget what a write may change: the facts about the same field, except
     * on another object named by another global (`a.held` survives a write of
     * `c.held`: distinct globals are taken as distinct objects — a guess).
     */
    kill(writes: Iterable<Write>): void {
        for (const w of writes) {
            for (const [k, l] of this.map) {
                if (l.field !== w.field) continue;
                const distinct = w.loc?.k === 'inst' && l.k === 'inst' && w.loc.base.k === 'global' && l.base.k === 'global' && w.loc.base.field !== l.base.field;
                if (!distinct) this.map.delete(k);
            }
        }
    }
    copy(): Facts { return Facts.of(this.map.values()); }
    intersect(o: Facts): Facts { return Facts.of([...this.map.entries()].filter(([k]) => o.map.has(k)).map(([, l]) => l)); }
    get locs(): SourceLoc[] { return [...this.map.values()]; }
}

/** `L == tid` conjuncts of a condition (requires clauses). */
export function factsOfCondition(e: ast.Expression | undefined, out: SourceLoc[] = []): SourceLoc[] {
    if (!e) return out;
    if (ast.isBinaryExpr(e) && e.operator === '&&') { factsOfCondition(e.left, out); factsOfCondition(e.right, out); }
    else if (ast.isBinaryExpr(e) && e.operator === '==') {
        const l = ast.isTidExpr(e.right) ? locOf(e.left) : ast.isTidExpr(e.left) ? locOf(e.right) : undefined;
        if (l) out.push(l);
    }
    return out;
}

/** `L' == tid` conjuncts of an action: the locations a step sets to the thread's id. */
function setToTid(e: ast.Expression | undefined, out: SourceLoc[] = []): SourceLoc[] {
    if (!e) return out;
    if (ast.isBinaryExpr(e) && e.operator === '&&') { setToTid(e.left, out); setToTid(e.right, out); }
    else if (ast.isBinaryExpr(e) && e.operator === '==') {
        const primed = (x: ast.Expression) => (ast.isNameExpr(x) || ast.isMemberAccess(x)) && x.primed;
        const l = ast.isTidExpr(e.right) && primed(e.left) ? locOf(e.left) : ast.isTidExpr(e.left) && primed(e.right) ? locOf(e.right) : undefined;
        if (l) out.push(l);
    }
    return out;
}

/** What a frame lets change. */
function frameWrites(frame: ast.Frame | undefined): Write[] {
    const out: Write[] = [];
    for (const e of frame?.entries ?? []) {
        if (ast.isAnyObjectField(e)) { if (e.field.ref) out.push({ field: e.field.ref }); } else out.push(...writeOf(e.location));
    }
    return out;
}

/** The write of an assignment target (an array element: its array's field, location unknown). */
function writeOf(target: ast.Expression): Write[] {
    const field = writtenField(target);
    if (!field) return [];
    return [{ field, loc: ast.isIndexAccess(target) ? undefined : locOf(target) }];
}

function computeSummary(m: ast.MethodDecl, index: ProgramIndex, depth: number): Summary {
    const spec = methodSpec(m);
    if (spec.abstraction || spec.requires.length > 0 || spec.ensures.length > 0) {
        const facts = new Facts();
        const kills: Write[] = [];
        for (const item of spec.abstraction?.items ?? []) {
            if (!ast.isAbsStep(item) && !ast.isAbsStutter(item)) continue;
            const writes = frameWrites(item.frame);
            kills.push(...writes);
            facts.kill(writes);
            if (ast.isAbsStep(item)) for (const l of setToTid(item.action)) facts.add(l);
        }
        for (const e of spec.ensures) for (const l of factsOfCondition(e.condition)) facts.add(l);
        return { kills, adds: facts.locs };
    }
    if (depth > MAX_DEPTH) return { kills: [], adds: [] };
    const walker = new Walker(index, depth + 1);
    const end = walker.stmts((m.body?.stmts ?? []), new Facts());
    return { kills: walker.kills, adds: end.locs };
}

/**
 * The forward walk: the facts after each statement. `kills` collects every
 * field the walked code may write (a callee's summary).
 */
class Walker {
    readonly kills: Write[] = [];

    constructor(private readonly index: ProgramIndex, private readonly depth: number) { }

    private kill(facts: Facts, writes: Write[]): void {
        this.kills.push(...writes);
        facts.kill(writes);
    }

    stmts(stmts: ast.Statement[], facts: Facts): Facts {
        let f = facts;
        for (const s of stmts) f = this.stmt(s, f);
        return f;
    }

    stmt(s: ast.Statement | undefined, facts: Facts): Facts {
        const f = facts.copy();
        if (!s) return f; // (a statement the parser could not recover)
        if (ast.isBlock(s)) return this.stmts(s.stmts, f);
        if (ast.isAtomicStmt(s)) return this.stmts((s.body?.stmts ?? []), f);
        if (ast.isLocalVarDecl(s)) { this.expr(s.init, f); return f; }
        if (ast.isAssignStmt(s)) {
            this.expr(s.value, f);
            this.expr(ast.isIndexAccess(s.target) ? s.target.index : undefined, f);
            const writes = writeOf(s.target);
            if (writes.length > 0) {
                this.kill(f, writes);
                const l = locOf(s.target);
                if (l && s.op === '=' && ast.isTidExpr(s.value)) f.add(l);
            }
            return f;
        }
        if (ast.isExprStmt(s)) { this.expr(s.expr, f); return f; }
        if (ast.isIfStmt(s)) {
            this.expr(s.condition, f);
            const a = this.stmt(s.then, f);
            const b = s.else ? this.stmt(s.else, f) : f;
            return a.intersect(b);
        }
        if (ast.isWhileStmt(s) || ast.isForStmt(s)) {
            let g = f;
            if (ast.isForStmt(s) && s.init) g = this.stmt(s.init as ast.Statement, g);
            const spin = spinCas(s);
            // whatever an iteration writes may have happened any number of times
            this.kill(g, this.writes(s));
            if (spin) {
                const l = locOf(spin.target);
                if (l && ast.isTidExpr(spin.update)) g.add(l);
                else if (l && this.index.constantLocks && isConstantLock(spin)) {
                    g.add(l);
                    if (!this.index.constantSites.includes(spin)) this.index.constantSites.push(spin);
                }
            }
            return g;
        }
        if (ast.isSyncStmt(s)) {
            const held = this.held(s);
            const before = held ? f.has(held) : true;
            if (held) f.add(held);
            const after = this.stmts((s.body?.stmts ?? []), f);
            if (held && !before) after.map.delete(locKey(held));
            return after;
        }
        if (ast.isAnnotation(s)) {
            for (const c of s.clauses) if (ast.isSetClause(c)) this.kill(f, writeOf(c.target));
            return f;
        }
        return f;
    }

    /** The effects of an expression's calls and `cas`es, in order. */
    expr(e: ast.Expression | undefined, facts: Facts): void {
        if (!e) return;
        for (const n of AstUtils.streamAst(e)) {
            if (ast.isCasExpr(n)) this.kill(facts, writeOf(n.target));
            if ((ast.isNameExpr(n) || ast.isMemberAccess(n)) && n.isCall) this.call(n, facts);
        }
    }

    private call(call: ast.NameExpr | ast.MemberAccess, facts: Facts): void {
        const callee = calleeOf(call);
        if (!callee) return;
        const s = this.index.summary(callee, this.depth);
        const m = callMap(call, callee);
        this.kill(facts, s.kills.map(w => ({ field: w.field, loc: w.loc ? locToCaller(w.loc, m) : undefined })));
        for (const l of s.adds) { const c = locToCaller(l, m); if (c) facts.add(c); }
    }

    /** `lock.holder`, the location a synchronized statement sets to the thread's id. */
    private held(s: ast.SyncStmt): SourceLoc | undefined {
        const lock = pathOf(s.lock);
        return lock && this.index.holder ? { k: 'inst', base: lock, field: this.index.holder } : undefined;
    }

    /** Everything a statement may write (its calls included). */
    writes(s: AstNode): Write[] {
        const out: Write[] = [];
        for (const n of AstUtils.streamAst(s)) {
            if (ast.isAssignStmt(n) || ast.isSetClause(n)) out.push(...writeOf(n.target));
            else if (ast.isCasExpr(n)) out.push(...writeOf(n.target));
            else if ((ast.isNameExpr(n) || ast.isMemberAccess(n)) && n.isCall) {
                const callee = calleeOf(n);
                if (!callee) continue;
                const m = callMap(n, callee);
                out.push(...this.index.summary(callee, this.depth).kills.map(w => ({ field: w.field, loc: w.loc ? locToCaller(w.loc, m) : undefined })));
            }
        }
        return out;
    }

    /** The facts just before `target`, walking `stmts` from `facts`; undefined when target is not in them. */
    to(stmts: ast.Statement[], target: AstNode, facts: Facts): Facts | undefined {
        let f = facts;
        for (const s of stmts) {
            if (!contains(s, target)) { f = this.stmt(s, f); continue; }
            return this.into(s, target, f);
        }
        return undefined;
    }

    private into(s: ast.Statement, target: AstNode, facts: Facts): Facts {
        const f = facts.copy();
        if (ast.isBlock(s)) return this.to(s.stmts, target, f) ?? f;
        if (ast.isAtomicStmt(s)) return this.to((s.body?.stmts ?? []), target, f) ?? f;
        if (ast.isIfStmt(s)) {
            if (contains(s.condition, target)) return f;
            this.expr(s.condition, f);
            const branch = contains(s.then, target) ? s.then : s.else;
            return branch ? this.into(branch, target, f) : f;
        }
        if (ast.isWhileStmt(s) || ast.isForStmt(s)) {
            let g = f;
            if (ast.isForStmt(s) && s.init) {
                if (contains(s.init, target)) return g;
                g = this.stmt(s.init as ast.Statement, g);
            }
            this.kill(g, this.writes(s));
            if (contains(s.body, target)) return this.into(s.body, target, g);
            return g;
        }
        if (ast.isSyncStmt(s)) {
            if (contains(s.lock, target)) return f;
            const held = this.held(s);
            if (held) f.add(held);
            return this.to((s.body?.stmts ?? []), target, f) ?? f;
        }
        return f;
    }
}

function contains(outer: AstNode | undefined, inner: AstNode): boolean {
    for (let n: AstNode | undefined = inner; n; n = n.$container) if (n === outer) return true;
    return false;
}

/** `while (!cas(L, a, b)) { ... }` without `break` or `return`: the loop ends with the cas having succeeded. */
export function spinCas(s: ast.WhileStmt | ast.ForStmt): ast.CasExpr | undefined {
    const c = s.condition;
    if (!c || !ast.isUnaryExpr(c) || c.op !== '!' || !ast.isCasExpr(c.operand)) return undefined;
    const exits = !s.body || AstUtils.streamAst(s.body).some(n => ast.isBreakStmt(n) || ast.isReturnStmt(n));
    return exits ? undefined : c.operand;
}

/** `cas(l, 0, c)` with a constant c other than 0: a lock whose value does not say who holds it. */
export function isConstantLock(c: ast.CasExpr): boolean {
    const lit = (e: ast.Expression | undefined) => (ast.isIntLiteral(e) ? Number(e.value) : undefined);
    const c0 = lit(c.expected), c1 = lit(c.update);
    return c0 === 0 && c1 !== undefined && c1 !== 0;
}

/** The held facts just before a node (a call or a field access), in its own scope. */
export function factsBefore(node: AstNode, index: ProgramIndex, depth = 0): Facts {
    const method = enclosingMethod(node);
    const thread = enclosingThread(node);
    const body = method?.body ?? thread?.body;
    if (!body) return new Facts();
    const entry = method ? entryFacts(method, index, depth) : new Facts();
    return new Walker(index, depth).to(body.stmts, node, entry) ?? entry;
}

/**
 * The facts at a method's entry: its `requires` (with an abstraction), else
 * those every call site has (translated into the method's scope); and its own
 * monitor for a synchronized method.
 */
export function entryFacts(method: ast.MethodDecl, index: ProgramIndex, depth = 0, ignoreSpec = false): Facts {
    const spec = methodSpec(method);
    let facts: Facts;
    if (!ignoreSpec && (spec.abstraction || spec.requires.length > 0 || spec.ensures.length > 0)) {
        facts = Facts.of(spec.requires.flatMap(r => factsOfCondition(r.condition)));
    } else facts = callerFacts(method, index, depth);
    if (isSynchronized(method) && index.holder) facts.add({ k: 'inst', base: { k: 'this' }, field: index.holder });
    return facts;
}

/** What every call site of a method holds, in the method's scope (empty when nothing calls it). */
export function callerFacts(method: ast.MethodDecl, index: ProgramIndex, depth = 0): Facts {
    const sites = index.callSites(method);
    if (sites.length === 0 || depth > MAX_DEPTH) return new Facts();
    let common: Facts | undefined;
    for (const site of sites) {
        const m: CallMap = callMap(site, method);
        const here = Facts.of(factsBefore(site, index, depth + 1).locs.map(l => locToCallee(l, m)).filter((l): l is SourceLoc => l !== undefined));
        common = common ? common.intersect(here) : here;
        if (common.map.size === 0) break;
    }
    return common ?? new Facts();
}

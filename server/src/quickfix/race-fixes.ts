// The quick fixes of a race at a field without `writable_if` (issue 12): the
// guard all its accesses share becomes its `writable_if`, with the
// `environment` clause that keeps the lock held while its holder needs it
// (`m == tid ==> m' == m`); a spin lock that stores a constant
// (`cas(locked, 0, 1)`) first stores the holder's id. When the accesses share
// no guard nothing pretends to repair the race: the list says why. `volatile`
// is offered only where no access reads and writes the field in one statement
// (a lost update stays a bug when the race checks are gone), and its title
// says what it gives up.
import type { LangiumDocument } from 'langium';
import { AstUtils } from 'langium';
import type { TextEdit } from 'vscode-languageserver';
import * as ast from '@calvin/language';
import { writableIfClauses } from '@calvin/language';
import { linesRef, placeLines } from '@calvin/verifier';
import { factsBefore, Facts, isConstantLock, ProgramIndex } from './facts.js';
import { locText, locToCallee, pathOf, pathText, scopeOf, writtenField, type Field, type SourceLoc } from './locations.js';

/** What the race actions need to say: edits per document, and the title. */
export interface RaceFix {
    title: string;
    edits: Map<string, TextEdit[]>;
}

/** Why no guard can be added (disabled action's reason). */
export interface NoFix {
    title: string;
    reason: string;
}

export interface RaceFixes {
    guard?: RaceFix;
    noGuard?: NoFix;
    volatile?: RaceFix;
}

type Access = ast.NameExpr | ast.MemberAccess;

/** The actions on a race at `field` (a field without writable_if), for a diagnostic in the document `uri` (the reason's lines are its own, or name their file). */
export function raceFixes(field: ast.FieldDecl, roots: ast.Program[], holder: Field | undefined, uri: string): RaceFixes {
    const out: RaceFixes = {};
    if (writableIfClauses(field).length > 0 || !field.$cstNode) return out;
    const index = new ProgramIndex(roots, holder);
    const shared = sharedGuard(field, index);
    if (shared.locs) {
        out.guard = guardFix(field, shared.locs, index, []);
    } else {
        // a spin lock storing a constant: the guard it would give once it stores the holder's id
        const withConstants = new ProgramIndex(roots, holder, true);
        const again = sharedGuard(field, withConstants);
        const sites = again.locs ? withConstants.constantSites.filter(c => again.locs!.some(l => sameField(locOfCas(c), l))) : [];
        if (again.locs && sites.length > 0 && constantLockRewritable(sites, again.locs, withConstants)) {
            out.guard = guardFix(field, again.locs, withConstants, sites);
        } else out.noGuard = { title: `Add writable_if to ${field.name}`, reason: placeLines(shared.why ?? `the accesses of ${field.name} share no lock`, uri) };
    }
    if (!field.modifiers.includes('volatile') && !field.modifiers.includes('final') && field.type.$cstNode) {
        const rmw = readModifyWrite(field, index);
        if (!rmw) {
            const doc = AstUtils.getDocument(field);
            const pos = doc.textDocument.positionAt(field.type.$cstNode.offset);
            out.volatile = {
                title: `Declare ${field.name} volatile (no race checks; updates are not atomic)`,
                edits: new Map([[doc.uri.toString(), [{ range: { start: pos, end: pos }, newText: 'volatile ' }]]]),
            };
        }
    }
    return out;
}

function sameField(a: SourceLoc | undefined, b: SourceLoc): boolean {
    return a !== undefined && a.field === b.field;
}

function locOfCas(c: ast.CasExpr): SourceLoc | undefined {
    const p = pathOf(c.target);
    if (!p) return undefined;
    if (p.k === 'global') return { k: 'static', field: p.field };
    if (p.k === 'field') return { k: 'inst', base: p.base, field: p.field };
    return undefined;
}

interface Held {
    access: Access;
    facts: Facts;
}

/**
 * The locations `L` with `L == tid` at every access of the field, in the
 * field's scope (the accessed object as `this`); or why there are none.
 */
function sharedGuard(field: Field, index: ProgramIndex): { locs?: SourceLoc[]; why?: string } {
    const scope = scopeOf(field);
    const instance = !(ast.isFieldDecl(field) && (field.modifiers.includes('static') || !scope));
    const held: Held[] = [];
    for (const access of index.accessesOf(field)) {
        const receiver = ast.isMemberAccess(access) ? pathOf(access.receiver) : { k: 'this' as const };
        if (instance && !receiver) return { why: `${describeAccess(access)} names its object in a way the quick fix cannot follow` };
        const map = { receiver: instance ? receiver : undefined, args: new Map() };
        const here = factsBefore(access, index);
        held.push({ access, facts: Facts.of(here.locs.map(l => locToCallee(l, map)).filter((l): l is SourceLoc => l !== undefined)) });
    }
    if (held.length === 0) return { why: `${field.name} is not accessed by any thread` };
    let common = held[0].facts;
    for (const h of held.slice(1)) common = common.intersect(h.facts);
    if (common.map.size > 0) return { locs: common.locs };
    return { why: whyNoGuard(field, held) };
}

/** "x is written holding Mutex.m at line 30 and without it at line 23" (its lines as `linesRef` markers). */
function whyNoGuard(field: Field, held: Held[]): string {
    const scope = scopeOf(field);
    for (const a of held) {
        for (const l of a.facts.locs) {
            const b = held.find(h => !h.facts.has(l));
            if (b) return `${field.name} is ${verb(a.access)} holding ${lockName(l, scope)} at ${linesRef([lineOf(a.access)])} and ${verb(b.access)} without it at ${linesRef([lineOf(b.access)])}`;
        }
    }
    const lines = held.map(h => lineOf(h.access)).sort((x, y) => x.file.localeCompare(y.file) || x.startLine - y.startLine);
    return `${field.name} is accessed without any lock held (${linesRef(lines, 'comma')})`;
}

function lockName(l: SourceLoc, scope: ast.ClassDecl | undefined): string {
    if (l.k === 'inst' && l.field.name === 'holder') return `the monitor of ${pathText(l.base, scope)}`;
    return locText(l, scope);
}

function isWrite(a: Access): boolean {
    const c = a.$container;
    return (ast.isAssignStmt(c) && c.target === a) || (ast.isCasExpr(c) && c.target === a);
}

function verb(a: Access): string {
    return isWrite(a) ? 'written' : 'read';
}

function describeAccess(a: Access): string {
    return `the ${isWrite(a) ? 'write' : 'read'} at ${linesRef([lineOf(a)])}`;
}

/** The file and line of an access (for `linesRef`). */
function lineOf(n: ast.Expression): { file: string; startLine: number } {
    const doc = AstUtils.getDocument(n);
    return { file: doc.uri.toString(), startLine: doc.textDocument.positionAt(n.$cstNode?.offset ?? 0).line };
}

/** The `writable_if` (and the environment clauses its locks need; a constant lock rewritten to store `tid`). */
function guardFix(field: ast.FieldDecl, locs: SourceLoc[], index: ProgramIndex, constantSites: ast.CasExpr[]): RaceFix {
    const scope = scopeOf(field);
    const guard = locs.map(l => `${locText(l, scope)} == tid`).join(' && ');
    const edits = new Map<string, TextEdit[]>();
    const add = (uri: string, e: TextEdit) => edits.set(uri, [...(edits.get(uri) ?? []), e]);
    const before = insertBefore(field, `//@ writable_if ${guard};`);
    add(before.uri, before.edit);
    const clauses: string[] = [];
    const done = new Set<Field>();
    for (const l of locs) {
        if (done.has(l.field)) continue;
        done.add(l.field);
        const clause = environmentNeeded(l, index);
        if (!clause || !ast.isFieldDecl(l.field)) continue;
        const e = insertBefore(l.field, `//@ environment ${clause};`);
        add(e.uri, e.edit);
        clauses.push(clause);
    }
    for (const c of constantSites) {
        const doc = AstUtils.getDocument(c);
        const u = c.update.$cstNode!;
        add(doc.uri.toString(), { range: { start: doc.textDocument.positionAt(u.offset), end: doc.textDocument.positionAt(u.end) }, newText: 'tid' });
    }
    const lock = [...new Set(constantSites.map(c => c.target.$cstNode?.text ?? '?'))];
    const title = constantSites.length > 0
        ? `Store the holder's id in ${lock.join(', ')} (cas(${lock[0]}, 0, tid)) and add 'writable_if ${guard}' to ${field.name}`
        : `Add 'writable_if ${guard}' to ${field.name}${clauses.length > 0 ? ` (and 'environment ${clauses.join("', '")}')` : ''}`;
    return { title, edits };
}

/** A line inserted above a declaration, with its indentation. */
function insertBefore(decl: ast.FieldDecl, text: string): { uri: string; edit: TextEdit } {
    const doc: LangiumDocument = AstUtils.getDocument(decl);
    const line = doc.textDocument.positionAt(decl.$cstNode!.offset).line;
    const indent = /^[ \t]*/.exec(doc.textDocument.getText().split(/\r?\n/)[line] ?? '')?.[0] ?? '';
    return { uri: doc.uri.toString(), edit: { range: { start: { line, character: 0 }, end: { line, character: 0 } }, newText: `${indent}${text}\n` } };
}

/**
 * The clause `l == tid ==> l' == l` when the program does not already keep a
 * held lock (written in the lock field's own scope), or undefined: a
 * monitor (the built-in rules keep it), a field with a `writable_if`, or one
 * some `environment` clause already keeps.
 */
function environmentNeeded(l: SourceLoc, index: ProgramIndex): string | undefined {
    const f = l.field;
    if (!ast.isFieldDecl(f) || f.name === 'holder') return undefined;
    if (writableIfClauses(f).length > 0) return undefined;
    const owner = scopeOf(f);
    const names = new Set([f.name, `this.${f.name}`, ...(owner ? [`${owner.name}.${f.name}`] : [])]);
    for (const root of index.roots) {
        for (const n of AstUtils.streamAst(root)) {
            if (!ast.isEnvironmentClause(n)) continue;
            const text = (n.action.$cstNode?.text ?? '').replace(/\s+/g, '');
            for (const x of names) if (text.includes(`${x}==tid==>${x}'==${x}`) || text.includes(`tid==${x}==>${x}'==${x}`)) return undefined;
        }
    }
    return `${f.name} == tid ==> ${f.name}' == ${f.name}`;
}

/**
 * Rewriting `cas(l, 0, c)` to `cas(l, 0, tid)` keeps the program's meaning when
 * l is only ever taken that way, set back to 0, or compared with 0.
 */
function constantLockRewritable(sites: ast.CasExpr[], locs: SourceLoc[], index: ProgramIndex): boolean {
    for (const l of locs) {
        if (!sites.some(c => sameField(locOfCas(c), l))) continue;
        for (const a of index.accessesOf(l.field)) {
            const c = a.$container;
            if (ast.isCasExpr(c) && c.target === a) { if (!isConstantLock(c)) return false; continue; }
            if (ast.isAssignStmt(c) && c.target === a) { if (!(c.op === '=' && ast.isIntLiteral(c.value) && Number(c.value.value) === 0)) return false; continue; }
            if (ast.isBinaryExpr(c) && (c.operator === '==' || c.operator === '!=')) {
                const other = c.left === a ? c.right : c.left;
                if (ast.isIntLiteral(other) && Number(other.value) === 0) continue;
            }
            return false;
        }
    }
    return true;
}

/** A statement that reads the field and writes it (`x++`, `x += 1`, `x = x + 1`): its update is lost under a race. */
function readModifyWrite(field: Field, index: ProgramIndex): boolean {
    for (const a of index.accessesOf(field)) {
        const s = a.$container;
        if (!ast.isAssignStmt(s) || s.target !== a || writtenField(s.target) !== field) continue;
        if (s.op !== '=') return true;
        if (s.value && AstUtils.streamAst(s.value).some(n => (ast.isNameExpr(n) && n.ref.ref === field) || (ast.isMemberAccess(n) && n.member.ref === field))) return true;
    }
    return false;
}

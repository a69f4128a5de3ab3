import * as T from '../smt/term.js';
import type { Range } from '../model/program.js';
import type { Access, AtomicOp, CheckInfo, Cmd, Loc, OpCmd } from './il.js';

/**
 * The intermediate language as text, one command per line (for the stage
 * golden tests and debugging). Terms are printed as SMT-LIB2; source ranges as
 * `line:column` (1-based, without the file), so that the text does not depend
 * on where the program is stored.
 */
export function printIL(cmds: Cmd[]): string {
    const out: string[] = [];
    walk(cmds, '', out);
    return out.join('\n') + '\n';
}

function walk(cmds: Cmd[], indent: string, out: string[]): void {
    for (const c of cmds) {
        switch (c.k) {
            case 'op': printOp(c.op, indent, out); break;
            case 'local': out.push(`${indent}${c.var} := ${T.toSmt(c.value)}`); break;
            case 'havocLocal': out.push(`${indent}havoc ${c.vars.join(', ')}`); break;
            case 'assumeLocal': out.push(`${indent}assume-local ${T.toSmt(c.cond)}`); break;
            case 'checkLocal': out.push(`${indent}check-local ${T.toSmt(c.cond)}   // ${info(c.check)}`); break;
            case 'checkState': out.push(`${indent}check-state ${T.toSmt(c.cond)}   // ${info(c.check)}`); break;
            case 'assumeState': out.push(`${indent}assume-state ${T.toSmt(c.cond)}`); break;
            case 'if':
                out.push(`${indent}if ${T.toSmt(c.cond)} {`);
                walk(c.then, indent + '  ', out);
                out.push(`${indent}} else {`);
                walk(c.else, indent + '  ', out);
                out.push(`${indent}}`);
                break;
            case 'loop':
                out.push(`${indent}loop ${c.label} @${at(c.range)} {`);
                for (const inv of c.invariants) out.push(`${indent}  invariant ${T.toSmt(inv.cond)}   // ${info(inv.check)}`);
                walk(c.body, indent + '  ', out);
                out.push(`${indent}}`);
                break;
            case 'break': out.push(`${indent}break ${c.label}`); break;
            case 'continue': out.push(`${indent}continue ${c.label}`); break;
            case 'scope':
                out.push(`${indent}${c.label}: {`);
                walk(c.body, indent + '  ', out);
                out.push(`${indent}}`);
                break;
            case 'exit': out.push(`${indent}exit ${c.label}${c.range ? ` @${at(c.range)}` : ''}`); break;
            case 'snapshot': out.push(`${indent}snapshot ${c.name}`); break;
        }
    }
}

function printOp(op: AtomicOp, indent: string, out: string[]): void {
    const tags = [
        op.label ? JSON.stringify(op.label) : undefined,
        op.init ? 'init' : undefined,
        op.witness !== undefined ? `witness step ${op.witness}` : undefined,
        op.abstraction ? `abstraction of ${op.abstraction.method.id}, ${op.abstraction.step === 'stutter' ? 'stutter' : `step ${op.abstraction.step}`}` : undefined,
        op.blocking > 0 ? `blocking ${op.blocking}` : undefined,
        op.chain.length > 0 ? `in ${op.chain.map(f => `${f.method}@${at(f.range)}`).join(' > ')}` : undefined,
    ].filter((x): x is string => x !== undefined);
    out.push(`${indent}atomic #${op.id} ${op.kind} @${at(op.range)}${tags.length > 0 ? ` ${tags.join(', ')}` : ''} {`);
    for (const a of op.accesses) out.push(`${indent}  // ${access(a)}`);
    if (op.fresh && op.fresh.length > 0) out.push(`${indent}  // fresh ${op.fresh.map(T.toSmt).join(', ')}`);
    opBody(op.body, indent + '  ', out);
    out.push(`${indent}}`);
}

function opBody(cmds: OpCmd[], indent: string, out: string[]): void {
    for (const c of cmds) {
        switch (c.k) {
            case 'assume': out.push(`${indent}assume ${T.toSmt(c.cond)}`); break;
            case 'assert': out.push(`${indent}assert ${T.toSmt(c.cond)}   // ${info(c.check)}`); break;
            case 'local': out.push(`${indent}${c.var} := ${T.toSmt(c.value)}`); break;
            case 'havocLocal': out.push(`${indent}havoc ${c.vars.join(', ')}`); break;
            case 'store': out.push(`${indent}${c.map}[${c.keys.map(T.toSmt).join(', ')}] := ${T.toSmt(c.value)}`); break;
            case 'update': out.push(`${indent}${c.map}[${c.params.map(x => x.name).join(', ')}] := ${T.toSmt(c.value)} (all)`); break;
            case 'havocMap': out.push(`${indent}havoc ${c.map}[${c.params.map(x => x.name).join(', ')}] where ${T.toSmt(c.where)}`); break;
            case 'if':
                out.push(`${indent}if ${T.toSmt(c.cond)} {`);
                opBody(c.then, indent + '  ', out);
                out.push(`${indent}} else {`);
                opBody(c.else, indent + '  ', out);
                out.push(`${indent}}`);
                break;
        }
    }
}

function access(a: Access): string {
    return `${a.write ? 'write' : 'read'}${a.sync ? ' (sync)' : ''} ${loc(a.loc)} '${a.text}' @${at(a.range)}`;
}

function loc(l: Loc): string {
    switch (l.kind) {
        case 'global': return l.map;
        case 'field': return `${l.map}[${T.toSmt(l.obj)}]`;
        case 'elem': return `${l.map}[${T.toSmt(l.arr)}, ${T.toSmt(l.index)}]${l.via ? ` via ${l.via.field.id}` : ''}`;
        case 'holder': return `holder[${T.toSmt(l.obj)}]`;
        case 'all': return `${l.map}[*]`;
    }
}

function info(c: CheckInfo): string {
    return `${c.code} @${at(c.range)}: ${c.message.replace(/\n/g, " ")}`;
}

function at(r: Range): string {
    return `${r.startLine + 1}:${r.startChar + 1}`;
}

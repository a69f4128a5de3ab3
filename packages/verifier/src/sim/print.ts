import * as T from '../smt/term.js';
import type { SCmd, SeqProgram } from './seq.js';

/** The simulation-checking program as text (for --dump-smt and tests): one command per line. */
export function printProgram(p: SeqProgram): string {
    const out: string[] = [];
    const label = (id: number) => {
        const c = p.obligations[id];
        return `#${id} ${c.kind === 'program' ? c.info.code : c.kind}`;
    };
    const walk = (cmds: SCmd[], indent: string) => {
        for (const c of cmds) {
            switch (c.k) {
                case 'assume': out.push(`${indent}assume ${T.toSmt(c.cond)}`); break;
                case 'assert': out.push(`${indent}assert ${T.toSmt(c.cond)}   // ${label(c.check)}`); break;
                case 'local': out.push(`${indent}${c.var} := ${T.toSmt(c.value)}`); break;
                case 'havocLocal': out.push(`${indent}havoc ${c.vars.join(', ')}`); break;
                case 'store': out.push(`${indent}${c.map}[${c.keys.map(T.toSmt).join(', ')}] := ${T.toSmt(c.value)}`); break;
                case 'update': out.push(`${indent}${c.map}[${c.params.map(x => x.name).join(', ')}] := ${T.toSmt(c.value)} (all)`); break;
                case 'havocMap': out.push(`${indent}havoc ${c.map}[${c.params.map(x => x.name).join(', ')}] where ${T.toSmt(c.where)}`); break;
                case 'env': out.push(`${indent}env-step (${c.step.conjuncts.length} conjuncts over ${c.step.maps.join(' ')})${c.step.invariants.length ? '; assume I' : ''}`); break;
                case 'probe': out.push(`${indent}probe ${c.name} (one environment step)`); break;
                case 'snapshot': out.push(`${indent}snapshot ${c.name}`); break;
                case 'if':
                    out.push(`${indent}if ${T.toSmt(c.cond)} {`);
                    walk(c.then, indent + '  ');
                    out.push(`${indent}} else {`);
                    walk(c.else, indent + '  ');
                    out.push(`${indent}}`);
                    break;
                case 'loop':
                    out.push(`${indent}loop ${c.label} {`);
                    out.push(`${indent}  head:`);
                    walk(c.head, indent + '    ');
                    for (const inv of c.invariants) out.push(`${indent}  invariant ${T.toSmt(inv.cond)}   // ${label(inv.check)}`);
                    walk(c.body, indent + '  ');
                    out.push(`${indent}}`);
                    break;
                case 'break': out.push(`${indent}break ${c.label}`); break;
                case 'scope':
                    out.push(`${indent}${c.label}: {`);
                    walk(c.body, indent + '  ');
                    out.push(`${indent}}`);
                    break;
                case 'exit': out.push(`${indent}exit ${c.label}`); break;
            }
        }
    };
    walk(p.body, '');
    return out.join('\n') + '\n';
}

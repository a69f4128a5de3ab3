import { ALLOC, HOLDER, OWNER } from '../heap/vocabulary.js';
import * as T from '../smt/term.js';
import type { Term } from '../smt/term.js';
import { EPRE, TID, type Conjunct } from '../spec/environment.js';
import type { Formulas, Ground, Scope, State } from './formulas.js';

/**
 * The state after an environment step from `from`: every variable the step
 * may change keeps its value where some frame's `keep` holds (evaluated before
 * the step) and is arbitrary elsewhere; monitors, allocation and ownership
 * follow their built-in rules (another thread never takes or releases a
 * monitor this thread holds, allocated objects stay allocated, objects private
 * to this thread stay so and published ones stay published). `guard` makes a
 * conjunct's frames conditional (Houdini over E* candidates).
 */
export function envState(f: Formulas, maps: Iterable<string>, conjuncts: Conjunct[], from: State, ground: Ground, tag: string, guard?: (c: Conjunct) => Term): State {
    const next = new Map(from);
    const tid = TID;
    const builtins = new Set(conjuncts.map(c => c.builtin).filter(b => b));
    const preScope: Scope = { states: new Map([[EPRE, from]]), locals: new Map() };
    for (const map of maps) {
        const prev = from.get(map);
        if (!prev) continue;
        const h = f.arbitrary(map, `E${tag}`);
        const at = (inc: string, ks: Term[]) => f.at(inc, map, ks);
        if (map === HOLDER && builtins.has('holder')) {
            next.set(map, f.macro(map, tag, ([o]) => T.ite(T.eq(at(prev, [o]), tid), tid, T.ite(T.eq(at(h, [o]), tid), at(prev, [o]), at(h, [o])))));
            continue;
        }
        if (map === ALLOC && builtins.has('alloc')) {
            next.set(map, f.macro(map, tag, ([o]) => T.or(at(prev, [o]), at(h, [o]))));
            continue;
        }
        if (map === OWNER && builtins.has('owner')) {
            const alloc = from.get(ALLOC);
            next.set(map, f.macro(map, tag, ([o]) => {
                const published = alloc ? T.and(f.at(alloc, ALLOC, [o]), T.eq(at(prev, [o]), T.int(0))) : T.eq(at(prev, [o]), T.int(0));
                return T.ite(T.or(T.eq(at(prev, [o]), tid), published), at(prev, [o]), T.ite(T.eq(at(h, [o]), tid), at(prev, [o]), at(h, [o])));
            }));
            continue;
        }
        const frames = conjuncts.flatMap(c => c.frames.filter(fr => fr.map === map).map(fr => ({ fr, c })));
        if (frames.length === 0) {
            next.set(map, h);
            continue;
        }
        next.set(map, f.macro(map, tag, ks => {
            const keeps = frames.map(({ fr, c }) => {
                const sub = new Map(fr.params.map((p, i) => [p.name, ks[i]]));
                const keep = f.ground(f.resolve(T.substitute(fr.keep, sub), preScope), 'keep', ground);
                return guard ? T.and(guard(c), keep) : keep;
            });
            return T.ite(T.or(...keeps), at(prev, ks), at(h, ks));
        }));
    }
    return next;
}

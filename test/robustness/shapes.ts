// Structural mutations for the CLI fuzz test (fuzz-cli.test.ts): programs of
// extreme shape rather than random token edits: loops nested up to (and past)
// the nesting limit, and wide programs (many globals, threads, statements,
// methods calling each other).
import { Random, tokenize, type FuzzCase } from '../fuzz/mutate.js';

/** Brackets nest at most this deep (language/src/parser/nesting.ts, MAX_BRACKETS). */
export const NESTING_LIMIT = 48;

/** A thread's body sits in one brace: this many loops fill the nesting limit. */
export const MAX_LOOP_DEPTH = NESTING_LIMIT - 1;

/** The span of a thread's body in tokens: the `{` after `thread` and its matching `}`. */
function threadBodies(tokens: string[]): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < tokens.length; i++) {
        if (tokens[i] !== 'thread') continue;
        const open = tokens.indexOf('{', i);
        if (open < 0) break;
        let depth = 0;
        for (let j = open; j < tokens.length; j++) {
            if (tokens[j] === '{') depth++;
            else if (tokens[j] === '}' && --depth === 0) { out.push([open, j]); i = j; break; }
        }
    }
    return out;
}

/** The head of one loop level: `while (nondet())`, a counting `for`, or a `while` on a local. */
function loopHead(rnd: Random, level: number): string {
    switch (rnd.int(3)) {
        case 0: return 'while (nondet()) {';
        case 1: return `for (int i${level} = 0; i${level} < 2; i${level}++) {`;
        default: return `int n${level} = 0; while (n${level} < 3) { n${level} = n${level} + 1;`;
    }
}

/** Wraps the body of one thread of `text` in `depth` nested loops (the base unchanged if it has no thread). */
export function nestLoops(rnd: Random, text: string, depth: number): { text: string; what: string } {
    const tokens = tokenize(text);
    const bodies = threadBodies(tokens);
    if (bodies.length === 0) return { text, what: `${depth} nested loops (no thread)` };
    const [open, close] = rnd.pick(bodies);
    const heads = Array.from({ length: depth }, (_, level) => loopHead(rnd, level));
    tokens[close] = `${' }'.repeat(depth)}\n}`;
    tokens[open] = `{ ${heads.join(' ')}`;
    return { text: tokens.join(''), what: `${depth} nested loops in thread body at token #${open}` };
}

type WideKind = 'globals' | 'threads' | 'statements' | 'calls' | 'globals with a syntax error';

/** A program that is wide in one direction: `size` globals, threads, statements or chained methods. */
export function wideProgram(kind: WideKind, size: number): { text: string; what: string } {
    const lines: string[] = [];
    switch (kind) {
        case 'globals with a syntax error':
            // nothing to verify, and a front end long enough for the solver to finish starting meanwhile
            for (let i = 0; i < size; i++) lines.push(i === size >> 1 ? 'int = 1;' : `int w${i} = ${i}; // a line of a long file`);
            break;
        case 'globals':
            for (let i = 0; i < size; i++) lines.push(`int w${i} = ${i};`);
            lines.push(`thread T { w1 = w2 + 1; assert w1 == 3; }`, `thread U { int a = w${size - 1}; }`);
            break;
        case 'threads':
            for (let i = 0; i < size; i++) lines.push(`int v${i} = 0;`, `thread T${i} { v${i} = v${i} + 1; assert v${i} == 1; }`);
            break;
        case 'statements': {
            const body: string[] = [];
            for (let i = 0; i < size; i++) body.push(`l = l + ${i % 7}; if (l > 100) { l = 0; }`);
            lines.push('int x = 0;', `thread T { int l = 0;`, ...body, 'x = l; }');
            break;
        }
        case 'calls':
            // past MAX_INLINE_DEPTH (24) the check is reported as not checked, with the reason
            lines.push('int x = 0;');
            for (let i = 0; i < size; i++) lines.push(`void m${i}() { ${i + 1 < size ? `m${i + 1}();` : 'x = 1;'} }`);
            lines.push('thread T { m0(); }', 'thread U { int y = x; }');
            break;
    }
    return { text: lines.join('\n') + '\n', what: `a wide program: ${size} ${kind}` };
}

const WIDE: Array<[WideKind, number, number]> = [
    // kind, smallest, largest
    ['globals', 200, 4000],
    ['globals with a syntax error', 2500, 6000],
    ['threads', 5, 30],
    ['statements', 50, 400],
    ['calls', 5, 30],
];

/** One case per depth: a thread of a random base with its body in that many nested loops. */
export function nestedLoopCases(seed: number, bases: Record<string, string>, depths: readonly number[], firstIndex: number): FuzzCase[] {
    const rnd = new Random(seed);
    const names = Object.keys(bases).sort();
    return depths.map((depth, k) => {
        const base = rnd.pick(names);
        const { text, what } = nestLoops(rnd, bases[base], depth);
        return { index: firstIndex + k, base, mutations: [what], text };
    });
}

/**
 * `count` structural cases from `seed`: about two thirds nested loops (depths
 * spread over `depths`), the rest wide programs.
 */
export function generateShapes(seed: number, bases: Record<string, string>, count: number, depths: readonly number[], firstIndex: number): FuzzCase[] {
    const rnd = new Random(seed);
    const names = Object.keys(bases).sort();
    const cases: FuzzCase[] = [];
    for (let k = 0; k < count; k++) {
        const index = firstIndex + k;
        if (k % 3 !== 2 && depths.length > 0) {
            const base = rnd.pick(names);
            const depth = depths[(k - Math.floor(k / 3)) % depths.length];
            const { text, what } = nestLoops(rnd, bases[base], depth);
            cases.push({ index, base, mutations: [what], text });
        } else {
            const [kind, lo, hi] = WIDE[Math.floor(k / 3) % WIDE.length];
            const { text, what } = wideProgram(kind, lo + rnd.int(hi - lo + 1));
            cases.push({ index, base: '(generated)', mutations: [what], text });
        }
    }
    return cases;
}

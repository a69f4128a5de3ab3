// Seeded mutations of Calvin programs for the fuzz tests (test/fuzz/fuzz.test.ts).

/** mulberry32: a small, fast, seedable 32-bit PRNG. */
export function mulberry32(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6D2B79F5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

export class Random {
    private readonly next: () => number;
    constructor(seed: number) {
        this.next = mulberry32(seed);
    }
    float(): number {
        return this.next();
    }
    /** An integer in [0, n). */
    int(n: number): number {
        return Math.floor(this.next() * n);
    }
    pick<T>(xs: readonly T[]): T {
        return xs[this.int(xs.length)];
    }
    chance(p: number): boolean {
        return this.next() < p;
    }
}

/** Tokens of Calvin source text, whitespace and comments included (their concatenation is the text). */
const TOKEN = /\/\*@|\/\/@|\*\/|\/\/[^\n]*|\/\*[\s\S]*?\*\/|\\[A-Za-z]+|[A-Za-z_$][A-Za-z0-9_$]*|\d+|<==>|==>|==|!=|<=|>=|&&|\|\||\+\+|--|\+=|-=|\s+|[^]/g;

export function tokenize(text: string): string[] {
    return text.match(TOKEN) ?? [];
}

/** Words and symbols of the language (and a few that are not), for insertions and replacements. */
export const VOCABULARY: readonly string[] = [
    // Java keywords used by Calvin
    'class', 'static', 'volatile', 'final', 'synchronized', 'public', 'private', 'protected',
    'int', 'boolean', 'void', 'thread', 'if', 'else', 'while', 'for', 'return', 'break', 'continue',
    'atomic', 'assert', 'new', 'this', 'null', 'true', 'false', 'tid', 'nondet', 'cas',
    // annotation keywords
    'writable_if', 'invariant', 'environment', 'requires', 'ensures', 'abstraction', 'step', 'stutter',
    'loop_invariant', 'ghost', 'set', 'assume', 'witness',
    // annotation brackets and specification syntax
    '/*@', '*/', '//@', '/*', '//', "'", '\\old', '\\result', '\\forall', '\\exists', '@', '\n', '\n@ ',
    // operators and punctuation
    '=', '==', '!=', '<', '<=', '>', '>=', '&&', '||', '!', '==>', '<==>', '+', '-', '*', '/', '%', '?', ':',
    '++', '--', '+=', '-=', '.', ',', ';', '(', ')', '{', '}', '[', ']', '[*]', '[3]',
    // identifiers (some declared in the examples), numbers
    'x', 'y', 'm', 'g', 'data', 'flag', 'held', 'Mutex', 'Lock', 'Vector', 'acquire', 'release', 'lock',
    'holder', 'length', 'elementData', 'T1', 'Producer', 'foo', 'x\'', 'this.holder', '$Object',
    '0', '1', '-1', '42', '99999999999999999999999',
    // characters that are not Calvin
    '"', '#', '`', '\\',
];

export type MutationKind = 'delete' | 'insert' | 'replace' | 'swap' | 'duplicate' | 'truncate' | 'delete-range';

/**
 * Extreme values for a number or name token, for the robustness fuzzing:
 * a huge literal, an expression nested in many parentheses, a long chain of
 * operators. Applied to a valid program they mostly keep it valid, so the
 * whole pipeline (and the solver) sees them.
 */
export function extremeMutation(rnd: Random, tokens: string[]): string {
    const atoms = tokens.map((t, i) => (/^(\d+|[A-Za-z_]\w*)$/.test(t) && !VOCABULARY.slice(0, 35).includes(t) ? i : -1)).filter(i => i >= 0);
    if (atoms.length === 0) return 'extreme (no atom)';
    const i = rnd.pick(atoms);
    const old = tokens[i];
    switch (rnd.int(3)) {
        case 0: {
            const digits = 20 + rnd.int(400);
            tokens[i] = /^\d/.test(old) ? '9'.repeat(digits) : `(${old} + ${'7'.repeat(digits)})`;
            return `huge literal (${digits} digits) at #${i}`;
        }
        case 1: {
            const depth = 20 + rnd.int(300);
            tokens[i] = `${'('.repeat(depth)}${old}${')'.repeat(depth)}`;
            return `${depth} parentheses around #${i}`;
        }
        default: {
            const terms = 50 + rnd.int(5000);
            tokens[i] = `(${old}${' + 1'.repeat(terms)})`;
            return `${terms}-term sum at #${i}`;
        }
    }
}

/** One mutated program: the base example, what was done, the text. */
export interface FuzzCase {
    index: number;
    base: string;
    mutations: string[];
    text: string;
}

/** Apply one random mutation to a token list (in place); returns a description. */
function mutateOnce(rnd: Random, tokens: string[]): string {
    const kinds: MutationKind[] = ['delete', 'delete', 'insert', 'insert', 'insert', 'replace', 'replace', 'swap', 'duplicate', 'truncate', 'delete-range'];
    const kind = rnd.pick(kinds);
    const nonSpace = tokens.map((t, i) => (/^\s+$/.test(t) ? -1 : i)).filter(i => i >= 0);
    const someToken = () => (nonSpace.length ? rnd.pick(nonSpace) : rnd.int(Math.max(tokens.length, 1)));
    switch (kind) {
        case 'delete': {
            if (!tokens.length) return 'delete (empty)';
            const i = someToken();
            const [t] = tokens.splice(i, 1);
            return `delete #${i} ${JSON.stringify(t)}`;
        }
        case 'insert': {
            const i = rnd.int(tokens.length + 1);
            const word = rnd.pick(VOCABULARY);
            const glue = rnd.chance(0.5) ? ' ' : '';
            tokens.splice(i, 0, glue + word + glue);
            return `insert #${i} ${JSON.stringify(word)}`;
        }
        case 'replace': {
            if (!tokens.length) return 'replace (empty)';
            const i = someToken();
            const word = rnd.pick(VOCABULARY);
            const old = tokens[i];
            tokens[i] = word;
            return `replace #${i} ${JSON.stringify(old)} -> ${JSON.stringify(word)}`;
        }
        case 'swap': {
            if (tokens.length < 2) return 'swap (short)';
            const i = someToken();
            const j = rnd.chance(0.5) ? Math.min(tokens.length - 1, i + 1 + rnd.int(3)) : someToken();
            [tokens[i], tokens[j]] = [tokens[j], tokens[i]];
            return `swap #${i} #${j}`;
        }
        case 'duplicate': {
            if (!tokens.length) return 'duplicate (empty)';
            const i = rnd.int(tokens.length);
            const n = 1 + rnd.int(12);
            const piece = tokens.slice(i, i + n);
            const at = rnd.int(tokens.length + 1);
            tokens.splice(at, 0, ...piece);
            return `duplicate #${i}+${n} at #${at}`;
        }
        case 'delete-range': {
            if (!tokens.length) return 'delete-range (empty)';
            const i = rnd.int(tokens.length);
            const n = 1 + rnd.int(20);
            tokens.splice(i, n);
            return `delete-range #${i}+${n}`;
        }
        case 'truncate': {
            // cut the text at a character offset (possibly inside a token)
            const text = tokens.join('');
            const cut = rnd.int(text.length + 1);
            tokens.splice(0, tokens.length, ...tokenize(text.slice(0, cut)));
            return `truncate at ${cut}`;
        }
    }
}

/** `count` mutated programs from `bases` (name → text), deterministically from `seed`; `extreme`: the share with an extreme mutation. */
export function generateCases(seed: number, bases: Record<string, string>, count: number, extreme = 0): FuzzCase[] {
    const rnd = new Random(seed);
    const names = Object.keys(bases).sort();
    const cases: FuzzCase[] = [];
    let previous = '';
    while (cases.length < count) {
        const base = rnd.pick(names);
        const tokens = tokenize(bases[base]);
        const mutations: string[] = [];
        const n = 1 + (rnd.chance(0.6) ? 0 : rnd.int(4));
        if (extreme > 0 && rnd.chance(extreme)) mutations.push(extremeMutation(rnd, tokens));
        else for (let k = 0; k < n; k++) mutations.push(mutateOnce(rnd, tokens));
        const text = tokens.join('');
        if (text === previous) continue;   // every case must change the document
        previous = text;
        cases.push({ index: cases.length, base, mutations, text });
    }
    return cases;
}

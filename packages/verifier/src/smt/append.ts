/**
 * Appends lists to `out` without a spread: `out.push(...items)` passes every
 * item as an argument, and a few hundred thousand of them (a program's
 * globals, say) overflow the stack.
 */
export function append<T>(out: T[], ...lists: ReadonlyArray<readonly T[]>): T[] {
    for (const items of lists) for (const x of items) out.push(x);
    return out;
}

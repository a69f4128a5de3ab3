// A time-out that counts only the time the event loop could run: while the
// main thread is blocked (a large file's front end, say), a solver that has
// started cannot be heard, and that time is not the solver's.

const TICK_MS = 250;

/** Calls `onTimeout` once `ms` of live time have passed; cancel with `clearLiveTimeout`. */
export function setLiveTimeout(onTimeout: () => void, ms: number): { cancel(): void } {
    let elapsed = 0;
    let last = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = () => {
        const now = Date.now();
        // a late tick counts as one tick: the loop was blocked, not the solver slow
        elapsed += Math.min(now - last, 2 * TICK_MS);
        last = now;
        if (elapsed >= ms) { timer = undefined; onTimeout(); return; }
        timer = setTimeout(tick, Math.min(TICK_MS, ms - elapsed));
    };
    timer = setTimeout(tick, Math.min(TICK_MS, ms));
    return { cancel: () => { if (timer) clearTimeout(timer); timer = undefined; } };
}

export function clearLiveTimeout(t: { cancel(): void } | undefined): void {
    t?.cancel();
}

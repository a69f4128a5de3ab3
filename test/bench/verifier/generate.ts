// Generated programs for the verifier's scaling benchmark: `locks` spin locks,
// each a class with an acquire/release pair (2 procedures with abstractions)
// and a counter it protects, and `threads` threads that each update `calls`
// counters under their locks (thread i uses locks i*calls, i*calls+1, ...,
// modulo `locks`, so every lock is used by threads*calls/locks call sites).
// With `inlined`, the abstractions are left out: every call is inlined into
// the threads that make it (checking with every call inlined).

export interface ScaleParams {
    locks: number;
    threads: number;
    calls: number;
    inlined: boolean;
}

export function lockProgram(p: ScaleParams): string {
    const out: string[] = [];
    for (let k = 0; k < p.locks; k++) {
        out.push(`class L${k} {`);
        out.push(`  //@ environment m == tid ==> m' == m;`);
        out.push(`  static volatile int m = 0;`);
        out.push(`  //@ writable_if m == tid;`);
        out.push(`  static int c = 0;`);
        if (!p.inlined) out.push(`  /*@ abstraction { step [m] m == 0 && m' == tid; } */`);
        out.push(`  static void acquire() { while (!cas(m, 0, tid)) { } }`);
        if (!p.inlined) out.push(`  /*@ abstraction { requires m == tid; step [m] m' == 0; } */`);
        out.push(`  static void release() { m = 0; }`);
        out.push(`}`);
    }
    for (let i = 0; i < p.threads; i++) {
        out.push(`thread W${i} {`);
        for (let j = 0; j < p.calls; j++) {
            const k = (i * p.calls + j) % p.locks;
            out.push(`  L${k}.acquire();`, `  L${k}.c = L${k}.c + 1;`, `  L${k}.release();`);
        }
        out.push(`}`);
    }
    return out.join('\n') + '\n';
}

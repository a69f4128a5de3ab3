/**
 * Generates large Calvin programs for the front-end benchmark: many classes
 * with annotated fields and methods (with and without abstractions), globals
 * and threads. Deterministic: the same size gives the same text.
 */
export function generateProgram(targetLines: number): string {
    const out: string[] = ['// Generated benchmark program.'];
    let i = 0;
    while (out.length < targetLines) {
        out.push(...classBlock(i), '');
        i++;
    }
    const classes = i;
    out.push(`//@ invariant g0 >= 0;`, `volatile int g0 = 0;`, '');
    for (let t = 0; t < Math.max(1, Math.floor(classes / 10)); t++) {
        out.push(`thread Worker${t}[*] {`, `  L${t * 10} l = new L${t * 10}();`, `  l.acquire();`, `  l.work(${t});`, `  l.release();`, `}`, '');
    }
    return out.join('\n') + '\n';
}

function classBlock(i: number): string[] {
    return [
        `class L${i} {`,
        `  //@ environment held == tid ==> held' == held;`,
        `  volatile int held = 0;`,
        `  //@ writable_if held == tid;`,
        `  int count = 0;`,
        `  //@ writable_if held == tid;`,
        `  int[] data = new int[8];`,
        `  /*@ invariant held == 0 ==> (data != null && 0 <= count && count <= data.length); */`,
        ``,
        `  /*@ abstraction { step [held] held == 0 && held' == tid; } */`,
        `  void acquire() {`,
        `    while (!cas(held, 0, tid)) { }`,
        `  }`,
        ``,
        `  /*@ abstraction { requires held == tid; step [held] held' == 0; } */`,
        `  void release() {`,
        `    held = 0;`,
        `  }`,
        ``,
        `  int work(int k) {`,
        `    int sum = 0;`,
        `    //@ loop_invariant 0 <= j;`,
        `    for (int j = 0; j < count; j++) {`,
        `      if (data[j] > k) {`,
        `        sum = sum + data[j];`,
        `      } else {`,
        `        sum -= 1;`,
        `      }`,
        `    }`,
        `    //@ assert sum >= -count;`,
        `    return sum;`,
        `  }`,
        `}`,
    ];
}

// Where a native z3 is: on PATH. A module of its own, with no other dependency: the
// `calvin` command's launcher (packages/cli/src/launch.ts) asks it before anything else loads.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The z3 executable on PATH, if any. */
export function findNativeZ3(): string | undefined {
    const names = process.platform === 'win32'
        ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean).map(ext => `z3${ext.toLowerCase()}`)
        : ['z3'];
    for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
        if (!dir) continue;
        for (const name of names) {
            const candidate = path.join(dir, name);
            try {
                fs.accessSync(candidate, fs.constants.X_OK);
                if (fs.statSync(candidate).isFile()) return candidate;
            } catch { /* not here */ }
        }
    }
    return undefined;
}

import type * as lsp from 'vscode-languageserver-protocol';

/** A counter protected by a spin lock, without annotations (the quick-fix and inference tests). */
export const COUNTER = `// A counter protected by a spin lock, without annotations.
class Lock {
  static volatile int m = 0;
  static void acquire() {
    while (!cas(m, 0, tid)) { }
  }
  static void release() {
    m = 0;
  }
}

int count = 0;

thread T1 {
  Lock.acquire();
  count = count + 1;
  Lock.release();
}

thread T2 {
  Lock.acquire();
  count = count + 1;
  Lock.release();
}
`;

/** The text after a workspace edit's changes to one document (inserts at one position keep their order). */
export function applyEdits(text: string, edits: lsp.TextEdit[]): string {
    const lines = text.split('\n');
    const offset = (p: lsp.Position) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
    let out = text;
    const sorted = edits.map((e, i) => ({ e, i })).sort((x, y) => offset(y.e.range.start) - offset(x.e.range.start) || y.i - x.i);
    for (const { e } of sorted) out = out.slice(0, offset(e.range.start)) + e.newText + out.slice(offset(e.range.end));
    return out;
}

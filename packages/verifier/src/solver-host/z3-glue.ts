// Faster JavaScript glue for z3-solver's WebAssembly build (issue 15).
//
// z3-solver's `z3-built.js` is Emscripten's glue, built with ASSERTIONS and
// with C++ exceptions emulated in JavaScript: every C++ call inside a `try`
// scope leaves the WebAssembly code for a JavaScript `invoke_<sig>` function
// that calls the target back through the function table. Two things made that
// path slow (measured: ~39 million invokes for the queries of two example
// programs, 17 million a second):
//  - `getWasmTableEntry` asserts, on every call, that its mirror of the table
//    is up to date, with `wasmTable.get(index)` (about a third of all solver
//    time);
//  - every invoke crosses from WebAssembly to JavaScript and back.
// The build (scripts/bundle.mjs) writes a patched copy of the glue next to the
// solver's worker bundles: the assertion goes, and the invokes become
// WebAssembly functions of a small helper module made here (`try`/`catch_all`,
// WebAssembly's exception handling, catches the glue's JavaScript exceptions
// the way the JavaScript invokes did). Same behaviour, same answers; if the
// helper cannot be made at run time (a Node without WebAssembly exception
// handling), the glue keeps its JavaScript invokes.
//
// Every patch must apply exactly once to the glue of the locked z3-solver
// version; otherwise the build fails and says which (a new z3-solver version
// needs this module checked again).

/** A WebAssembly value type. */
export type ValType = 'i32' | 'i64' | 'f32' | 'f64';

/** An imported function of the Z3 module that the helper replaces (`invoke_*`), with its WebAssembly type. */
export interface InvokeImport {
    name: string;
    params: ValType[];
    results: ValType[];
}

const VALTYPE: Record<number, ValType> = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64' };
const VALCODE: Record<ValType, number> = { i32: 0x7f, i64: 0x7e, f32: 0x7d, f64: 0x7c };

/** A reader of WebAssembly's binary encoding (only what the type and import sections need). */
class Reader {
    pos = 0;
    constructor(private readonly bytes: Uint8Array) { }
    get done(): boolean { return this.pos >= this.bytes.length; }
    byte(): number {
        if (this.pos >= this.bytes.length) throw new Error('unexpected end of the WebAssembly module');
        return this.bytes[this.pos++];
    }
    u32(): number {
        let result = 0, shift = 0;
        for (;;) {
            const b = this.byte();
            result += (b & 0x7f) * 2 ** shift;
            if ((b & 0x80) === 0) return result;
            shift += 7;
            if (shift > 35) throw new Error('malformed LEB128');
        }
    }
    name(): string {
        const n = this.u32();
        const s = Buffer.from(this.bytes.subarray(this.pos, this.pos + n)).toString('utf8');
        this.pos += n;
        return s;
    }
    limits(): void {
        const flags = this.byte();
        this.u32();
        if (flags & 1) this.u32();
    }
}

/**
 * The `invoke_*` functions a module imports, with their types, read from its
 * type and import sections (the rest of the module is not read).
 */
export function readInvokeImports(wasm: Uint8Array): InvokeImport[] {
    const r = new Reader(wasm);
    const magic = [r.byte(), r.byte(), r.byte(), r.byte()];
    if (magic.join(',') !== '0,97,115,109') throw new Error('not a WebAssembly module');
    r.pos += 4; // version
    const types: Array<{ params: ValType[]; results: ValType[] }> = [];
    const out: InvokeImport[] = [];
    while (!r.done) {
        const id = r.byte();
        const size = r.u32();
        const end = r.pos + size;
        if (id === 1) {
            for (let n = r.u32(); n > 0; n--) {
                if (r.byte() !== 0x60) throw new Error('unsupported type in the type section');
                const vals = (): ValType[] => Array.from({ length: r.u32() }, () => {
                    const t = VALTYPE[r.byte()];
                    if (!t) throw new Error('unsupported value type');
                    return t;
                });
                const params = vals();
                types.push({ params, results: vals() });
            }
        } else if (id === 2) {
            for (let n = r.u32(); n > 0; n--) {
                r.name();
                const name = r.name();
                const kind = r.byte();
                if (kind === 0) {
                    const t = types[r.u32()];
                    if (/^invoke_\w+$/.test(name)) out.push({ name, params: [...t.params], results: [...t.results] });
                } else if (kind === 1) { r.byte(); r.limits(); }
                else if (kind === 2) r.limits();
                else if (kind === 3) { r.byte(); r.byte(); }
                else if (kind === 4) { r.byte(); r.u32(); }
                else throw new Error(`unknown import kind ${kind}`);
            }
            return out;
        }
        r.pos = end;
    }
    return out;
}

// --------------------------------------------------------------- the helper module

function u32(n: number): number[] {
    const out: number[] = [];
    do {
        let b = n & 0x7f;
        n = Math.floor(n / 128);
        if (n > 0) b |= 0x80;
        out.push(b);
    } while (n > 0);
    return out;
}

function i32(n: number): number[] {
    const out: number[] = [];
    for (;;) {
        const b = n & 0x7f;
        n >>= 7;
        if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

function str(s: string): number[] {
    const b = [...Buffer.from(s, 'utf8')];
    return [...u32(b.length), ...b];
}

function vec(items: number[][]): number[] {
    return [...u32(items.length), ...items.flat()];
}

function section(id: number, body: number[]): number[] {
    return [id, ...u32(body.length), ...body];
}

/** Slots of the helper's table before the copy of the Z3 table. */
const HELPER_SLOTS = { stackSave: 0, stackRestore: 1, setThrew: 2, offset: 3 } as const;

const OP = {
    if: 0x04, try: 0x06, rethrow: 0x09, end: 0x0b, return: 0x0f, call: 0x10, callIndirect: 0x11,
    catchAll: 0x19, localGet: 0x20, localSet: 0x21, i32Const: 0x41, i64Const: 0x42, f32Const: 0x43, f64Const: 0x44,
    i32Eqz: 0x45, i32GeU: 0x4f, i32Add: 0x6a, prefixFC: 0xfc, tableSize: 16, tableGet: 0x25, refIsNull: 0xd1,
} as const;
const EMPTY = 0x40;
const FUNCREF = 0x70;

/**
 * The helper module: for each `invoke_<sig>`, a WebAssembly function of the
 * same type that calls entry `index` of the Z3 module's table (copied into the
 * helper's own table, `env.t`, at HELPER_SLOTS.offset, on its first call by
 * `env.fill(index)`: copying all of Z3's tens of thousands of entries up front
 * took 40 ms in every thread) inside `try`/`catch_all`.
 * On an exception it does what the glue's JavaScript invoke did: restore the
 * stack pointer, rethrow unless it is a C++ exception or longjmp of the glue
 * (`env.isEH()` says so), else `setThrew(1, 0)` and return zero. An index past
 * the copied table calls the glue's own invoke (`env.fb_<name>`).
 */
export function invokeHelperModule(invokes: readonly InvokeImport[]): Uint8Array {
    const typeKeys = new Map<string, number>();
    const typeBodies: number[][] = [];
    const typeOf = (params: readonly ValType[], results: readonly ValType[]): number => {
        const k = `${params.join(',')}>${results.join(',')}`;
        let idx = typeKeys.get(k);
        if (idx === undefined) {
            idx = typeBodies.length;
            typeKeys.set(k, idx);
            typeBodies.push([0x60, ...vec(params.map(p => [VALCODE[p]])), ...vec(results.map(p => [VALCODE[p]]))]);
        }
        return idx;
    };
    const tStackSave = typeOf([], ['i32']);
    const tStackRestore = typeOf(['i32'], []);
    const tSetThrew = typeOf(['i32', 'i32'], []);
    const tFill = typeOf(['i32'], []);
    for (const inv of invokes) {
        if (inv.params[0] !== 'i32' || inv.results.length > 1) throw new Error(`unexpected type of ${inv.name}`);
    }

    // imports: the table, isEH, fill, then one fallback per invoke
    const imports: number[][] = [
        [...str('env'), ...str('t'), 0x01, FUNCREF, 0x00, ...u32(0)],
        [...str('env'), ...str('isEH'), 0x00, ...u32(tStackSave)],
        [...str('env'), ...str('fill'), 0x00, ...u32(tFill)],
        ...invokes.map(inv => [...str('env'), ...str(`fb_${inv.name}`), 0x00, ...u32(typeOf(inv.params, inv.results))]),
    ];
    const IS_EH = 0;
    const FILL = 1;
    const fallback = (k: number) => 2 + k;
    const firstDefined = 2 + invokes.length;

    const bodies = invokes.map((inv, k) => {
        const nArgs = inv.params.length - 1;
        const sp = inv.params.length; // the local after the parameters
        const result = inv.results[0];
        const blockType = result ? VALCODE[result] : EMPTY;
        const calleeType = typeOf(inv.params.slice(1), inv.results);
        const args: number[] = [];
        for (let a = 1; a <= nArgs; a++) args.push(OP.localGet, ...u32(a));
        const zero = result === 'i64' ? [OP.i64Const, 0] : result === 'f32' ? [OP.f32Const, 0, 0, 0, 0]
            : result === 'f64' ? [OP.f64Const, 0, 0, 0, 0, 0, 0, 0, 0] : result === 'i32' ? [OP.i32Const, 0] : [];
        const code = [
            // past the copied table: the glue's own invoke
            OP.localGet, 0, OP.i32Const, ...i32(HELPER_SLOTS.offset), OP.i32Add, OP.prefixFC, ...u32(OP.tableSize), 0, OP.i32GeU,
            OP.if, EMPTY,
            OP.localGet, 0, ...args, OP.call, ...u32(fallback(k)), OP.return,
            OP.end,
            // not copied yet: fill(index)
            OP.localGet, 0, OP.i32Const, ...i32(HELPER_SLOTS.offset), OP.i32Add, OP.tableGet, 0, OP.refIsNull,
            OP.if, EMPTY,
            OP.localGet, 0, OP.call, ...u32(FILL),
            OP.end,
            // sp = stackSave()
            OP.i32Const, ...i32(HELPER_SLOTS.stackSave), OP.callIndirect, ...u32(tStackSave), 0, OP.localSet, ...u32(sp),
            OP.try, blockType,
            ...args, OP.localGet, 0, OP.i32Const, ...i32(HELPER_SLOTS.offset), OP.i32Add, OP.callIndirect, ...u32(calleeType), 0,
            OP.catchAll,
            OP.localGet, ...u32(sp), OP.i32Const, ...i32(HELPER_SLOTS.stackRestore), OP.callIndirect, ...u32(tStackRestore), 0,
            OP.call, ...u32(IS_EH), OP.i32Eqz, OP.if, EMPTY, OP.rethrow, 1, OP.end,
            OP.i32Const, 1, OP.i32Const, 0, OP.i32Const, ...i32(HELPER_SLOTS.setThrew), OP.callIndirect, ...u32(tSetThrew), 0,
            ...zero,
            OP.end,
            OP.end,
        ];
        const locals = vec([[...u32(1), VALCODE.i32]]);
        const body = [...locals, ...code];
        return [...u32(body.length), ...body];
    });
    const funcTypes = invokes.map(inv => u32(typeOf(inv.params, inv.results)));
    const exports = invokes.map((inv, k) => [...str(inv.name), 0x00, ...u32(firstDefined + k)]);
    const bytes = [
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
        ...section(1, vec(typeBodies)),
        ...section(2, vec(imports)),
        ...section(3, vec(funcTypes)),
        ...section(7, vec(exports)),
        ...section(10, vec(bodies)),
    ];
    return Uint8Array.from(bytes);
}

// --------------------------------------------------------------- the run-time part and the patches

/**
 * JavaScript put at the start of the patched glue: `calvinInvokes.install`
 * replaces the import object's invokes by the helper's (before the Z3 module
 * is instantiated, on the main thread and in every pthread), `link` sizes the
 * helper's table for the new instance's, whose entries it copies when first
 * called. The exceptions the glue throws for
 * C++ `throw` and `longjmp` are marked on their way out, for `isEH`.
 */
export function runtimeSnippet(invokes: readonly InvokeImport[]): string {
    const helper = Buffer.from(invokeHelperModule(invokes)).toString('base64');
    const names = JSON.stringify(invokes.map(i => i.name));
    return `// Calvin: WebAssembly invokes (packages/verifier/src/solver-host/z3-glue.ts)
var calvinInvokes = (() => {
  const NAMES = ${names};
  const THROWERS = ['__cxa_throw', '__resumeException', '__cxa_rethrow', '_emscripten_throw_longjmp'];
  let table, src, helper, pendingEH = false, failed = false;
  return {
    // (the glue may build its import object more than once: each gets the helper's invokes)
    install(imports) {
      if (failed || typeof WebAssembly.Table !== 'function') return;
      try {
        if (!helper) {
          table = new WebAssembly.Table({ element: 'anyfunc', initial: ${HELPER_SLOTS.offset} });
          const env = {
            t: table,
            isEH: () => { const r = pendingEH; pendingEH = false; return r ? 1 : 0; },
            fill: (i) => { table.set(${HELPER_SLOTS.offset} + i, src.get(i)); },
          };
          for (const name of NAMES) {
            const stock = imports[name];
            if (typeof stock !== 'function') { failed = true; return; }
            env['fb_' + name] = (...args) => { try { return stock(...args); } finally { pendingEH = false; } };
          }
          helper = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from('${helper}', 'base64')), { env });
        }
        for (const name of THROWERS) {
          const f = imports[name];
          if (typeof f === 'function') imports[name] = (...args) => { pendingEH = true; return f(...args); };
        }
        for (const name of NAMES) imports[name] = helper.exports[name];
        Module['calvinInvokes'] = true;
      } catch (e) {
        // no WebAssembly exception handling (or another reason): the glue's own invokes stay
        failed = true;
        helper = undefined;
      }
    },
    link(exports, wasmTable) {
      if (!helper) return;
      const n = wasmTable.length;
      if (table.length < n + ${HELPER_SLOTS.offset}) table.grow(n + ${HELPER_SLOTS.offset} - table.length);
      table.set(${HELPER_SLOTS.stackSave}, exports['emscripten_stack_get_current']);
      table.set(${HELPER_SLOTS.stackRestore}, exports['_emscripten_stack_restore']);
      table.set(${HELPER_SLOTS.setThrew}, exports['setThrew']);
      // (another instance's entries, if this thread ever made a second one, are not this one's)
      if (src && src !== wasmTable) for (let i = ${HELPER_SLOTS.offset}; i < table.length; i++) table.set(i, null);
      src = wasmTable;
    },
  };
})();
`;
}

interface Patch {
    why: string;
    find: string;
    replace: string;
}

/** The glue's text changes; each `find` must occur exactly once. */
function patches(invokes: readonly InvokeImport[]): Patch[] {
    return [
        {
            why: 'the run-time part, inside the module factory (its state is per Z3 instance)',
            find: 'var Module = moduleArg;\n',
            replace: `var Module = moduleArg;\n${runtimeSnippet(invokes)}`,
        },
        {
            why: 'the per-call check of the table mirror (ASSERTIONS) costs a table lookup on every invoke',
            find: "      assert(wasmTable.get(funcPtr) == func, 'JavaScript-side Wasm function table mirror is out of date!');\n",
            replace: '',
        },
        {
            why: 'the invokes become WebAssembly functions (before the module is instantiated)',
            find: 'function getWasmImports() {\n  assignWasmImports();\n',
            replace: 'function getWasmImports() {\n  assignWasmImports();\n  calvinInvokes.install(wasmImports);\n',
        },
        {
            why: "the helper's table gets the new instance's functions",
            find: "    wasmTable = wasmExports['__indirect_function_table'];\n",
            replace: "    wasmTable = wasmExports['__indirect_function_table'];\n    calvinInvokes.link(wasmExports, wasmTable);\n",
        },
        {
            why: 'an answer is handed back on the next turn of the event loop, not after a timer (Node clamps setTimeout(0) to 1 ms: a millisecond per query)',
            find: '  setTimeout(() => {\n    cap.resolve(val);\n  }, 0);',
            replace: '  setImmediate(() => {\n    cap.resolve(val);\n  });',
        },
        {
            why: 'a failure is handed back on the next turn of the event loop, not after a timer',
            find: '  setTimeout(() => {\n    cap.reject(val);\n  }, 0);',
            replace: '  setImmediate(() => {\n    cap.reject(val);\n  });',
        },
        {
            why: "Z3 reads the clock often; the time origin is a constant of the thread",
            find: 'var _emscripten_get_now = () => performance.timeOrigin + performance.now();',
            replace: 'var calvinTimeOrigin = performance.timeOrigin;\n  var _emscripten_get_now = () => calvinTimeOrigin + performance.now();',
        },
    ];
}

/** The patched glue: throws, naming the patch, when one does not apply exactly once. */
export function patchGlue(glue: string, wasm: Uint8Array): string {
    const invokes = readInvokeImports(wasm);
    if (invokes.length === 0) throw new Error('z3-built.wasm imports no invoke_* function: the glue patches do not fit this z3-solver');
    let out = glue;
    for (const p of patches(invokes)) {
        const n = out.split(p.find).length - 1;
        if (n !== 1) throw new Error(`z3-solver's glue (z3-built.js) changed: the patch "${p.why}" matches ${n} times instead of once; check packages/verifier/src/solver-host/z3-glue.ts against this z3-solver version`);
        out = out.replace(p.find, () => p.replace);
    }
    return `// Patched by Calvin's build for speed (packages/verifier/src/solver-host/z3-glue.ts); the original is z3-solver's build/z3-built.js.\n${out}`;
}

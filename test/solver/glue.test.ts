// The patched Emscripten glue of z3-solver (packages/verifier/src/solver-host/z3-glue.ts):
// the build writes it next to the worker bundles; with it, C++ exceptions inside Z3
// go through WebAssembly invokes instead of JavaScript ones. It must give exactly
// the answers of z3-solver's own glue, on the same Z3, including the paths where Z3
// throws (errors, resource limits), and the workers must really use it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { invokeHelperModule, patchGlue, readInvokeImports } from '../../packages/verifier/src/solver-host/z3-glue.js';
import { PRESTARTED_THREADS, prespawnThreads } from '../../packages/verifier/src/solver-host/z3-direct.js';
import { ROOT } from '../util/paths.js';
import { HARD_QUERY, makeVc } from './vcs.js';

const require = createRequire(import.meta.url);
const STOCK_GLUE = require.resolve('z3-solver/build/z3-built.js');
const WASM = path.join(path.dirname(STOCK_GLUE), 'z3-built.wasm');
const BUILT = ['packages/cli/out/z3-built.cjs', 'client/out/z3-built.cjs'].map(f => path.join(ROOT, f));
const T = { timeout: 120_000 };

const LETTER: Record<string, string> = { i: 'i32', j: 'i64', f: 'f32', d: 'f64' };

describe('z3-solver glue: the patch', () => {
    it('reads the invoke_* imports of z3-built.wasm, with the types their names say', T, () => {
        const invokes = readInvokeImports(fs.readFileSync(WASM));
        assert.ok(invokes.length >= 20, `only ${invokes.length} invoke_* imports`);
        for (const inv of invokes) {
            const sig = inv.name.slice('invoke_'.length);
            assert.deepEqual(inv.results, sig[0] === 'v' ? [] : [LETTER[sig[0]]], inv.name);
            assert.deepEqual(inv.params, ['i32', ...[...sig.slice(1)].map(c => LETTER[c])], inv.name);
        }
    });

    it('makes valid WebAssembly for the invokes', T, () => {
        const invokes = readInvokeImports(fs.readFileSync(WASM));
        assert.ok(WebAssembly.validate(invokeHelperModule(invokes)), 'the invoke helper does not validate');
    });

    it('the build wrote exactly this patch of z3-solver\'s glue next to the worker bundles', T, () => {
        const expected = patchGlue(fs.readFileSync(STOCK_GLUE, 'utf8'), fs.readFileSync(WASM));
        for (const f of BUILT) {
            assert.ok(fs.existsSync(f), `${path.relative(ROOT, f)} is missing: run \`npm run build\` first`);
            assert.ok(fs.readFileSync(f, 'utf8') === expected, `${path.relative(ROOT, f)} is not the patch of the installed z3-solver: run \`npm run build\``);
        }
    });

    it('refuses a glue a patch does not fit, naming the patch', T, () => {
        const stock = fs.readFileSync(STOCK_GLUE, 'utf8');
        const changed = stock.replace('function getWasmImports() {', 'function getWasmImports(x) {');
        assert.throws(() => patchGlue(changed, fs.readFileSync(WASM)), /the invokes become WebAssembly functions.*matches 0 times/);
    });
});

interface DirectInstance {
    eval(text: string): Promise<string>;
    /** The same, synchronously on this thread (as z3-direct.ts evaluates in the workers). */
    evalSync(text: string): string;
    reset(): void;
    invokes: boolean;
    /** Emscripten's pool of Z3's thread Workers. */
    threads: { unusedWorkers: unknown[]; runningWorkers: unknown[] };
    em: any;
}

/** A Z3 on this thread from a glue file (z3-solver's low-level API, as z3-direct.ts uses it). */
async function z3From(glue: string): Promise<DirectInstance> {
    const { init } = require('z3-solver/build/low-level/index.js') as { init: (m: unknown, o: object) => Promise<{ Z3: any; em: any }> };
    const { Z3, em } = await init(require(glue), { locateFile: () => WASM, mainScriptUrlOrBlob: glue });
    const cfg = Z3.mk_config();
    let ctx = Z3.mk_context_rc(cfg);
    return {
        invokes: em.calvinInvokes === true,
        threads: em.PThread,
        em,
        reset: () => { Z3.del_context(ctx); ctx = Z3.mk_context_rc(cfg); },
        eval: async (text: string) => {
            const ptr = copyIn(em, text);
            try {
                return String(await em.async_call(() => em.ccall('async_Z3_eval_smtlib2_string', 'void', ['number', 'number'], [ctx, ptr])));
            } finally {
                em._free(ptr);
            }
        },
        evalSync: (text: string) => {
            const ptr = copyIn(em, text);
            try {
                return String(em.ccall('Z3_eval_smtlib2_string', 'string', ['number', 'number'], [ctx, ptr]));
            } finally {
                em._free(ptr);
            }
        },
    };
}

/** The text as a C string in Z3's memory (to be freed). */
function copyIn(em: any, text: string): number {
    const bytes = Buffer.from(text, 'utf8');
    const ptr = em._malloc(bytes.length + 1);
    em.HEAPU8.set(bytes, ptr);
    em.HEAPU8[ptr + bytes.length] = 0;
    return ptr;
}

/** Queries with known shapes: models, unsat, Z3's errors (C++ exceptions inside), resource limits (cancellation by exception). */
function scripts(): string[] {
    const out: string[] = [];
    for (let i = 0; i < 24; i++) {
        const vc = makeVc(700 + i, 20 + i);
        out.push(`(set-option :produce-models true)\n${vc.text}(get-value (x0 x1))\n`);
    }
    out.push('(declare-const x Int)\n(assert (+ x true))\n(check-sat)\n');
    out.push('(declare-const x Int)\n(get-value (x))\n(check-sat)\n');
    out.push('(declare-fun f (Int) Int)\n(assert (= (f 1 2) 3))\n(check-sat)\n');
    out.push('(assert (forall ((x Int)) (> x y)))\n');
    out.push('(check-sat-assuming (p))\n');
    out.push('(set-option :rlimit 2000)\n' + HARD_QUERY + '(get-info :reason-unknown)\n');
    out.push('(set-option :rlimit 50000)\n' + makeVc(9, 60).text + '(get-info :reason-unknown)\n');
    out.push('(push 1)\n(declare-const z Int)\n(assert (> z 0))\n(check-sat)\n(pop 2)\n(check-sat)\n');
    return out;
}

describe("Z3's threads started ahead (z3-direct.ts)", () => {
    it('a synchronous eval needs only the timer\'s thread, started ahead, and answers as the asynchronous one; the thread never keeps the process alive', T, async () => {
        const z3 = await z3From(BUILT[0]);
        assert.equal(prespawnThreads(z3.em, PRESTARTED_THREADS), 1);
        const workers = () => z3.threads.unusedWorkers.length + z3.threads.runningWorkers.length;
        // (the thread started ahead loads while this one is blocked in Z3: it needs nothing of this one)
        const out = z3.evalSync('(set-option :timeout 5000)\n(declare-const x Int)\n(assert (> x 2))\n(check-sat)\n(get-value (x))\n');
        assert.match(out, /^sat\n\(\(x \d+\)\)/);
        assert.equal(workers(), 1);
        // Z3's time limit ends a query through that thread; errors and resource limits are answers
        for (const text of scripts()) {
            z3.reset();
            const a = await z3.eval(text);
            z3.reset();
            assert.equal(z3.evalSync(text), a, `different answers to:\n${text.slice(0, 300)}`);
        }
        z3.reset();
        assert.equal(z3.evalSync(`(set-option :timeout 1)\n${HARD_QUERY}`).trim().split('\n').pop(), 'unknown');
    });
});

describe('z3-solver glue: the patched glue answers like the stock one', () => {
    it('same outputs on models, errors and resource limits, with the WebAssembly invokes in use', T, async () => {
        const built = BUILT[0];
        assert.ok(fs.existsSync(built), `${path.relative(ROOT, built)} is missing: run \`npm run build\` first`);
        const stock = await z3From(STOCK_GLUE);
        const patched = await z3From(built);
        assert.equal(stock.invokes, false, 'the stock glue has no WebAssembly invokes');
        assert.equal(patched.invokes, true, 'the patched glue did not install its WebAssembly invokes');
        let throwing = 0;
        for (const text of scripts()) {
            stock.reset();
            patched.reset();
            const a = await stock.eval(text);
            const b = await patched.eval(text);
            assert.equal(b, a, `different answers to:\n${text.slice(0, 300)}`);
            if (/error|unknown|canceled|resource/.test(a)) throwing++;
        }
        assert.ok(throwing >= 5, `only ${throwing} of the scripts took Z3's exception paths`);
    });

    for (const bundle of ['packages/cli/out/z3-worker.cjs', 'packages/cli/out/check-worker.cjs']) {
        it(`${bundle} runs Z3 with the patched glue`, T, async () => {
            const script = path.join(ROOT, bundle);
            assert.ok(fs.existsSync(script), `${bundle} is missing: run \`npm run build\` first`);
            const data = bundle.includes('check-worker') ? {} : { kind: 'calvin-z3-worker', prewarm: false };
            const worker = new Worker(script, { workerData: data, execArgv: [], stdout: true, stderr: true });
            try {
                const ready = await new Promise<{ type: string; glue?: string; threads?: number; message?: string }>((resolve, reject) => {
                    worker.on('message', m => { if (m.type === 'ready' || m.type === 'fatal') resolve(m); });
                    worker.on('error', reject);
                });
                assert.equal(ready.type, 'ready', ready.message);
                assert.equal(ready.glue, 'patched');
                // both evaluate synchronously: only Z3's timer needs a thread
                assert.equal(ready.threads, PRESTARTED_THREADS);
            } finally {
                await worker.terminate();
            }
        });
    }
});

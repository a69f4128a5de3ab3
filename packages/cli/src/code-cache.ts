// Loading the command's bundle with V8's code cache (issue 15: start-up).
//
// Compiling the 2.5 MB bundle, and then every function a check calls the first
// time it is called, is a good part of a short run's start. After bundling,
// `scripts/bundle.mjs` checks four examples once per flavor with
// CALVIN_CODE_CACHE=write:<flavor>: at the exit, V8 serializes the code of
// every function compiled so far, and it is written next to the bundle. Later
// runs hand it to V8, which takes the compiled functions from it instead of
// compiling them again (measured natively on the bakery: 60-90 ms of 1.2 s).
//
// Nothing stale or damaged is used: the file starts with the CRC-32 and the
// length of the bundle it was made from and the CRC-32 of the cache itself (V8
// checks only the source's length, its own version and its flags), and a file
// that does not match is ignored. It is written at build time beside the
// bundle, never in a workspace. The flavors: V8's flags differ between a
// WebAssembly run (quick-wasm.ts) and any other, and V8 rejects a cache made
// under other flags.
import * as fs from 'node:fs';
import Module, { createRequire } from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { crc32 } from 'node:zlib';

/** The header: the bundle's CRC-32 and length, the cache's CRC-32. */
const HEADER_BYTES = 12;

export function cacheFileOf(bundle: string, flavor: string): string {
    return `${bundle}.${flavor}.cache`;
}

function header(bundle: Buffer, data: Buffer): Buffer {
    const h = Buffer.alloc(HEADER_BYTES);
    h.writeUInt32LE(crc32(bundle), 0);
    h.writeUInt32LE(bundle.length, 4);
    h.writeUInt32LE(crc32(data), 8);
    return h;
}

/** Run a CommonJS bundle as the module `bundle`, with its code cache when there is a valid one. */
export function loadBundle(bundle: string, flavor: string): void {
    const bytes = fs.readFileSync(bundle);
    const source = bytes.toString('utf8');
    const cacheFile = cacheFileOf(bundle, flavor);
    const writing = process.env.CALVIN_CODE_CACHE?.startsWith('write:') === true;
    let cachedData: Buffer | undefined;
    if (!writing) {
        try {
            const file = fs.readFileSync(cacheFile);
            const data = file.subarray(HEADER_BYTES);
            if (file.length > HEADER_BYTES && header(bytes, data).equals(file.subarray(0, HEADER_BYTES))) cachedData = data;
        } catch {
            // no cache: compiled as usual
        }
    }
    const script = new vm.Script(Module.wrap(source), { filename: bundle, cachedData });
    if (process.env.CALVIN_DEBUG) process.stderr.write(`[${Math.round(performance.now())} ms] [start] code cache ${path.basename(cacheFile)}: ${!cachedData ? 'none' : script.cachedDataRejected ? 'rejected by V8' : 'used'}\n`);
    if (writing) {
        // at the exit (the command ends with process.exit): the code compiled by then
        process.on('exit', () => {
            const data = script.createCachedData();
            fs.writeFileSync(cacheFile, Buffer.concat([header(bytes, data), data]));
        });
    }
    const mod = new Module(bundle, require.main);
    mod.filename = bundle;
    mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(bundle));
    mod.loaded = true;
    const req = createRequire(bundle);
    const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
    wrapper.call(mod.exports, mod.exports, req, mod, bundle, path.dirname(bundle));
}

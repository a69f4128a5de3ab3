// Preloaded into the language server by the soak test (NODE_OPTIONS=--require):
// every second, in the server's main thread and in each check worker, a full
// garbage collection, then the JS heap still in use is written to
// $CALVIN_HEAP_PROBE_DIR/heap-<thread>.json. What survives a full collection
// is what a leak would make grow; the process's resident memory also moves
// with when the collector last ran and how far V8 let the heap grow before it.
'use strict';
const wt = require('node:worker_threads');
const dir = process.env.CALVIN_HEAP_PROBE_DIR;
const probed = wt.isMainThread ? process.argv.includes('lsp') : wt.workerData?.kind === 'calvin-check-worker';
if (dir && probed) {
    const fs = require('node:fs');
    const path = require('node:path');
    require('node:v8').setFlagsFromString('--expose-gc');
    const gc = require('node:vm').runInNewContext('gc');
    const file = path.join(dir, `heap-${wt.threadId}.json`);
    setInterval(() => {
        gc();
        const m = process.memoryUsage();
        try {
            // written whole, then renamed: the test never reads half a sample
            fs.writeFileSync(`${file}.tmp`, JSON.stringify({ at: Date.now(), heapUsed: m.heapUsed }));
            fs.renameSync(`${file}.tmp`, file);
        } catch { /* the test's folder is gone */ }
    }, 1000).unref();
}

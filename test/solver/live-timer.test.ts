// The solvers' start time-out counts only the time the event loop could run:
// a main thread blocked by a large file's front end does not make a solver
// that started meanwhile "not start".
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setLiveTimeout } from '../../packages/verifier/src/solver-host/live-timer.js';

describe('live time-out', () => {
    it('a blocked event loop does not use up the time', async () => {
        let firedAt = 0;
        const t = setLiveTimeout(() => { firedAt = Date.now(); }, 1000);
        const blockEnd = Date.now() + 2500;
        while (Date.now() < blockEnd) { /* the main thread is busy */ }
        const unblocked = Date.now();
        await new Promise(r => setTimeout(r, 3000));
        t.cancel();
        assert.ok(firedAt > 0, 'it fires once the live time has passed');
        assert.ok(firedAt - unblocked >= 300, `fired ${firedAt - unblocked} ms after the block: the blocked time counted`);
    });

    it('fires after its time when the loop runs, and not after cancel', async () => {
        const t0 = Date.now();
        let fired = 0;
        setLiveTimeout(() => { fired = Date.now() - t0; }, 300);
        let cancelled = false;
        const c = setLiveTimeout(() => { cancelled = true; }, 300);
        c.cancel();
        await new Promise(r => setTimeout(r, 2500));
        assert.ok(fired >= 290 && fired < 2500, `${fired} ms`);
        assert.equal(cancelled, false);
    });
});

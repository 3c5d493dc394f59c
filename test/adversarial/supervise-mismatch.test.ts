/**
 * A launcher that changes CUDA_VISIBLE_DEVICES itself: gpumem pins GPU 1, the script inside sets GPU 0's
 * UUID and the program OOMs on "GPU 0". The live warning says the memory is on GPU 0 (not chosen); the
 * OOM explanation must map "GPU 0" with the child's own list, to the same GPU 0 — never to GPU 1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GiB, uuidOf } from '../supervise/helpers/claims.js';
import { PROCS, expectClean, gpumem, world, type World } from './supervise-helpers.js';

let w: World | null = null;
afterEach(() => {
  w?.remove();
  w = null;
});

interface Cause { id: string; evidence: { physicalGpu?: string } }

describe('supervise: the device-mismatch explanation uses the child\'s own CUDA_VISIBLE_DEVICES', () => {
  it('"GPU 0" of an OOM is mapped with the value the launcher set, agreeing with the live warning', async () => {
    w = world();
    const script = `CUDA_VISIBLE_DEVICES=${uuidOf(0)} exec ${process.execPath} ${PROCS}/oom-at.mjs --batch 8 --threshold 4 --per-sample ${GiB} --gpu 0 --hold-ms 800`;
    const r = await gpumem(['run', '--gpus', '1', '--no-history', '--no-companion', '--json', '--interval-ms', '50', '--', 'sh', '-c', script], w.env, 20000);
    expectClean(r, 'gpumem run');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/warning: device mismatch: pid \d+ \(node\) holds 4\.00 GiB on GPU 0, which was not chosen/);
    const report = JSON.parse(r.stdout) as { attempts: Array<{ ooms: Array<{ causes: Cause[] }> }> };
    const remap = report.attempts[0]?.ooms[0]?.causes.find((c) => c.id === 'device-remap');
    expect(remap?.evidence.physicalGpu).toBe(uuidOf(0));
  });
});

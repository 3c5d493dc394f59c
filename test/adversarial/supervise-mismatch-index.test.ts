/**
 * The OOM explanation of a run whose launcher pinned another GPU by UUID names that GPU by the index people
 * type and nvidia-smi shows, as the live device-mismatch warning does, not by its UUID alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GiB, uuidOf } from '../supervise/helpers/claims.js';
import { PROCS, expectClean, gpumem, world, type World } from './supervise-helpers.js';

let w: World | null = null;
afterEach(() => {
  w?.remove();
  w = null;
});

describe('supervise: the device-remap explanation names the GPU by its index', () => {
  it('"GPU 0" of an OOM under a UUID the launcher set is "physical GPU 0 (GPU-…)", fix: look at GPU 0', async () => {
    w = world();
    const script = `CUDA_VISIBLE_DEVICES=${uuidOf(0)} exec ${process.execPath} ${PROCS}/oom-at.mjs --batch 8 --threshold 4 --per-sample ${GiB} --gpu 0 --hold-ms 800`;
    const r = await gpumem(['run', '--gpus', '1', '--no-history', '--no-companion', '--interval-ms', '50', '--', 'sh', '-c', script], w.env, 20000);
    expectClean(r, 'gpumem run');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/warning: device mismatch: pid \d+ \(node\) holds 4\.00 GiB on GPU 0, which was not chosen/);
    expect(r.stderr).toContain(`likely: "GPU 0" in the message is physical GPU 0 (${uuidOf(0)})`);
  });
});

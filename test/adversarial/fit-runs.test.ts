/**
 * `gpumem fit` against commands that do not behave: one that ignores {steps} and runs on (each run has a
 * time limit, and fit stops with one line instead of hanging), and `--max-batch 1` (no run above it).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GiB } from '../supervise/helpers/claims.js';
import { expectClean, gpumem, type World, world } from './supervise-helpers.js';

const TRAIN = join(__dirname, '../fixtures/fit/fake-train.mjs');
let w: World | null = null;
afterEach(() => {
  w?.remove();
  w = null;
});

describe('fit: probe runs that do not behave', () => {
  it('a command that ignores {steps} is ended at --run-timeout and fit stops with one line', async () => {
    w = world();
    const r = await gpumem(['fit', '--gpus', '1', '--run-timeout', '2', '--no-companion', '--', process.execPath, '-e', 'setInterval(() => {}, 1000)', '{batch}'], w.env, 20000);
    expectClean(r, 'fit with a command that never ends');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^gpumem: error: the run at batch 2 did not finish 5 steps within 2 s; it was ended$/m);
  }, 30000);

  it('--max-batch 1 runs batch 1 only', async () => {
    w = world();
    const r = await gpumem(['fit', '--gpus', '1', '--max-batch', '1', '--interval-ms', '15', '--steps', '3', '--json', '--no-companion', '--',
      process.execPath, TRAIN, '--batch', '{batch}', '--steps', '{steps}', '--gpu', '1', '--fixed', String(GiB), '--per', String(GiB)], w.env, 20000);
    expectClean(r, 'fit --max-batch 1');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { batch: number; runs: Array<{ batch: number }> };
    expect(report.runs.map((x) => x.batch)).toEqual([1]);
    expect(report.batch).toBe(1);
  }, 30000);
});

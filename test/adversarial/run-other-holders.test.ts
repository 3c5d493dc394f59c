/**
 * A run on a GPU that others already use: the pre-flight line counts the processes outside the run with their
 * total, and the report's PyTorch split no longer calls the run's own processes without statistics "OTHER
 * PROCS" (it showed "OTHER PROCS 0 B" right under "2 other process(es): … 40.5 GiB", which read as a
 * contradiction).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderPytorch } from '../../src/cli/render/run-pytorch.js';
import type { StoredCompanion } from '../../src/core/run/stored-report.js';
import { GiB } from '../supervise/helpers/claims.js';
import { expectClean, gpumem, until, world, type World } from './supervise-helpers.js';
import { readClaims } from '../supervise/helpers/claims.js';

let w: World | null = null;
const holders: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const h of holders.splice(0)) h.kill('SIGKILL');
  w?.remove();
  w = null;
});

describe('run: processes outside the run', () => {
  it('the pre-flight line says they are outside the run and how much they hold together', async () => {
    w = world();
    for (let i = 0; i < 2; i++) {
      const h = spawn('sleep', ['30'], { stdio: 'ignore' });
      holders.push(h);
      writeFileSync(join(w.dir, `${h.pid}-1`), String(20.25 * GiB));
    }
    expect(await until(() => readClaims(w!.dir).length === 2)).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    const r = await gpumem(['run', '--gpus', '1', '--no-history', '--no-companion', '--', 'true'], w.env, 20000);
    expectClean(r, 'gpumem run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/pre-flight GPU 1: .* free of .*, 2 processes outside this run hold 40\.50 GiB: pid \d+ 20\.25 GiB, pid \d+ 20\.25 GiB/);
  });

  it('the PyTorch split names its column for the run\'s own processes without statistics', () => {
    const split = {
      gpuUuid: 'GPU-1', gpuIndex: 1, pids: [10], atMs: 1000, treeBytes: 2 * GiB, processUsedBytes: 2 * GiB, allocatedBytes: GiB, reservedBytes: 1.5 * GiB,
      unallocatedBytes: 0.5 * GiB, nonPytorchBytes: 0.5 * GiB, otherProcessesBytes: 0, peakAllocatedBytes: GiB, peakReservedBytes: 1.5 * GiB, numAllocRetries: 0, numOoms: 0,
    };
    const companion: StoredCompanion = { gpus: [split], unprintedOoms: [], snapshots: [], processes: [] };
    const lines = renderPytorch([{ attempt: 1, plugins: { companion } }], (_c, t) => t);
    const head = lines.find((l) => l.includes('TREE (NVML)'))!;
    expect(head).not.toMatch(/OTHER PROCS/);
    expect(head).toMatch(/RUN, NO TORCH/);
  });
});

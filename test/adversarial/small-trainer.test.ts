/**
 * A small trainer is a job, not a "context-only" process: 573 MiB of an 8 GiB laptop GPU at 12 % utilisation
 * (no per-process figure, as on many consumer GPUs) is the input-bound case, and must get its under-used
 * finding from doctor/diagnose instead of "No findings".
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GiB, MiB } from '../../src/core/units.js';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { expectNoHang, expectNoStackTrace, gpumem, started, stopAll, tempDir } from './harness.js';

const tmp = tempDir('gpumem-adv-small-');
afterAll(() => {
  stopAll();
  tmp.remove();
});

describe('a small trainer', () => {
  it('573 MiB at 12 % for the whole window gets the under-used finding', async () => {
    const trainer = spawn('python3', ['-c', 'import time; print("up", flush=True); time.sleep(60)', 'train.py'], { stdio: ['ignore', 'pipe', 'ignore'] });
    started.push(trainer);
    await new Promise((r) => trainer.stdout!.once('data', r));
    const scenario = join(tmp.dir, 'scenario.txt');
    const used = 573 * MiB;
    writeScenario(scenario, {
      driverVersion: '590.48.01', cudaVersion: 13010,
      devices: [fakeH100(0, {
        name: 'NVIDIA GeForce RTX 4060 Laptop GPU', memory: { totalBytes: 8 * GiB, reservedBytes: 0, usedBytes: used },
        utilization: { gpuPct: 12, memoryPct: 3 }, processes: [{ pid: trainer.pid!, usedBytes: used }],
      })],
    });
    const r = await gpumem(['doctor', '--window', '1', '--json', '--source', 'nvml'], { env: fakeNvmlEnv('590', scenario), timeoutMs: 30_000 });
    expectNoHang(r, 'doctor');
    expectNoStackTrace(r, 'doctor');
    const doc = JSON.parse(r.stdout) as { findings: Array<{ id: string; evidence: { pids: number[] } }>; processes: Array<{ pid: number; contextOnly: boolean }> };
    expect(doc.processes.find((p) => p.pid === trainer.pid)?.contextOnly).toBe(false);
    expect(doc.findings.find((f) => f.id === 'low-utilization')?.evidence.pids).toEqual([trainer.pid]);
  });
});

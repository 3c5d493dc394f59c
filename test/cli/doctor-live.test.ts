/** `gpumem doctor` live on the fake NVML: the status table comes at once, the findings when the window ends. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { MiB } from '../../src/core/units.js';

const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpumem-doctor-live-'));
const trainer = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
afterAll(() => {
  trainer.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const scenario = join(dir, 'scenario.txt');
/** One busy GPU whose training process holds `usedMiB`. */
const write = (usedMiB: number): void => writeScenario(scenario, {
  driverVersion: '590.48.01',
  cudaVersion: 13010,
  devices: [fakeH100(0, {
    memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: usedMiB * MiB },
    utilization: { gpuPct: 95, memoryPct: 40 },
    processes: [{ pid: trainer.pid!, usedBytes: usedMiB * MiB, smUtilPct: 95 }],
  })],
});
write(15690);

describe('gpumem doctor, live', () => {
  it('prints the first sample\'s status table while the window is still being sampled, then the findings', async () => {
    const child = spawn(process.execPath, [BIN, 'doctor', '--window', '2'], { env: { PATH: '/nonexistent', ...fakeNvmlEnv('590', scenario) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let exited = false;
    let atTable: { exited: boolean; text: string } | null = null;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (atTable === null && stdout.includes(String(trainer.pid))) {
        atTable = { exited, text: stdout };
        // The GPU fills up now: only samples read after the table was printed can see it.
        write(79000);
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => { exited = true; resolve(c); }));
    expect(atTable).not.toBeNull();
    const early = atTable as unknown as { exited: boolean; text: string };
    // The table arrived from the first sample: the process was still running and no finding was out yet.
    expect(early.exited).toBe(false);
    expect(early.text).toMatch(/^gpumem doctor: GPUs now; findings after a 2 s window\n/);
    expect(early.text).toContain('15.32 GiB');
    expect(early.text).not.toContain('findings: ');
    // Then the findings, after a window of 5 samples that saw the GPU fill up, with the table printed once.
    expect(stdout).toMatch(/GPU 0 is 9\d(\.\d)?% full during training/);
    expect(stdout).toMatch(/\nfindings: 5 samples over 2\.0s from NVML/);
    expect(stdout.split(String(trainer.pid)).length - 1).toBe(early.text.split(String(trainer.pid)).length - 1);
    expect([0, 1]).toContain(code);
  });
});

/** `gpumem status` through the real koffi binding on the fake libnvidia-ml.so.1, with real pids. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { MiB } from '../../src/core/units.js';
import { BIN } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-status-nvml-'));
const trainer = spawn('/bin/sleep', ['30'], { stdio: 'ignore', env: { CUDA_VISIBLE_DEVICES: '1' } });
afterAll(() => trainer.kill('SIGKILL'));
// A pid that does not exist here (but is a valid Linux pid): stands for a host pid seen from a container.
const HOST_PID = [4_194_000, 4_193_000, 4_190_000, 3_999_999].find((p) => !existsSync(`/proc/${p}`))!;

const scenario = join(dir, 'scenario.txt');
writeScenario(scenario, {
  driverVersion: '590.48.01',
  cudaVersion: 13010,
  devices: [
    fakeH100(0, { memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 19818 * MiB }, processes: [{ pid: trainer.pid!, usedBytes: 15690 * MiB }] }),
    fakeH100(1, { processes: [{ pid: HOST_PID, usedBytes: 2566 * MiB }, { pid: trainer.pid!, usedBytes: null }] }),
  ],
});

function gpumem(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { PATH: '/nonexistent', ...fakeNvmlEnv('590', scenario) }, timeout: 15_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('gpumem status on the fake NVML', () => {
  it('--json carries the driver\'s exact bytes, host facts and not-visible host pids', () => {
    const r = gpumem(['status', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.source.kind).toBe('nvml');
    expect(doc.devices[0].memory).toEqual({ totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 19818 * MiB, freeBytes: (81559 - 479 - 19818) * MiB });
    const rows = doc.processes.map((p: { pid: number; gpuIndex: number; usedBytes: number | null; host: { visible: boolean } }) => [p.pid, p.gpuIndex, p.usedBytes, p.host.visible]);
    expect(rows).toEqual(expect.arrayContaining([[trainer.pid, 0, 15690 * MiB, true], [HOST_PID, 1, 2566 * MiB, false], [trainer.pid, 1, null, true]]));
    const mine = doc.processes.find((p: { pid: number }) => p.pid === trainer.pid);
    expect(mine.host.cudaEnv).toEqual({ CUDA_VISIBLE_DEVICES: '1' });
  });

  it('the human view marks host pids and unknown memory', () => {
    const r = gpumem(['status', '--source', 'nvml']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^via NVML \(.*libnvidia-ml\.so\.1\) · .* · driver 590\.48\.01 · CUDA 13\.1$/);
    const host = r.stdout.split('\n').find((l) => l.trimStart().startsWith(`${HOST_PID} `))!;
    expect(host).toContain('2.51 GiB');
    expect(host).toContain('(not visible here)');
    const unknown = r.stdout.split('\n').filter((l) => l.trimStart().startsWith(`${trainer.pid} `));
    expect(unknown.map((l) => /\d+\.\d\d GiB|n\/a/.exec(l)?.[0])).toEqual(['15.32 GiB', 'n/a']);
  });
});

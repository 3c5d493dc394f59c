/**
 * The NVML source against the fake driver of every era: every Device field, memory semantics (v2 vs v1),
 * process lists per era (including the 32-byte 535.54 entries), merging, NOT_AVAILABLE, MIG, and values
 * that change between samples. Process rows use the pid of a real child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openNvmlSource } from '../../../src/sources/nvml/index.js';
import { FAKE_ERAS, fakeH100, fakeNvmlLib, writeScenario, type FakeEra, type FakeScenario } from '../../fake-nvml/scenario.js';
import { MiB } from '../../../src/core/units.js';
const dir = mkdtempSync(join(tmpdir(), 'gpumem-nvml-'));
let child: ChildProcess;
let realPid: number;

beforeAll(() => {
  child = spawn('sleep', ['60'], { stdio: 'ignore' });
  realPid = child.pid as number;
});
afterAll(() => {
  child.kill('SIGKILL');
});

let n = 0;
function withScenario(scenario: FakeScenario): string {
  const path = join(dir, `scenario-${n++}.txt`);
  writeScenario(path, scenario);
  process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
  return path;
}

const busy = (): FakeScenario => ({
  driverVersion: '535.54.03',
  cudaVersion: 12080,
  devices: [
    fakeH100(0, {
      memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 19818 * MiB },
      utilization: { gpuPct: 97, memoryPct: 41 },
      temperatureC: 64,
      power: { drawMw: 612345, limitMw: 700000 },
      computeMode: 3,
      processes: [
        { pid: realPid, usedBytes: 17000 * MiB, smUtilPct: 88 },
        { pid: 4194304, usedBytes: 2000 * MiB },
        { pid: 12345, usedBytes: 818 * MiB, kind: 'graphics' },
      ],
    }),
    fakeH100(1),
  ],
});

describe.each(Object.keys(FAKE_ERAS) as FakeEra[])('era %s', (era) => {
  it('reads every device field and the processes with exact byte counts', async () => {
    withScenario(busy());
    const source = openNvmlSource({ libPath: fakeNvmlLib(era) });
    try {
      const s = await source.readSample();
      expect(s.source).toEqual({ kind: 'nvml', detail: fakeNvmlLib(era) });
      expect(s.devices).toHaveLength(2);
      const d = s.devices[0]!;
      expect(d).toMatchObject({
        index: 0,
        uuid: 'GPU-00000000-0000-4000-8000-000000000000',
        name: 'NVIDIA H100 80GB HBM3',
        pciBusId: '00000000:00:00.0',
        minorNumber: 0,
        status: 'ok',
        utilization: { gpuPct: 97, memoryPct: 41 },
        temperatureC: 64,
        powerDrawMw: 612345,
        powerLimitMw: 700000,
        computeMode: 'Exclusive_Process',
        migMode: 'disabled',
        driverVersion: '535.54.03',
        cudaDriverVersion: '12.8',
      });
      expect(d.memory.totalBytes).toBe(81559 * MiB);
      expect(d.memory.freeBytes).toBe((81559 - 479 - 19818) * MiB);
      if (era === '450') {
        // No v2 call: reserved is unknown and v1 `used` includes it, as nvidia-smi showed on such drivers.
        expect(d.memory.reservedBytes).toBeNull();
        expect(d.memory.usedBytes).toBe((19818 + 479) * MiB);
        expect(d.unavailable['memory.reservedBytes']).toMatch(/nvmlDeviceGetMemoryInfo_v2 not exported/);
      } else {
        expect(d.memory.reservedBytes).toBe(479 * MiB);
        expect(d.memory.usedBytes).toBe(19818 * MiB);
        expect(d.unavailable).toEqual({});
      }
      expect(s.processes.map((p) => [p.pid, p.usedBytes, p.kind, p.gpuIndex])).toEqual([
        [realPid, 17000 * MiB, 'compute', 0],
        [4194304, 2000 * MiB, 'compute', 0],
        [12345, 818 * MiB, 'graphics', 0],
      ]);
      expect(s.processes[0]!.smUtilPct).toBe(88);
      // No sample for it while another process had some: it did not run (the driver samples only what ran).
      expect(s.processes[1]!.smUtilPct).toBe(0);
      expect(s.processes[1]!.unavailable.smUtilPct).toBeUndefined();
      expect(s.processes.every((p) => p.gpuUuid === d.uuid && p.host === null)).toBe(true);
      const apis = source.describeApis();
      const stride = { '450': 16, '510': 24, '535.54': 32, '535.104': 24, '590': 24 }[era];
      expect(apis.compute.stride).toBe(stride);
      expect(apis.memory).toBe(era === '450' ? 'v1' : 'v2');
    } finally {
      source.close();
    }
  });
});

describe('process rows', () => {
  it('maps NOT_AVAILABLE to null with a reason, merges duplicates by max and C+G into one row', async () => {
    withScenario({
      devices: [
        fakeH100(0, {
          processes: [
            { pid: realPid, usedBytes: 100 * MiB },
            { pid: realPid, usedBytes: 300 * MiB },
            { pid: realPid, usedBytes: 200 * MiB, kind: 'graphics' },
            { pid: 777, usedBytes: null, kind: 'compute+graphics' },
          ],
        }),
      ],
    });
    const source = openNvmlSource({ libPath: fakeNvmlLib('590') });
    try {
      const { processes } = await source.readSample();
      expect(processes).toHaveLength(2);
      expect(processes[0]).toMatchObject({ pid: realPid, usedBytes: 300 * MiB, kind: 'compute+graphics' });
      expect(processes[1]).toMatchObject({ pid: 777, usedBytes: null, kind: 'compute+graphics' });
      expect(processes[1]!.unavailable.usedBytes).toBe('NVML_VALUE_NOT_AVAILABLE');
    } finally {
      source.close();
    }
  });

  it('sees memory change between samples when the scenario is rewritten', async () => {
    const scenario = busy();
    const path = withScenario(scenario);
    const source = openNvmlSource({ libPath: fakeNvmlLib('535.104') });
    try {
      const first = await source.readSample();
      scenario.devices[0]!.memory!.usedBytes = 30000 * MiB;
      scenario.devices[0]!.processes![0]!.usedBytes = 27182 * MiB;
      writeScenario(path, scenario);
      const second = await source.readSample();
      expect(first.devices[0]!.memory.usedBytes).toBe(19818 * MiB);
      expect(second.devices[0]!.memory.usedBytes).toBe(30000 * MiB);
      expect(second.devices[0]!.memory.freeBytes).toBe((81559 - 479 - 30000) * MiB);
      expect(second.processes.find((p) => p.pid === realPid)!.usedBytes).toBe(27182 * MiB);
    } finally {
      source.close();
    }
  });
});

describe('MIG', () => {
  it('lists MIG instances with their own memory and keeps gi/ci on processes', async () => {
    withScenario({
      devices: [
        fakeH100(0, {
          name: 'NVIDIA A100-SXM4-80GB',
          migMode: 1,
          mig: [
            { gpuInstanceId: 1, computeInstanceId: 0, uuid: 'MIG-11111111-1111-4111-8111-111111111111', profile: '3g.40gb', totalBytes: 40192 * MiB, reservedBytes: 0, usedBytes: 1234 * MiB },
            { gpuInstanceId: 2, computeInstanceId: 0, uuid: 'MIG-22222222-2222-4222-8222-222222222222', profile: '1g.10gb', totalBytes: 9728 * MiB, reservedBytes: 0, usedBytes: 13 * MiB },
          ],
          processes: [{ pid: realPid, usedBytes: 1200 * MiB, gpuInstanceId: 1, computeInstanceId: 0 }],
        }),
      ],
    });
    const source = openNvmlSource({ libPath: fakeNvmlLib('590') });
    try {
      const s = await source.readSample();
      const d = s.devices[0]!;
      expect(d.migMode).toBe('enabled');
      // The parent handle refuses compute mode with MIG on; it is read through a MIG device.
      expect(d.computeMode).toBe('Default');
      expect(d.unavailable.computeMode).toBeUndefined();
      expect(d.utilization.gpuPct).toBeNull();
      expect(d.unavailable['utilization.gpuPct']).toMatch(/NOT_SUPPORTED/);
      expect(d.migInstances.map((m) => [m.gpuInstanceId, m.computeInstanceId, m.profile, m.memory.totalBytes, m.memory.usedBytes])).toEqual([
        [1, 0, '3g.40gb', 40192 * MiB, 1234 * MiB],
        [2, 0, '1g.10gb', 9728 * MiB, 13 * MiB],
      ]);
      expect(d.migInstances[0]!.uuid).toBe('MIG-11111111-1111-4111-8111-111111111111');
      expect(s.processes[0]).toMatchObject({ pid: realPid, gpuInstanceId: 1, computeInstanceId: 0 });
    } finally {
      source.close();
    }
  });
});

/**
 * The GpuSource contract run against the NVML source on the fake driver of every era, with a MIG GPU, a
 * lost GPU, a forbidden GPU, a not-available memory row and real pids. Memory is exact on NVML: tolerance 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openNvmlSource } from '../../src/sources/nvml/index.js';
import { FAKE_ERAS, fakeH100, fakeNvmlLib, writeScenario, type FakeEra, type FakeScenario } from '../fake-nvml/scenario.js';
import { runSourceContract } from './contract.js';
import { MiB } from '../../src/core/units.js';
const scenarioPath = join(mkdtempSync(join(tmpdir(), 'gpumem-nvml-contract-')), 'scenario.txt');
const sleepers: ChildProcess[] = [];
const pids: number[] = [];

beforeAll(() => {
  for (let i = 0; i < 3; i++) {
    const c = spawn('sleep', ['60'], { stdio: 'ignore' });
    sleepers.push(c);
    pids.push(c.pid as number);
  }
  const scenario: FakeScenario = {
    driverVersion: '590.48.01',
    cudaVersion: 13010,
    devices: [
      fakeH100(0, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 30000 * MiB },
        processes: [
          { pid: pids[0]!, usedBytes: 20000 * MiB, smUtilPct: 70 },
          { pid: pids[1]!, usedBytes: 9000 * MiB, kind: 'compute+graphics' },
          { pid: 99999, usedBytes: null },
        ],
      }),
      fakeH100(1, {
        migMode: 1,
        mig: [{ gpuInstanceId: 1, computeInstanceId: 0, uuid: 'MIG-aaaaaaaa-0000-4000-8000-000000000001', profile: '3g.40gb', totalBytes: 40192 * MiB, reservedBytes: 0, usedBytes: 600 * MiB }],
        processes: [{ pid: pids[2]!, usedBytes: 512 * MiB, gpuInstanceId: 1, computeInstanceId: 0 }],
      }),
      fakeH100(2, { status: 'lost' }),
      fakeH100(3, { status: 'noperm' }),
    ],
  };
  writeScenario(scenarioPath, scenario);
  process.env.GPUMEM_FAKE_NVML_SCENARIO = scenarioPath;
});

afterAll(() => {
  for (const c of sleepers) c.kill('SIGKILL');
});

const expectedPids = (): number[] => [...pids, 99999].sort((a, b) => a - b);

for (const era of Object.keys(FAKE_ERAS) as FakeEra[]) {
  runSourceContract(`NVML on the fake driver, era ${era}`, () => openNvmlSource({ libPath: fakeNvmlLib(era) }), {
    memoryToleranceBytes: 0,
    deviceCount: 4,
    get pids() {
      return expectedPids();
    },
  });
}


// The same contract through openSource, so samples carry /proc host facts of the real sleeper pids.
runSourceContract('NVML (era 590) with host facts via openSource', async () => {
  const { openSource } = await import('../../src/sources/open.js');
  return openSource({ source: 'nvml', nvmlLib: fakeNvmlLib('590'), env: process.env });
}, {
  memoryToleranceBytes: 0,
  deviceCount: 4,
  get pids() {
    return expectedPids();
  },
});

/**
 * Drives the fake NVML driver from claim files: every few ms the claims of live test processes are written
 * into the scenario as process rows (and device used memory), so a gpumem process under test sees the
 * real pids of the test's children holding memory through the real NVML binding.
 */
import { join } from 'node:path';
import { fakeH100, fakeNvmlEnv, writeScenario, type FakeDevice } from '../../fake-nvml/scenario.js';
import { readClaims } from './claims.js';

export interface Pump {
  env: Record<string, string>;
  /** Extra used memory per GPU that no process accounts for. */
  leakBytes: number[];
  stop(): void;
}

/** What every GPU reports as busy: device utilization % and each claiming process's SM %. */
export interface PumpActivity {
  gpuPct: number;
  smUtilPct: number;
}

/** Starts pumping claims from `dir` into a scenario with `gpus` H100s; returns the env for gpumem. */
export function startPump(dir: string, gpus = 2, intervalMs = 15, activity: PumpActivity | null = null): Pump {
  const path = join(dir, 'scenario.txt');
  const pump: Pump = { env: { ...fakeNvmlEnv('590', path), GPUMEM_TEST_CLAIMS: dir }, leakBytes: new Array(gpus).fill(0), stop: () => clearInterval(timer) };
  const write = (): void => {
    const claims = readClaims(dir);
    const devices: FakeDevice[] = Array.from({ length: gpus }, (_, i) => {
      const mine = claims.filter((c) => c.gpu === i);
      const used = mine.reduce((s, c) => s + c.bytes, 0) + (pump.leakBytes[i] ?? 0);
      const base = fakeH100(i);
      return fakeH100(i, {
        memory: { totalBytes: base.memory!.totalBytes, reservedBytes: base.memory!.reservedBytes, usedBytes: used },
        processes: mine.map((c) => ({ pid: c.pid, usedBytes: c.bytes, ...(activity ? { smUtilPct: activity.smUtilPct } : {}) })),
        ...(activity ? { utilization: { gpuPct: activity.gpuPct, memoryPct: 0 } } : {}),
      });
    });
    writeScenario(path, { driverVersion: '590.44.01', cudaVersion: 13010, devices });
  };
  write();
  const timer = setInterval(write, intervalMs);
  return pump;
}

/**
 * The fleet several benchmarks measure against: the fake NVML driver with `gpus` H100s, each listing
 * `procsPerGpu` real sleeping processes at 100 MiB, so host facts come from a real /proc.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFakeNvml, fakeH100, writeScenario } from '../test/fake-nvml/scenario.js';
import { requireRealCosts } from './fake-costs.js';
import { startSleepers, type Sleepers } from './sleepers.js';

const MiB = 1024 * 1024;

export interface Fleet {
  /** A scratch folder that `stop` removes. */
  dir: string;
  /** The scenario file (GPUMEM_FAKE_NVML_SCENARIO). */
  scenario: string;
  pids: number[];
  /** Ends the sleepers and removes the folder. */
  stop(): void;
}

/** Starts the sleepers and writes the scenario; `smUtil` gives each process's SM share (default none). */
export async function startFleet(name: string, gpus: number, procsPerGpu: number, smUtil?: (index: number) => number): Promise<Fleet> {
  requireRealCosts();
  await buildFakeNvml();
  const dir = mkdtempSync(join(tmpdir(), `gpumem-bench-${name}-`));
  let sleepers: Sleepers | null = null;
  const stop = (): void => {
    sleepers?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    sleepers = await startSleepers(gpus * procsPerGpu);
    const pids = sleepers.pids;
    const scenario = join(dir, 'scenario.txt');
    writeScenario(scenario, {
      driverVersion: '590.48.01', cudaVersion: 13010,
      devices: Array.from({ length: gpus }, (_, g) => fakeH100(g, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: procsPerGpu * 100 * MiB },
        processes: pids.slice(g * procsPerGpu, (g + 1) * procsPerGpu).map((pid, i) => ({ pid, usedBytes: 100 * MiB, ...(smUtil ? { smUtilPct: smUtil(i) } : {}) })),
      })),
    });
    return { dir, scenario, pids, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

/**
 * nvmlDeviceGetProcessUtilization's timestamp protocol against the fake driver: each read passes the newest
 * sample timestamp seen on that device, so a sample is counted once — the mean of the samples taken since the
 * previous read, "no new sample" (NOT_FOUND) when there are none — per device, whatever the other device does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openNvmlSource } from '../../../src/sources/nvml/index.js';
import { fakeH100, fakeNvmlLib, writeScenario } from '../../fake-nvml/scenario.js';
import { countsOf, fakeCallCounter } from '../../fake-nvml/calls.js';
import { MiB } from '../../../src/core/units.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-nvml-util-'));
const path = join(dir, 'scenario.txt');
let children: ChildProcess[] = [];
let a: number;
let b: number;

beforeAll(() => {
  children = [spawn('sleep', ['60'], { stdio: 'ignore' }), spawn('sleep', ['60'], { stdio: 'ignore' })];
  [a, b] = children.map((c) => c.pid as number) as [number, number];
  process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
});
afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

type Samples = Array<{ pid: number; timeUs: number; smUtilPct: number }>;

/** GPU 0 runs pid a and b, GPU 1 runs pid b; each device's driver buffer holds the given samples. */
function scenario(gpu0: Samples, gpu1: Samples): void {
  writeScenario(path, {
    driverVersion: '590.44.01', cudaVersion: 13010,
    devices: [
      fakeH100(0, { processes: [{ pid: a, usedBytes: 1000 * MiB }, { pid: b, usedBytes: 500 * MiB }], utilSamples: gpu0 }),
      fakeH100(1, { processes: [{ pid: b, usedBytes: 700 * MiB }], utilSamples: gpu1 }),
    ],
  });
}

const T = 1_700_000_000_000_000;

describe('per-process utilization with lastSeenTimeStamp', () => {
  it('counts each sample once: the mean of the new ones, then "no new sample", then only the newer one', async () => {
    scenario(
      // 37100 %: what exiting processes have been seen to report; not a percentage, so not counted.
      [{ pid: a, timeUs: T + 1000, smUtilPct: 20 }, { pid: a, timeUs: T + 2000, smUtilPct: 40 }, { pid: b, timeUs: T + 1500, smUtilPct: 7 },
        { pid: b, timeUs: T + 1700, smUtilPct: 37100 }],
      [{ pid: b, timeUs: T + 500, smUtilPct: 90 }],
    );
    const source = openNvmlSource({ libPath: fakeNvmlLib('590') });
    try {
      const util = async (): Promise<Array<[number, number, number | null, string | undefined]>> => {
        const s = await source.readSample();
        return s.processes.map((p) => [p.gpuIndex as number, p.pid, p.smUtilPct, p.unavailable.smUtilPct]);
      };
      expect(await util()).toEqual([[0, a, 30, undefined], [0, b, 7, undefined], [1, b, 90, undefined]]);
      // The same driver buffer read again: nothing new, so nothing is counted a second time.
      for (const [, , pct, why] of await util()) {
        expect(pct).toBeNull();
        expect(why).toMatch(/^no new utilization sample since the previous read \(.*NOT_FOUND/);
      }
      // GPU 0 buffers one more sample for a; GPU 1's last timestamp is older than GPU 0's and still counts as seen.
      scenario(
        [{ pid: a, timeUs: T + 1000, smUtilPct: 20 }, { pid: a, timeUs: T + 2000, smUtilPct: 40 }, { pid: b, timeUs: T + 1500, smUtilPct: 7 },
          { pid: a, timeUs: T + 3000, smUtilPct: 90 }],
        [{ pid: b, timeUs: T + 500, smUtilPct: 90 }, { pid: b, timeUs: T + 800, smUtilPct: 10 }],
      );
      const third = await util();
      expect(third[0]).toEqual([0, a, 90, undefined]);
      // b had no new sample on GPU 0 while a had three: the driver returns samples only for what ran, so b idled.
      expect(third[1]).toEqual([0, b, 0, undefined]);
      expect(third[2]).toEqual([1, b, 10, undefined]);
    } finally {
      source.close();
    }
  });
  it('reads a listed pid without a sample as idle only when some listed pid had one (never across PID namespaces)', async () => {
    // Samples only for a pid the lists do not name (a driver answering in another PID namespace): nothing inferred.
    scenario([{ pid: 4_000_123, timeUs: T + 1000, smUtilPct: 60 }], [{ pid: b, timeUs: T + 500, smUtilPct: 50 }]);
    const source = openNvmlSource({ libPath: fakeNvmlLib('590') });
    try {
      const s = await source.readSample();
      expect(s.processes.map((p) => [p.gpuIndex, p.pid, p.smUtilPct])).toEqual([[0, a, null], [0, b, null], [1, b, 50]]);
      expect(s.processes[0]!.unavailable.smUtilPct).toBe('no utilization sample for this pid');
    } finally {
      source.close();
    }
  });

  it('reads in one call when the samples fit the buffer sized in advance, and grows it when the driver holds more', async () => {
    const counter = fakeCallCounter(fakeNvmlLib('590'));
    // 5000 samples on GPU 0 (more than the 4096 the buffer starts with): a's 10 % … b's 50 %, alternating.
    const many = Array.from({ length: 5000 }, (_, i) => ({ pid: i % 2 === 0 ? a : b, timeUs: T + i, smUtilPct: i % 2 === 0 ? 10 : 50 }));
    scenario(many, [{ pid: b, timeUs: T + 500, smUtilPct: 90 }]);
    const source = openNvmlSource({ libPath: fakeNvmlLib('590') });
    try {
      counter.reset();
      const first = await source.readSample();
      expect(first.processes.map((p) => [p.gpuIndex, p.pid, p.smUtilPct])).toEqual([[0, a, 10], [0, b, 50], [1, b, 90]]);
      // GPU 0: answered INSUFFICIENT_SIZE with the count, then filled; GPU 1: one call.
      expect(countsOf(counter.read()).nvmlDeviceGetProcessUtilization).toBe(3);
      scenario([...many, { pid: a, timeUs: T + 5000, smUtilPct: 70 }], [{ pid: b, timeUs: T + 600, smUtilPct: 30 }]);
      counter.reset();
      const second = await source.readSample();
      expect(second.processes.map((p) => [p.gpuIndex, p.pid, p.smUtilPct])).toEqual([[0, a, 70], [0, b, 0], [1, b, 30]]);
      expect(countsOf(counter.read()).nvmlDeviceGetProcessUtilization).toBe(2);
    } finally {
      source.close();
    }
  });
});

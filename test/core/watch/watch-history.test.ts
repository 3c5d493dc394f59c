/** The live view's cheap paths must answer exactly what the plain ones would: trends and sample comparison. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareSamples, deviceUsedSeries, processTrend, processUsedSeries, sameSampleNumbers, thinWindow, trendOf } from '../../../src/core/watch/index.js';
import type { GpuProcess, HostFacts, Sample } from '../../../src/core/types.js';
import { MiB } from '../../../src/core/units.js';

const row = (pid: number, gpuIndex: number, usedBytes: number | null, host: HostFacts | null = null): GpuProcess =>
  ({ pid, gpuUuid: `GPU-${gpuIndex}`, gpuIndex, gpuInstanceId: null, computeInstanceId: null, usedBytes, kind: 'compute', name: null, smUtilPct: null, host, unavailable: {} });
const sampleOf = (processes: GpuProcess[], timeMs = 1): Sample =>
  ({ timeMs, source: { kind: 'nvml', detail: 'x' }, devices: [], unavailable: {}, processes }) as Sample;

describe('processTrend', () => {
  it('equals the trend of the whole series for any history (property)', () => {
    const entry = fc.option(fc.integer({ min: 0, max: 4096 }).map((m) => m * MiB), { nil: null });
    fc.assert(fc.property(fc.array(fc.tuple(entry, entry, fc.boolean()), { maxLength: 30 }), (steps) => {
      // pid 7 on GPUs 0 and 1, sometimes absent from a sample.
      const history = steps.map(([a, b, present]) => sampleOf(present ? [row(9, 0, 1), row(7, 0, a), row(7, 1, b)] : [row(9, 0, 1)]));
      for (const gpu of [0, 1, null]) expect(processTrend(history, 7, gpu)).toBe(trendOf(processUsedSeries(history, 7, gpu)));
    }));
  });
});

describe('deviceUsedSeries', () => {
  it('gives each GPU its used bytes per sample, null where the GPU is absent or its figure unknown (property)', () => {
    const used = fc.option(fc.integer({ min: 0, max: 80 * 1024 }).map((m) => m * MiB), { nil: null });
    // Each sample lists some of GPUs 0-3 in any order with a used figure each.
    const sample = fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 3 }), used), { selector: ([g]) => g, maxLength: 4 }).map((gpus) =>
      ({ ...sampleOf([]), devices: gpus.map(([index, usedBytes]) => ({ index, memory: { usedBytes } })) }) as unknown as Sample);
    fc.assert(fc.property(fc.array(sample, { maxLength: 12 }), fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { maxLength: 5 }), (history, gpus) => {
      const series = deviceUsedSeries(history, gpus);
      expect([...series.keys()]).toEqual(gpus);
      for (const g of gpus) expect(series.get(g)).toEqual(history.map((s) => s.devices.find((d) => d.index === g)?.memory.usedBytes ?? null));
    }));
  });
});

describe('compareSamples', () => {
  const facts = (over: Partial<HostFacts> = {}): HostFacts => ({ visible: true, uid: 1, user: 'a', ppid: 1, cmdline: ['x'], exe: null, startTimeMs: 0, startTicks: 5, state: 'S', containerId: null, nspid: null, cudaEnv: null, unavailable: {}, cpuPct: 0, rssBytes: 4096, ...over });
  it('sees a memory change, a state change and a new row as changed; equal numbers at a later time as the same', () => {
    const host = facts();
    const base = sampleOf([row(1, 0, 100 * MiB, host), row(2, 0, 50 * MiB, host)]);
    expect(compareSamples(base, sampleOf([row(1, 0, 100 * MiB, host), row(2, 0, 50 * MiB, host)], 99), new Set())).toBe('same');
    expect(compareSamples(base, sampleOf([row(1, 0, 101 * MiB, host), row(2, 0, 50 * MiB, host)]), new Set())).toBe('changed');
    expect(compareSamples(base, sampleOf([row(1, 0, 100 * MiB, facts({ state: 'Z' })), row(2, 0, 50 * MiB, host)]), new Set())).toBe('changed');
    expect(compareSamples(base, sampleOf([row(1, 0, 100 * MiB, host)]), new Set())).toBe('changed');
    expect(sameSampleNumbers(base, base)).toBe(true);
  });
  it('an SM share or a GPU\'s utilisation, temperature or power moving is "numbers": drawn from the sample, nothing rebuilt', () => {
    const host = facts();
    const base = sampleOf([row(1, 0, 100 * MiB, host), row(2, 0, 50 * MiB, host)]);
    const sm = sampleOf([{ ...row(1, 0, 100 * MiB, host), smUtilPct: 60 }, row(2, 0, 50 * MiB, host)]);
    expect(compareSamples(base, sm, new Set())).toBe('numbers');
    const dev = (utilPct: number, usedBytes: number) => ({ index: 0, status: 'ok', memory: { totalBytes: 80 * 1024 * MiB, reservedBytes: 0, usedBytes, freeBytes: 0 }, utilization: { gpuPct: utilPct, memoryPct: 0 }, temperatureC: 40, powerDrawMw: 100_000 });
    const withDevice = (s: Sample, utilPct: number, usedBytes: number): Sample => ({ ...s, devices: [dev(utilPct, usedBytes)] }) as unknown as Sample;
    expect(compareSamples(withDevice(base, 10, 150 * MiB), withDevice(base, 90, 150 * MiB), new Set())).toBe('numbers');
    // Memory is accounting: on a device or a row it is a change.
    expect(compareSamples(withDevice(base, 10, 150 * MiB), withDevice(base, 10, 151 * MiB), new Set())).toBe('changed');
    expect(compareSamples(sm, sampleOf([{ ...row(1, 0, 101 * MiB, host), smUtilPct: 60 }, row(2, 0, 50 * MiB, host)]), new Set())).toBe('changed');
  });

  it('CPU % or RSS moving is a redraw for a pid on screen only, never an analysis', () => {
    const base = sampleOf([row(1, 0, 100 * MiB, facts())]);
    const busier = sampleOf([row(1, 0, 100 * MiB, facts({ cpuPct: 85, rssBytes: 8192 }))]);
    expect(compareSamples(base, busier, new Set([1]))).toBe('shown');
    expect(compareSamples(base, busier, new Set([2]))).toBe('same');
  });
});

describe('thinWindow', () => {
  it('keeps the span to the newest sample, thinned evenly with both ends kept', () => {
    const history = Array.from({ length: 300 }, (_, i) => sampleOf([], i * 100));
    const window = thinWindow(history, 25_000, 10);
    // 251 samples in the last 25 s (4.9 s … 29.9 s), every 250/9-th of them.
    expect(window.map((s) => s.timeMs)).toEqual([4_900, 7_700, 10_500, 13_200, 16_000, 18_800, 21_600, 24_300, 27_100, 29_900]);
    expect(window[0]!.timeMs).toBe(29_900 - 25_000);
    expect(thinWindow(history.slice(0, 5), 25_000, 10)).toHaveLength(5);
    expect(thinWindow([], 25_000, 10)).toEqual([]);
  });
});

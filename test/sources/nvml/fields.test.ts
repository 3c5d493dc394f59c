/**
 * Pay per field: each command declares the NVML fields it needs (src/cli/nvml-fields.ts), and the fake driver's
 * call counters prove a sample makes only those calls. Time is the source's injected clock, so the periods are
 * exact; the driver's per-process utilization samples carry their own timestamps (`utilsample`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openNvmlSource, SM_NOT_READ, type NvmlFields, type NvmlSource } from '../../../src/sources/nvml/index.js';
import { DIAGNOSIS_FIELDS, RECORD_FIELDS, serveFields, SM_IDLE_BUDGET, SM_SHOWN_BUDGET, statusFields, SUPERVISE_FIELDS, watchFields } from '../../../src/cli/nvml-fields.js';
import { countsOf, fakeCallCounter } from '../../fake-nvml/calls.js';
import { fakeH100, fakeNvmlLib, writeScenario, type FakeDevice } from '../../fake-nvml/scenario.js';
import { GiB } from '../../../src/core/units.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-nvml-fields-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'scenario.txt');
const lib = fakeNvmlLib('590');
const counter = fakeCallCounter(lib);
// Pids need not exist: the NVML source reads no /proc.
const PIDS = [4_100_001, 4_100_002];
const gpu = (index: number, over: Partial<FakeDevice> = {}): FakeDevice =>
  fakeH100(index, { processes: PIDS.map((pid, i) => ({ pid, usedBytes: GiB, smUtilPct: 10 + i })), ...over });
const write = (devices: FakeDevice[]): void => writeScenario(path, { driverVersion: '590.48.01', cudaVersion: 13010, devices });

let source: NvmlSource | null = null;
afterEach(() => {
  source?.close();
  source = null;
});

/**
 * Opens a source with `fields` and takes `samples` samples `intervalMs` apart; the calls of those samples only.
 * An SM % read costs `smReadMs` on the source's cost clock (0 unless given: the budget never stretches a period).
 */
function sampleCalls(fields: NvmlFields | undefined, samples: number, intervalMs: number, smReadMs = 0): Record<string, number> {
  process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
  let nowMs = 1_000_000;
  // The cost clock is asked before and after each read: every second call is a read's end.
  let costCalls = 0;
  source = openNvmlSource({ libPath: lib, ...fields, nowMs: () => nowMs, costClockMs: () => Math.floor(costCalls++ / 2) * smReadMs + (costCalls % 2 === 0 ? smReadMs : 0) });
  counter.reset();
  for (let k = 0; k < samples; k++, nowMs += intervalMs) source.readSampleSync();
  return countsOf(counter.read());
}

/** The calls every sample of one GPU makes whatever the fields (the first sample's lists count, then fill). */
const cheap = (samples: number): Record<string, number> => ({
  nvmlDeviceGetMemoryInfo_v2: samples, nvmlDeviceGetUtilizationRates: samples, nvmlDeviceGetTemperature: samples,
  nvmlDeviceGetPowerUsage: samples, nvmlDeviceGetComputeRunningProcesses_v3: samples + 1, nvmlDeviceGetGraphicsRunningProcesses_v3: samples,
  // A first read of a device's handle and identity.
  nvmlDeviceGetHandleByIndex_v2: 1, nvmlDeviceGetUUID: 1, nvmlDeviceGetName: 1, nvmlDeviceGetPciInfo_v3: 1, nvmlDeviceGetMinorNumber: 1,
});
/** Settings read `n` times. */
const settings = (n: number): Record<string, number> => ({ nvmlDeviceGetEnforcedPowerLimit: n, nvmlDeviceGetComputeMode: n, nvmlDeviceGetMigMode: n });
/** Per-process SM % read `reads` times, one call each: the buffer is sized before the first read. */
const sm = (reads: number): Record<string, number> => (reads === 0 ? {} : { nvmlDeviceGetProcessUtilization: reads });

describe('each command makes only the NVML calls it needs', () => {
  it('default (library callers, status --json): everything, every sample', () => {
    write([gpu(0)]);
    expect(sampleCalls(undefined, 10, 1000)).toEqual({ ...cheap(10), ...settings(10), ...sm(10), nvmlDeviceGetClockInfo: 20, nvmlDeviceGetTotalEnergyConsumption: 10 });
  });

  it('status as a table: no clocks, energy or per-process SM %; with --watch settings once a minute', () => {
    write([gpu(0)]);
    expect(statusFields(true, false)).toBeUndefined();
    expect(sampleCalls(statusFields(false, false), 1, 0)).toEqual({ ...cheap(1), ...settings(1) });
    source?.close();
    expect(sampleCalls(statusFields(false, true), 40, 2000)).toEqual({ ...cheap(40), ...settings(2) });
  });

  it('doctor: SM % once a second over its 500 ms window samples, settings once, no clocks or energy', () => {
    write([gpu(0)]);
    // --window 3: samples at 0, 0.5 … 3 s; SM % read at 0, 1, 2, 3 s.
    expect(sampleCalls(DIAGNOSIS_FIELDS, 7, 500)).toEqual({ ...cheap(7), ...settings(1), ...sm(4) });
  });

  /** The calls of `calls` made for each of two GPUs: those of one GPU given, per GPU. */
  const perGpu = (a: Record<string, number>, b: Record<string, number>): Record<string, number> => {
    const out: Record<string, number> = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
    return out;
  };

  it('watch at 1 Hz: SM % every 5 s on the GPUs with rows on screen, once a minute on the others; settings once a minute', () => {
    write([gpu(0), gpu(1)]);
    // GPU 0's rows are on screen, GPU 1's are not: 20 samples read GPU 0 at 0, 5, 10 and 15 s and GPU 1 at 0 s.
    expect(sampleCalls(watchFields((g) => g === 0), 20, 1000)).toEqual(perGpu({ ...cheap(20), ...settings(1), ...sm(4) }, { ...cheap(20), ...settings(1), ...sm(1) }));
  });

  it('watch on a slow driver: the GPUs on screen are read less often, so their SM % costs at most SM_SHOWN_BUDGET of a core', () => {
    const gpus = [0, 1, 2, 3, 4, 5, 6, 7];
    write(gpus.map((g) => gpu(g)));
    // Eight GPUs on screen at 2.53 ms a read (an H100's): a read every 8 × 2.53 / 0.0005 = 40.5 s, at 0, 37, 74,
    // 111 and 148 s of 180 (a tenth of the period forgiven), not every 5 s (36 reads each).
    const calls = sampleCalls(watchFields(() => true), 180, 1000, 2.53);
    const reads = calls.nvmlDeviceGetProcessUtilization ?? 0;
    expect(reads).toBe(5 * gpus.length);
    // Beyond the first round (every GPU read at once when it comes on screen), the driver time stays within budget.
    expect(((reads - gpus.length) * 2.53) / 180_000).toBeLessThanOrEqual(SM_SHOWN_BUDGET);
    // One GPU on screen of the same driver keeps the 5-s period: 2.53 / 0.0005 = 5.06 s.
    write([gpu(0)]);
    expect(sampleCalls(watchFields(() => true), 20, 1000, 2.53)).toEqual({ ...cheap(20), ...settings(1), ...sm(4) });
    // A cheap driver (10 µs a read) keeps it with all eight on screen.
    write(gpus.map((g) => gpu(g)));
    expect(sampleCalls(watchFields(() => true), 20, 1000, 0.01).nvmlDeviceGetProcessUtilization ?? 0).toBe(4 * gpus.length);
  });

  it('watch: a GPU that comes on screen is read at once, and its first mean covers the time since the slow read', () => {
    const t0 = 1_700_000_000_000_000;
    const pid = PIDS[0]!;
    const at = (s: number, pct: number) => ({ pid, timeUs: t0 + s * 1_000_000, smUtilPct: pct });
    const dev = (samples: ReturnType<typeof at>[]) => [fakeH100(0, { processes: [{ pid, usedBytes: GiB }], utilSamples: samples })];
    write(dev([at(0, 10)]));
    process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
    let nowMs = 1_000_000;
    let shown = false;
    source = openNvmlSource({ libPath: lib, ...watchFields(() => shown), nowMs: () => nowMs });
    expect(source.readSampleSync().processes[0]!.smUtilPct).toBe(10);
    counter.reset();
    // Seconds 1–5 off screen: the driver keeps sampling, gpumem does not read.
    for (let k = 1; k <= 5; k++) {
      nowMs += 1000;
      write(dev([at(0, 10), ...Array.from({ length: k }, (_, i) => at(i + 1, 40 + 10 * i))]));
      expect(source.readSampleSync().processes[0]!.smUtilPct).toBe(10);
    }
    expect(countsOf(counter.read()).nvmlDeviceGetProcessUtilization).toBeUndefined();
    shown = true;
    nowMs += 1000;
    write(dev([at(0, 10), ...Array.from({ length: 6 }, (_, i) => at(i + 1, 40 + 10 * i))]));
    // The six samples of seconds 1–6 (40 … 90): their mean, none lost to the time off screen.
    expect(source.readSampleSync().processes[0]!.smUtilPct).toBe(65);
  });

  it('record at 1 Hz: SM % every 30 s, settings once a minute, no clocks or energy', () => {
    write([gpu(0)]);
    expect(sampleCalls(RECORD_FIELDS, 40, 1000)).toEqual({ ...cheap(40), ...settings(1), ...sm(2) });
  });

  it('record on eight H100s: SM % within SM_SHOWN_BUDGET of a core (every 40.5 s, not every 30 s)', () => {
    const gpus = [0, 1, 2, 3, 4, 5, 6, 7];
    write(gpus.map((g) => gpu(g)));
    // 2.53 ms a read: 8 × 2.53 / 0.0005 = 40.5 s; over 180 s reads at 0, 37, 74, 111, 148 s (a tenth forgiven).
    const reads = sampleCalls(RECORD_FIELDS, 180, 1000, 2.53).nvmlDeviceGetProcessUtilization ?? 0;
    expect(reads).toBe(5 * gpus.length);
    expect(((reads - gpus.length) * 2.53) / 180_000).toBeLessThanOrEqual(SM_SHOWN_BUDGET);
    // The same with a cheap driver keeps the 30-s period: reads at 0, 27, 54 … 162 s.
    expect(sampleCalls(RECORD_FIELDS, 180, 1000, 0.01).nvmlDeviceGetProcessUtilization ?? 0).toBe(7 * gpus.length);
  });

  it('run / pipeline at 10 Hz: SM % every 5 s, settings once a minute, no clocks or energy', () => {
    write([gpu(0)]);
    // 0 … 11.9 s: reads at 0, 4.5 and 9 s (a tenth of the period is forgiven for timer jitter).
    expect(sampleCalls(SUPERVISE_FIELDS, 120, 100)).toEqual({ ...cheap(120), ...settings(1), ...sm(3) });
  });

  it('serve with no page open (10 s): clocks every sample, SM % once a minute, no energy until a scrape', () => {
    write([gpu(0), gpu(1)]);
    const calls = sampleCalls(serveFields(() => false), 6, 10_000);
    const two = (c: Record<string, number>): Record<string, number> => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v * 2]));
    expect(calls).toEqual({ ...two({ ...cheap(6), ...settings(1), ...sm(1) }), nvmlDeviceGetClockInfo: 24 });
    counter.reset();
    const energy = source!.readTotalEnergyMj();
    expect([...energy]).toEqual([[0, 1_234_567_890], [1, 1_234_567_890]]);
    expect(countsOf(counter.read())).toEqual({ nvmlDeviceGetTotalEnergyConsumption: 2 });
  });

  it('serve with no page open on eight H100s: the slow SM % reads cost at most SM_IDLE_BUDGET of a core', () => {
    const gpus = [0, 1, 2, 3, 4, 5, 6, 7];
    write(gpus.map((g) => gpu(g)));
    // 2.53 ms a read: 8 × 2.53 / 0.0001 = 202.4 s; samples every 10 s over 900 s read at 0, 190, 380, 570 and
    // 760 s (a tenth of the period forgiven), not once a minute (15 reads each).
    const reads = sampleCalls(serveFields(() => false), 90, 10_000, 2.53).nvmlDeviceGetProcessUtilization ?? 0;
    expect(reads).toBe(5 * gpus.length);
    expect(((reads - gpus.length) * 2.53) / 900_000).toBeLessThanOrEqual(SM_IDLE_BUDGET);
    // A cheap driver (10 µs a read) keeps the minute: 0, 60 … 840 s.
    expect(sampleCalls(serveFields(() => false), 90, 10_000, 0.01).nvmlDeviceGetProcessUtilization ?? 0).toBe(15 * gpus.length);
    // With a page open every GPU is shown: read at once, then on the shown budget's period (40.5 s at this cost).
    expect(sampleCalls(serveFields(() => true), 10, 1000, 2.53).nvmlDeviceGetProcessUtilization ?? 0).toBe(gpus.length);
  });

  it('serve with a page open (1 s): SM % of every GPU every 5 s', () => {
    write([gpu(0)]);
    expect(sampleCalls(serveFields(() => true), 10, 1000)).toEqual({ ...cheap(10), ...settings(1), ...sm(2), nvmlDeviceGetClockInfo: 20 });
  });
});

describe('fields not read', () => {
  it('are absent (clocks, energy) or null with the reason (SM %), never 0', () => {
    write([gpu(0)]);
    const calls = sampleCalls(statusFields(false, false), 1, 0);
    expect(calls.nvmlDeviceGetProcessUtilization).toBeUndefined();
    const sample = source!.readSampleSync();
    expect('clocks' in sample.devices[0]!).toBe(false);
    expect('totalEnergyMj' in sample.devices[0]!).toBe(false);
    expect(sample.processes.map((p) => [p.smUtilPct, p.unavailable.smUtilPct])).toEqual([[null, SM_NOT_READ], [null, SM_NOT_READ]]);
  });

  it('SM % read every few seconds loses no driver sample: each read averages every sample since the previous one', () => {
    const t0 = 1_700_000_000_000_000;
    const pid = PIDS[0]!;
    const samples = (from: number, pcts: number[]) => pcts.map((pct, i) => ({ pid, timeUs: t0 + (from + i) * 166_000, smUtilPct: pct }));
    write([fakeH100(0, { processes: [{ pid, usedBytes: GiB }], utilSamples: samples(0, [10, 20, 30]) })]);
    process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
    let nowMs = 1_000_000;
    source = openNvmlSource({ libPath: lib, processSmEveryMs: 5000, nowMs: () => nowMs });
    const sms: Array<number | null> = [];
    for (let k = 0; k < 11; k++, nowMs += 1000) {
      // The driver keeps sampling between gpumem's reads: three more samples each second.
      if (k > 0) write([fakeH100(0, { processes: [{ pid, usedBytes: GiB }], utilSamples: samples(0, [10, 20, 30, ...Array.from({ length: 3 * k }, (_, i) => (i < 15 ? 50 : 90))]) })]);
      sms.push(source.readSampleSync().processes[0]!.smUtilPct);
    }
    // Read at 0 s (the three buffered), 5 s (the 15 samples of seconds 1–5: all 50) and 10 s (seconds 6–10: all 90);
    // the samples between carry the last read's mean.
    expect(sms).toEqual([20, 20, 20, 20, 20, 50, 50, 50, 50, 50, 90]);
  });
});

/**
 * A live view's steady state on the fake driver: while a GPU's process lists and every SM % read the same,
 * the NVML source hands out the previous sample's row objects again (nothing decoded or built), and while
 * nothing at all moved the previous sample's arrays; a moved memory figure, a moved SM % or a new pid gives
 * fresh rows with the new numbers for the rows that moved (the others of that GPU stay the same objects). SM % is read as a live view reads it, on a period (the
 * injected clock), each read at least one driver sampling period after the one before (the fake samples on
 * the driver's grid, as a real one does, and answers NOT_FOUND to a read with nothing new).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openNvmlSource, type NvmlSource } from '../../../src/sources/nvml/index.js';
import { MiB } from '../../../src/core/units.js';
import { fakeH100, fakeNvmlLib, writeScenario, type FakeProcess } from '../../fake-nvml/scenario.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-nvml-steady-'));
const path = join(dir, 'scenario.txt');
const write = (gpu0: FakeProcess[], gpu1: FakeProcess[], extra: Partial<Parameters<typeof fakeH100>[1]> = {}): void =>
  writeScenario(path, { driverVersion: '590.48.01', cudaVersion: 13010, devices: [fakeH100(0, { processes: gpu0, ...extra }), fakeH100(1, { processes: gpu1 })] });

let source: NvmlSource | null = null;
afterEach(() => source?.close());

describe('NVML rows in a steady state', () => {
  it('shares unchanged rows between samples and rebuilds a GPU whose numbers moved', async () => {
    const a = { pid: 4101, usedBytes: 100 * MiB, smUtilPct: 10 };
    const b = { pid: 4102, usedBytes: 200 * MiB, smUtilPct: 20 };
    const c = { pid: 4103, usedBytes: 300 * MiB, smUtilPct: 30 };
    write([a, b], [c]);
    process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
    let nowMs = 1_000_000;
    source = openNvmlSource({ libPath: fakeNvmlLib('590'), processSmEveryMs: 60_000, nowMs: () => nowMs });
    // The next sample reads SM % again, with new driver samples to read.
    const smDue = async (): Promise<void> => {
      nowMs += 60_000;
      await new Promise((resolve) => setTimeout(resolve, 200));
    };
    const firstRead = source.readSampleSync();
    const firstAsRead = JSON.stringify(firstRead);
    const first = firstRead.processes;
    expect(first.map((p) => [p.gpuIndex, p.pid, p.usedBytes, p.smUtilPct])).toEqual([[0, 4101, 100 * MiB, 10], [0, 4102, 200 * MiB, 20], [1, 4103, 300 * MiB, 30]]);
    const firstSample = source.readSampleSync();
    const again = source.readSampleSync();
    // Nothing moved: the very arrays of the sample before (devices included), with a new time.
    expect(again.processes).toBe(firstSample.processes);
    expect(again.devices).toBe(firstSample.devices);
    const second = again.processes;
    second.forEach((row, i) => expect(row).toMatchObject({ pid: first[i]!.pid, usedBytes: first[i]!.usedBytes, smUtilPct: first[i]!.smUtilPct }));

    // One SM % on GPU 0 moves: that row is new and right; the other rows are still the same objects.
    write([a, { ...b, smUtilPct: 55 }], [c]);
    await smDue();
    const third = source.readSampleSync().processes;
    expect(third.map((p) => p.smUtilPct)).toEqual([10, 55, 30]);
    expect(third).not.toBe(second);
    expect(third[1]).not.toBe(second[1]);
    expect(third[0]).toBe(second[0]);
    expect(third[2]).toBe(second[2]);

    // Memory moves on GPU 1, and a pid joins GPU 0.
    write([a, { ...b, smUtilPct: 55 }, { pid: 4104, usedBytes: 50 * MiB, smUtilPct: 5 }], [{ ...c, usedBytes: 301 * MiB }]);
    await smDue();
    const fourth = source.readSampleSync().processes;
    expect(fourth.map((p) => [p.gpuIndex, p.pid, p.usedBytes, p.smUtilPct])).toEqual([[0, 4101, 100 * MiB, 10], [0, 4102, 200 * MiB, 55], [0, 4104, 50 * MiB, 5], [1, 4103, 301 * MiB, 30]]);
    expect(fourth[3]).not.toBe(third[2]);
    // Rows that read the same at the same place stay the same objects while another row of their GPU moves.
    expect(fourth[0]).toBe(third[0]);
    expect(fourth[1]).toBe(third[1]);

    // An SM % the driver no longer reports while it reports others: that process did not run (0 %), not the old number.
    write([a, { pid: 4102, usedBytes: 200 * MiB }, { pid: 4104, usedBytes: 50 * MiB, smUtilPct: 5 }], [{ ...c, usedBytes: 301 * MiB }]);
    await smDue();
    const fifth = source.readSampleSync().processes;
    expect(fifth[1]).toMatchObject({ pid: 4102, smUtilPct: 0, unavailable: {} });
    expect(fifth[1]).not.toBe(fourth[1]);
    expect(fifth[0]).toBe(fourth[0]);
    // Numbers moved, rows came and went, objects were shared: the first sample still reads as it was handed out.
    expect(JSON.stringify(firstRead)).toBe(firstAsRead);
  });
});

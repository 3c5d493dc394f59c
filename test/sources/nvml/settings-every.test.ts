/**
 * A live view's NVML savings on the fake driver: power limit, compute mode and MIG mode re-read only when
 * settingsEveryMs has passed (memory and power draw still every sample); clocks and energy not read at all
 * when switched off; the default reads everything every sample.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openNvmlSource, type NvmlSource } from '../../../src/sources/nvml/index.js';
import { MiB } from '../../../src/core/units.js';
import { fakeH100, fakeNvmlLib, writeScenario } from '../../fake-nvml/scenario.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-nvml-settings-'));
const path = join(dir, 'scenario.txt');
const write = (limitMw: number, drawMw: number, computeMode: number): void =>
  writeScenario(path, { driverVersion: '590.48.01', cudaVersion: 13010, devices: [fakeH100(0, { power: { drawMw, limitMw }, computeMode, memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: drawMw * MiB / 1000 } })] });

let source: NvmlSource | null = null;
afterEach(() => source?.close());

describe('NVML settings re-read period', () => {
  it('keeps the power limit and compute mode for settingsEveryMs, re-reads them after it', () => {
    write(700_000, 69_000, 0);
    process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
    let nowMs = 1_000_000;
    source = openNvmlSource({ libPath: fakeNvmlLib('590'), settingsEveryMs: 10_000, clocks: false, energy: false, nowMs: () => nowMs });
    const first = source.readSampleSync().devices[0]!;
    expect(first).toMatchObject({ powerLimitMw: 700_000, powerDrawMw: 69_000, computeMode: 'Default', migMode: 'disabled' });
    expect('clocks' in first).toBe(false);
    expect('totalEnergyMj' in first).toBe(false);

    // A shorter limit changes the file size: the fake driver notices a rewrite by inode, size and mtime.
    write(70_000, 71_000, 3);
    nowMs += 9_999;
    const soon = source.readSampleSync().devices[0]!;
    // Per-sample numbers move at once; the settings wait for their period.
    expect(soon).toMatchObject({ powerDrawMw: 71_000, powerLimitMw: 700_000, computeMode: 'Default' });
    expect(soon.memory.usedBytes).toBe(71 * MiB);
    nowMs += 1;
    expect(source.readSampleSync().devices[0]).toMatchObject({ powerLimitMw: 70_000, computeMode: 'Exclusive_Process' });
  });

  it('reads settings, clocks and energy every sample by default', () => {
    write(700_000, 69_000, 0);
    process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
    source = openNvmlSource({ libPath: fakeNvmlLib('590') });
    expect(source.readSampleSync().devices[0]!.clocks).toBeDefined();
    write(70_000, 69_000, 0);
    const d = source.readSampleSync().devices[0]!;
    expect(d.powerLimitMw).toBe(70_000);
    expect(typeof d.totalEnergyMj).toBe('number');
  });
});

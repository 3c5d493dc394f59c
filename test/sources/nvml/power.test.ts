/**
 * Power as nvidia-smi's power.draw on the fake driver: averaged when nvmlDeviceGetPowerUsage answers, the
 * instant field value (NVML_FI_DEV_POWER_INSTANT) when it says NOT_SUPPORTED (pre-Ampere on new drivers),
 * null with both reasons when neither; clocks and energy read exactly.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openNvmlSource } from '../../../src/sources/nvml/index.js';
import { fakeH100, fakeNvmlLib, writeScenario, type FakeDevice } from '../../fake-nvml/scenario.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-nvml-power-'));

async function readDevices(devices: FakeDevice[]) {
  const path = join(dir, 'scenario.txt');
  writeScenario(path, { driverVersion: '590.48.01', cudaVersion: 13010, devices });
  process.env.GPUMEM_FAKE_NVML_SCENARIO = path;
  const source = await openNvmlSource({ libPath: fakeNvmlLib('590') });
  try {
    return (await source.readSample()).devices;
  } finally {
    source.close();
  }
}

describe('NVML power draw, clocks and energy', () => {
  it('takes the averaged reading when the driver has it, even with an instant one beside it', async () => {
    const [d] = await readDevices([fakeH100(0, { power: { drawMw: 69_000, limitMw: 700_000 }, powerInstantMw: 71_234 })]);
    expect(d!.powerDrawMw).toBe(69_000);
    expect(d!.unavailable.powerDrawMw).toBeUndefined();
  });

  it('falls back to the instant field value where the averaged reading is not supported', async () => {
    const t4 = fakeH100(0, { name: 'Tesla T4', power: { drawMw: null, limitMw: 70_000 }, powerInstantMw: 27_310 });
    const [d] = await readDevices([t4]);
    expect(d!.powerDrawMw).toBe(27_310);
    expect(d!.powerLimitMw).toBe(70_000);
    expect(d!.unavailable.powerDrawMw).toBeUndefined();
  });

  it('is null with both reasons when neither reading exists', async () => {
    const [d] = await readDevices([fakeH100(0, { power: { drawMw: null, limitMw: 70_000 } })]);
    expect(d!.powerDrawMw).toBeNull();
    expect(d!.unavailable.powerDrawMw).toBe('nvmlDeviceGetPowerUsage: NVML_ERROR_NOT_SUPPORTED; instant: NVML_FI_DEV_POWER_INSTANT: NVML_ERROR_NOT_SUPPORTED');
  });

  it('reads SM and memory clocks and the energy counter', async () => {
    const [a, b] = await readDevices([
      fakeH100(0, { clocks: { smMhz: 1755, memoryMhz: 2619 }, energyMj: 9_007_199_254_740_000 }),
      fakeH100(1, { clocks: undefined, energyMj: undefined }),
    ]);
    expect(a!.clocks).toEqual({ smMhz: 1755, memoryMhz: 2619 });
    expect(a!.totalEnergyMj).toBe(9_007_199_254_740_000);
    expect(b!.clocks).toEqual({ smMhz: null, memoryMhz: null });
    expect(b!.totalEnergyMj).toBeNull();
    expect(b!.unavailable['clocks.smMhz']).toBe('nvmlDeviceGetClockInfo: NVML_ERROR_NOT_SUPPORTED');
  });
});

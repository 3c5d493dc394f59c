/**
 * The NVML calls real gpumem commands make, counted by the fake driver (GPUMEM_FAKE_NVML_CALLS_OUT): each pays
 * only for the fields it shows or exports. The expensive calls on an H100 are total energy (3.84 ms of CPU per
 * call) and per-process utilization (2.53 ms); see src/cli/nvml-fields.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countsOf, readCallsFile } from '../fake-nvml/calls.js';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { BIN } from '../helpers/cli.js';
import { GiB } from '../../src/core/units.js';
import { watchServe } from '../helpers/serve-process.js';
import { sleepingTrainer } from '../helpers/sleeping-trainer.js';

const { dir, pid: trainerPid } = sleepingTrainer('gpumem-nvml-calls-');
const scenario = join(dir, 'scenario.txt');
writeScenario(scenario, {
  driverVersion: '590.48.01', cudaVersion: 13010,
  devices: [0, 1].map((i) => fakeH100(i, { energyMj: 5_000_000 + i, processes: i === 0 ? [{ pid: trainerPid, usedBytes: GiB, smUtilPct: 40 }] : [] })),
});
let runs = 0;
const envFor = (callsOut: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH, XDG_DATA_HOME: dir, XDG_RUNTIME_DIR: dir, ...fakeNvmlEnv('590', scenario), GPUMEM_FAKE_NVML_CALLS_OUT: callsOut,
});

function gpumem(args: string[]): { code: number | null; stdout: string; stderr: string; calls: Record<string, number> } {
  const callsOut = join(dir, `calls-${runs++}.json`);
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: envFor(callsOut), timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, calls: countsOf(readCallsFile(callsOut)) };
}

const EXPENSIVE = ['nvmlDeviceGetTotalEnergyConsumption', 'nvmlDeviceGetProcessUtilization', 'nvmlDeviceGetClockInfo'];
const expensive = (calls: Record<string, number>): Record<string, number> =>
  Object.fromEntries(EXPENSIVE.filter((fn) => fn in calls).map((fn) => [fn, calls[fn]!]));

describe('NVML calls per command', () => {
  it('status as a table reads no energy, clocks or per-process SM %; --json reads them all', () => {
    const table = gpumem(['status', '--source', 'nvml']);
    expect(table.code, table.stderr).toBe(0);
    expect(expensive(table.calls)).toEqual({});
    expect(table.calls.nvmlDeviceGetMemoryInfo_v2).toBe(2);
    const json = gpumem(['status', '--json', '--source', 'nvml']);
    // Energy and clocks on both GPUs; SM % on the GPU with a process, in one call (a buffer sized in advance).
    expect(expensive(json.calls)).toEqual({ nvmlDeviceGetTotalEnergyConsumption: 2, nvmlDeviceGetClockInfo: 4, nvmlDeviceGetProcessUtilization: 1 });
  });

  it('doctor reads SM % (evidence for idle jobs) but no energy or clocks', () => {
    const r = gpumem(['doctor', '--window', '0', '--source', 'nvml', '--json']);
    expect(r.stderr).toBe('');
    expect(expensive(r.calls)).toEqual({ nvmlDeviceGetProcessUtilization: 1 });
    expect([0, 1]).toContain(r.code);
  });

  it('record reads SM % every 30 s, not every sample, and neither energy nor clocks', () => {
    const out = join(dir, 'rec.ndjson');
    const r = gpumem(['record', '--out', out, '--interval', '100', '--duration', '1', '--source', 'nvml']);
    expect(r.code, r.stderr).toBe(0);
    const samples = Number(/wrote (\d+) samples/.exec(r.stderr)?.[1]);
    expect(samples).toBeGreaterThan(3);
    expect(r.calls.nvmlDeviceGetMemoryInfo_v2).toBe(2 * samples);
    expect(expensive(r.calls)).toEqual({ nvmlDeviceGetProcessUtilization: 1 });
  });

  it('run samples at 10 Hz but reads SM % every 5 s, and neither energy nor clocks', () => {
    const r = gpumem(['run', '--gpus', '1', '--source', 'nvml', '--', 'sleep', '3']);
    expect(r.code, r.stderr).toBe(0);
    // GPU 0 (the trainer's) is the one with a process to read SM % for: at the start (one call) and
    // not again within 3 s; memory is read on both GPUs every 100 ms.
    expect(r.calls.nvmlDeviceGetMemoryInfo_v2).toBeGreaterThan(10);
    expect(expensive(r.calls)).toEqual({ nvmlDeviceGetProcessUtilization: 1 });
  });

  it('serve reads energy once per /metrics scrape, not per sample', async () => {
    const callsOut = join(dir, `calls-${runs++}.json`);
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--source', 'nvml', '--interval', '100', '--idle-interval', '100'], { env: envFor(callsOut) });
    const served = watchServe(child, 'serve');
    const base = await served.base;
    const scrape = async (): Promise<string> => (await fetch(`${base}/metrics`)).text();
    const first = await scrape();
    await new Promise((r) => setTimeout(r, 500));
    const second = await scrape();
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', (c) => resolve(c));
      child.kill('SIGINT');
    });
    expect(code, served.stderr()).toBe(0);
    for (const body of [first, second]) {
      expect(body).toMatch(/^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{gpu="0",[^}]*\} 5000000$/m);
      expect(body).toMatch(/^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{gpu="1",[^}]*\} 5000001$/m);
    }
    const calls = countsOf(readCallsFile(callsOut));
    // Two scrapes × two GPUs, while the sampler read memory many times.
    expect(calls.nvmlDeviceGetTotalEnergyConsumption).toBe(4);
    expect(calls.nvmlDeviceGetMemoryInfo_v2).toBeGreaterThan(4);
  });
});

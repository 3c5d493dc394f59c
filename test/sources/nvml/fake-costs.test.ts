/**
 * The fake driver's cost table (test/fake-nvml/fake_costs.c): with GPUMEM_FAKE_NVML_COSTS=h100 each call spends
 * the CPU time the same call took on a real H100, and the fake counts every call. A real `gpumem status --json`
 * run is counted here. The time assertions are about the fake (it spent at least what its table charges), not
 * about gpumem's speed.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countsOf, readCallsFile, type FakeCalls } from '../../fake-nvml/calls.js';
import { fakeH100, fakeNvmlEnv, fakeNvmlLib, writeScenario } from '../../fake-nvml/scenario.js';
import { BIN } from '../../helpers/cli.js';
import { GiB } from '../../../src/core/units.js';
import { sleepingTrainer } from '../../helpers/sleeping-trainer.js';

const { dir, pid: trainerPid } = sleepingTrainer('gpumem-fake-costs-');
const scenario = join(dir, 'scenario.txt');
writeScenario(scenario, {
  driverVersion: '580.159.04',
  cudaVersion: 13000,
  devices: [fakeH100(0, { processes: [{ pid: trainerPid, usedBytes: GiB, smUtilPct: 40 }] })],
});

let runs = 0;
function status(costs: string | undefined): { code: number | null; stdout: string; stderr: string; callsOut: string } {
  const callsOut = join(dir, `calls-${runs++}.json`);
  const env = { PATH: process.env.PATH, ...fakeNvmlEnv('590', scenario), GPUMEM_FAKE_NVML_CALLS_OUT: callsOut, ...(costs === undefined ? {} : { GPUMEM_FAKE_NVML_COSTS: costs }) };
  const r = spawnSync(process.execPath, [BIN, 'status', '--json', '--source', 'nvml'], { encoding: 'utf8', env, timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, callsOut };
}

/** The H100's per-call CPU time (bench/results/2026-11-27-h100-80gb/RESULTS.md, "Per-call NVML cost"), in ns. */
const H100_NS: Record<string, number> = {
  nvmlDeviceGetTotalEnergyConsumption: 3_840_000,
  nvmlDeviceGetProcessUtilization: 2_530_000,
  nvmlDeviceGetMigMode: 150_000,
  nvmlDeviceGetUtilizationRates: 21_000,
  nvmlDeviceGetMemoryInfo_v2: 10_000,
  nvmlDeviceGetPowerUsage: 11_000,
  nvmlDeviceGetComputeRunningProcesses_v3: 11_000,
  nvmlDeviceGetGraphicsRunningProcesses_v3: 11_000,
  nvmlDeviceGetTemperature: 6_000,
  nvmlDeviceGetClockInfo: 6_000,
  nvmlDeviceGetComputeMode: 6_000,
  nvmlDeviceGetName: 4_000,
  nvmlDeviceGetUUID: 4_000,
  nvmlDeviceGetPciInfo_v3: 4_000,
};

/** Every NVML call one `gpumem status --json` makes on one GPU with one process. */
const STATUS_CALLS = {
  // Session and identity, once.
  nvmlInit_v2: 1, nvmlShutdown: 1,
  nvmlSystemGetDriverVersion: 1, nvmlSystemGetCudaDriverVersion_v2: 1,
  nvmlDeviceGetCount_v2: 1, nvmlDeviceGetHandleByIndex_v2: 1,
  nvmlDeviceGetUUID: 1, nvmlDeviceGetName: 1, nvmlDeviceGetPciInfo_v3: 1, nvmlDeviceGetMinorNumber: 1,
  // The one sample.
  nvmlDeviceGetMemoryInfo_v2: 1, nvmlDeviceGetUtilizationRates: 1, nvmlDeviceGetTemperature: 1,
  nvmlDeviceGetPowerUsage: 1, nvmlDeviceGetClockInfo: 2, nvmlDeviceGetTotalEnergyConsumption: 1,
  nvmlDeviceGetEnforcedPowerLimit: 1, nvmlDeviceGetComputeMode: 1, nvmlDeviceGetMigMode: 1,
  // Count, then fill: a list read for the first time has no buffer yet.
  nvmlDeviceGetComputeRunningProcesses_v3: 2, nvmlDeviceGetGraphicsRunningProcesses_v3: 1,
  // One call: its buffer is sized before the first read.
  nvmlDeviceGetProcessUtilization: 1,
};

describe('the fake NVML driver charges the H100\'s per-call costs', () => {
  it('with GPUMEM_FAKE_NVML_COSTS=h100 a status run makes exactly these calls, each spending its table cost', () => {
    const r = status('h100');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).processes.map((p: { pid: number }) => p.pid)).toEqual([trainerPid]);
    const calls = readCallsFile(r.callsOut);
    expect(calls.costs).toBe('h100');
    expect(countsOf(calls)).toEqual(STATUS_CALLS);
    for (const [fn, ns] of Object.entries(H100_NS)) if (fn in calls.calls) expect(calls.calls[fn]!.costNs, fn).toBe(ns);
    for (const [fn, c] of Object.entries(calls.calls)) {
      expect(c.costNs, `${fn} has a cost`).toBeGreaterThan(0);
      expect(c.spentNs, `${fn} spent its cost`).toBeGreaterThanOrEqual(c.costNs * c.count);
    }
  });

  it('is off by default: the same calls are counted and nothing is spent', () => {
    const r = status(undefined);
    expect(r.code).toBe(0);
    const calls = readCallsFile(r.callsOut);
    expect(calls.costs).toBe('off');
    expect(countsOf(calls)).toEqual(STATUS_CALLS);
    for (const c of Object.values(calls.calls)) expect(c.spentNs).toBe(0);
  });

  it('the init that opens the session is charged once for each GPU it attaches', () => {
    const eight = join(dir, 'eight-gpus.txt');
    writeScenario(eight, { driverVersion: '580.159.04', cudaVersion: 13000, devices: Array.from({ length: 8 }, (_, g) => fakeH100(g)) });
    const callsOut = join(dir, `calls-${runs++}.json`);
    const env = { PATH: process.env.PATH, ...fakeNvmlEnv('590', eight), GPUMEM_FAKE_NVML_CALLS_OUT: callsOut, GPUMEM_FAKE_NVML_COSTS: 'h100' };
    const r = spawnSync(process.execPath, [BIN, 'status', '--json', '--source', 'nvml'], { encoding: 'utf8', env, timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).devices).toHaveLength(8);
    const init = readCallsFile(callsOut).calls.nvmlInit_v2!;
    expect(init.count).toBe(1);
    // The table's figure is per GPU; eight GPUs spend eight times it (a spin overshoots by microseconds, not 20 ms).
    expect(init.costNs).toBe(20_000_000);
    expect(init.spentNs).toBeGreaterThanOrEqual(8 * init.costNs);
    expect(init.spentNs).toBeLessThan(9 * init.costNs);
    const one = readCallsFile(status('h100').callsOut).calls.nvmlInit_v2!;
    expect(one.spentNs).toBeGreaterThanOrEqual(one.costNs);
    expect(one.spentNs).toBeLessThan(2 * one.costNs);
  });

  it('an unknown cost table fails nvmlInit with a line saying so, rather than measuring free calls', () => {
    const r = status('h200');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('GPUMEM_FAKE_NVML_COSTS=h200 is not a known cost table');
    expect(r.stderr).toContain('nvmlInit_v2 failed');
  });
});

/**
 * Run in a child (its own copy of the fake's counters): init with costs on, then re-read a changed scenario of 16
 * GPUs × 512 processes through one memory call (the fake parses the file again: its own work) followed by four
 * 2.53-ms calls. Prints the process's CPU over those five calls and the fake's counters.
 */
const CREDIT_PROBE = `
import koffi from 'koffi';
import { copyFileSync, renameSync } from 'node:fs';
const [lib, scenario, big] = process.argv.slice(1);
const nvml = koffi.load(lib);
const init = nvml.func('nvmlInit_v2', 'int', []);
const handle = nvml.func('nvmlDeviceGetHandleByIndex_v2', 'int', ['uint', '_Out_ void **']);
const memory = nvml.func('nvmlDeviceGetMemoryInfo_v2', 'int', ['void *', 'void *']);
const smUtil = nvml.func('nvmlDeviceGetProcessUtilization', 'int', ['void *', 'void *', '_Inout_ uint *', 'uint64']);
const json = nvml.func('fakeNvmlCallsJson', 'int', ['void *', 'uint']);
const counters = () => { const b = Buffer.alloc(json(null, 0) + 1); json(b, b.length); return JSON.parse(b.toString('utf8', 0, b.length - 1)); };
if (init() !== 0) throw new Error('init');
const h = [null]; handle(0, h);
const mem = Buffer.alloc(48); mem.writeUInt32LE(0x02000028, 0);
memory(h[0], mem);
const before = counters().own;
copyFileSync(big, scenario + '.tmp'); renameSync(scenario + '.tmp', scenario);
const t0 = process.cpuUsage();
memory(h[0], mem);
for (let i = 0; i < 4; i++) smUtil(h[0], null, [0], 0);
const used = process.cpuUsage(t0);
const after = counters();
console.log(JSON.stringify({ cpuNs: (used.user + used.system) * 1000, before, after }));
`;

describe('the fake\'s own work is not charged on top of the table', () => {
  it('re-reading a changed scenario is taken off the next charged calls: the CPU of those calls stays what the table charges', () => {
    const devices = (mib: number) => Array.from({ length: 16 }, (_, g) => fakeH100(g, { processes: Array.from({ length: 512 }, (_, i) => ({ pid: 100_000 + g * 512 + i, usedBytes: mib * 1024 * 1024, smUtilPct: i % 100 })) }));
    const probeScenario = join(dir, 'credit-scenario.txt');
    writeScenario(probeScenario, { driverVersion: '590.48.01', cudaVersion: 13010, devices: devices(100) });
    const big = join(dir, 'credit-next.txt');
    writeScenario(big, { driverVersion: '590.48.01', cudaVersion: 13010, devices: devices(101) });
    const fake = fakeNvmlEnv('590', probeScenario);
    const env = { PATH: process.env.PATH, ...fake, GPUMEM_FAKE_NVML_COSTS: 'h100' };
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', CREDIT_PROBE, fakeNvmlLib('590'), probeScenario, big], { encoding: 'utf8', env, timeout: 30_000, cwd: process.cwd() });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { cpuNs: number; before: FakeCalls['own']; after: { calls: Record<string, { count: number; spentNs: number }>; own: FakeCalls['own'] } };
    const own = out.after.own;
    // nvmlInit's own reading of the file was part of its charge (the init charges after reading).
    expect(out.before.creditedNs + out.before.pendingNs).toBe(out.before.spentNs + out.before.checkNs);
    // One re-read of the file during the five calls (the first was nvmlInit's), fully absorbed by their 10.1 ms.
    expect(own.count - out.before.count).toBe(1);
    const reread = own.spentNs - out.before.spentNs;
    expect(reread).toBeGreaterThan(500_000);
    // The memory call checked the file first (the one call of a sample that does); that check's time is credited
    // like the re-read, none of it lost.
    expect(own.checks - out.before.checks).toBe(1);
    expect(own.checkNs).toBeGreaterThan(out.before.checkNs);
    expect(own.creditedNs + own.pendingNs).toBe(own.spentNs + own.checkNs);
    expect(own.pendingNs).toBeLessThan(own.checkNs - out.before.checkNs);
    const charged = 10_000 + 4 * 2_530_000;
    // Without the credit the five calls cost the table plus the re-read; with it, the table (and koffi's few µs).
    expect(out.cpuNs).toBeGreaterThanOrEqual(charged);
    expect(out.cpuNs).toBeLessThan(charged + reread / 2);
    // What the counters call spent stays the table's charge: the re-read stands in for part of it.
    expect(out.after.calls.nvmlDeviceGetProcessUtilization!.spentNs).toBeGreaterThanOrEqual(4 * 2_530_000);
  });
});

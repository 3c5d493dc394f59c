/**
 * The GPU kit's status benchmark (bench/gpu/status-bench.ts) measures what opening an NVML session costs a
 * one-shot command, in fresh processes. On the fake driver with the H100 table, whose nvmlInit is charged an
 * assumed 20 ms of CPU for each GPU (one here) and the last nvmlShutdown 1 ms, the probe must find those charges:
 * it times the calls, not the library's loading or the process around them; the same with the init that does not
 * attach the GPUs, whose first query must still answer.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, fakeNvmlLib, writeScenario } from '../fake-nvml/scenario.js';

const ROOT = join(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'gpumem-status-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('status-bench: the NVML session of a fresh process', () => {
  it('finds the fake\'s init and shutdown charges, and writes them to its JSON and its summary line', () => {
    const scenario = join(dir, 'scenario.txt');
    writeScenario(scenario, { driverVersion: '580.159.04', cudaVersion: 13000, devices: [fakeH100(0)] });
    const out = join(dir, 'bench.json');
    const r = spawnSync(process.execPath, [
      '--import', 'tsx', 'bench/gpu/status-bench.ts', '--nvml-samples', '3', '--smi-samples', '1', '--paced-samples', '0', '--session-samples', '3',
      '--nvml-lib', fakeNvmlLib('590'), '--smi', join(ROOT, 'test/fake-smi/nvidia-smi'), '--out', out,
    ], {
      cwd: ROOT, encoding: 'utf8', timeout: 120_000,
      env: { PATH: process.env.PATH, ...fakeNvmlEnv('590', scenario), GPUMEM_FAKE_NVML_COSTS: 'h100', GPUMEM_FAKE_SMI_XML: join(ROOT, 'test/fixtures/nvidia-smi/tesla-t4-procs-driver-515.105.01.xml') },
    });
    expect(r.status, r.stderr).toBe(0);
    type Session = { loadCpuMs: number; initCpuMs: number; initWallMs: number; firstQueryCpuMs: number; shutdownCpuMs: number; queryRc: number[] };
    const json = JSON.parse(readFileSync(out, 'utf8')) as { session: Session; sessionNoAttach: Session };
    // The charges are busy CPU on the calling thread: the probe's CPU covers them, and little else. The fake
    // charges nvmlInitWithFlags as nvmlInit_v2 (a real driver's difference is what the GPU run measures), and the
    // first query (count, handle, memory: 4 µs of table each) answers in both.
    const bounds = [['initCpuMs', 20, 40], ['initWallMs', 20, Infinity], ['firstQueryCpuMs', 0.008, 5], ['shutdownCpuMs', 1, 15], ['loadCpuMs', 0.001, Infinity]] as const;
    for (const session of [json.session, json.sessionNoAttach]) {
      for (const [key, low, high] of bounds) {
        expect(session[key], key).toBeGreaterThanOrEqual(low);
        expect(session[key], key).toBeLessThan(high);
      }
      expect(session.queryRc).toEqual([0, 0, 0]);
    }
    expect(r.stdout).toMatch(/^NVML session, fresh process \(median of 3\): load CPU .+, nvmlInit_v2 CPU \d+\.\d\d ms \(wall .+\), first query CPU .+, nvmlShutdown CPU .+$/m);
    expect(r.stdout).toMatch(/^NVML session without attaching \(nvmlInitWithFlags NO_ATTACH\): init CPU \d+\.\d\d ms \(wall .+\), first query CPU .+ \(return codes 0, 0, 0: count, handle, memory\)$/m);
  });
});

/**
 * The sampling benchmark's NVML floor (bench/nvml-floor.mjs) stands for "what any Node tool pays to make the calls
 * of one steady sample once a second": it must make exactly the calls a steady watch, record or status --watch
 * sample makes (the per-process SM % and the settings, which those commands read on slow periods, aside), per GPU,
 * and nothing else each second.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RECORD_FIELDS, statusFields, watchFields } from '../../src/cli/nvml-fields.js';
import { openNvmlSource } from '../../src/sources/nvml/index.js';
import { countsOf, fakeCallCounter, readCallsFile } from '../fake-nvml/calls.js';
import { fakeH100, fakeNvmlEnv, fakeNvmlLib, writeScenario } from '../fake-nvml/scenario.js';

const ROOT = join(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'gpumem-nvml-floor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const GPUS = 3;
const SAMPLES = 2;
/** Calls made once per session, not per sample. */
const SESSION = new Set(['nvmlInit_v2', 'nvmlShutdown', 'nvmlDeviceGetCount_v2', 'nvmlDeviceGetHandleByIndex_v2']);

describe('the NVML floor of the sampling benchmark', () => {
  it('makes the calls of a steady watch, record and status --watch sample, per GPU, each second', () => {
    const scenario = join(dir, 'scenario.txt');
    writeScenario(scenario, {
      driverVersion: '590.48.01', cudaVersion: 13010,
      devices: Array.from({ length: GPUS }, (_, g) => fakeH100(g, { processes: [{ pid: 1000 + g, usedBytes: 1 << 30 }] })),
    });
    const callsOut = join(dir, 'calls.json');
    const started = Date.now();
    const r = spawnSync(process.execPath, ['bench/nvml-floor.mjs'], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000,
      env: { PATH: process.env.PATH, ...fakeNvmlEnv('590', scenario), GPUMEM_FAKE_NVML_CALLS_OUT: callsOut, GPUMEM_FLOOR_SAMPLES: String(SAMPLES) },
    });
    expect(r.status, r.stderr).toBe(0);
    // A sample a second, not back to back.
    expect(Date.now() - started).toBeGreaterThanOrEqual(SAMPLES * 1000);
    const floor = Object.entries(countsOf(readCallsFile(callsOut))).filter(([fn]) => !SESSION.has(fn)).map(([fn, n]) => [fn, n / SAMPLES / GPUS]);
    expect(floor.length).toBeGreaterThan(0);

    // The same calls of one steady sample of each 1-Hz command, counted in this process (one GPU's worth).
    const lib = fakeNvmlLib('590');
    const before = process.env.GPUMEM_FAKE_NVML_SCENARIO;
    process.env.GPUMEM_FAKE_NVML_SCENARIO = scenario;
    afterAll(() => {
      if (before === undefined) delete process.env.GPUMEM_FAKE_NVML_SCENARIO;
      else process.env.GPUMEM_FAKE_NVML_SCENARIO = before;
    });
    const counter = fakeCallCounter(lib);
    for (const fields of [watchFields(() => false), RECORD_FIELDS, statusFields(false, true)]) {
      let nowMs = 0;
      const source = openNvmlSource({ libPath: lib, ...fields, nowMs: () => nowMs });
      try {
        // Past the first sample's one-time reads (names, settings, SM %), a steady one.
        source.readSampleSync();
        nowMs += 1000;
        counter.reset();
        source.readSampleSync();
        const steady = Object.entries(countsOf(counter.read())).map(([fn, n]) => [fn, n / GPUS]);
        expect(Object.fromEntries(floor)).toEqual(Object.fromEntries(steady));
      } finally {
        source.close();
      }
    }
  });
});

/**
 * Benchmarks on the fake NVML driver measure with the real driver's per-call costs (test/fake-nvml/fake_costs.c,
 * GPUMEM_FAKE_NVML_COSTS=h100): a fake whose calls are free hides the two calls that cost a real H100 more than
 * all the rest of a sample. The runner sets the table when the variable is unset and refuses any other value;
 * each benchmark that loads the fake checks again, so none can measure free calls by being run another way.
 */
import { openNvmlSource, type NvmlFields } from '../src/sources/nvml/index.js';
import { DIAGNOSIS_FIELDS, RECORD_FIELDS, serveFields, statusFields, SUPERVISE_FIELDS, watchFields } from '../src/cli/nvml-fields.js';
import { countsOf, fakeCallCounter } from '../test/fake-nvml/calls.js';
import { fakeNvmlLib } from '../test/fake-nvml/scenario.js';

export const COST_TABLE = 'h100';

/** Why the benchmarks cannot run with this environment, or null when they can (after setting the default). */
export function useRealCosts(env: NodeJS.ProcessEnv = process.env): string | null {
  const value = env.GPUMEM_FAKE_NVML_COSTS;
  if (value === undefined || value === '') {
    env.GPUMEM_FAKE_NVML_COSTS = COST_TABLE;
    return null;
  }
  if (value === COST_TABLE) return null;
  return `GPUMEM_FAKE_NVML_COSTS=${value}: the benchmarks measure only with the H100's per-call costs (${COST_TABLE}); unset it or set it to ${COST_TABLE}`;
}

/** Throws unless the fake driver charges real costs in this process and the ones it starts. */
export function requireRealCosts(): void {
  const why = useRealCosts();
  if (why) throw new Error(why);
}

/** The fields each command declares (src/cli/nvml-fields.ts) and the interval it samples at by default, in ms. */
const CONSUMERS: Array<[string, NvmlFields | undefined, number]> = [
  ['status (table)', statusFields(false, false), 0],
  ['status --json', undefined, 0],
  ['status --watch', statusFields(false, true), 2000],
  ['doctor', DIAGNOSIS_FIELDS, 500],
  ['watch (1 GPU on screen)', watchFields((g) => g === 0), 1000],
  ['serve (no page)', serveFields(() => false), 10_000],
  ['run / pipeline', SUPERVISE_FIELDS, 100],
  ['record', RECORD_FIELDS, 1000],
];

/**
 * One line per command: the NVML calls of one steady sample averaged over a minute of its default interval
 * (one sample for the one-shots), per GPU, and what they cost by the table. Needs the fake driver's scenario
 * in GPUMEM_FAKE_NVML_SCENARIO.
 */
export function describeCallsPerSample(gpus: number): string {
  const lib = fakeNvmlLib('590');
  const counter = fakeCallCounter(lib);
  const lines = ['NVML calls per sample per GPU (steady state, a minute at the default interval), cost by the H100 table:'];
  for (const [name, fields, intervalMs] of CONSUMERS) {
    let nowMs = 0;
    const source = openNvmlSource({ libPath: lib, ...fields, nowMs: () => nowMs });
    try {
      source.readSampleSync();
      const samples = intervalMs === 0 ? 1 : Math.round(60_000 / intervalMs);
      counter.reset();
      for (let k = 0; k < samples; k++) {
        nowMs += intervalMs;
        source.readSampleSync();
      }
      const calls = counter.read();
      const costMs = Object.values(calls.calls).reduce((sum, c) => sum + c.count * c.costNs, 0) / 1e6 / samples / gpus;
      const per = Object.entries(countsOf(calls)).map(([fn, n]) => `${fn.replace(/^nvmlDeviceGet/, '')} ${(n / samples / gpus).toFixed(2)}`);
      lines.push(`  ${name.padEnd(16)} ${costMs.toFixed(3)} ms  ${per.join(', ')}`);
    } finally {
      source.close();
    }
  }
  return lines.join('\n');
}

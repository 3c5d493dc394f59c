/**
 * The trainer callbacks forecast inside the training process with python/gpumem_torch/_forecast.py; `gpumem run`
 * with src/core/forecast. Both are fed the same steps here — flat, noisy, leaking, spiking, both, and long enough to
 * thin the history — and must give the same forecast, field for field.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addStepRecord, createStepHistory, forecastMemory } from '../../../src/core/forecast/index.js';

const PYTHON_DIR = resolve(__dirname, '../../../python');
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

type Row = [number, number, number, number, number];

function rows(steps: number, left: (s: number) => number, peak: (s: number) => number): Row[] {
  return Array.from({ length: steps }, (_, i) => {
    const s = i + 1;
    const p = Math.max(peak(s), left(s));
    return [s, left(s), p, p, p + 2 * MiB];
  });
}

const wobble = (s: number): number => Math.round((Math.sin(s * 12.9898) * 43758.5453 % 1 + 1) % 1 * 8 * MiB);

const CASES: Array<[string, Row[], number | null]> = [
  ['flat', rows(500, () => 2 * GiB, () => 5 * GiB), 6 * GiB],
  ['flat with noise', rows(3000, (s) => 2 * GiB + wobble(s), (s) => 5 * GiB + wobble(s + 7)), 6 * GiB],
  ['leak', rows(400, (s) => 2 * GiB + s * 4 * MiB, (s) => 5 * GiB + s * 4 * MiB), 8 * GiB],
  ['leak with noise, no limit', rows(2500, (s) => 2 * GiB + s * 300_000 + wobble(s), () => 5 * GiB), null],
  ['evaluation every 100 steps', rows(450, () => 2 * GiB, (s) => (s % 100 === 0 ? 7 * GiB : 5 * GiB)), 6.5 * GiB],
  ['spikes and a leak, thinned', rows(6000, (s) => 2 * GiB + s * 64 * 1024, (s) => (s % 700 === 0 ? 7 * GiB : 5 * GiB) + s * 64 * 1024), 7.6 * GiB],
];

describe('the Python forecast matches the core forecast', () => {
  it.each(CASES)('%s', (_name, steps, limit) => {
    const h = createStepHistory(0, 'optimizer');
    for (const [step, left, peak, reserved, peakReserved] of steps) addStepRecord(h, { step, leftBytes: left, peakAllocatedBytes: peak, reservedBytes: reserved, peakReservedBytes: peakReserved });
    const ours = forecastMemory(h, { limitBytes: limit });
    const code = [
      'import json, sys',
      'from gpumem_torch._forecast import History, forecast',
      'data = json.load(sys.stdin)',
      'h = History()',
      'for r in data["rows"]: h.add(*r)',
      'print(json.dumps(forecast(h, data["limit"])))',
    ].join('\n');
    const run = spawnSync('python3', ['-c', code], { input: JSON.stringify({ rows: steps, limit }), encoding: 'utf8', env: { ...process.env, PYTHONPATH: PYTHON_DIR }, maxBuffer: 1 << 26 });
    expect(run.status, run.stderr).toBe(0);
    const theirs = JSON.parse(run.stdout) as unknown;
    expect(theirs).toEqual(JSON.parse(JSON.stringify(ours)));
  });

  it('the comparison can fail: a different limit gives a different forecast', () => {
    const steps = CASES[2]?.[1] as Row[];
    const h = createStepHistory(0, 'optimizer');
    for (const [step, left, peak, reserved, peakReserved] of steps) addStepRecord(h, { step, leftBytes: left, peakAllocatedBytes: peak, reservedBytes: reserved, peakReservedBytes: peakReserved });
    expect(forecastMemory(h, { limitBytes: 8 * GiB })).not.toEqual(forecastMemory(h, { limitBytes: 9 * GiB }));
  });
});

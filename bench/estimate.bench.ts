/**
 * Without a GPU: trial counts of gpumem fit against Lightning's power/binsearch and accelerate's 0.9-shrink
 * over the simulated memory curves, with the batch each lands on as a share of the true maximum. (The
 * estimate-accuracy benchmark needs a GPU: bench/gpu/estimate-accuracy.py.)
 */
import { DEFAULT_FIT_OPTIONS, planFit } from '../src/core/fit/index.js';
import { CURVES, accelerateShrink, lightningBinsearch, lightningPower, survives, trueMax } from './fit-peers.js';

const pct = (a: number, b: number): string => (b === 0 ? 'n/a' : `${((a / b) * 100).toFixed(1)} %`);

export async function run(): Promise<void> {
  const rows: string[][] = [['curve', 'true max (90 % / 100 %)', 'gpumem fit', 'lightning power', 'lightning binsearch', 'accelerate ×0.9 from 128', 'accelerate from 1024']];
  let ours = 0;
  let bin = 0;
  for (const curve of CURVES) {
    const target = Math.floor(0.9 * curve.capacityBytes);
    const fitsTarget = (b: number): boolean => survives(curve, b) && curve.peakBytes(b) <= target;
    const fitsCap = (b: number): boolean => survives(curve, b);
    const maxT = trueMax(fitsTarget);
    const maxC = trueMax(fitsCap);
    const r = await planFit(async (b) => {
      const ok = survives(curve, b);
      return { ok, oom: !ok, peakBytes: ok ? curve.peakBytes(b) : null };
    }, { ...DEFAULT_FIT_OPTIONS, targetBytes: target });
    const p = lightningPower(fitsCap);
    const s = lightningBinsearch(fitsCap);
    const a = accelerateShrink(fitsCap);
    const a2 = accelerateShrink(fitsCap, 1024);
    ours += r.runs.length;
    bin += s.trials;
    const cell = (batch: number, trials: number, of: number): string => `${trials} runs → ${batch} (${pct(batch, of)})`;
    rows.push([curve.name, `${maxT} / ${maxC}`, cell(r.batch ?? 0, r.runs.length, maxT), cell(p.batch, p.trials, maxC), cell(s.batch, s.trials, maxC), cell(a.batch, a.trials, maxC), cell(a2.batch, a2.trials, maxC)]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i]!)).join('  ')}\n`);
  process.stdout.write(`\ntotal runs: gpumem fit ${ours}, Lightning binsearch ${bin} (ratio ${(ours / bin).toFixed(2)}); each peer run is a full training trial.\n`);
  process.stdout.write('gpumem fit targets 90 % of free memory (share of the max under that target); peers are measured against the capacity with no margin.\n');
}

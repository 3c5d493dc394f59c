/**
 * `gpumem estimate --world-size N -- CMD`: one traced step per rank that can differ, on PyTorch's fake process
 * group (python/gpumem_torch/trace/_distributed.py). Rank 0 is traced apart, because it is the rank programs
 * give extra work (evaluation, logging, checkpoints); rank N−1 stands for ranks 1…N−1, which a data-parallel
 * program treats alike. The largest rank is the one the report shows whole: it decides what fits.
 */
import { formatBytes } from '../../core/units.js';
import type { TracedReport } from './estimate-traced.js';
import { painter } from '../render/style.js';

/** What one traced rank (or the ranks it stands for) needs. */
export interface TracedRank {
  /** The ranks this trace stands for: [0], or [1, …, N−1] traced as rank N−1. */
  ranks: number[];
  tracedRank: number;
  peakRequestedBytes: number;
  peakReservedBytes: number | null;
  nvidiaSmiBytes: number;
  peakPhase: string;
  /** Against the --gpu budget; null without one. */
  fits: boolean | null;
}

/** The ranks to trace for a world of `worldSize`: 0, and N−1 for the others. */
export function representativeRanks(worldSize: number): Array<{ traced: number; standsFor: number[] }> {
  if (worldSize <= 1) return [{ traced: 0, standsFor: [0] }];
  const others = Array.from({ length: worldSize - 1 }, (_, i) => i + 1);
  return [{ traced: 0, standsFor: [0] }, { traced: worldSize - 1, standsFor: others }];
}

/**
 * The report of the largest rank, with every traced rank's figures under `ranks`. Ties go to the lower rank,
 * so equal ranks show rank 0's breakdown.
 */
export function combineRanks<R extends TracedReport>(worldSize: number, perRank: Array<{ traced: number; standsFor: number[]; report: R }>): R {
  // By nvidia-smi's figure, then by the bytes requested (which the allocator's segments can hide).
  const larger = (a: TracedReport, b: TracedReport): boolean =>
    a.nvidiaSmiBytes > b.nvidiaSmiBytes || (a.nvidiaSmiBytes === b.nvidiaSmiBytes && a.peakRequestedBytes > b.peakRequestedBytes);
  let largest = perRank[0]!;
  for (const r of perRank) if (larger(r.report, largest.report)) largest = r;
  const ranks: TracedRank[] = perRank.map(({ traced, standsFor, report }) => ({
    ranks: standsFor,
    tracedRank: traced,
    peakRequestedBytes: report.peakRequestedBytes,
    peakReservedBytes: report.peakReservedBytes,
    nvidiaSmiBytes: report.nvidiaSmiBytes,
    peakPhase: report.peakPhase,
    fits: report.fit ? report.fit.fits : null,
  }));
  return { ...largest.report, worldSize, largestRank: largest.traced, ranks };
}

function rankNames(ranks: number[]): string {
  if (ranks.length === 1) return `rank ${ranks[0]}`;
  return `ranks ${ranks[0]}–${ranks[ranks.length - 1]}`;
}

/** The per-rank lines of a traced estimate; ranks that need the same are said to be alike. */
export function renderRanks(r: TracedReport, color: boolean): string[] {
  if (!r.ranks || r.ranks.length < 2) return [];
  const paint = painter(color);
  const [first, ...rest] = r.ranks;
  const alike = rest.every((x) => x.peakRequestedBytes === first!.peakRequestedBytes && x.nvidiaSmiBytes === first!.nvidiaSmiBytes);
  const others = r.worldSize === 2 ? 'rank 1' : `ranks 1–${r.worldSize - 1} traced as rank ${r.worldSize - 1}`;
  const out = [`${paint('bold', 'per rank')} (world size ${r.worldSize} on a fake process group: rank 0, ${others})`];
  for (const x of r.ranks) {
    const verdict = x.fits === null ? '' : x.fits ? `  ${paint('green', 'fits')}` : `  ${paint('red', 'DOES NOT FIT')}`;
    out.push(`  ${rankNames(x.ranks).padEnd(12)} ${formatBytes(x.peakRequestedBytes).padStart(11)} requested, ${formatBytes(x.nvidiaSmiBytes).padStart(11)} in nvidia-smi, peak in ${x.peakPhase}${verdict}`);
  }
  if (alike) out.push('  every rank needs the same; the breakdown above is rank 0\'s');
  else {
    const big = r.ranks.find((x) => x.tracedRank === r.largestRank)!;
    const others = r.ranks.filter((x) => x !== big);
    const moreSmi = big.nvidiaSmiBytes - Math.max(...others.map((x) => x.nvidiaSmiBytes));
    const moreRequested = big.peakRequestedBytes - Math.max(...others.map((x) => x.peakRequestedBytes));
    const more = moreSmi > 0
      ? `needs ${formatBytes(moreSmi)} more in nvidia-smi than the others`
      : `requests ${formatBytes(moreRequested)} more than the others (the same in nvidia-smi: the caching allocator's reserved segments hold it)`;
    out.push(`  ${rankNames(big.ranks)} ${more}; the breakdown above is ${rankNames(big.ranks)}'s`);
  }
  return out;
}

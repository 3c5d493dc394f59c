/**
 * `gpumem estimate --world-size N -- CMD`: one traced step per rank that can differ, on PyTorch's fake process
 * group (python/gpumem_torch/trace/_distributed.py). Rank 0 is traced apart, because it is the rank programs
 * give extra work (evaluation, logging, checkpoints); rank N−1 stands for ranks 1…N−1, which a data-parallel
 * program treats alike. The largest rank is the one the report shows whole: it decides what fits.
 */
import type { TracedReport } from './traced-report.js';

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

/** The per-rank lines of a traced estimate (`gpumem estimate --world-size N -- CMD`). */
import { formatBytes } from '../../core/units.js';
import type { TracedReport } from '../../core/estimate/traced-report.js';
import { painter } from '../render/style.js';

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

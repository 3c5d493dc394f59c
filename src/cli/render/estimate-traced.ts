/**
 * Human output of the traced estimate (`gpumem estimate -- python train.py …`, `--entry`): the step's peak by
 * phase, module and category, its ranks (--world-size), its stages (--stages with {stage}), the batch or sequence
 * search and the ranked fixes.
 */
import { printable } from '../../core/text.js';
import { formatBytes } from '../../core/units.js';
import { sparkline } from '../../core/estimate/replay.js';
import type { TracedFix } from '../../core/estimate/trace-fixes.js';
import type { TracedReport, TracedStagesReport } from '../../core/estimate/traced-report.js';
import { painter } from './style.js';

// Module names, notes and error text come from the traced program: no terminal control characters.

/** Human output of a traced estimate. */
export function renderTraced(r: TracedReport, color: boolean): string {
  const paint = painter(color);
  const out: string[] = [];
  out.push(`${paint('bold', 'traced')}  ${printable(r.command.join(' '))}: ${r.steps} step(s) on fake tensors, torch ${r.torchVersion ?? '?'}, ${r.allocations} GPU allocations`);
  out.push(`${paint('bold', 'peak')}    ${formatBytes(r.peakRequestedBytes)} requested by tensors, in ${r.peakPhase} of step ${r.peakStep}`);
  if (r.peakReservedBytes !== null) {
    const conf = r.allocatorSettings ? ` with ${printable(r.allocatorSettings)}` : ' with default settings';
    out.push(`        caching allocator${conf}: ${formatBytes(r.peakAllocatedBytes)} allocated, ${formatBytes(r.peakReservedBytes)} reserved at most (${r.segmentCount} segments at the end)`);
  } else {
    out.push('        (not replayed through the caching allocator: reserved bytes and rounding slack are not included)');
  }
  out.push(`        + CUDA context ${formatBytes(r.contextBytes)} → about ${formatBytes(r.nvidiaSmiBytes)} in nvidia-smi`);
  const cats = Object.entries(r.byCategory).filter(([, b]) => b > 0).map(([c, b]) => `${c} ${formatBytes(b)}`);
  out.push(`at the peak: ${cats.join(', ')}`);
  for (const m of r.byModule.slice(0, 8)) out.push(`  ${formatBytes(m.bytes).padStart(11)}  ${printable(m.module)}`);
  out.push(`phase peaks: ${r.phasePeaks.map((p) => `${p.phase} ${formatBytes(p.peakRequestedBytes)}`).join(', ')}`);
  out.push(`timeline    ${sparkline(r.timelineBytes)}  (max ${formatBytes(Math.max(0, ...r.timelineBytes))})`);
  out.push(...renderRanks(r, color));
  if (r.fit) {
    const verdict = r.fit.fits ? paint('green', 'fits') : paint('red', 'DOES NOT FIT');
    out.push(`${r.fit.gpu}: ${verdict} (budget ${formatBytes(r.fit.budgetBytes)} = ${formatBytes(r.fit.capacityBytes)} less ${Math.round(r.fit.margin * 100)} % margin)`);
  }
  if (r.batchSearch) {
    const b = r.batchSearch;
    const probes = b.probes.map((p) => `${p.batch} → ${formatBytes(p.deviceBytes)}${p.fits ? '' : ' (too big)'}`).join(', ');
    out.push(`${paint('bold', 'largest batch')} ${b.maxBatch}${b.exact ? '' : ' at least'} (traced: ${probes}${b.bytesPerSample ? `; ${formatBytes(b.bytesPerSample)} per sample` : ''})`);
    if (b.maxBatch > 0) out.push('  the breakdown above is at that batch');
  }
  if (r.seqSearch) {
    const q = r.seqSearch;
    const probes = q.probes.map((p) => `${p.seq} → ${formatBytes(p.deviceBytes)}${p.fits ? '' : ' (too big)'}`).join(', ');
    out.push(`${paint('bold', 'longest sequence')} ${q.maxSeq}${q.exact ? '' : ' at least'} at batch ${q.batch}, in multiples of ${q.multiple} (traced: ${probes}${q.bytesPerToken ? `; ${formatBytes(q.bytesPerToken)} per token` : ''})`);
    if (q.maxSeq > 0) out.push(`  the breakdown above is at --seq ${q.maxSeq}`);
  }
  if (r.fixes) out.push(...renderFixes(r.fixes, color));
  for (const n of r.notes) out.push(`note: ${printable(n)}`);
  return `${out.join('\n')}\n`;
}

/** The ranked fixes of a step that does not fit, one line each, best first. */
export function renderFixes(fixes: readonly TracedFix[], color: boolean, scope = ''): string[] {
  const paint = painter(color);
  const out = [`${paint('bold', 'fixes')}${scope}, best first (derived = the traced allocations rewritten as the fix would change them, not re-traced; traced = the program traced again with the fix):`];
  for (const f of fixes) {
    const verdict = f.fits ? paint('green', 'fits    ') : paint('red', 'too big ');
    out.push(`  ${verdict}${formatBytes(f.deviceBytes).padStart(11)}  ${f.what}${f.basis === 'replayed' ? '' : ` (${f.basis})`}`);
  }
  return out;
}

/** Human output of a staged trace. */
export function renderStages(r: TracedStagesReport, color: boolean): string {
  const paint = painter(color);
  const out = [paint('bold', 'stages (each traced)')];
  for (const s of r.stages) {
    const verdict = s.fits === null ? '' : s.fits ? paint('green', 'fits') : paint('red', 'BREAKS');
    out.push(`  ${printable(s.name).padEnd(12)} ${formatBytes(s.report.nvidiaSmiBytes).padStart(11)} in nvidia-smi  peak in ${s.report.peakPhase}  ${verdict}`);
    if (s.growth.length) out.push(`      grew: ${s.growth.map((g) => `${g.category} +${formatBytes(g.deltaBytes)}`).join(', ')}`);
  }
  const broken = r.stages.find((s) => s.fits === false);
  if (broken?.report.fixes) out.push(...renderFixes(broken.report.fixes, color, ` for ${printable(broken.name)} at its batch`));
  if (r.fix) {
    const f = r.fix;
    out.push(`fix for ${printable(f.stage)}: batch ${f.batch} with ${f.accumulation} accumulation steps (effective batch ${f.effectiveBatch}), traced at ${formatBytes(f.search.probes.find((p) => p.batch === f.batch)?.deviceBytes ?? 0)}`);
  } else if (r.stages.some((s) => s.fits === false)) {
    out.push('no traced fix: put {batch} in the command to let gpumem search a smaller batch with accumulation');
  }
  return `${out.join('\n')}\n`;
}

function rankNames(ranks: number[]): string {
  if (ranks.length === 1) return `rank ${ranks[0]}`;
  return `ranks ${ranks[0]}–${ranks[ranks.length - 1]}`;
}

/** The per-rank lines of a traced estimate; ranks that need the same are said to be alike. */
function renderRanks(r: TracedReport, color: boolean): string[] {
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

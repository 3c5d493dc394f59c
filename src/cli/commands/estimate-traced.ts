/**
 * `gpumem estimate -- python train.py …` and `gpumem estimate --entry pkg.module:make_step`: trace the real
 * training step on fake tensors, replay it, and report the peak by phase, module and category.
 */
import { printable } from '../../core/text.js';
import { formatBytes } from '../../core/units.js';
import { sparkline } from '../../core/estimate/replay.js';
import type { TracedFix } from '../../core/estimate/trace-fixes.js';
import type { TracedReport } from '../../core/estimate/traced-report.js';
import { painter } from '../render/style.js';
import { renderRanks } from './estimate-trace-ranks.js';

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

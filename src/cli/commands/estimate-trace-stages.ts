/**
 * `gpumem estimate --stages "frozen full" -- python train.py --stage {stage}`: one traced run per stage, each
 * stage's nvidia-smi figure against the budget, what grew from the stage before, and for the first stage
 * that breaks the fix with numbers: the largest batch that fits by traced probes (when the command has
 * `{batch}`) and the accumulation that keeps the effective batch.
 */
import { formatBytes } from '../../core/index.js';
import { searchMaxBatch } from '../../core/estimate/index.js';
import type { StageFix, TracedReport, TracedStagesReport } from '../../core/estimate/traced-report.js';
import { painter } from '../render/style.js';
import { renderFixes } from './estimate-traced.js';
import { printable } from '../../core/text.js';

/** Traces every stage (and, for the first that breaks, its batch search) and builds the report. */
export async function traceStages(
  names: string[],
  batch: number,
  budgetBytes: number | null,
  hasBatch: boolean,
  traceAt: (stage: string, batch: number, probe: boolean) => Promise<TracedReport>,
  maxProbes: number,
): Promise<TracedStagesReport> {
  const stages: TracedStagesReport['stages'] = [];
  for (const name of names) {
    const report = await traceAt(name, batch, false);
    const before = stages[stages.length - 1]?.report;
    const growth = before
      ? Object.entries(report.byCategory)
          .map(([category, bytes]) => ({ category, deltaBytes: bytes - (before.byCategory[category as keyof typeof report.byCategory] ?? 0) }))
          .filter((g) => g.deltaBytes > 0)
          .sort((a, b) => b.deltaBytes - a.deltaBytes)
      : [];
    stages.push({ name, report, fits: budgetBytes === null ? null : report.nvidiaSmiBytes <= budgetBytes, growth });
  }
  const broken = stages.find((s) => s.fits === false);
  let fix: StageFix | null = null;
  if (broken && hasBatch && budgetBytes !== null && batch > 1) {
    const search = await searchMaxBatch(async (b) => (await traceAt(broken.name, b, true)).nvidiaSmiBytes, budgetBytes, maxProbes, batch - 1);
    if (search.maxBatch > 0) {
      const accumulation = Math.ceil(batch / search.maxBatch);
      fix = { stage: broken.name, batch: search.maxBatch, accumulation, effectiveBatch: search.maxBatch * accumulation, search };
    }
  }
  return { schemaVersion: 1, kind: 'trace-stages', stages, fix };
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

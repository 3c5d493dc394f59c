/**
 * `gpumem estimate --stages "frozen full" -- python train.py --stage {stage}`: one traced run per stage, each
 * stage's nvidia-smi figure against the budget, what grew from the stage before, and for the first stage
 * that breaks the fix with numbers: the largest batch that fits by traced probes (when the command has
 * `{batch}`) and the accumulation that keeps the effective batch.
 */
import { TRACED_STAGES_SCHEMA_VERSION } from '../core/documents/estimate-traced.js';
import { searchMaxBatch, type StageFix, type TracedReport, type TracedStagesReport } from '../core/estimate/index.js';

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
  return { schemaVersion: TRACED_STAGES_SCHEMA_VERSION, kind: 'trace-stages', stages, fix };
}

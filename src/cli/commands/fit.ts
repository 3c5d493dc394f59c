/**
 * `gpumem fit [options] -- CMD … {batch} …`: the largest batch that fits. Reads the options, runs the
 * measuring loop (orchestrate/fit-loop.ts) and renders its report.
 */
import { GpumemError } from '../../core/errors.js';
import { formatBytes } from '../../core/units.js';
import { DEFAULT_FIT_OPTIONS } from '../../core/fit/planner.js';
import type { FitReport } from '../../core/fit/report.js';
import { runFitLoop } from '../../orchestrate/index.js';
import { childCommand } from '../args.js';
import { keepRunningOnBrokenPipe } from '../broken-pipe.js';
import { openSourceFromContext } from '../open-source.js';
import type { CommandHandler } from '../context.js';
import type { FitOptions } from '../options/supervise.js';
import { painter, table } from '../render/style.js';

export const run: CommandHandler<FitOptions> = async (ctx) => {
  const o = ctx.args.options;
  const argv = childCommand(ctx.args.rest, 'fit', 'gpumem fit -- python train.py --batch-size {batch} --max-steps {steps}');
  if (!argv.some((a) => a.includes('{batch}'))) {
    throw new GpumemError('USAGE', 'the command has no {batch} placeholder', { hint: 'write {batch} where the batch size goes; the command also gets GPUMEM_BATCH' });
  }
  const { steps, fill, gpus } = o;
  keepRunningOnBrokenPipe();
  const source = await openSourceFromContext(ctx);
  try {
    const report = await runFitLoop({
      argv, steps, fillPct: fill, gpus, worldSize: o.worldSize, intervalMs: o.intervalMs, companion: !o.noCompanion,
      probes: o.probe ?? DEFAULT_FIT_OPTIONS.probes,
      maxBatch: o.maxBatch,
      maxRuns: o.maxRuns,
      runTimeoutMs: o.runTimeout * 1000,
      effectiveBatch: o.effectiveBatch ?? null,
      source, cwd: ctx.cwd, env: ctx.env,
      onRun: (batch, n) => ctx.stderr.write(`gpumem: fit: running batch ${batch} for ${n} steps\n`),
    });
    if (o.json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else ctx.stdout.write(renderFit(report, ctx.color));
    return report.batch === null ? { kind: 'findings' } : { kind: 'ok' };
  } finally {
    source.close();
  }
};

/** Human output: every run, the line, the answer and the accumulation. */
export function renderFit(r: FitReport, color: boolean): string {
  const paint = painter(color);
  const out: string[] = [];
  const ranks = r.worldSize > 1;
  if (ranks) {
    const each = r.gpus.map((g, i) => `rank ${i} on GPU ${g.index}: ${formatBytes(g.targetBytes)} of ${formatBytes(g.freeBytesAtStart)} free`).join('; ');
    out.push(`${r.worldSize} ranks, batch per rank; target ${Math.round(r.targetFill * 100)} % of each GPU's free memory at start (${each}), ${r.steps} steps per run`);
  } else {
    out.push(`target ${formatBytes(r.targetBytes)} (${Math.round(r.targetFill * 100)} % of ${formatBytes(r.freeBytesAtStart)} free at start), ${r.steps} steps per run`);
  }
  const peakCell = (x: FitReport['runs'][number]): string => {
    if (x.oom) return paint('red', 'OOM');
    if (!ranks) return x.peakBytes === null ? 'n/a' : formatBytes(x.peakBytes);
    return x.perGpuPeakBytes.map((b, i) => `GPU ${r.gpus[i]!.index} ${b === null ? 'n/a' : formatBytes(b)}`).join(', ');
  };
  const rows = r.runs.map((x, i) => [
    `  ${i + 1}`, x.reason, `batch ${x.batch}`,
    peakCell(x),
    x.predictedBytes === null ? '' : `predicted ${formatBytes(x.predictedBytes)}`,
    x.fits ? paint('green', 'fits') : paint('red', 'over'),
  ]);
  out.push(...table(rows, ['left', 'left', 'left', 'right']));
  if (r.line) out.push(`line${ranks ? ' (the GPU with the least headroom, as if it had the smallest target)' : ''}: ${formatBytes(r.line.fixedBytes)} + ${formatBytes(r.line.perSampleBytes)} × batch`);
  if (r.predictionErrorPct !== null) out.push(`prediction error at batch ${r.predictedBatch}: ${r.predictionErrorPct.toFixed(1)} %`);
  if (r.batch === null) out.push(paint('red', `no batch fits: ${r.stopReason}`));
  else out.push(`${paint('bold', `largest verified batch${ranks ? ' per rank' : ''}: ${r.batch}`)} (peak ${formatBytes(r.peakBytes)}; ${r.stopReason}${r.firstFailingBatch === null ? '' : `; ${r.firstFailingBatch} does not fit`})`);
  if (r.accumulation) out.push(`effective batch ${r.accumulation.effectiveBatch}: ${r.accumulation.steps} accumulation steps × micro-batch ${r.accumulation.microBatch}${ranks ? ` × ${r.worldSize} ranks` : ''}${r.accumulation.realisedBatch !== r.accumulation.effectiveBatch ? ` (= ${r.accumulation.realisedBatch})` : ''}`);
  if (r.measuredBytesPerSample !== null) out.push(paint('gray', `for gpumem estimate: --activation-bytes-per-sample ${r.measuredBytesPerSample}`));
  return `${out.join('\n')}\n`;
}

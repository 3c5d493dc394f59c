/**
 * `gpumem fit [options] -- CMD … {batch} …`: the largest batch that fits, found by running the command for a
 * few steps in fresh processes under the supervisor (peak of the process tree's GPU memory, OOM detection)
 * and steered by the fit planner in core/fit. Every batch reported was run.
 */
import { Writable } from 'node:stream';
import { GpumemError, formatBytes } from '../../core/index.js';
import { DEFAULT_FIT_OPTIONS, buildFitReport, planFit, type FitReport, type Measurement } from '../../core/fit/index.js';
import { openSourceFromContext } from '../open-source.js';
import { companionPlugin, superviseRun, type CompanionReport } from '../../supervise/index.js';
import type { CommandHandler } from '../context.js';
import type { FitOptions } from '../options/supervise.js';
import { painter, table } from '../render/style.js';

/** Discards the child's output: probe runs are not the user's training, only their memory matters. */
const sink = (): Writable => new Writable({ write: (_c, _e, done) => done() });

export const run: CommandHandler<FitOptions> = async (ctx) => {
  const o = ctx.args.options;
  const argv = ctx.args.rest;
  if (argv.length === 0) throw new GpumemError('USAGE', 'no command to fit', { hint: 'e.g. gpumem fit -- python train.py --batch-size {batch} --max-steps {steps}' });
  if (!argv.some((a) => a.includes('{batch}'))) {
    throw new GpumemError('USAGE', 'the command has no {batch} placeholder', { hint: 'write {batch} where the batch size goes; the command also gets GPUMEM_BATCH' });
  }
  const { steps, fill, gpus } = o;
  const source = await openSourceFromContext(ctx);
  try {
    const sample = await source.readSample();
    const index = /^\d+$/.test(gpus) ? Number(gpus) : null;
    const device = sample.devices.find((d) => (index === null ? d.uuid === gpus : d.index === index));
    if (!device) throw new GpumemError('BAD_OPTION_VALUE', `--gpus: no GPU "${gpus}"`, { hint: `fit measures on one GPU; present: ${sample.devices.map((d) => d.index).join(', ') || 'none'}` });
    const free = device.memory.freeBytes;
    if (free === null) throw new GpumemError('FAILED', `GPU ${device.index} does not report free memory`, { hint: 'try --source smi' });
    const targetBytes = Math.floor((free * fill) / 100);
    const withSteps = argv.map((a) => a.replaceAll('{steps}', String(steps)));
    const measure = async (batch: number): Promise<Measurement> => {
      ctx.stderr.write(`gpumem: fit: running batch ${batch} for ${steps} steps\n`);
      const report = await superviseRun({
        argv: withSteps, source, cwd: ctx.cwd, env: ctx.env, gpus, batch, accum: 1, retryOom: 0,
        extraEnv: { GPUMEM_STEPS: String(steps) }, intervalMs: o.intervalMs,
        graceMs: 2000, cleanupTimeoutMs: 10000, stdout: sink(), stderr: sink(), log: () => undefined,
        // Statistics only at the end: the companion is here to count OOMs the program catches itself.
        plugins: o.noCompanion ? [] : [companionPlugin({ rateHz: 0 })],
      });
      const attempt = report.attempts[report.attempts.length - 1];
      const companion = attempt?.plugins.companion as CompanionReport | undefined;
      const caught = (companion?.gpus ?? []).some((g) => (g.numOoms ?? 0) > 0);
      const oom = (attempt?.ooms.length ?? 0) > 0 || caught;
      const peaks = report.peaks.filter((p) => p.uuid === device.uuid);
      const peakBytes = peaks.length > 0 ? Math.max(...peaks.map((p) => p.peakBytes)) : null;
      return { ok: report.exit.code === 0 && !oom, oom, peakBytes: peakBytes === 0 && report.exit.code !== 0 ? null : peakBytes };
    };
    const result = await planFit(measure, {
      ...DEFAULT_FIT_OPTIONS,
      targetBytes,
      probes: o.probe ?? DEFAULT_FIT_OPTIONS.probes,
      maxBatch: o.maxBatch,
      maxRuns: o.maxRuns,
    });
    const report = buildFitReport(result, { argv, steps, freeBytesAtStart: free, targetFill: fill / 100, effectiveBatch: o.effectiveBatch ?? null });
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
  out.push(`target ${formatBytes(r.targetBytes)} (${Math.round(r.targetFill * 100)} % of ${formatBytes(r.freeBytesAtStart)} free at start), ${r.steps} steps per run`);
  const rows = r.runs.map((x, i) => [
    `  ${i + 1}`, x.reason, `batch ${x.batch}`,
    x.oom ? paint('red', 'OOM') : x.peakBytes === null ? 'n/a' : formatBytes(x.peakBytes),
    x.predictedBytes === null ? '' : `predicted ${formatBytes(x.predictedBytes)}`,
    x.fits ? paint('green', 'fits') : paint('red', 'over'),
  ]);
  out.push(...table(rows, ['left', 'left', 'left', 'right']));
  if (r.line) out.push(`line: ${formatBytes(r.line.fixedBytes)} + ${formatBytes(r.line.perSampleBytes)} × batch`);
  if (r.predictionErrorPct !== null) out.push(`prediction error at batch ${r.predictedBatch}: ${r.predictionErrorPct.toFixed(1)} %`);
  if (r.batch === null) out.push(paint('red', `no batch fits: ${r.stopReason}`));
  else out.push(`${paint('bold', `largest verified batch: ${r.batch}`)} (peak ${formatBytes(r.peakBytes)}; ${r.stopReason}${r.firstFailingBatch === null ? '' : `; ${r.firstFailingBatch} does not fit`})`);
  if (r.accumulation) out.push(`effective batch ${r.accumulation.effectiveBatch}: ${r.accumulation.steps} accumulation steps × micro-batch ${r.accumulation.microBatch}${r.accumulation.realisedBatch !== r.accumulation.effectiveBatch ? ` (= ${r.accumulation.realisedBatch})` : ''}`);
  if (r.measuredBytesPerSample !== null) out.push(paint('gray', `for gpumem estimate: --activation-bytes-per-sample ${r.measuredBytesPerSample}`));
  return `${out.join('\n')}\n`;
}

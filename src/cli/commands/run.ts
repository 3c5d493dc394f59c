/** `gpumem run [options] -- CMD…`: supervise one command (see docs/run.md). */
import { GpumemError } from '../../core/errors.js';
import { parseByteSize } from '../../core/units.js';
import { runReportJson } from '../../core/run/json.js';
import { childCommand } from '../args.js';
import { keepRunningOnBrokenPipe } from '../broken-pipe.js';
import { openSourceFromContext } from '../open-source.js';
import { SUPERVISE_FIELDS } from '../nvml-fields.js';
import { beginRun, completeRun } from '../../store/index.js';
import { parseFreeRequirement, superviseRun } from '../../supervise/index.js';
import type { CommandHandler } from '../context.js';
import type { RunOptions } from '../options/supervise.js';
import { renderRunReport } from '../render/run.js';
import { companionSettings, startCompanion, type CompanionChoice } from './companion.js';
import { autoBatchJson, autoCheck, chooseAutoBatch, measuredPeak } from './run-auto-batch.js';
import { closeHistory, historyWrite, tryHistory } from './history.js';

export const run: CommandHandler<RunOptions> = async (ctx) => {
  const o = ctx.args.options;
  const argv = childCommand(ctx.args.rest, 'run', 'gpumem run --gpus 0 -- python train.py');
  const usesSteps = argv.some((a) => a.includes('{steps}'));
  if (usesSteps && o.steps === undefined) {
    throw new GpumemError('USAGE', 'the command has {steps}: give --steps N for the run', { hint: 'gpumem run --batch auto --steps 1000 -- python train.py --bs {batch} --steps {steps}' });
  }
  const runArgv = usesSteps ? argv.map((a) => a.replaceAll('{steps}', String(o.steps))) : argv;
  const settings = companionSettings(ctx);
  // The numbers were checked by the parser, before the GPU is opened: a typo is a usage error even on a
  // machine without one.
  const requireFree = o.requireFree !== undefined ? parseFreeRequirement(o.requireFree, parseByteSize) : null;
  keepRunningOnBrokenPipe();
  const source = await openSourceFromContext(ctx, SUPERVISE_FIELDS);
  const db = tryHistory(ctx);
  try {
    const startedAtMs = Date.now();
    let runId: number | null = null;
    let companion: CompanionChoice = { plugin: null, runFolder: null };
    const auto = o.batch === 'auto' ? await chooseAutoBatch(ctx, o, argv, source) : null;
    if (auto) for (const line of [...auto.reasons, `chosen: batch ${auto.batch}${auto.accum > 1 ? `, accumulation ${auto.accum}` : ''}`]) ctx.stderr.write(`gpumem: batch auto: ${line}\n`);
    const report = await superviseRun({
      argv: runArgv, source, cwd: ctx.cwd, env: ctx.env, requireFree, forwardSignals: true, subreaper: true,
      // Pinned to the very GPUs the batch was sized for (auto picks the freest at each look).
      gpus: auto && o.gpus !== undefined ? auto.gpuUuids.join(',') : o.gpus, allocConf: !o.noAllocConf,
      batch: auto ? auto.batch : (o.batch as number | undefined), accum: auto ? auto.accum : o.accum,
      // An automatic batch steps down on a real OOM, keeping the effective batch (half the batch, twice the accumulation).
      retryOom: auto ? Math.max(o.retryOom, 2) : o.retryOom, graceMs: o.graceMs, cleanupTimeoutMs: o.cleanupTimeoutMs, intervalMs: o.intervalMs,
      // The child's bytes go to our real streams untouched; with --json its stdout moves to stderr so that
      // stdout carries only the report.
      stdout: o.json ? ctx.stderr.stream : ctx.stdout.stream, stderr: ctx.stderr.stream,
      log: (line) => ctx.stderr.write(`gpumem: ${line}\n`),
      // Recorded only once --gpus and the pre-flight accepted the run: a refused run leaves no history row.
      onReady: () => {
        runId = db ? historyWrite(ctx, 'starting the record', () => beginRun(db, { argv, cwd: ctx.cwd, startedAtMs })) : null;
        companion = startCompanion(ctx, settings, { runId, startedAtMs });
        return companion.plugin ? [companion.plugin] : [];
      },
    });
    if (auto) {
      auto.measuredPeakBytes = measuredPeak(report, auto.gpus);
      if (auto.measuredPeakBytes !== null) ctx.stderr.write(`gpumem: batch auto: ${autoCheck(auto)}\n`);
    }
    const stored = db && runId !== null ? historyWrite(ctx, 'storing the report', () => (completeRun(db, runId!, report), runId)) : null;
    if (o.json) ctx.stdout.write(`${JSON.stringify({ ...runReportJson(report), runId: stored, runFolder: companion.runFolder, ...(auto ? { autoBatch: autoBatchJson(auto) } : {}) }, null, 2)}\n`);
    else ctx.stderr.write(renderRunReport(report, ctx.stderr.isTTY && ctx.color, stored));
    const survived = report.attempts.some((a) => (a.cleanup.survivors ?? []).length > 0);
    return { kind: 'child', code: report.exit.code, signal: report.exit.signal, cleanupFailed: survived };
  } finally {
    closeHistory(ctx, db);
    source.close();
  }
};

/** `gpumem run [options] -- CMD…`: supervise one command (see docs/run.md). */
import { GpumemError, parseByteSize } from '../../core/index.js';
import { openSourceFromContext } from '../open-source.js';
import { beginRun, completeRun } from '../../store/index.js';
import { checkSuperviseNumbers, parseFreeRequirement, superviseRun } from '../../supervise/index.js';
import type { CommandHandler } from '../context.js';
import { renderRunReport } from '../render/run.js';
import { companionSettings, startCompanion } from './companion.js';
import { closeHistory, historyWrite, tryHistory } from './history.js';

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

export const run: CommandHandler = async (ctx) => {
  const o = ctx.args.options;
  const argv = ctx.args.rest;
  if (argv.length === 0) {
    throw new GpumemError('USAGE', 'no command to run', { hint: 'put the command after --, e.g. gpumem run --gpus 0 -- python train.py' });
  }
  const settings = companionSettings(ctx);
  const timing = { retryOom: num(o.retryOom), graceMs: num(o.graceMs), cleanupTimeoutMs: num(o.cleanupTimeoutMs), intervalMs: num(o.intervalMs) };
  // Checked before the GPU is opened, so a typo is a usage error even on a machine without one.
  checkSuperviseNumbers(timing);
  const requireFree = typeof o.requireFree === 'string' ? parseFreeRequirement(o.requireFree, parseByteSize) : null;
  const source = await openSourceFromContext(ctx);
  const db = tryHistory(ctx);
  try {
    const startedAtMs = Date.now();
    const runId = db ? historyWrite(ctx, 'starting the record', () => beginRun(db, { argv, cwd: ctx.cwd, startedAtMs })) : null;
    const companion = startCompanion(ctx, settings, { runId, startedAtMs });
    const report = await superviseRun({
      argv, source, cwd: ctx.cwd, env: ctx.env, requireFree, forwardSignals: true,
      gpus: typeof o.gpus === 'string' ? o.gpus : undefined, allocConf: !o.noAllocConf,
      batch: num(o.batch), accum: num(o.accum), ...timing,
      // The child's bytes go to our real streams untouched; with --json its stdout moves to stderr so that
      // stdout carries only the report.
      stdout: o.json ? process.stderr : process.stdout, stderr: process.stderr,
      log: (line) => ctx.stderr.write(`gpumem: ${line}\n`),
      plugins: companion.plugin ? [companion.plugin] : [],
    });
    const stored = db && runId !== null ? historyWrite(ctx, 'storing the report', () => (completeRun(db, runId, report), runId)) : null;
    if (o.json) ctx.stdout.write(`${JSON.stringify({ ...report, runId: stored, runFolder: companion.runFolder }, null, 2)}\n`);
    else ctx.stderr.write(renderRunReport(report, ctx.stderr.isTTY && ctx.color, stored));
    return { kind: 'child', code: report.exit.code, signal: report.exit.signal };
  } finally {
    closeHistory(ctx, db);
    source.close();
  }
};

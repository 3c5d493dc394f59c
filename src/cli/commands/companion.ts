/**
 * The companion options shared by `gpumem run` and `gpumem pipeline`: validated here once, turned into the
 * run plugin with its live lines, the live file for `gpumem diagnose` and, with --snapshot-on-oom, the run
 * folder next to the history database.
 */
import { dirname, join } from 'node:path';
import { GpumemError } from '../../core/errors.js';
import { createRunFolder, defaultDbPath, liveCompanionPath, runFolderPath } from '../../store/index.js';
import { companionPlugin, type CompanionPlugin } from '../../supervise/index.js';
import type { CommandContext } from '../context.js';
import type { CompanionOptions, HistoryOptions } from '../options/shared.js';
import { answerSnapshotFile } from './snapshot-answer.js';

export interface CompanionChoice {
  plugin: CompanionPlugin | null;
  /** The run folder (created), or null when nothing needs one. */
  runFolder: string | null;
}

export interface CompanionSettings {
  enabled: boolean;
  rateHz: number;
  memoryFraction: number | null;
  snapshotOnOom: boolean;
  forecast: { withinSteps: number; checkSpikes: boolean };
  stepMemory: boolean;
}

/**
 * Checks how the companion options combine before anything runs (a bad combination must not leave a
 * half-started run in the history; each value's range was checked by the parser): --snapshot-on-oom and
 * --memory-fraction with --no-companion are refused.
 */
export function companionSettings(ctx: CommandContext<CompanionOptions>): CompanionSettings {
  const o = ctx.args.options;
  const fraction = o.memoryFraction ?? null;
  if (o.noCompanion) {
    const needs = [o.snapshotOnOom ? '--snapshot-on-oom' : null, fraction !== null ? '--memory-fraction' : null].filter((x) => x !== null);
    if (needs.length > 0) {
      throw new GpumemError('USAGE', `${needs.join(' and ')} need${needs.length === 1 ? 's' : ''} the PyTorch companion, which --no-companion turns off`, { hint: 'drop --no-companion' });
    }
  }
  return {
    enabled: !o.noCompanion, rateHz: o.companionRate, memoryFraction: fraction, snapshotOnOom: o.snapshotOnOom,
    forecast: { withinSteps: o.forecastSteps, checkSpikes: !o.noSpikeWarning }, stepMemory: !o.noStepMemory,
  };
}

/**
 * Builds the plugin from validated settings (null when disabled). With --snapshot-on-oom the run folder
 * is created next to the history database and its path printed (a folder that cannot be created is a
 * warning, and the run goes on without snapshots); `run` names it (history id, or start
 * time and pid when the run is not recorded; `folderName` overrides, e.g. for a pipeline).
 */
export function startCompanion(ctx: CommandContext<HistoryOptions>, settings: CompanionSettings, run: { runId: number | null; startedAtMs: number; folderName?: string }): CompanionChoice {
  if (!settings.enabled) return { plugin: null, runFolder: null };
  let runFolder: string | null = null;
  if (settings.snapshotOnOom) {
    const dbPath = ctx.args.options.db ?? defaultDbPath(ctx.env);
    const path = runFolderPath(dbPath, { runId: run.runId, startedAtMs: run.startedAtMs, pid: process.pid });
    try {
      runFolder = createRunFolder(run.folderName ? join(dirname(path), run.folderName) : path);
      ctx.stderr.write(`gpumem: run folder ${runFolder} (memory snapshots on OOM are written here)\n`);
    } catch (error) {
      // Like the history: a snapshot is worth having, not worth refusing to run the job for.
      ctx.stderr.write(`gpumem: warning: ${(error as Error).message}; running without --snapshot-on-oom\n`);
    }
  }
  const plugin = companionPlugin({
    rateHz: settings.rateHz,
    snapshotDir: runFolder,
    memoryFraction: settings.memoryFraction,
    forecast: settings.forecast,
    stepMemory: settings.stepMemory,
    log: (line) => ctx.stderr.write(`gpumem: ${line}\n`),
    livePath: liveCompanionPath(ctx.env, process.pid),
    ...(runFolder !== null ? { answerSnapshot: (path: string) => answerSnapshotFile(path) } : {}),
  });
  return { plugin, runFolder };
}

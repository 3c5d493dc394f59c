/**
 * The fit measuring loop: runs the user's command for a few steps at one batch size after another under
 * the supervisor (peak of the process tree's GPU memory, OOM detection, the companion's caught OOMs) and lets
 * the fit planner in core/fit choose the next batch. Every batch reported was run.
 */
import { Writable } from 'node:stream';
import { GpumemError } from '../core/errors.js';
import { DEFAULT_FIT_OPTIONS, planFit, type Measurement } from '../core/fit/planner.js';
import { buildFitReport, type FitReport } from '../core/fit/report.js';
import type { GpuSource } from '../sources/index.js';
import { companionPlugin, superviseRun } from '../supervise/index.js';

export interface FitLoopOptions {
  /** The command, with {batch} and {steps} placeholders. */
  argv: string[];
  steps: number;
  /** Share of the GPU's free memory at the start a run may peak at, in percent (0, 100]. */
  fillPct: number;
  /** One GPU, by index or UUID. */
  gpus: string;
  /** Supervisor sampling interval. */
  intervalMs: number;
  /** false runs without the Python companion (no count of OOMs the program catches itself). */
  companion: boolean;
  probes: [number, number];
  maxBatch: number;
  maxRuns: number;
  /** Bound on each run: a command that ignores {steps} is ended (TERM, then KILL) and fit stops. */
  runTimeoutMs: number;
  effectiveBatch: number | null;
  source: GpuSource;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Told before each run starts (a progress line). */
  onRun?: (batch: number, steps: number) => void;
}

/** Discards the child's output: probe runs are not the user's training, only their memory matters. */
const sink = (): Writable => new Writable({ write: (_c, _e, done) => done() });

/**
 * Finds the largest batch that fits on the chosen GPU by measuring runs. Throws BAD_OPTION_VALUE for a GPU
 * that is not there and FAILED when the GPU does not report free memory.
 */
export async function runFitLoop(o: FitLoopOptions): Promise<FitReport> {
  const sample = await o.source.readSample();
  const index = /^\d+$/.test(o.gpus) ? Number(o.gpus) : null;
  const device = sample.devices.find((d) => (index === null ? d.uuid === o.gpus : d.index === index));
  if (!device) throw new GpumemError('BAD_OPTION_VALUE', `--gpus: no GPU "${o.gpus}"`, { hint: `fit measures on one GPU; present: ${sample.devices.map((d) => d.index).join(', ') || 'none'}` });
  const free = device.memory.freeBytes;
  if (free === null) throw new GpumemError('FAILED', `GPU ${device.index} does not report free memory`, { hint: 'try --source smi' });
  const targetBytes = Math.floor((free * o.fillPct) / 100);
  const withSteps = o.argv.map((a) => a.replaceAll('{steps}', String(o.steps)));
  const measure = async (batch: number): Promise<Measurement> => {
    o.onRun?.(batch, o.steps);
    const limit = new AbortController();
    const timer = setTimeout(() => limit.abort('SIGTERM'), o.runTimeoutMs);
    const report = await superviseRun({
      signal: limit.signal,
      argv: withSteps, source: o.source, cwd: o.cwd, env: o.env, gpus: o.gpus, batch, accum: 1, retryOom: 0, subreaper: true,
      extraEnv: { GPUMEM_STEPS: String(o.steps) }, intervalMs: o.intervalMs,
      graceMs: 2000, cleanupTimeoutMs: 10000, stdout: sink(), stderr: sink(), log: () => undefined,
      // Statistics only at the end: the companion is here to count OOMs the program catches itself.
      plugins: o.companion ? [companionPlugin({ rateHz: 0 })] : [],
    }).finally(() => clearTimeout(timer));
    if (limit.signal.aborted) {
      throw new GpumemError('TIMEOUT', `the run at batch ${batch} did not finish ${o.steps} steps within ${Math.round(o.runTimeoutMs / 1000)} s; it was ended`, {
        hint: 'the command must stop after {steps} steps (or GPUMEM_STEPS); or raise --run-timeout',
        details: { batch },
      });
    }
    // A program that cannot start will not start with another batch either.
    if (report.startError !== null) throw new GpumemError(report.exit.code === 127 ? 'PROGRAM_NOT_FOUND' : 'PROGRAM_NOT_EXECUTABLE', report.startError, { hint: 'check the program name and PATH' });
    const attempt = report.attempts[report.attempts.length - 1];
    const companion = attempt?.plugins.companion;
    const caught = (companion?.gpus ?? []).some((g) => (g.numOoms ?? 0) > 0);
    const oom = (attempt?.ooms.length ?? 0) > 0 || caught;
    const peaks = report.peaks.filter((p) => p.uuid === device.uuid);
    const peakBytes = peaks.length > 0 ? Math.max(...peaks.map((p) => p.peakBytes)) : null;
    return { ok: report.exit.code === 0 && !oom, oom, peakBytes: peakBytes === 0 && report.exit.code !== 0 ? null : peakBytes };
  };
  const result = await planFit(measure, { ...DEFAULT_FIT_OPTIONS, targetBytes, probes: o.probes, maxBatch: o.maxBatch, maxRuns: o.maxRuns });
  return buildFitReport(result, { argv: o.argv, steps: o.steps, freeBytesAtStart: free, targetFill: o.fillPct / 100, effectiveBatch: o.effectiveBatch });
}

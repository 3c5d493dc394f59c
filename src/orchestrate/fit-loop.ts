/**
 * The fit measuring loop: runs the user's command for a few steps at one batch size after another under
 * the supervisor (peak of the process tree's GPU memory, OOM detection, the companion's caught OOMs) and lets
 * the fit planner in core/fit choose the next batch. Every batch reported was run.
 */
import { Writable } from 'node:stream';
import { GpumemError } from '../core/errors.js';
import { DEFAULT_FIT_OPTIONS, planFit, type Measurement } from '../core/fit/planner.js';
import { buildFitReport, type FitGpu, type FitReport } from '../core/fit/report.js';
import type { Sample } from '../core/types.js';
import type { GpuSource } from '../sources/index.js';
import { companionPlugin, superviseRun } from '../supervise/index.js';

export interface FitLoopOptions {
  /** The command, with {batch} and {steps} placeholders. */
  argv: string[];
  steps: number;
  /** Share of the GPU's free memory at the start a run may peak at, in percent (0, 100]. */
  fillPct: number;
  /** One GPU, by index or UUID; with worldSize N > 1, N of them, comma-separated, one per rank. */
  gpus: string;
  /** Ranks of the job the command launches (torchrun --nproc-per-node N …); 1 for one process. */
  worldSize: number;
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
  const gpus = chosenGpus(sample.devices, o.gpus, o.worldSize, o.fillPct);
  // Every rank runs the same batch, so the run fits when each GPU stays under its own target: the GPU with the
  // least headroom decides. Measured against the smallest target, a run's peak is that target plus the worst
  // overshoot of any GPU (exactly the peak itself when all GPUs are alike).
  const targetBytes = Math.min(...gpus.map((g) => g.targetBytes));
  const free = Math.min(...gpus.map((g) => g.freeBytesAtStart));
  const perGpuPeaks = new Map<number, Array<number | null>>();
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
    const peaks = gpus.map((g) => {
      const on = report.peaks.filter((p) => p.uuid === g.uuid);
      return on.length > 0 ? Math.max(...on.map((p) => p.peakBytes)) : null;
    });
    perGpuPeaks.set(batch, peaks);
    const known = gpus.flatMap((g, i) => (peaks[i] === null || peaks[i] === undefined ? [] : [peaks[i]! - g.targetBytes]));
    const peakBytes = known.length > 0 ? targetBytes + Math.max(...known) : null;
    return { ok: report.exit.code === 0 && !oom, oom, peakBytes: peakBytes === targetBytes && report.exit.code !== 0 ? null : peakBytes };
  };
  const result = await planFit(measure, { ...DEFAULT_FIT_OPTIONS, targetBytes, probes: o.probes, maxBatch: o.maxBatch, maxRuns: o.maxRuns });
  return buildFitReport(result, {
    argv: o.argv, steps: o.steps, freeBytesAtStart: free, targetFill: o.fillPct / 100, effectiveBatch: o.effectiveBatch,
    worldSize: o.worldSize, gpus, perGpuPeaks,
  });
}

/** The GPUs the ranks run on, one per rank, each with its free memory and target; throws for a bad --gpus. */
function chosenGpus(devices: Sample['devices'], text: string, worldSize: number, fillPct: number): FitGpu[] {
  const wanted = worldSize > 1 ? text.split(',').map((t) => t.trim()).filter((t) => t !== '') : [text];
  const present = devices.map((d) => d.index).join(', ') || 'none';
  if (wanted.length !== worldSize) {
    throw new GpumemError('BAD_OPTION_VALUE', `--gpus: --world-size ${worldSize} needs ${worldSize} GPUs, one per rank; got ${wanted.length}`, { hint: `e.g. --gpus ${Array.from({ length: worldSize }, (_, i) => i).join(',')}; present: ${present}` });
  }
  if (new Set(wanted).size !== wanted.length) {
    throw new GpumemError('BAD_OPTION_VALUE', `--gpus: "${text}" names a GPU twice`, { hint: 'one GPU per rank: the driver reports memory per GPU, and ranks sharing one would be measured together' });
  }
  return wanted.map((w) => {
    const index = /^\d+$/.test(w) ? Number(w) : null;
    const device = devices.find((d) => (index === null ? d.uuid === w : d.index === index));
    if (!device) throw new GpumemError('BAD_OPTION_VALUE', `--gpus: no GPU "${w}"`, { hint: `${worldSize > 1 ? 'one GPU per rank' : 'fit measures on one GPU'}; present: ${present}` });
    const free = device.memory.freeBytes;
    if (free === null) throw new GpumemError('FAILED', `GPU ${device.index} does not report free memory`, { hint: 'try --source smi' });
    return { index: device.index, uuid: device.uuid, freeBytesAtStart: free, targetBytes: Math.floor((free * fillPct) / 100) };
  });
}

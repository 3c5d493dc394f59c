/**
 * Runs a validated pipeline: a status check of every stage's GPUs before the first stage, then each stage
 * under `superviseRun`, and between stages the cleanup check — no process of the stage left and memory on
 * its GPUs back to the pre-stage level within the tolerance — before the next stage may start.
 */
import { PIPELINE_SCHEMA_VERSION } from '../../core/documents/pipeline.js';
import { GpumemError } from '../../core/errors.js';
import { formatBytes } from '../../core/units.js';
import { printable } from '../../core/text.js';
import type { Sample } from '../../core/types.js';
import type { GpuSource } from '../../sources/index.js';
import { chooseGpus } from '../gpus.js';
import type { SuperviseOptions } from '../options.js';
import type { RunReport } from '../report.js';
import { superviseRun } from '../run.js';
import type { PipelineSpec, StageSpec } from './parse.js';

export { PIPELINE_SCHEMA_VERSION };

export interface StageCheck {
  /** Processes of the stage still running after cleanup (should be none). */
  leftoverPids: number[];
  /** Per chosen GPU: used bytes before the stage and after its cleanup. */
  gpus: Array<{ index: number; uuid: string; beforeBytes: number | null; afterBytes: number | null; deltaBytes: number | null }>;
  passed: boolean;
  reason: string | null;
}

export interface StageReport {
  name: string;
  status: 'ok' | 'failed' | 'cleanup-failed' | 'skipped' | 'not-run';
  run: RunReport | null;
  check: StageCheck | null;
  runId: number | null;
}

export interface PipelineReport {
  schemaVersion: typeof PIPELINE_SCHEMA_VERSION;
  name: string;
  file: string;
  startedAtMs: number;
  durationMs: number;
  toleranceBytes: number;
  status: 'ok' | 'failed';
  stages: StageReport[];
  /** Exit of the stage that ended the pipeline (the last one run). */
  exit: { code: number | null; signal: NodeJS.Signals | null };
}

export interface PipelineOptions {
  spec: PipelineSpec;
  file: string;
  source: GpuSource;
  from?: string;
  /** Overrides the file's default GPUs (stages naming their own keep them). */
  gpus?: string;
  toleranceBytes: number;
  /** Options passed to every stage's superviseRun (streams, env, grace, signals…). */
  run: Omit<SuperviseOptions, 'argv' | 'source' | 'gpus' | 'batch' | 'accum' | 'retryOom' | 'extraEnv'>;
  log: (line: string) => void;
  /** Called once every stage's GPUs resolved, before the first stage: the place to record the pipeline. */
  onReady?: () => void;
  /**
   * History hooks: a stage starting (returns its run id) and ending — after its cleanup check, whose verdict
   * comes along (null when the stage failed and there was nothing to check).
   */
  onStageStart?: (stage: StageSpec) => number | null;
  onStageEnd?: (runId: number | null, report: RunReport, check: StageCheck | null) => void;
  now?: () => number;
}

function usedOf(sample: Sample, uuid: string): number | null {
  return sample.devices.find((d) => d.uuid === uuid)?.memory.usedBytes ?? null;
}

/**
 * Resolves each stage's GPUs against a sample (the `--gpus` override applies to stages that do not name
 * their own), so that a bad index in the last stage fails before the first runs; also `pipeline --check`.
 */
export function resolveStageGpus(stages: StageSpec[], sample: Sample, override: string | undefined, fileDefault: string | undefined): Array<string | undefined> {
  return stages.map((s) => {
    const spec = s.gpus !== fileDefault ? s.gpus : override ?? s.gpus;
    try {
      chooseGpus(spec, sample);
    } catch (error) {
      throw new GpumemError('INPUT_MALFORMED', `stage "${s.name}" (line ${s.line}): ${(error as Error).message}`, { hint: (error as GpumemError).hint, cause: error });
    }
    return spec;
  });
}

/** Runs the pipeline and returns its report; stops at the first failed stage or failed cleanup check. */
export async function runPipeline(o: PipelineOptions): Promise<PipelineReport> {
  const now = o.now ?? Date.now;
  const startedAtMs = now();
  const { stages } = o.spec;
  const start = o.from === undefined ? 0 : stages.findIndex((s) => s.name === o.from);
  if (start < 0) {
    throw new GpumemError('BAD_OPTION_VALUE', `--from: no stage "${o.from}"`, { hint: `stages: ${stages.map((s) => s.name).join(', ')}` });
  }
  const first = await o.source.readSample();
  const gpuSpecs = resolveStageGpus(stages, first, o.gpus, o.spec.gpus);
  o.onReady?.();
  for (const d of first.devices) {
    const procs = first.processes.filter((p) => p.gpuUuid === d.uuid);
    o.log(`status GPU ${d.index}: ${formatBytes(d.memory.usedBytes)} used of ${formatBytes(d.memory.totalBytes)}, ${procs.length} process(es)${procs.length > 0 ? `: ${procs.map((p) => `pid ${p.pid} ${formatBytes(p.usedBytes)}`).join(', ')}` : ''}`);
  }
  const reports: StageReport[] = stages.map((s, i) => ({ name: s.name, status: i < start ? 'skipped' : 'not-run', run: null, check: null, runId: null }));
  let exit: PipelineReport['exit'] = { code: 0, signal: null };
  let status: PipelineReport['status'] = 'ok';
  for (let i = start; i < stages.length; i++) {
    const stage = stages[i] as StageSpec;
    const entry = reports[i] as StageReport;
    o.log(`stage ${i + 1}/${stages.length} "${printable(stage.name)}": ${printable(stage.argv.join(' '))}`);
    const before = await o.source.readSample();
    entry.runId = o.onStageStart?.(stage) ?? null;
    const run = await superviseRun({
      ...o.run, argv: stage.argv, source: o.source, gpus: gpuSpecs[i], batch: stage.batch, accum: stage.accum,
      retryOom: stage.retryOom, extraEnv: stage.env,
    });
    entry.run = run;
    exit = run.exit;
    if (run.exit.code !== 0 || run.exit.signal) {
      o.onStageEnd?.(entry.runId, run, null);
      entry.status = 'failed';
      status = 'failed';
      o.log(`stage "${printable(stage.name)}" failed (${run.exit.signal ?? `exit ${run.exit.code}`}); later stages not run`);
      break;
    }
    const after = await o.source.readSample();
    const last = run.attempts[run.attempts.length - 1];
    const unended = (last?.cleanup.leftovers ?? []).filter((l) => l.outcome === 'skipped' || l.outcome === 'failed').map((l) => l.pid);
    const leftoverPids = [...new Set([...unended, ...(last?.cleanup.survivors ?? []).map((l) => l.pid)])];
    const uuids = run.gpus?.map((g) => g.uuid) ?? before.devices.map((d) => d.uuid).filter((u): u is string => u !== null);
    const gpus = uuids.map((uuid) => {
      const b = usedOf(before, uuid);
      const a = usedOf(after, uuid);
      return { index: after.devices.find((d) => d.uuid === uuid)?.index ?? -1, uuid, beforeBytes: b, afterBytes: a, deltaBytes: a === null || b === null ? null : a - b };
    });
    const over = gpus.filter((g) => g.deltaBytes === null || g.deltaBytes > o.toleranceBytes);
    const reasons: string[] = [];
    if (leftoverPids.length > 0) reasons.push(`processes of the stage could not be ended: ${leftoverPids.join(', ')}`);
    if (last && !last.cleanup.memoryReleased) reasons.push('the stage\'s processes still held GPU memory');
    for (const g of over) {
      reasons.push(g.deltaBytes === null ? `GPU ${g.index}: memory unreadable` : `GPU ${g.index}: ${formatBytes(g.deltaBytes)} more used than before the stage (tolerance ${formatBytes(o.toleranceBytes)})`);
    }
    entry.check = { leftoverPids, gpus, passed: reasons.length === 0, reason: reasons.length > 0 ? reasons.join('; ') : null };
    o.onStageEnd?.(entry.runId, run, entry.check);
    if (reasons.length > 0) {
      entry.status = 'cleanup-failed';
      status = 'failed';
      o.log(`cleanup check after "${printable(stage.name)}" failed: ${reasons.join('; ')}; later stages not run`);
      break;
    }
    entry.status = 'ok';
    o.log(`cleanup check after "${printable(stage.name)}" passed: ${gpus.map((g) => `GPU ${g.index} ${formatBytes(g.afterBytes)} used (was ${formatBytes(g.beforeBytes)})`).join(', ')}`);
  }
  return {
    schemaVersion: PIPELINE_SCHEMA_VERSION, name: o.spec.name, file: o.file, startedAtMs, durationMs: now() - startedAtMs,
    toleranceBytes: o.toleranceBytes, status, stages: reports, exit,
  };
}

/**
 * The report of a supervised run, as returned by `superviseRun`, printed by `gpumem run`, stored in the
 * history and emitted by `gpumem run --json` (documented in docs/run.md; bump RUN_SCHEMA_VERSION on any
 * incompatible change). All sizes are integer bytes; times are milliseconds.
 */
import type { AllocatorAtOom } from '../companion/oom-event.js';
import type { CompanionReport } from '../companion/report.js';
import type { Cause, OomEvent } from '../oom/types.js';
import type { GpuUtilization, RunFinding } from './utilization.js';

/** One environment variable the supervisor set, merged, kept or unset for the child, and why. */
export interface EnvDecision {
  name: string;
  /** The value the child gets; null when the variable is left unset. */
  value: string | null;
  /** What the user's environment had. */
  previous: string | null;
  action: 'set' | 'merged' | 'kept' | 'unset';
  reason: string;
}

/** The batch size and gradient-accumulation steps of one attempt. */
export interface BatchPlan {
  batch: number;
  accum: number;
}

export const RUN_SCHEMA_VERSION = 1;

export interface GpuRef {
  index: number;
  uuid: string;
  name: string | null;
}

export interface PreflightGpu extends GpuRef {
  totalBytes: number | null;
  freeBytes: number | null;
  usedBytes: number | null;
  /** Processes already on the GPU before the run (pid, bytes or null when the driver does not say). */
  otherProcesses: Array<{ pid: number; usedBytes: number | null; name: string | null }>;
}

export interface GpuPeak extends GpuRef {
  /** Largest sum of the tree's processes' memory on this GPU in any one sample. */
  peakBytes: number;
  /** Ms since the attempt started when the peak was seen. */
  atMs: number;
  /** True when the GPU was chosen (or no choice was made). */
  chosen: boolean;
  /** Samples in which a tree process on this GPU reported no memory figure (null from the driver). */
  unknownSamples: number;
}

export interface DeviceMismatch extends GpuRef {
  pid: number;
  comm: string | null;
  usedBytes: number | null;
  /** Ms since the attempt started when it was first seen. */
  firstSeenMs: number;
}

/** A process outside the run (not in its tree, not on the GPU before it) seen holding memory on a chosen GPU. */
export interface AppearedProcess extends GpuRef {
  pid: number;
  /** The driver's process name, when it gives one. */
  processName: string | null;
  maxUsedBytes: number | null;
  firstSeenMs: number;
}

export interface OomFinding {
  /** Line number in the child's combined output (1-based). */
  line: number;
  /** The OOM message line as printed. */
  text: string;
  /** The explain parser's event: exact numbers as bigints, written out only by renderers and the store. */
  event: OomEvent;
  /** Ranked causes for the event, best first. */
  causes: Cause[];
  /** The allocator's numbers at that instant, when the PyTorch companion captured the same OOM. */
  allocator?: AllocatorAtOom;
}

/** Data run plugins attach to an attempt, by plugin name; the companion's is typed. */
export interface AttemptPlugins {
  companion?: CompanionReport;
  [name: string]: unknown;
}

export interface ProcessOutcome {
  pid: number;
  comm: string | null;
  cmdline: string[] | null;
  /** GPU memory it held when found (sum over GPUs), null when unknown or none reported. */
  gpuBytes: number | null;
  outcome: 'exited' | 'terminated' | 'killed' | 'skipped' | 'failed';
  detail: string;
}

export interface CleanupReport {
  /** Processes of the tree still running after the child exited. */
  leftovers: ProcessOutcome[];
  /** True when no tree process held GPU memory by the end of the bounded wait. */
  memoryReleased: boolean;
  waitedMs: number;
  /** Memory on a GPU that no process accounts for and was not there before the run, beyond the tolerance. */
  heldByNothing: Array<GpuRef & { bytes: number }>;
  toleranceBytes: number;
  /**
   * Processes of the run still running when cleanup gave up (bounded rounds and time): the cleanup failed.
   * Absent in reports stored before it existed.
   */
  survivors?: ProcessOutcome[];
  /** Rounds of scan-and-end it took (0: nothing was left); absent in older reports. */
  rounds?: number;
  /** Leftovers ended but not listed (past the first 256); absent when none. */
  leftoversNotListed?: number;
}

/**
 * Why a cleanup failed, one reason each, or an empty list when it passed: a process of the run survived it,
 * or the run's processes still held GPU memory at the end of the bounded wait.
 */
export function cleanupProblems(c: CleanupReport): string[] {
  const out: string[] = [];
  const survivors = c.survivors ?? [];
  if (survivors.length > 0) {
    const pids = survivors.slice(0, 10).map((s) => s.pid).join(', ');
    out.push(`${survivors.length} process${survivors.length === 1 ? '' : 'es'} of the run still running (pid ${pids}${survivors.length > 10 ? ', …' : ''})`);
  }
  if (!c.memoryReleased) out.push('the run\'s processes still held GPU memory');
  return out;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AttemptReport {
  attempt: number;
  argv: string[];
  batch: BatchPlan | null;
  startedAtMs: number;
  durationMs: number;
  exit: ChildExit;
  /** Sampling rate achieved (samples per second over the attempt). */
  sampleHz: number;
  samples: number;
  peaks: GpuPeak[];
  mismatches: DeviceMismatch[];
  /** OOMs found in the child's output: the first 64 of the attempt. */
  ooms: OomFinding[];
  /** OOMs found in the output after the first 64: counted, not kept (absent in older reports = 0). */
  oomsNotKept?: number;
  cleanup: CleanupReport;
  /** Signal gpumem received and forwarded, if any. */
  interruptedBy: NodeJS.Signals | null;
  /** Data returned by plugins (keyed by plugin name). */
  plugins: AttemptPlugins;
  /** The last `tailBytes` (default 16 KiB) of the child's combined output, for the report and history. */
  outputTail: string;
  /** Downsampled timeline of the tree's memory per GPU uuid (≤ 300 points). */
  timeline: Array<{ tMs: number; bytes: Record<string, number> }>;
  /** Per GPU the run used: device and the run's SM utilization over time (absent in older reports). */
  utilization?: GpuUtilization[];
  /** Findings drawn from the attempt's own measurements, each with numbers and a fix (absent in older reports). */
  findings?: RunFinding[];
  /** Processes outside the run that appeared holding memory on its GPUs (absent in older reports). */
  appeared?: AppearedProcess[];
  /** Why the program could not be started (exit 127 or 126); absent when it ran. */
  startError?: string;
}

export interface RunReport {
  schemaVersion: typeof RUN_SCHEMA_VERSION;
  argv: string[];
  cwd: string;
  startedAtMs: number;
  durationMs: number;
  gpus: GpuRef[] | null;
  gpuReason: string | null;
  env: EnvDecision[];
  preflight: PreflightGpu[];
  attempts: AttemptReport[];
  /** Number of OOM retries made (attempts − 1 when every retry was for OOM). */
  retries: number;
  retryNote: string | null;
  /** The last attempt's exit; this is what gpumem exits with. */
  exit: ChildExit;
  /** Convenience: max over attempts of each GPU's peak. */
  peaks: GpuPeak[];
  /** Why the program could not be started (then `exit.code` is 127 or 126); null when it ran. */
  startError: string | null;
}

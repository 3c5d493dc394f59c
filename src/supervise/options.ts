/**
 * Options of `superviseRun` and the plugin hook. A plugin (the PyTorch companion, the fit prober) can add
 * environment variables before each attempt's spawn, see every monitor tick, and attach its own data to
 * the attempt's report — without the supervisor knowing what it does.
 */
import { GpumemError } from '../core/errors.js';
import type { GpuSource } from '../sources/index.js';
import type { MonitorTick } from './monitor.js';
import type { FreeRequirement } from './preflight.js';
import type { ChildExit, OomFinding } from './report.js';
import type { BatchPlan } from './retry.js';

export interface AttemptContext {
  attempt: number;
  batch: BatchPlan | null;
  /** The child's environment as planned so far (read-only view). */
  env: Readonly<Record<string, string>>;
  /** The child's pid; only set for onSpawn/afterAttempt. */
  pid?: number;
  /**
   * Whether `pid` is or was a process of this attempt's tree as its scans found it (workers, ranks, the child):
   * true still after the process exited. Only set for onSpawn/onTick/afterAttempt.
   */
  wasRunProcess?: (pid: number) => boolean;
}

export interface RunPlugin {
  /** Key of this plugin's data in `AttemptReport.plugins`. */
  name: string;
  /** Before spawn: variables to add to the child's environment (recorded as env decisions of this plugin). */
  beforeSpawn?(ctx: AttemptContext): Promise<Record<string, string> | void> | Record<string, string> | void;
  /** Right after spawn. */
  onSpawn?(ctx: AttemptContext): void;
  /** Every monitor sample while the attempt runs. */
  onTick?(tick: MonitorTick, ctx: AttemptContext): void;
  /**
   * After the attempt and its cleanup: whatever is returned is stored under `plugins[name]`. `ooms` are the
   * attempt's OOM findings from the output; a plugin may add facts to them (the companion attaches the
   * allocator's numbers) but not remove any.
   */
  afterAttempt?(ctx: AttemptContext & { exit: ChildExit; ooms?: OomFinding[] }): Promise<unknown> | unknown;
}

export interface SuperviseOptions {
  /** The command and its arguments; may contain `{batch}` and `{accum}`. */
  argv: string[];
  /** Where GPU state comes from (opened by the caller; not closed here). */
  source: GpuSource;
  /** `--gpus` text: "2", "0,1", UUIDs, "auto", "auto:2"; undefined = no pinning. */
  gpus?: string;
  /** False = leave PYTORCH_CUDA_ALLOC_CONF alone (--no-alloc-conf). Default true. */
  allocConf?: boolean;
  requireFree?: FreeRequirement | null;
  /** gpumem's own environment, the base of the child's. Default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Variables added on top (pipeline stage env). */
  extraEnv?: Record<string, string>;
  cwd?: string;
  batch?: number;
  accum?: number;
  /** OOM retries allowed (0 = none). */
  retryOom?: number;
  /** Sampling interval; default 100 ms (10 Hz). */
  intervalMs?: number;
  /** Grace between signal escalation steps, and for leftovers between TERM and KILL. Default 5000 ms. */
  graceMs?: number;
  /** How long workers may take to exit on their own after the child. Default 1000 ms. */
  settleMs?: number;
  /** Bound on waiting for GPU memory release after the child exits. Default 10000 ms. */
  cleanupTimeoutMs?: number;
  /** Memory held by nothing below this is not reported. Default 64 MiB. */
  toleranceBytes?: number;
  /** Output tail kept per attempt. Default 16 KiB. */
  tailBytes?: number;
  /** Where the child's output goes. Default process.stdout / process.stderr. */
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /** gpumem's own messages (environment decisions, warnings, retries), one line each. */
  log?: (line: string) => void;
  /** Install SIGINT/SIGTERM/SIGHUP handlers on this process for the duration and forward them. */
  forwardSignals?: boolean;
  /** Aborting interrupts the child like SIGTERM would (`abort('SIGINT')`: like Ctrl-C). */
  signal?: AbortSignal;
  plugins?: RunPlugin[];
  /** Make gpumem a child subreaper (Linux prctl), so orphans of the run are re-parented to it. The CLI sets it. */
  subreaper?: boolean;
  /** False: no parent-death watchdog (it ends the run's processes if gpumem dies). Default true. */
  watchdog?: boolean;
  /**
   * Called once the run is accepted (GPUs resolved, pre-flight passed), right before the first spawn:
   * the place to record the run, so that a refused one leaves nothing behind. May return more plugins.
   */
  onReady?: () => RunPlugin[] | void;
  now?: () => number;
}

/**
 * Checks a count or duration option: undefined passes (the default applies), anything else must be a whole
 * number ≥ `min`. A zero sampling interval would spin on /proc and a negative grace would skip it, so
 * these are refused as usage errors (exit 2) naming the flag, before anything is started.
 */
export function checkWholeOption(value: number | undefined, flag: string, min: number): void {
  if (value !== undefined && (!Number.isInteger(value) || value < min)) {
    throw new GpumemError('BAD_OPTION_VALUE', `${flag}: "${value}" must be a whole number of at least ${min}`, { hint: `give ${flag} a whole number ≥ ${min}` });
  }
}

/** Refuses nonsensical numeric SuperviseOptions (see checkWholeOption), naming the CLI flag of each. */
export function checkSuperviseNumbers(o: Pick<SuperviseOptions, 'retryOom' | 'intervalMs' | 'graceMs' | 'settleMs' | 'cleanupTimeoutMs'>): void {
  checkWholeOption(o.retryOom, '--retry-oom', 0);
  checkWholeOption(o.intervalMs, '--interval-ms', 1);
  checkWholeOption(o.graceMs, '--grace-ms', 0);
  checkWholeOption(o.settleMs, 'settleMs', 0);
  checkWholeOption(o.cleanupTimeoutMs, '--cleanup-timeout-ms', 0);
}

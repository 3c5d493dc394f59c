/**
 * Types of the diagnosis: what goes in (a window of samples plus what the caller knows about the host) and
 * what comes out (per-GPU accounting, process trees, findings). Everything here is plain data so a report
 * can be printed, serialised to JSON and compared in tests.
 */
import type { LiveCompanionProcess } from '../companion/live.js';
import type { MemorySplit } from '../companion/split.js';
import type { Device, GpuProcess, HostFacts, Sample } from '../types.js';

export type Severity = 'critical' | 'warning' | 'info';

/** Whether host pids resolve here: 'host' (we see every pid), 'container' (NVML's host pids may not resolve). */
export type PidNamespace = 'host' | 'container' | 'unknown';

export interface DiagnoseInput {
  /** The window, oldest first; the last sample is the "now" that accounting describes. At least one. */
  samples: readonly Sample[];
  /** Who runs gpumem, when known (live runs); null for recordings, where "you" has no meaning. */
  viewer: { uid: number; user: string | null } | null;
  pidNamespace: PidNamespace;
  /**
   * /proc facts of processes that hold no GPU memory but matter for trees: the parents and grandparents of GPU
   * processes (launchers, subreapers). Keyed by pid; may be empty (recordings).
   */
  ancestors: Readonly<Record<number, HostFacts>>;
  /**
   * PyTorch allocator statistics of processes a running `gpumem run` supervises (its live companion file),
   * keyed by pid, already checked against /proc (pid and start time). Absent or empty: no split is known.
   */
  companion?: Readonly<Record<number, LiveCompanionProcess>>;
}

/** One (pid, GPU) row of the latest sample with everything derived about it. */
export interface ProcessView {
  row: GpuProcess;
  pid: number;
  /** Index of the GPU the row is on, or null when it could not be matched to a device. */
  gpuIndex: number | null;
  usedBytes: number | null;
  visible: boolean;
  /**
   * The pid no longer exists: not in /proc while gpumem sees the host's pids, or seen earlier in the window
   * and gone now. A pid that is merely not visible (another container) is not gone.
   */
  gone: boolean;
  user: string | null;
  uid: number | null;
  ppid: number | null;
  /** Command line joined by spaces, or the GPU source's process name, or null. */
  command: string | null;
  state: HostFacts['state'];
  /** Time since the process started, at the latest sample. */
  ageMs: number | null;
  /** Utilization of this process over the window (per-process SM %, or the device's when the device sat idle). */
  util: ProcessUtil | null;
  /** Holds about one CUDA context and did no work: typical of DataLoader workers that touched CUDA. */
  contextOnly: boolean;
  role: ProcessRole;
  /**
   * For a rank: the rank its environment names (RANK, else LOCAL_RANK; mp.spawn ranks name none); null for
   * every other role (a worker inherits its rank's environment, which says nothing of the worker). Absent in
   * views built before it existed.
   */
  rank?: number | null;
  /**
   * CPU time the process used between the first and the latest sample that saw it (same start time), in
   * clock ticks; null when unknown (one sample, an older recording, /proc unreadable).
   */
  cpuTicksInWindow?: number | null;
}

export type ProcessRole = 'main' | 'worker' | 'rank' | 'kernel';

export interface ProcessUtil {
  /** Mean SM utilization over the samples that reported it. */
  meanPct: number;
  maxPct: number;
  samples: number;
  /** How long the process has shown 0% up to the latest sample; a lower bound when it was idle all window. */
  idleMs: number;
  /** True when it was idle in every sample of the window (idleMs is then the whole window, a lower bound). */
  idleWholeWindow: boolean;
  /** 'process': the driver's per-process SM %; 'device': the whole GPU was at 0%, so every process on it was idle. */
  basis: 'process' | 'device';
}

export interface ProcessTree {
  /** The root: a launcher (not on any GPU itself) or the topmost GPU process of the tree. */
  rootPid: number;
  rootCommand: string | null;
  /** True when the root holds no GPU memory itself (torchrun, accelerate, deepspeed, mp.spawn parent). */
  launcher: boolean;
  user: string | null;
  pids: number[];
  /** Sum of known memory of the tree's rows, per GPU index ('?' for rows not matched to a device). */
  bytesByGpu: Record<string, number>;
  totalBytes: number;
  /** Pids in the tree whose memory the driver did not report. */
  unknownPids: number[];
}

export interface UserTotal {
  user: string;
  totalBytes: number;
  bytesByGpu: Record<string, number>;
  pids: number[];
}

/**
 * used = visibleBytes + notVisibleBytes + residualBytes, exactly. residualBytes is what no listed process
 * accounts for; it also holds the memory of listed processes whose size is unknown (their pids are in
 * unknownPids), and it is negative when processes report more than the device's used total.
 */
export interface DeviceAccounting {
  gpuIndex: number;
  gpuUuid: string | null;
  name: string | null;
  totalBytes: number | null;
  reservedBytes: number | null;
  usedBytes: number | null;
  freeBytes: number | null;
  visibleBytes: number;
  notVisibleBytes: number;
  /** Null when the device's used total is unknown. */
  residualBytes: number | null;
  unknownPids: number[];
  pids: number[];
  /** What could not be known, in words (e.g. the PyTorch split of processes without companion statistics). */
  unknowns: string[];
  /**
   * PyTorch's split of each process on this GPU that has companion statistics (NVML process total =
   * allocated + cached (reserved − allocated) + non-PyTorch); empty when none has.
   */
  pytorch: MemorySplit[];
}

export interface Evidence {
  /** One line of numbers a person can check against nvidia-smi. */
  summary: string;
  pids: number[];
  gpuIndexes: number[];
  /** The bytes the finding is about, when it is about bytes. */
  bytes: number | null;
  /** Further numbers and facts, machine-readable. */
  details: Record<string, number | string | boolean | null | number[]>;
}

export interface Finding {
  /** Rule id, kebab-case, stable: JSON consumers key on it. */
  id: string;
  severity: Severity;
  title: string;
  evidence: Evidence;
  /** What to do, concrete, with numbers. */
  fix: string;
  /** A command that does it, when there is one. */
  command?: string;
}

/** Everything a rule may look at; computed once per diagnosis. */
export interface RuleContext {
  samples: readonly Sample[];
  latest: Sample;
  devices: readonly Device[];
  processes: readonly ProcessView[];
  trees: readonly ProcessTree[];
  accounting: readonly DeviceAccounting[];
  viewer: DiagnoseInput['viewer'];
  pidNamespace: PidNamespace;
  ancestors: DiagnoseInput['ancestors'];
  /** Span of the window, first to last sample. 0 for a single sample. */
  windowMs: number;
  /** The live companion's processes (DiagnoseInput.companion), empty when none is known. */
  companion: Readonly<Record<number, LiveCompanionProcess>>;
}

/** A rule: pure, one file each, returns zero or more findings. */
export interface Rule {
  id: string;
  /** One sentence for docs: what it looks for. */
  description: string;
  check(ctx: RuleContext): Finding[];
}

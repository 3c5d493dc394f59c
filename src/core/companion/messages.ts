/**
 * The message format of the PyTorch companion channel (documented in docs/companion.md): one JSON object
 * per line, each with `schemaVersion`, `type`, `pid` and `timeMs`. Byte counts are integers; a statistic
 * the running torch does not report is `null`.
 */

/** The version this gpumem reads; a companion speaking a newer one is refused line by line. */
export const COMPANION_SCHEMA_VERSION = 1;

/** `torch.cuda.memory_stats(device)` of one device, in the companion's field names. */
export interface AllocatorStats {
  /** CUDA ordinal as the process sees it (after CUDA_VISIBLE_DEVICES). */
  device: number;
  /** `allocated_bytes.all.current`: bytes in live tensors' blocks (512-byte rounded). */
  allocatedBytes: number | null;
  /** `reserved_bytes.all.current`: bytes of segments PyTorch got from cudaMalloc (allocated + cached). */
  reservedBytes: number | null;
  /** `active_bytes.all.current`: allocated plus blocks freed but waiting on other streams. */
  activeBytes: number | null;
  /** `inactive_split_bytes.all.current`: free pieces of partly used segments (fragmentation). */
  inactiveSplitBytes: number | null;
  /** `requested_bytes.all.current` (torch ≥ 2.0): bytes the program asked for, before rounding. */
  requestedBytes: number | null;
  peakAllocatedBytes: number | null;
  peakReservedBytes: number | null;
  peakActiveBytes: number | null;
  /** `num_alloc_retries`: cudaMalloc failures the allocator recovered from by flushing its cache — a warning sign. */
  numAllocRetries: number | null;
  /** `num_ooms`: out-of-memory errors raised. */
  numOoms: number | null;
}

interface Base {
  schemaVersion: number;
  pid: number;
  /** Wall-clock milliseconds since the epoch, read by the Python side. */
  timeMs: number;
}

export interface HelloMessage extends Base {
  type: 'hello';
  ppid: number | null;
  companionVersion: string;
  torchVersion: string;
  pythonVersion: string;
  /** What the running torch offers, as probed (see docs/companion.md). */
  capabilities: Record<string, unknown>;
  config: {
    rateHz: number | null;
    snapshotDir: string | null;
    snapshotMaxEntries: number | null;
    memoryFraction: number | null;
  };
  /** What the companion could tell about CUDA without initialising it; absent from older companions. */
  cuda: CudaStatus | null;
}

/** The child's CUDA as seen at import, without touching the driver (docs/companion.md). */
export interface CudaStatus {
  /** Whether this torch was built with CUDA; null when it does not say. */
  compiled: boolean | null;
  /** `torch.version.cuda`. */
  cudaVersion: string | null;
  /** CUDA_VISIBLE_DEVICES as the child saw it (null when unset). */
  visibleDevices: string | null;
  /** Whether a driver's files are present (/proc/driver/nvidia, /dev/nvidiactl, /dev/dxg); null when unknown. */
  driverLoaded: boolean | null;
  /** Why this process cannot use CUDA, with the likely cause; null when nothing is known to be wrong. */
  problem: string | null;
}

/** Sent at exit by a process that never initialised CUDA when torch then says it has no usable device. */
export interface CudaMessage extends Base {
  type: 'cuda';
  problem: string;
}

export interface DeviceIdentity {
  device: number;
  /** "GPU-…" as NVML writes it, when this torch exposes device UUIDs. */
  uuid: string | null;
  name: string | null;
  totalBytes: number | null;
}

export interface DevicesMessage extends Base {
  type: 'devices';
  devices: DeviceIdentity[];
}

export interface StatsMessage extends Base {
  type: 'stats';
  seq: number;
  devices: AllocatorStats[];
}

export interface OomMessage extends Base {
  type: 'oom';
  /** "observer": captured inside the allocator at the instant of the OOM; "counter": seen afterwards (torch < 2.0). */
  source: 'observer' | 'counter';
  device: number;
  /** Size of the segment the allocator tried to get (what "Tried to allocate" prints). */
  requestedBytes: number | null;
  /** Device total, or the allowed maximum when a memory fraction is set. */
  deviceLimitBytes: number | null;
  deviceFreeBytes: number | null;
  stats: AllocatorStats | null;
  snapshotPath: string | null;
  snapshotError: string | null;
}

export interface ExceptionMessage extends Base {
  type: 'exception';
  oom: boolean;
  exceptionType: string;
  /** The exception text (the OOM message, readable by the explain parser), at most 8000 characters. */
  message: string;
}

export interface ErrorMessage extends Base {
  type: 'error';
  /** Which feature failed ("oom observer", "memory fraction", …); each is reported once per Python process */
  what: string;
  message: string;
}

/**
 * Cumulative step timing from the DataLoader iterator (docs/companion.md): a step is the time between two
 * successive batch fetches, the data wait the part of it spent inside `__next__`.
 */
export interface StepsMessage extends Base {
  type: 'steps';
  /** Steps completed so far (fetches after the first). */
  steps: number;
  /** Total milliseconds the loop waited inside the DataLoader's `__next__`, over `steps`. */
  dataWaitMs: number;
  /** Total milliseconds of those steps, the waits included. */
  stepMs: number;
  /** Sum of the batches' first dimensions over every fetch. */
  samples: number;
  /** Token ids over every fetch (elements of 2-D integer `input_ids`, padding included); null when no batch showed any; absent from older companions. */
  tokens?: number | null;
  /** The most frequent first dimension of the batches, and the smallest and largest seen; null when none showed one. */
  batchSeen: number | null;
  batchMin: number | null;
  batchMax: number | null;
  /** GPUMEM_BATCH as the child saw it (`gpumem run --batch`), else null. */
  batchAsked: number | null;
  /** What bounds a step: DataLoader fetches, or `optimizer.step()` for loops without a DataLoader (no data wait then); absent from older companions. */
  boundary?: 'dataloader' | 'optimizer' | null;
  /** Settings of the DataLoader the latest batch came from; absent from older companions. */
  loader?: { numWorkers: number | null; pinMemory: boolean | null; persistentWorkers: boolean | null; prefetchFactor: number | null } | null;
  /** CPU cores the process may run on (its affinity); absent from older companions. */
  cpuCount?: number | null;
  /** Host-to-device copies inside the completed steps; absent from older companions or without copy timing. */
  copies?: CopyTotals | null;
  /** Synchronising calls inside the completed steps; absent from older companions or without copy timing. */
  syncs?: SyncTotals | null;
  /** GPU time per phase from CUDA events over the timed steps; null without CUDA or the optimizer hooks. */
  compute?: ComputeTotals | null;
}

/**
 * GPU time per phase, from CUDA events recorded in one step of every `everySteps`: forward (step start or the
 * previous backward's end → backward start, so it includes the batch's copy), `Tensor.backward`, and
 * `optimizer.step()`; totals and how many of each were read.
 */
export interface ComputeTotals {
  forwardMs: number;
  forwardCount: number;
  backwardMs: number;
  backwardCount: number;
  optimizerMs: number;
  optimizerCount: number;
  everySteps: number;
  /** Timed pairs dropped unread because the GPU lagged too far behind. */
  dropped: number;
}

/** Host-to-device copies (`Tensor.to`/`.cuda` from the CPU to a CUDA device), totals over the completed steps. */
export interface CopyTotals {
  count: number;
  bytes: number;
  /** Host wall time inside the copy calls. */
  ms: number;
  /** Copies the host waited for: a pageable (unpinned) source, or `non_blocking` not asked for. */
  blockingCount: number;
  blockingBytes: number;
  blockingMs: number;
  /** Bytes copied from pageable memory (blocking whatever `non_blocking` said). */
  pageableBytes: number;
}

/** Calls that make the host wait for the GPU (`.item()`, `.cpu()`, `.tolist()`, `torch.cuda.synchronize()`). */
export interface SyncTotals {
  /** Completed steps with at least one such call. */
  steps: number;
  /** Per kind ("item", "cpu", "tolist", "synchronize"): calls and host ms spent in them. */
  byKind: Record<string, { count: number; ms: number }>;
}

/**
 * Per-step memory of the training loop (docs/companion.md, "Step memory"): for consecutive steps from
 * `firstStep` on one device, what each step left allocated at its end, its peaks (the allocator's peaks, reset
 * at every step boundary) and the reserved bytes at its end. The four lists have one entry per step.
 */
export interface MemoryMessage extends Base {
  type: 'memory';
  device: number;
  /** What ends a step: `optimizer.step()` returning (torch ≥ 2.0), else the next DataLoader fetch. */
  boundary: 'optimizer' | 'dataloader';
  /** 1-based number of the first step listed. */
  firstStep: number;
  /** `allocated_bytes.all.current` at the step's end: what the step left behind. */
  leftBytes: number[];
  /** `allocated_bytes.all.peak` over the step. */
  peakAllocatedBytes: number[];
  /** `reserved_bytes.all.current` at the step's end. */
  reservedBytes: number[];
  /** `reserved_bytes.all.peak` over the step. */
  peakReservedBytes: number[];
  /** Records the companion could not keep so far (more steps between two sends than it holds). */
  dropped: number;
}

/**
 * What grows (docs/training-loop.md): the allocation sites whose live bytes rose between two allocator snapshots
 * the companion took at steps `fromStep` and `toStep` (powers of two, only while allocation history is recorded),
 * sent when what the steps left behind rose between them too.
 */
export interface SitesMessage extends Base {
  type: 'sites';
  device: number;
  fromStep: number;
  toStep: number;
  /** How much more the step at `toStep` left allocated than the one at `fromStep`. */
  leftGrewBytes: number;
  /** Largest rise first, at most 5: "file:line in function" of the innermost frame outside torch. */
  sites: Array<{ site: string; bytes: number; blocks: number }>;
}

/**
 * Which rank of a distributed job the process is: from the environment its launcher gave it (RANK,
 * LOCAL_RANK, WORLD_SIZE; sent at start), or from `torch.distributed` once the process group exists (sent
 * right after `init_process_group`; the only source for `mp.spawn` ranks). A field the source does not know is null.
 */
export interface RankMessage extends Base {
  type: 'rank';
  source: 'env' | 'torch.distributed';
  rank: number | null;
  localRank: number | null;
  worldSize: number | null;
  /** The process group's backend ("nccl", "gloo", …); null from the environment. */
  backend: string | null;
}

export interface ByeMessage extends Base {
  type: 'bye';
  /** Messages dropped because the channel was full (gpumem not reading fast enough). */
  dropped: number;
}

export type CompanionMessage =
  | HelloMessage
  | DevicesMessage
  | StatsMessage
  | OomMessage
  | ExceptionMessage
  | ErrorMessage
  | CudaMessage
  | StepsMessage
  | MemoryMessage
  | SitesMessage
  | RankMessage
  | ByeMessage;

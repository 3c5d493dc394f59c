/**
 * Folding the companion's messages into what gpumem shows: per process, the latest allocator statistics
 * per device, the highest peaks seen (peaks survive a `reset_peak_memory_stats` in the program), OOMs,
 * failures of the companion itself, and whether the process said goodbye.
 */
import type { AllocatorStats, CompanionMessage, DeviceIdentity, HelloMessage, MemoryMessage, OomMessage, RankMessage, SitesMessage, StepsMessage } from './messages.js';
import { createStepHistory, foldMemoryMessage, type StepMemoryHistory } from '../forecast/history.js';

export interface CompanionDeviceState {
  device: number;
  /** NVML UUID of this CUDA ordinal, when known (from the companion, or from CUDA_VISIBLE_DEVICES). */
  gpuUuid: string | null;
  latest: AllocatorStats;
  /** Time of `latest` in the Python process, ms since the epoch. */
  latestTimeMs: number;
  /** Highest values seen over the whole run, whatever the program reset in between. */
  maxPeakAllocatedBytes: number | null;
  maxPeakReservedBytes: number | null;
  maxNumAllocRetries: number | null;
}

export interface CompanionProcessState {
  pid: number;
  hello: HelloMessage | null;
  identities: DeviceIdentity[];
  devices: Map<number, CompanionDeviceState>;
  /** The first MAX_KEPT_OOMS OOM reports; the rest are only counted (oomReportsByDevice). */
  ooms: OomMessage[];
  /** Every OOM report received, kept or not, per CUDA device. */
  oomReportsByDevice: Map<number, number>;
  /** OOM reports received but not kept (beyond MAX_KEPT_OOMS): a program that catches OOMs in a loop. */
  oomsNotKept: number;
  /** Uncaught OOM exception texts (for the explain parser), the first MAX_KEPT_OOMS of them. */
  oomExceptions: string[];
  /** Companion failures: feature → message. */
  errors: Map<string, string>;
  ended: boolean;
  droppedMessages: number;
  /** Why this process could not use CUDA (from its hello, or its exit), else null. */
  noCuda: string | null;
  /** The latest cumulative step timing (totals only grow, so the latest holds everything). */
  steps: StepsMessage | null;
  /** Which rank of a distributed job it is: the process group's word once it spoke, else the environment's. */
  rank: RankMessage | null;
  /** Per CUDA device, the per-step memory history (bounded) that the OOM forecast reads. */
  memory: Map<number, StepMemoryHistory>;
  /** Per CUDA device, the latest report of the allocation sites that grew (kept only for a device with a history). */
  sites: Map<number, SitesMessage>;
}

/**
 * How many OOM reports and exception texts one process keeps. A program that catches OOMs in a loop can send
 * hundreds of thousands; the first ones carry the evidence, the rest are counted so memory stays bounded.
 */
export const MAX_KEPT_OOMS = 64;

/** Per-pid companion state of one run. */
export type CompanionState = Map<number, CompanionProcessState>;

/** A fresh, empty state. */
export function createCompanionState(): CompanionState {
  return new Map();
}

function maxOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

function processOf(state: CompanionState, pid: number): CompanionProcessState {
  let p = state.get(pid);
  if (!p) {
    p = {
      pid, hello: null, identities: [], devices: new Map(), ooms: [], oomReportsByDevice: new Map(), oomsNotKept: 0, oomExceptions: [],
      errors: new Map(), ended: false, droppedMessages: 0, noCuda: null, steps: null, rank: null, memory: new Map(), sites: new Map(),
    };
    state.set(pid, p);
  }
  return p;
}

/**
 * Maps CUDA ordinals to NVML UUIDs: the companion's own report wins; otherwise the n-th entry of
 * CUDA_VISIBLE_DEVICES when it lists UUIDs (gpumem run pins GPUs that way); otherwise null.
 */
export function uuidForOrdinal(device: number, identities: readonly DeviceIdentity[], cudaVisibleDevices: string | null): string | null {
  const own = identities.find((d) => d.device === device)?.uuid;
  if (own) return own;
  const listed = (cudaVisibleDevices ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')[device];
  return listed !== undefined && /^(GPU|MIG)-/.test(listed) ? listed : null;
}

function updateStats(p: CompanionProcessState, s: AllocatorStats, timeMs: number, cudaVisibleDevices: string | null): void {
  const prev = p.devices.get(s.device);
  // An OOM report can arrive after a later periodic sample; it still counts for the maxima, not as latest.
  const newer = !prev || timeMs >= prev.latestTimeMs;
  p.devices.set(s.device, {
    device: s.device,
    gpuUuid: uuidForOrdinal(s.device, p.identities, cudaVisibleDevices),
    latest: newer || !prev ? s : prev.latest,
    latestTimeMs: newer || !prev ? timeMs : prev.latestTimeMs,
    maxPeakAllocatedBytes: maxOf(prev?.maxPeakAllocatedBytes ?? null, maxOf(s.peakAllocatedBytes, s.allocatedBytes)),
    maxPeakReservedBytes: maxOf(prev?.maxPeakReservedBytes ?? null, maxOf(s.peakReservedBytes, s.reservedBytes)),
    maxNumAllocRetries: maxOf(prev?.maxNumAllocRetries ?? null, s.numAllocRetries),
  });
}

function foldMemory(p: CompanionProcessState, m: MemoryMessage): void {
  let h = p.memory.get(m.device);
  if (!h) {
    h = createStepHistory(m.device, m.boundary);
    p.memory.set(m.device, h);
  }
  foldMemoryMessage(h, m);
  // The companion resets the allocator's peaks every step, so the sampled peaks may miss a step's top; these do not.
  const d = p.devices.get(m.device);
  if (d) {
    d.maxPeakAllocatedBytes = maxOf(d.maxPeakAllocatedBytes, h.maxPeakAllocatedBytes);
    d.maxPeakReservedBytes = maxOf(d.maxPeakReservedBytes, h.maxPeakReservedBytes);
  }
}

/**
 * Applies one message to the state (mutating it) and returns it. `cudaVisibleDevices` is the value the
 * child was started with, used to name GPUs when the companion cannot.
 */
export function applyCompanionMessage(state: CompanionState, message: CompanionMessage, cudaVisibleDevices: string | null = null): CompanionState {
  const p = processOf(state, message.pid);
  switch (message.type) {
    case 'hello':
      p.hello = message;
      p.noCuda = message.cuda?.problem ?? p.noCuda;
      break;
    case 'cuda':
      p.noCuda = message.problem;
      break;
    case 'devices':
      p.identities = message.devices;
      for (const d of p.devices.values()) d.gpuUuid = uuidForOrdinal(d.device, p.identities, cudaVisibleDevices);
      break;
    case 'stats':
      for (const s of message.devices) updateStats(p, s, message.timeMs, cudaVisibleDevices);
      break;
    case 'oom':
      p.oomReportsByDevice.set(message.device, (p.oomReportsByDevice.get(message.device) ?? 0) + 1);
      if (p.ooms.length < MAX_KEPT_OOMS) p.ooms.push(message);
      else p.oomsNotKept++;
      if (message.stats) updateStats(p, message.stats, message.timeMs, cudaVisibleDevices);
      break;
    case 'exception':
      if (message.oom && p.oomExceptions.length < MAX_KEPT_OOMS) p.oomExceptions.push(message.message);
      break;
    case 'error':
      p.errors.set(message.what, message.message);
      break;
    case 'steps':
      if (!p.steps || message.steps >= p.steps.steps) p.steps = message;
      break;
    case 'memory':
      foldMemory(p, message);
      break;
    case 'sites':
      if (p.memory.has(message.device)) p.sites.set(message.device, message);
      break;
    case 'rank':
      // The process group knows the rank it communicates as; the environment only what the launcher meant.
      if (message.source === 'torch.distributed' || p.rank?.source !== 'torch.distributed') p.rank = message;
      break;
    case 'bye':
      p.ended = true;
      p.droppedMessages = message.dropped;
      break;
  }
  return state;
}

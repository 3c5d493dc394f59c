/**
 * The live companion file: while `gpumem run` supervises a PyTorch program it publishes the latest
 * allocator statistics of each child process, so `gpumem diagnose` (another process) can split those
 * processes' memory. The file names its supervisor and every child by pid *and* start time, so a file left
 * by a killed supervisor, or a pid the kernel has since reused, is never believed. Documented in
 * docs/diagnose.md. This module only builds and validates the document; reading and writing files is the
 * store's job.
 */
import { GpumemError } from '../errors.js';
import type { AllocatorStats } from './messages.js';
import type { CompanionState } from './state.js';
import { summariseSteps, validStepSummary, type StepSummary } from './steps.js';
import type { MemoryForecast } from '../forecast/forecast.js';

export const LIVE_COMPANION_FORMAT = 'gpumem-companion-live';
export const LIVE_COMPANION_SCHEMA_VERSION = 1;

export interface LiveCompanionDevice {
  device: number;
  gpuUuid: string;
  /** When the Python side read these statistics, ms since the epoch. */
  timeMs: number;
  stats: AllocatorStats;
}

export interface LiveCompanionProcess {
  pid: number;
  /** /proc/PID/stat start time (clock ticks since boot) when the supervisor could read it. */
  startTicks: number | null;
  devices: LiveCompanionDevice[];
  /**
   * The process's step timing so far (its latest cumulative `steps` message, summarised), or null when its
   * loop fetched no batch through a DataLoader yet. Absent in files written before step timing existed.
   */
  steps?: StepSummary | null;
  /**
   * The rank of a distributed job the process is, as its companion said (torch.distributed's word over the
   * environment's); absent for a process that named no rank, and in files written before it existed. The only source for mp.spawn ranks.
   */
  rank?: LiveRank | null;
  /**
   * The OOM forecast per CUDA device (docs/training-loop.md), as `gpumem run` last computed it; absent for a
   * process without step records, and in files written before it existed.
   */
  forecast?: MemoryForecast[];
}

/** A rank as the live file carries it. */
export interface LiveRank {
  rank: number | null;
  localRank: number | null;
  worldSize: number | null;
  backend: string | null;
}

export interface LiveCompanionDoc {
  format: typeof LIVE_COMPANION_FORMAT;
  schemaVersion: number;
  supervisorPid: number;
  supervisorStartTicks: number | null;
  updatedAtMs: number;
  processes: LiveCompanionProcess[];
}

/**
 * The document for the current state: every process that still runs (no `bye` yet) with statistics for a
 * GPU whose UUID is known or with step timing. `startTicks` looks a child's start time up (null when unreadable).
 */
export function buildLiveCompanionDoc(
  state: CompanionState,
  supervisor: { pid: number; startTicks: number | null },
  updatedAtMs: number,
  startTicks: (pid: number) => number | null,
  forecastsOf: (pid: number) => MemoryForecast[] = () => [],
): LiveCompanionDoc {
  const processes: LiveCompanionProcess[] = [];
  for (const p of state.values()) {
    if (p.ended) continue;
    const devices = [...p.devices.values()]
      .filter((d) => d.gpuUuid !== null)
      .map((d) => ({ device: d.device, gpuUuid: d.gpuUuid as string, timeMs: d.latestTimeMs, stats: d.latest }));
    const steps = p.steps ? summariseSteps(p.steps) : null;
    const rank = p.rank ? { rank: p.rank.rank, localRank: p.rank.localRank, worldSize: p.rank.worldSize, backend: p.rank.backend } : null;
    const forecast = forecastsOf(p.pid);
    if (devices.length > 0 || steps !== null || rank !== null || forecast.length > 0) {
      processes.push({ pid: p.pid, startTicks: startTicks(p.pid), devices, steps, ...(rank ? { rank } : {}), ...(forecast.length > 0 ? { forecast } : {}) });
    }
  }
  return {
    format: LIVE_COMPANION_FORMAT, schemaVersion: LIVE_COMPANION_SCHEMA_VERSION,
    supervisorPid: supervisor.pid, supervisorStartTicks: supervisor.startTicks, updatedAtMs, processes,
  };
}

const STAT_KEYS = [
  'allocatedBytes', 'reservedBytes', 'activeBytes', 'inactiveSplitBytes', 'requestedBytes',
  'peakAllocatedBytes', 'peakReservedBytes', 'peakActiveBytes', 'numAllocRetries', 'numOoms',
] as const;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isCountOrNull = (v: unknown): boolean => v === null || isCount(v);

function validStats(v: unknown): v is AllocatorStats {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return isCount(o.device) && STAT_KEYS.every((k) => isCountOrNull(o[k]));
}

function validRank(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return isCountOrNull(o.rank) && isCountOrNull(o.localRank) && isCountOrNull(o.worldSize) && (o.backend === null || typeof o.backend === 'string');
}

const isNumberOrNull = (v: unknown): boolean => v === null || (typeof v === 'number' && Number.isFinite(v));

/** The forecast fields readers use (metrics, watch); the rest is carried as written. */
function validForecasts(v: unknown): boolean {
  if (v === undefined) return true;
  return Array.isArray(v) && v.every((f: unknown) => {
    if (typeof f !== 'object' || f === null) return false;
    const o = f as Record<string, unknown>;
    const g = o.growth as Record<string, unknown> | null;
    const s = o.spikes as Record<string, unknown> | null;
    return isCount(o.device) && isCount(o.step) && isCountOrNull(o.limitBytes) && Array.isArray(o.warnings) &&
      (g === null || (typeof g === 'object' && isNumberOrNull(g.bytesPerStep) && isCountOrNull(g.stepsLeft) && isCountOrNull(g.oomAtStep))) &&
      (s === null || (typeof s === 'object' && isCount(s.everySteps) && isCount(s.nextStep) && isNumberOrNull(s.headroomBytes)));
  });
}

/**
 * Parses and validates one live file's text. Throws INPUT_MALFORMED naming `where` for anything that is
 * not a complete document of this format and version (a reader skips such a file).
 */
export function parseLiveCompanionDoc(text: string, where: string): LiveCompanionDoc {
  const fail = (what: string): never => {
    throw new GpumemError('INPUT_MALFORMED', `${where}: ${what}`, { hint: 'the file is rewritten by a running gpumem run; it is ignored' });
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail('not JSON');
  }
  const o = value as Partial<LiveCompanionDoc> | null;
  if (typeof o !== 'object' || o === null || o.format !== LIVE_COMPANION_FORMAT) return fail(`not a ${LIVE_COMPANION_FORMAT} document`);
  if (o.schemaVersion !== LIVE_COMPANION_SCHEMA_VERSION) return fail(`schemaVersion ${String(o.schemaVersion)}, this gpumem reads ${LIVE_COMPANION_SCHEMA_VERSION}`);
  if (!isCount(o.supervisorPid) || !isCountOrNull(o.supervisorStartTicks) || !isCount(o.updatedAtMs) || !Array.isArray(o.processes)) {
    return fail('bad header fields');
  }
  for (const [i, p] of o.processes.entries()) {
    const ok = typeof p === 'object' && p !== null && isCount(p.pid) && isCountOrNull(p.startTicks) && Array.isArray(p.devices) &&
      p.devices.every((d) => typeof d === 'object' && d !== null && isCount(d.device) && typeof d.gpuUuid === 'string' && isCount(d.timeMs) && validStats(d.stats)) &&
      (p.steps === undefined || p.steps === null || validStepSummary(p.steps)) && validRank(p.rank) && validForecasts(p.forecast);
    if (!ok) fail(`processes[${i}] is malformed`);
  }
  return o as LiveCompanionDoc;
}

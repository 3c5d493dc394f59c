/**
 * The companion as a `gpumem run` plugin: before each attempt it opens a channel and hands the child the
 * environment; on every monitor tick it splits the tree's GPU memory with the latest PyTorch numbers;
 * after the attempt it closes the channel and returns a report for the run's JSON and history.
 */
import {
  splitByGpu,
  splitProcesses,
  type CompanionState,
  type GpuSplit,
  type MemorySplit,
  type OomMessage,
} from '../../core/companion/index.js';
import type { GpuProcess } from '../../core/index.js';
import type { RunPlugin } from '../options.js';
import { CompanionServer, type CompanionServerOptions } from './server.js';

export const COMPANION_REPORT_SCHEMA_VERSION = 1;

/** What the plugin stores under `plugins.companion` of an attempt's report (docs/companion.md). */
export interface CompanionReport {
  schemaVersion: number;
  processes: Array<{
    pid: number;
    torchVersion: string | null;
    ended: boolean;
    devices: Array<{
      device: number;
      gpuUuid: string | null;
      allocatedBytes: number | null;
      reservedBytes: number | null;
      maxPeakAllocatedBytes: number | null;
      maxPeakReservedBytes: number | null;
      numAllocRetries: number | null;
      numOoms: number | null;
    }>;
    ooms: OomMessage[];
    oomExceptions: string[];
    companionErrors: Record<string, string>;
    droppedMessages: number;
  }>;
  /** The split at the last monitor tick that had both NVML and companion numbers. */
  lastSplit: { processes: MemorySplit[]; gpus: GpuSplit[] } | null;
  /** Lines from the channel that could not be read. */
  problems: string[];
}

export interface CompanionPlugin extends RunPlugin {
  /** The per-pid state of the running attempt (empty before the first spawn). */
  state(): CompanionState;
  /** The split of the latest tick, for the live view: allocated / reserved / non-PyTorch per GPU. */
  latestSplit(): { processes: MemorySplit[]; gpus: GpuSplit[] } | null;
}

/** Builds the report from the state (exported for tests and for `gpumem runs show`). */
export function companionReport(
  state: CompanionState,
  lastSplit: CompanionReport['lastSplit'],
  problems: string[],
): CompanionReport {
  return {
    schemaVersion: COMPANION_REPORT_SCHEMA_VERSION,
    processes: [...state.values()].map((p) => ({
      pid: p.pid,
      torchVersion: p.hello?.torchVersion ?? null,
      ended: p.ended,
      devices: [...p.devices.values()].map((d) => ({
        device: d.device,
        gpuUuid: d.gpuUuid,
        allocatedBytes: d.latest.allocatedBytes,
        reservedBytes: d.latest.reservedBytes,
        maxPeakAllocatedBytes: d.maxPeakAllocatedBytes,
        maxPeakReservedBytes: d.maxPeakReservedBytes,
        numAllocRetries: d.maxNumAllocRetries,
        numOoms: d.latest.numOoms,
      })),
      ooms: p.ooms,
      oomExceptions: p.oomExceptions,
      companionErrors: Object.fromEntries(p.errors),
      droppedMessages: p.droppedMessages,
    })),
    lastSplit,
    problems,
  };
}

/**
 * Creates the plugin. Options are the channel settings (rate, snapshot folder, memory fraction); the
 * CUDA_VISIBLE_DEVICES the supervisor planned is read from the attempt's environment.
 */
export function companionPlugin(options: Omit<CompanionServerOptions, 'cudaVisibleDevices'> = {}): CompanionPlugin {
  let server: CompanionServer | null = null;
  let latest: CompanionReport['lastSplit'] = null;
  let state: CompanionState = new Map();

  const splitOf = (processes: readonly GpuProcess[]): CompanionReport['lastSplit'] => {
    const rows = splitProcesses(processes, state);
    return rows.length > 0 ? { processes: rows, gpus: splitByGpu(rows) } : null;
  };

  return {
    name: 'companion',
    async beforeSpawn(ctx) {
      await server?.close(0);
      latest = null;
      server = await CompanionServer.start({ ...options, cudaVisibleDevices: ctx.env.CUDA_VISIBLE_DEVICES ?? null });
      state = server.state;
      return server.env(ctx.env);
    },
    onTick(tick) {
      latest = splitOf(tick.treeProcesses) ?? latest;
    },
    async afterAttempt() {
      if (!server) return companionReport(new Map(), null, []);
      await server.close();
      return companionReport(server.state, latest, server.problems);
    },
    state: () => state,
    latestSplit: () => latest,
  };
}

/**
 * The `gpumem snapshot` analysis as one document: the report (docs/snapshot.md) with, when asked, each
 * device's allocator simulation (`--simulate`, `--what-if`). The CLI's --json and the server's
 * /api/v1/…/snapshots answers are this same document.
 */
import { simulateSnapshot, type DeviceSimulation } from '../core/allocator/simulate-snapshot.js';
import type { MemorySnapshot } from '../core/snapshot/model-types.js';
import { buildReport, type SnapshotReport } from '../core/snapshot/report.js';

export interface SnapshotAnalysisOptions {
  top: number;
  requestBytes: number | null;
  /** PYTORCH_CUDA_ALLOC_CONF settings to replay the trace under. */
  whatIfs: readonly string[];
  /** Replay under the run's own settings even without what-ifs. */
  simulate: boolean;
  torchVersion: string | null;
}

export interface SnapshotAnalysis {
  report: SnapshotReport;
  /** Per device; null when neither a what-if nor a simulation was asked for. */
  simulations: DeviceSimulation[] | null;
}

/** Builds the report and runs the simulations; throws GpumemError for settings that do not parse. */
export function analyseSnapshot(snapshot: MemorySnapshot, options: SnapshotAnalysisOptions): SnapshotAnalysis {
  const report = buildReport(snapshot, { top: options.top, requestBytes: options.requestBytes });
  const wanted = options.whatIfs.length > 0 || options.simulate;
  return { report, simulations: wanted ? simulateSnapshot(snapshot, options.whatIfs, options.torchVersion) : null };
}

/** The JSON document: the report, each device carrying its `simulation` when one ran. */
export function snapshotAnalysisJson(analysis: SnapshotAnalysis): SnapshotReport {
  const sims = analysis.simulations;
  if (!sims) return analysis.report;
  return { ...analysis.report, devices: analysis.report.devices.map((d) => ({ ...d, simulation: sims.find((x) => x.device === d.device) ?? null })) };
}

/** JSON text with wide integers (BigInt, e.g. a uint64 sentinel in allocator settings) written as strings. */
export function toJsonText(value: unknown, indent = 0): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), indent);
}

/**
 * What `gpumem snapshot --simulate / --what-if` reports per device: the trace replayed under the settings the
 * run used (and how closely that matches the snapshot) and under each alternative the user asked about, with
 * the device capacity an OOM in the trace implies, so "would this request have succeeded?" has an answer.
 */
import type { MemorySnapshot } from '../snapshot/model-types.js';
import { capacityAtOom, replayTrace, type ReplayResult } from './replay.js';
import { parseAllocatorConf, settingsFromSnapshot } from './settings.js';

export interface SimulationRun {
  /** The settings string replayed ("(as recorded)" for the run's own). */
  settings: string;
  coversWholeRun: boolean;
  peakReservedBytes: number;
  peakAllocatedBytes: number;
  fragmentationAtPeakBytes: number;
  endReservedBytes: number;
  endSegmentCount: number;
  numAllocRetries: number;
  /** For a trace with an OOM: whether every failed request would have been served; null without an OOM. */
  oomAvoided: boolean | null;
  /** Allocations the real run made that fail under these settings, and the first one's trace index. */
  earlierOomCount: number;
  firstOomEventIndex: number | null;
  /** Device memory still free after the request that failed, when it would have succeeded. */
  oomSpareBytes: number | null;
}

export interface SimulationMatch {
  addressMatches: number;
  addressChecks: number;
  realEndReservedBytes: number;
  realSegmentCount: number;
  /** Segments identical in address, size and every block's place and state. */
  identicalSegments: number;
}

/**
 * One device's answer. Its top-level run fields are the simulated settings the user asked about (the first
 * `--what-if`, or the recorded settings under `--simulate`); `actual` and `whatIf` hold the full comparison.
 */
export interface DeviceSimulation extends SimulationRun {
  device: number;
  /** Device memory available to the allocator, from the trace's OOM (null: unlimited). */
  capacityBytes: number | null;
  actual: SimulationRun & { match: SimulationMatch };
  whatIf: SimulationRun[];
}

function runOf(settings: string, r: ReplayResult): SimulationRun {
  const failed = r.ooms.filter((o) => !o.succeeded).length;
  const spare = r.ooms.map((o) => o.spareBytes).filter((x): x is number => x !== null);
  return {
    settings,
    coversWholeRun: r.coversWholeRun,
    peakReservedBytes: r.peakReservedBytes,
    peakAllocatedBytes: r.peakAllocatedBytes,
    fragmentationAtPeakBytes: r.fragmentationAtPeakBytes,
    endReservedBytes: r.endReservedBytes,
    endSegmentCount: r.segments.length,
    numAllocRetries: r.numAllocRetries,
    // The request that failed only counts as avoided when nothing before it fails instead.
    oomAvoided: r.ooms.length === 0 ? null : failed === 0 && r.failedAllocations === 0,
    oomSpareBytes: failed === 0 && r.failedAllocations === 0 && spare.length > 0 ? Math.min(...spare) : null,
    earlierOomCount: r.failedAllocations,
    firstOomEventIndex: r.failedAllocations > 0 ? r.firstFailedEvent : r.ooms.find((o) => !o.succeeded)?.eventIndex ?? null,
  };
}

/**
 * Replays every device trace of `snapshot` under its recorded settings and under each of `whatIfs`
 * (PYTORCH_CUDA_ALLOC_CONF strings; a bad one throws GpumemError('USAGE')) as the release `version` would.
 * Devices without a trace are skipped.
 */
export function simulateSnapshot(snapshot: MemorySnapshot, whatIfs: readonly string[], version: string | null = null): DeviceSimulation[] {
  const actualSettings = settingsFromSnapshot(snapshot.allocatorSettings);
  const alternatives = whatIfs.map((text) => ({ text, settings: parseAllocatorConf(text, { version }) }));
  const out: DeviceSimulation[] = [];
  snapshot.traces.forEach((trace, device) => {
    if (trace.length === 0) return;
    const endSegments = snapshot.segments.filter((s) => s.device === device);
    const realEndReservedBytes = endSegments.reduce((sum, s) => sum + s.totalBytes, 0);
    const capacityBytes = capacityAtOom(trace, realEndReservedBytes);
    const replay = (settings: typeof actualSettings): ReplayResult => replayTrace(trace, { settings, endSegments, capacityBytes: capacityBytes ?? undefined, version: version ?? undefined });
    const actual = replay(actualSettings);
    const real = new Map(endSegments.map((s) => [s.address, s]));
    let identicalSegments = 0;
    for (const seg of actual.segments) {
      const r = real.get(seg.address);
      if (!r || r.totalBytes !== seg.sizeBytes || r.blocks.length !== seg.blocks.length) continue;
      const same = seg.blocks.every((b, i) => {
        const rb = r.blocks[i];
        return rb !== undefined && rb.address - r.address === b.offset && rb.sizeBytes === b.sizeBytes && (rb.state === 'active_allocated') === b.allocated;
      });
      if (same) identicalSegments++;
    }
    const actualRun = runOf('(as recorded)', actual);
    const whatIf = alternatives.map((a) => runOf(a.text, replay(a.settings)));
    out.push({
      device,
      ...(whatIf[0] ?? actualRun),
      capacityBytes,
      actual: {
        ...actualRun,
        match: { addressMatches: actual.addressMatches, addressChecks: actual.addressChecks, realEndReservedBytes, realSegmentCount: endSegments.length, identicalSegments },
      },
      whatIf,
    });
  });
  return out;
}

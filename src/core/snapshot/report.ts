/**
 * The `gpumem snapshot` result: everything the text, HTML and JSON outputs show, as one versioned value.
 * The JSON form is documented in docs/snapshot.md; bump SNAPSHOT_SCHEMA_VERSION when a field changes meaning.
 */
import type { MemorySnapshot } from './model.js';
import { diffSites, type SiteDelta, type SiteTotal } from './sites.js';
import { devicesOf, fitRequest, sitesOfSegments, summarizeDevice, type DeviceSummary, type RequestFit } from './summary.js';
import { analyseTrace, type TraceAnalysis } from './trace.js';

export const SNAPSHOT_SCHEMA_VERSION = 1;

export interface DeviceReport {
  device: number;
  summary: DeviceSummary;
  /** Top sites by live bytes in the snapshot's segments. */
  sites: SiteTotal[];
  /** Number of sites before the list was cut to `top`. */
  siteCount: number;
  request: RequestFit | null;
  /** Null when the file has no trace for this device. */
  trace: TraceAnalysis | null;
}

export interface SnapshotReport {
  schemaVersion: number;
  kind: 'gpumem.snapshot';
  generation: MemorySnapshot['generation'];
  devices: DeviceReport[];
  allocatorSettings: MemorySnapshot['allocatorSettings'];
  externalAnnotationCount: number;
  unknownKeys: string[];
}

export interface ReportOptions {
  /** How many sites to list per device (and per peak/OOM moment). */
  top: number;
  /** Answer "could a request of this size be served from reserved memory?" per device. */
  requestBytes: number | null;
}

/** Runs every analysis on a snapshot. */
export function buildReport(snapshot: MemorySnapshot, options: ReportOptions): SnapshotReport {
  const devices = new Set(devicesOf(snapshot.segments));
  snapshot.traces.forEach((t, d) => t.length > 0 && devices.add(d));
  const cut = <T>(list: T[]): T[] => list.slice(0, options.top);
  const reports = [...devices].sort((a, b) => a - b).map((device): DeviceReport => {
    const summary = summarizeDevice(snapshot.segments, device);
    const hasSegments = summary.segmentCount > 0;
    const sites = sitesOfSegments(snapshot.segments, device);
    const raw = snapshot.traces[device];
    let trace: TraceAnalysis | null = null;
    if (raw && raw.length > 0) {
      trace = analyseTrace(raw, {
        // Trace sizes are requested bytes, so the end is the requested total of allocated blocks (like with like).
        finalAllocatedBytes: hasSegments ? requestedAllocated(snapshot.segments, device) ?? summary.allocatedBytes : null,
        finalReservedBytes: hasSegments ? summary.reservedBytes : null,
      });
      if (trace.peak) trace.peak.sites = cut(trace.peak.sites);
      for (const o of trace.ooms) o.sites = cut(o.sites);
    }
    return {
      device,
      summary,
      sites: cut(sites),
      siteCount: sites.length,
      request: options.requestBytes !== null ? fitRequest(snapshot.segments, device, options.requestBytes) : null,
      trace,
    };
  });
  return {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    kind: 'gpumem.snapshot',
    generation: snapshot.generation,
    devices: reports,
    allocatorSettings: snapshot.allocatorSettings,
    externalAnnotationCount: snapshot.externalAnnotationCount,
    unknownKeys: snapshot.unknownKeys,
  };
}

export interface SnapshotDiff {
  schemaVersion: number;
  kind: 'gpumem.snapshot.diff';
  reservedBytesBefore: number;
  reservedBytesAfter: number;
  activeBytesBefore: number;
  activeBytesAfter: number;
  /** Every site whose live bytes differ, largest growth first. */
  sites: SiteDelta[];
}

/** Σ requested bytes of the device's allocated blocks; null when a block does not record its request (2.0 files). */
function requestedAllocated(segments: MemorySnapshot['segments'], device: number): number | null {
  let total = 0;
  for (const seg of segments) {
    if (seg.device !== device) continue;
    for (const b of seg.blocks) {
      if (b.state !== 'active_allocated') continue;
      if (b.requestedBytes === null) return null;
      total += b.requestedBytes;
    }
  }
  return total;
}

/** What grew between two snapshots of the same program, by allocation site, over all devices. */
export function diffSnapshots(before: MemorySnapshot, after: MemorySnapshot): SnapshotDiff {
  const totals = (s: MemorySnapshot): { reserved: number; active: number } => {
    let reserved = 0;
    let active = 0;
    for (const seg of s.segments) {
      reserved += seg.totalBytes;
      for (const b of seg.blocks) if (b.state !== 'inactive') active += b.sizeBytes;
    }
    return { reserved, active };
  };
  const a = totals(before);
  const b = totals(after);
  return {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    kind: 'gpumem.snapshot.diff',
    reservedBytesBefore: a.reserved,
    reservedBytesAfter: b.reserved,
    activeBytesBefore: a.active,
    activeBytesAfter: b.active,
    sites: diffSites(sitesOfSegments(before.segments, null), sitesOfSegments(after.segments, null)).filter((r) => r.deltaBytes !== 0 || r.countBefore !== r.countAfter),
  };
}

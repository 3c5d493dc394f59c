/**
 * The page's view of a snapshot analysis: the numbers of the `gpumem snapshot --json` document with every size
 * formatted by core/units, as label/value rows the page places as text.
 */
import { formatBytes } from '../core/index.js';
import type { SnapshotAnalysis } from '../orchestrate/index.js';

export interface SnapshotDeviceView {
  device: number;
  /** [label, value] rows: reserved, allocated, active, fragmentation, peak, OOMs. */
  facts: [string, string][];
  /** [site, bytes, blocks] of the sites holding the most memory. */
  sites: [string, string, string][];
  /** [settings, peak reserved, end reserved, segments, OOM] per simulated setting, the run's own first. */
  simulations: [string, string, string, string, string][];
}

const oomText = (avoided: boolean | null, spareBytes: number | null): string =>
  avoided === null ? 'no OOM in the trace' : avoided ? `avoided${spareBytes === null ? '' : ` (${formatBytes(spareBytes)} to spare)`}` : 'still OOM';

/** One view per device of the analysis. */
export function snapshotView(analysis: SnapshotAnalysis): SnapshotDeviceView[] {
  return analysis.report.devices.map((d) => {
    const s = d.summary;
    const facts: [string, string][] = [
      ['reserved', formatBytes(s.reservedBytes)],
      ['allocated', formatBytes(s.allocatedBytes)],
      ['active', formatBytes(s.activeBytes)],
      ['free inside reserved', formatBytes(s.inactiveBytes)],
      ['segments', String(s.segmentCount)],
    ];
    for (const p of s.pools) facts.push([`largest free block (${p.segmentType} pool, stream ${p.stream})`, `${formatBytes(p.largestFreeBytes)} of ${formatBytes(p.freeBytes)} free`]);
    if (d.trace?.peak) facts.push(['peak allocated in the trace', `${formatBytes(d.trace.peak.allocatedBytes)} (reserved ${formatBytes(d.trace.peak.reservedBytes)})`]);
    if (d.trace) facts.push(['OOMs in the trace', String(d.trace.ooms.length)]);
    const sim = analysis.simulations?.find((x) => x.device === d.device) ?? null;
    const runs = sim ? [{ ...sim.actual, settings: `${sim.actual.settings || 'defaults'} (as run)` }, ...sim.whatIf] : [];
    return {
      device: d.device,
      facts,
      sites: d.sites.map((x) => [x.site, formatBytes(x.bytes), String(x.count)]),
      simulations: runs.map((r) => [r.settings, formatBytes(r.peakReservedBytes), formatBytes(r.endReservedBytes), String(r.endSegmentCount), oomText(r.oomAvoided, r.oomSpareBytes)]),
    };
  });
}

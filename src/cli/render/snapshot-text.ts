/** Human output of `gpumem snapshot` and `gpumem snapshot diff`: one block per device, sizes in IEC units. */
import { formatBytes } from '../../core/units.js';
import { printable } from '../../core/text.js';
import type { DeviceReport, SnapshotDiff, SnapshotReport } from '../../core/snapshot/report.js';
import type { SiteTotal } from '../../core/snapshot/sites.js';
import { cutMiddle, painter, table } from './style.js';

function siteRows(sites: readonly SiteTotal[], width: number): string[] {
  const rows = sites.map((s) => [formatBytes(s.bytes), String(s.count), cutMiddle(printable(s.site), Math.max(20, width - 24))]);
  return table([['bytes', 'blocks', 'site (innermost frame outside torch)'], ...rows], ['right', 'right']).map((l) => `  ${l}`);
}

function deviceLines(d: DeviceReport, width: number, paint: ReturnType<typeof painter>): string[] {
  const s = d.summary;
  const out = [paint('bold', `GPU ${d.device}`)];
  const slack = s.roundingSlackBytes === null ? 'n/a' : formatBytes(s.roundingSlackBytes);
  out.push(
    ...table(
      [
        ['reserved', formatBytes(s.reservedBytes), segmentsText(s)],
        ['allocated', formatBytes(s.allocatedBytes), `${s.allocatedBlockCount} blocks`],
        ['active', formatBytes(s.activeBytes), `${formatBytes(s.pendingFreeBytes)} awaiting a cross-stream free`],
        ['requested', formatBytes(s.requestedBytes), `rounding slack ${slack}`],
        ['free in segments', formatBytes(s.inactiveBytes), 'reserved but unallocated'],
      ],
      ['left', 'right'],
    ).map((l) => `  ${l}`),
  );
  if (s.pools.length > 0) {
    out.push('', '  Fragmentation (per pool and stream):');
    const rows = s.pools.map((p) => [printable(p.segmentType), p.poolId ?? '-', String(p.stream), formatBytes(p.reservedBytes), formatBytes(p.freeBytes), formatBytes(p.largestFreeBytes), String(p.freeBlockCount)]);
    out.push(...table([['pool', 'id', 'stream', 'reserved', 'free', 'largest free', 'free blocks'], ...rows], ['left', 'left', 'right', 'right', 'right', 'right', 'right']).map((l) => `    ${l}`));
  }
  if (d.request) {
    const r = d.request;
    const verdict = r.fits ? paint('green', 'fits in a free block') : paint('red', `does not fit: ${formatBytes(r.unusableFreeBytes)} of free ${r.segmentType}-pool memory is in blocks smaller than the request; a new ${formatBytes(r.newSegmentBytes)} segment is needed`);
    out.push('', `  Request ${formatBytes(r.requestBytes)} (block ${formatBytes(r.roundedBytes)}): ${verdict}; largest free block ${formatBytes(r.largestFreeBytes)}`);
  }
  if (d.sites.length > 0) out.push('', `  Who holds memory now (top ${d.sites.length} of ${d.siteCount} sites):`, ...siteRows(d.sites, width));
  const t = d.trace;
  if (t) {
    const actions = Object.entries(t.actions).map(([a, n]) => `${n} ${printable(a)}`).join(', ');
    out.push('', `  Trace: ${t.eventCount} events (${actions})`);
    if (t.peak) {
      out.push(`  Peak allocated ${paint('bold', formatBytes(t.peak.allocatedBytes))} at event ${t.peak.eventIndex} (reserved then ${formatBytes(t.peak.reservedBytes)}); live then:`, ...siteRows(t.peak.sites, width));
    }
    for (const o of t.ooms) {
      out.push(
        '',
        paint('red', `  OOM at event ${o.eventIndex}: a ${formatBytes(o.requestBytes)} block could not be found; the driver had ${formatBytes(o.deviceFreeBytes)} free, ${formatBytes(o.allocatedBytes)} allocated, ${formatBytes(o.reservedBytes)} reserved. Live then:`),
        ...siteRows(o.sites, width),
      );
    }
  }
  return out;
}

/** "3 segments (2 large, 1 small; 0 expandable)", or just "0 segments" when there are none. */
function segmentsText(s: DeviceReport['summary']): string {
  if (s.segmentCount === 0) return '0 segments';
  const types = Object.entries(s.segmentsByType).map(([t, v]) => `${v.count} ${printable(t)}`).join(', ');
  return `${s.segmentCount} segments (${types}; ${s.expandable.count} expandable)`;
}

/** Text report for one snapshot. */
export function renderSnapshotText(report: SnapshotReport, width: number, color: boolean): string {
  const paint = painter(color);
  const lines: string[] = [`Snapshot (${report.generation} format), ${report.devices.length} device(s)`];
  if (report.unknownKeys.length > 0) lines.push(paint('gray', `kept keys this version does not analyse: ${report.unknownKeys.map(printable).join(', ')}`));
  const conf = report.allocatorSettings?.PYTORCH_CUDA_ALLOC_CONF;
  if (typeof conf === 'string') lines.push(`PYTORCH_CUDA_ALLOC_CONF=${printable(conf)}`);
  for (const d of report.devices) lines.push('', ...deviceLines(d, width, paint));
  return `${lines.join('\n')}\n`;
}

/** Text report for `snapshot diff`. */
export function renderDiffText(diff: SnapshotDiff, top: number, width: number, color: boolean): string {
  const paint = painter(color);
  const sign = (n: number): string => (n > 0 ? `+${formatBytes(n)}` : n < 0 ? `-${formatBytes(-n)}` : '0 B');
  const lines = [
    `reserved ${formatBytes(diff.reservedBytesBefore)} → ${formatBytes(diff.reservedBytesAfter)} (${sign(diff.reservedBytesAfter - diff.reservedBytesBefore)})`,
    `active   ${formatBytes(diff.activeBytesBefore)} → ${formatBytes(diff.activeBytesAfter)} (${sign(diff.activeBytesAfter - diff.activeBytesBefore)})`,
    '',
  ];
  if (diff.sites.length === 0) lines.push('no allocation site changed');
  const rows = diff.sites.slice(0, top).map((r) => [paint(r.deltaBytes > 0 ? 'red' : 'green', sign(r.deltaBytes)), formatBytes(r.bytesBefore), formatBytes(r.bytesAfter), `${r.countBefore}→${r.countAfter}`, cutMiddle(printable(r.site), Math.max(20, width - 50))]);
  if (rows.length > 0) lines.push(...table([['change', 'before', 'after', 'blocks', 'site'], ...rows], ['right', 'right', 'right', 'right']));
  return `${lines.join('\n')}\n`;
}

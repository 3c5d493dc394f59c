/**
 * The self-contained HTML report of `gpumem snapshot --html`: inline CSS and SVG, no script, no network
 * (a Content-Security-Policy forbids every fetch). Every string from the snapshot is escaped, since file
 * names and function names in an untrusted snapshot are attacker-controlled text.
 */
import { formatBytes } from '../../core/units.js';
import { printable } from '../../core/text.js';
import type { DeviceReport, SnapshotReport } from '../../core/snapshot/report.js';
import type { SiteTotal } from '../../core/snapshot/sites.js';
import type { TimelinePoint } from '../../core/snapshot/trace.js';

const W = 900;
const H = 240;
const PAD = 48;

/** Escapes text for HTML element content and attribute values; control characters are shown escaped too. */
export function escapeHtml(text: string): string {
  return printable(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function path(points: readonly TimelinePoint[], y: (p: TimelinePoint) => number, maxBytes: number, n: number): string {
  return points
    .map((p, i) => {
      const px = PAD + (n <= 1 ? 0 : (p.eventIndex / (n - 1)) * (W - 2 * PAD));
      const py = H - PAD - (maxBytes > 0 ? (y(p) / maxBytes) * (H - 2 * PAD) : 0);
      return `${i === 0 ? 'M' : 'L'}${px.toFixed(1)},${py.toFixed(1)}`;
    })
    .join(' ');
}

/** Inline SVG: allocated (filled) and reserved (line) bytes over trace events, the peak marked. */
export function timelineSvg(d: DeviceReport): string {
  const t = d.trace;
  if (!t || t.timeline.length === 0) return '<p class="none">No trace in this snapshot for this device (record one with torch.cuda.memory._record_memory_history()).</p>';
  const max = Math.max(1, ...t.timeline.map((p) => Math.max(p.allocatedBytes, p.reservedBytes)));
  const n = t.eventCount;
  const allocated = path(t.timeline, (p) => p.allocatedBytes, max, n);
  const reserved = path(t.timeline, (p) => p.reservedBytes, max, n);
  const base = `L${(W - PAD).toFixed(1)},${H - PAD} L${PAD},${H - PAD} Z`;
  const ticks = [0, 0.5, 1].map((f) => {
    const y = H - PAD - f * (H - 2 * PAD);
    return `<line x1="${PAD}" x2="${W - PAD}" y1="${y}" y2="${y}" class="grid"/><text x="4" y="${y + 4}">${escapeHtml(formatBytes(max * f, 1))}</text>`;
  });
  let peak = '';
  if (t.peak) {
    const px = PAD + (n <= 1 ? 0 : (t.peak.eventIndex / (n - 1)) * (W - 2 * PAD));
    const py = H - PAD - (t.peak.allocatedBytes / max) * (H - 2 * PAD);
    peak = `<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="4" class="peak"><title>peak ${escapeHtml(formatBytes(t.peak.allocatedBytes))} at event ${t.peak.eventIndex}</title></circle>`;
  }
  const ooms = t.ooms
    .map((o) => `<line x1="${(PAD + (n <= 1 ? 0 : (o.eventIndex / (n - 1)) * (W - 2 * PAD))).toFixed(1)}" x2="${(PAD + (n <= 1 ? 0 : (o.eventIndex / (n - 1)) * (W - 2 * PAD))).toFixed(1)}" y1="${PAD}" y2="${H - PAD}" class="oom"><title>OOM at event ${o.eventIndex}</title></line>`)
    .join('');
  return `<svg class="timeline" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="allocated and reserved memory over trace events" data-points="${t.timeline.length}">
${ticks.join('\n')}
<path d="${allocated} ${base}" class="allocated"/>
<path d="${reserved}" class="reserved"/>
${ooms}${peak}
<text x="${PAD}" y="${H - 14}">event 0</text><text x="${W - PAD}" y="${H - 14}" text-anchor="end">event ${n - 1}</text>
</svg>
<p class="legend"><span class="sw allocated"></span> allocated <span class="sw reserved"></span> reserved <span class="sw oom"></span> OOM</p>`;
}

function siteTable(sites: readonly SiteTotal[]): string {
  if (sites.length === 0) return '<p class="none">nothing live</p>';
  const rows = sites.map((s) => `<tr><td class="num">${escapeHtml(formatBytes(s.bytes))}</td><td class="num">${s.count}</td><td>${escapeHtml(s.site)}</td></tr>`);
  return `<table><tr><th>bytes</th><th>blocks</th><th>site</th></tr>${rows.join('')}</table>`;
}

function deviceSection(d: DeviceReport): string {
  const s = d.summary;
  const kv = (k: string, v: string): string => `<tr><th>${k}</th><td class="num">${escapeHtml(v)}</td></tr>`;
  const pools = s.pools
    .map((p) => `<tr><td>${escapeHtml(p.segmentType)}</td><td>${escapeHtml(p.poolId ?? '-')}</td><td class="num">${p.stream}</td><td class="num">${formatBytes(p.reservedBytes)}</td><td class="num">${formatBytes(p.freeBytes)}</td><td class="num">${formatBytes(p.largestFreeBytes)}</td></tr>`)
    .join('');
  const parts = [
    `<section><h2>GPU ${d.device}</h2>`,
    timelineSvg(d),
    `<table class="kv">${kv('reserved', formatBytes(s.reservedBytes))}${kv('allocated', formatBytes(s.allocatedBytes))}${kv('active', formatBytes(s.activeBytes))}${kv('requested', formatBytes(s.requestedBytes))}${kv('free in segments', formatBytes(s.inactiveBytes))}</table>`,
    `<h3>Fragmentation</h3><table><tr><th>pool</th><th>id</th><th>stream</th><th>reserved</th><th>free</th><th>largest free</th></tr>${pools}</table>`,
  ];
  if (d.request) {
    const r = d.request;
    parts.push(`<p>Request ${formatBytes(r.requestBytes)}: ${r.fits ? 'fits in a free block' : `does not fit; ${formatBytes(r.unusableFreeBytes)} of free memory is in blocks too small`} (largest free block ${formatBytes(r.largestFreeBytes)}).</p>`);
  }
  parts.push('<h3>Who holds memory now</h3>', siteTable(d.sites));
  if (d.trace?.peak) parts.push(`<h3>Live at the peak (${formatBytes(d.trace.peak.allocatedBytes)}, event ${d.trace.peak.eventIndex})</h3>`, siteTable(d.trace.peak.sites));
  for (const o of d.trace?.ooms ?? []) {
    parts.push(`<h3 class="oomh">OOM at event ${o.eventIndex}: ${formatBytes(o.requestBytes)} requested, ${formatBytes(o.deviceFreeBytes)} free on the device</h3>`, siteTable(o.sites));
  }
  parts.push('</section>');
  return parts.join('\n');
}

/** The whole report page. `title` is shown as the heading (usually the file name). */
export function renderSnapshotHtml(report: SnapshotReport, title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>gpumem snapshot: ${escapeHtml(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:960px}
h1{font-size:20px}h2{border-bottom:1px solid #ccc}h3{font-size:15px;margin-top:18px}
table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}
.num{text-align:right;font-variant-numeric:tabular-nums}
svg text{font-size:11px;fill:#555}.grid{stroke:#eee}
path.allocated{fill:#4e79a7;fill-opacity:.45;stroke:#4e79a7}path.reserved{fill:none;stroke:#e15759;stroke-width:1.5}
line.oom{stroke:#b00;stroke-dasharray:4 3}circle.peak{fill:#f28e2b}
.sw{display:inline-block;width:12px;height:12px;margin-left:10px}.sw.allocated{background:#4e79a7}.sw.reserved{background:#e15759}.sw.oom{background:#b00}
.none{color:#777}.oomh{color:#b00}
</style></head><body>
<h1>gpumem snapshot: ${escapeHtml(title)}</h1>
<p>Format: ${escapeHtml(report.generation)}. ${report.devices.length} device(s). Read without executing the pickle.</p>
${report.devices.map(deviceSection).join('\n')}
</body></html>
`;
}

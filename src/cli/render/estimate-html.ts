/**
 * The self-contained page of `gpumem estimate --html`: the memory timeline of the traced steps (allocated and
 * reserved bytes from the allocator simulator, requested bytes, phases shaded, the peak marked), what is alive
 * at the peak by category and by module, the fixes and the searches. Inline CSS and SVG, no script, no network
 * (a Content-Security-Policy forbids every fetch). Module names, notes and the command come from the traced
 * program and are escaped everywhere; the report is also embedded as JSON for machines, escaped for HTML.
 */
import { formatBytes } from '../../core/units.js';
import type { TraceTimeline } from '../../core/estimate/trace-timeline.js';
import type { TracedReport } from '../../core/estimate/traced-report.js';
import { escapeHtml } from './snapshot-html.js';

const W = 900;
const H = 260;
const PAD = 56;
const PHASES = ['forward', 'backward', 'optimizer', 'other'] as const;

export interface TracedPageSection {
  title: string;
  report: TracedReport;
  timeline: TraceTimeline;
}

/** JSON that cannot end the script element it sits in, nor break out as markup. */
function jsonForHtml(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const bytesCell = (n: number | null): string => (n === null ? '<td class="num">n/a</td>' : `<td class="num" data-bytes="${n}">${escapeHtml(formatBytes(n))}</td>`);

function timelineSvg(t: TraceTimeline): string {
  const n = t.points.length;
  if (n === 0) return '<p class="none">No GPU allocations were traced.</p>';
  const max = Math.max(1, ...t.points.map((p) => Math.max(p.requestedBytes, p.allocatedBytes ?? 0, p.reservedBytes ?? 0)));
  const x = (i: number): number => PAD + (n <= 1 ? 0 : (i / (n - 1)) * (W - 2 * PAD));
  const y = (b: number): number => H - PAD - (b / max) * (H - 2 * PAD);
  const line = (get: (i: number) => number): string => t.points.map((_, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(get(i)).toFixed(1)}`).join(' ');
  const half = n <= 1 ? 1 : (W - 2 * PAD) / (n - 1) / 2;
  const bands: string[] = [];
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && t.points[j + 1]!.phase === t.points[i]!.phase) j++;
    const p = t.points[i]!;
    const x0 = Math.max(PAD, x(i) - half);
    const x1 = Math.min(W - PAD, x(j) + half);
    bands.push(`<rect x="${x0.toFixed(1)}" y="${PAD}" width="${Math.max(0.5, x1 - x0).toFixed(1)}" height="${H - 2 * PAD}" class="ph-${p.phase}"><title>${p.phase}, step ${p.step + 1}, events ${p.eventIndex}–${t.points[j]!.eventIndex}</title></rect>`);
    i = j + 1;
  }
  const hasAllocator = t.points[0]!.allocatedBytes !== null;
  const base = `L${x(n - 1).toFixed(1)},${H - PAD} L${PAD},${H - PAD} Z`;
  const filled = hasAllocator ? line((i) => t.points[i]!.allocatedBytes!) : line((i) => t.points[i]!.requestedBytes);
  const curves = [`<path d="${filled} ${base}" class="allocated"/>`];
  if (hasAllocator) curves.push(`<path d="${line((i) => t.points[i]!.reservedBytes!)}" class="reserved"/>`, `<path d="${line((i) => t.points[i]!.requestedBytes)}" class="requested"/>`);
  const pk = t.points[t.peakPoint]!;
  const peak = `<circle cx="${x(t.peakPoint).toFixed(1)}" cy="${y(pk.requestedBytes).toFixed(1)}" r="5" class="peak"><title>peak ${escapeHtml(formatBytes(t.peakRequestedBytes))} requested, in ${pk.phase} of step ${pk.step + 1}</title></circle>`;
  const ticks = [0, 0.5, 1].map((f) => `<line x1="${PAD}" x2="${W - PAD}" y1="${y(max * f)}" y2="${y(max * f)}" class="grid"/><text x="4" y="${y(max * f) + 4}">${escapeHtml(formatBytes(max * f, 1))}</text>`);
  const legend = hasAllocator
    ? '<span class="sw allocated"></span> allocated <span class="sw reserved"></span> reserved <span class="sw requested"></span> requested by tensors'
    : '<span class="sw allocated"></span> requested by tensors (not replayed through the allocator)';
  return `<svg class="timeline" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="GPU memory over the traced steps" data-points="${n}" data-events="${t.events}" data-peak-requested="${t.peakRequestedBytes}" data-peak-allocated="${t.peakAllocatedBytes ?? ''}" data-peak-reserved="${t.peakReservedBytes ?? ''}">
${bands.join('\n')}
${ticks.join('\n')}
${curves.join('\n')}
${peak}
<text x="${PAD}" y="${H - 30}">event 0</text><text x="${W - PAD}" y="${H - 30}" text-anchor="end">event ${t.events - 1}</text>
</svg>
<p class="legend">${legend} <span class="sw peak"></span> peak ${PHASES.map((p) => `<span class="sw ph-${p}"></span> ${p}`).join(' ')}</p>`;
}

function section(s: TracedPageSection): string {
  const r = s.report;
  const kv = (k: string, v: number | null): string => `<tr><th>${k}</th>${bytesCell(v)}</tr>`;
  const catTotal = Math.max(1, ...Object.values(r.byCategory));
  const cats = Object.entries(r.byCategory)
    .map(([c, b]) => `<tr data-category="${escapeHtml(c)}"><th>${escapeHtml(c)}</th>${bytesCell(b)}<td><span class="bar" style="width:${Math.round((b / catTotal) * 300)}px"></span></td></tr>`)
    .join('');
  const mods = r.byModule.map((m) => `<tr>${bytesCell(m.bytes)}<td class="module">${escapeHtml(m.module)}</td></tr>`).join('');
  const parts = [
    `<section><h2>${escapeHtml(s.title)}</h2>`,
    `<p class="cmd"><code>${escapeHtml(r.command.join(' '))}</code><br>${r.steps} step(s) on fake tensors, torch ${escapeHtml(r.torchVersion ?? '?')}, ${r.allocations} GPU allocations; peak in ${escapeHtml(r.peakPhase)} of step ${r.peakStep}</p>`,
    timelineSvg(s.timeline),
    `<table class="kv">${kv('peak requested', r.peakRequestedBytes)}${kv('peak allocated', r.peakAllocatedBytes)}${kv('peak reserved', r.peakReservedBytes)}${kv('CUDA context', r.contextBytes)}${kv('nvidia-smi (reserved + context)', r.nvidiaSmiBytes)}</table>`,
  ];
  if (r.fit) parts.push(`<p class="${r.fit.fits ? 'fits' : 'breaks'}">${escapeHtml(r.fit.gpu)}: ${r.fit.fits ? 'fits' : 'does not fit'} (budget ${escapeHtml(formatBytes(r.fit.budgetBytes))}, ${Math.round(r.fit.margin * 100)} % margin)</p>`);
  parts.push('<h3>Alive at the peak, by category</h3>', `<table class="cats">${cats}</table>`);
  parts.push('<h3>Alive at the peak, by module</h3>', `<table class="modules"><tr><th>bytes</th><th>module</th></tr>${mods}</table>`);
  parts.push('<h3>Phase peaks (requested)</h3>', `<table>${r.phasePeaks.map((p) => `<tr><th>${escapeHtml(p.phase)}</th>${bytesCell(p.peakRequestedBytes)}</tr>`).join('')}</table>`);
  if (r.batchSearch) parts.push(`<h3>Largest batch: ${r.batchSearch.maxBatch}${r.batchSearch.exact ? '' : ' at least'}</h3><table><tr><th>batch</th><th>nvidia-smi</th><th></th></tr>${r.batchSearch.probes.map((p) => `<tr><td class="num">${p.batch}</td>${bytesCell(p.deviceBytes)}<td>${p.fits ? 'fits' : 'too big'}</td></tr>`).join('')}</table>`);
  if (r.seqSearch) parts.push(`<h3>Longest sequence at batch ${r.seqSearch.batch}: ${r.seqSearch.maxSeq}${r.seqSearch.exact ? '' : ' at least'}</h3><table><tr><th>sequence</th><th>nvidia-smi</th><th></th></tr>${r.seqSearch.probes.map((p) => `<tr><td class="num">${p.seq}</td>${bytesCell(p.deviceBytes)}<td>${p.fits ? 'fits' : 'too big'}</td></tr>`).join('')}</table>`);
  if (r.fixes) parts.push('<h3>Fixes, best first</h3>', `<table class="fixes">${r.fixes.map((f) => `<tr>${bytesCell(f.deviceBytes)}<td>${f.fits ? 'fits' : 'too big'}</td><td>${escapeHtml(f.what)}</td><td>${f.basis}</td></tr>`).join('')}</table>`);
  if (r.notes.length) parts.push('<h3>Notes</h3>', `<ul>${r.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul>`);
  parts.push('</section>');
  return parts.join('\n');
}

/** The whole page; `data` is embedded as JSON (the same object `--json` prints). */
export function renderTracedHtml(sections: readonly TracedPageSection[], data: unknown): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>gpumem estimate</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:960px}
h1{font-size:20px}h2{border-bottom:1px solid #ccc;font-size:17px}h3{font-size:15px;margin-top:18px}
table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}
.num{text-align:right;font-variant-numeric:tabular-nums}.cmd code{word-break:break-all}
svg text{font-size:11px;fill:#555}.grid{stroke:#ddd}
path.allocated{fill:#4e79a7;fill-opacity:.45;stroke:#4e79a7}path.reserved{fill:none;stroke:#e15759;stroke-width:1.5}
path.requested{fill:none;stroke:#333;stroke-dasharray:3 3}circle.peak{fill:#f28e2b;stroke:#222}
rect.ph-forward{fill:#59a14f;fill-opacity:.12}rect.ph-backward{fill:#edc948;fill-opacity:.18}rect.ph-optimizer{fill:#b07aa1;fill-opacity:.16}rect.ph-other{fill:#bab0ac;fill-opacity:.10}
.sw{display:inline-block;width:12px;height:12px;margin-left:10px;vertical-align:middle}.sw.allocated{background:#4e79a7}.sw.reserved{background:#e15759}.sw.requested{background:#333}.sw.peak{background:#f28e2b}
.sw.ph-forward{background:#59a14f55}.sw.ph-backward{background:#edc94866}.sw.ph-optimizer{background:#b07aa155}.sw.ph-other{background:#bab0ac44}
.bar{display:inline-block;height:10px;background:#4e79a7}.fits{color:#2a7a2a}.breaks{color:#b00}.none{color:#777}
</style></head><body>
<h1>gpumem estimate: traced training step</h1>
${sections.map(section).join('\n')}
<script type="application/json" id="gpumem-report">${jsonForHtml(data)}</script>
</body></html>
`;
}

/**
 * The device panel: per GPU a memory bar split into what is known (see core/watch memorySegments), its
 * utilisation, temperature and power, and a sparkline of used memory. Full mode gives each GPU two lines
 * (facts, then bar + sparkline); compact mode one line, for small terminals or many GPUs.
 */
import { formatBytes, formatPercent, printable, type Device, type Sample } from '../../core/index.js';
import type { DiagnoseReport } from '../../core/diagnose/index.js';
import { deviceUsedSeries, memorySegmentsByGpu, sparkline, type MemorySegments } from '../../core/watch/index.js';
import type { Color } from '../render/style.js';

type Paint = (color: Color, text: string) => string;

/** Segment order on the bar, its glyph without colour, and its colour. */
const PARTS: ReadonlyArray<{ key: keyof Omit<MemorySegments, 'totalBytes'>; letter: string; color: Color; label: string; short: string }> = [
  { key: 'reservedBytes', letter: 'r', color: 'gray', label: 'driver-reserved', short: 'reserved' },
  { key: 'pytorchAllocatedBytes', letter: 'a', color: 'green', label: 'PyTorch allocated', short: 'allocated' },
  { key: 'pytorchCachedBytes', letter: 'c', color: 'cyan', label: 'PyTorch cached', short: 'cached' },
  { key: 'mineBytes', letter: 'y', color: 'blue', label: 'yours', short: 'yours' },
  { key: 'othersBytes', letter: 'o', color: 'magenta', label: 'other users', short: 'others' },
  { key: 'notVisibleBytes', letter: 'h', color: 'yellow', label: 'not visible here', short: 'hidden' },
  { key: 'unattributedBytes', letter: '?', color: 'red', label: 'unattributed', short: 'unattributed' },
];

/** The legend line under the panel (what each colour or letter means). */
export function legend(paint: Paint, color: boolean, viewerKnown: boolean, short = false): string {
  // A recording has no "you": its visible processes are one segment, whoever owned them.
  const parts = PARTS.filter((p) => viewerKnown || p.key !== 'othersBytes');
  const label = (p: (typeof PARTS)[number]): string => (!viewerKnown && p.key === 'mineBytes' ? 'processes' : short ? p.short : p.label);
  const gap = short ? ' ' : '  ';
  return `${gap}${parts.map((p) => `${color ? paint(p.color, '█') : p.letter} ${label(p)}`).join(gap)}${gap}${color ? '·' : '.'} free`;
}

/**
 * The bar, `width` cells: each segment gets its share of the total, rounded on the running sum so the
 * cells always add up to what is used and the bar never overflows.
 */
export function splitBar(seg: MemorySegments, width: number, paint: Paint, color: boolean): string {
  const total = seg.totalBytes;
  if (!total || total <= 0) return `[${' '.repeat(width)}]`;
  let sum = 0;
  let drawn = 0;
  let out = '';
  for (const p of PARTS) {
    sum += seg[p.key];
    const upTo = Math.min(width, Math.round((sum / total) * width));
    const cells = Math.max(0, upTo - drawn);
    if (cells > 0) out += color ? paint(p.color, '█'.repeat(cells)) : p.letter.repeat(cells);
    drawn += cells;
  }
  return `[${out}${(color ? '·' : '.').repeat(width - drawn)}]`;
}

const watts = (mw: number | null): string => (mw === null ? 'n/a' : `${Math.round(mw / 1000)}W`);

function facts(d: Device): string {
  const m = d.memory;
  const temp = d.temperatureC === null ? 'n/a' : `${d.temperatureC}°C`;
  return `${formatBytes(m.usedBytes)}/${formatBytes(m.totalBytes)}  util ${formatPercent(d.utilization.gpuPct)}  ${temp}  ${watts(d.powerDrawMw)}/${watts(d.powerLimitMw)}`;
}

/** Lines of the device panel; `compact` puts each GPU on one line. */
export function devicePanel(sample: Sample, history: readonly Sample[], report: DiagnoseReport, viewerUid: number | null, columns: number, compact: boolean, paint: Paint, color: boolean): string[] {
  const lines: string[] = [];
  const segments = memorySegmentsByGpu(report.accounting, report.processes, viewerUid);
  const sparkWidth = Math.max(8, Math.min(60, Math.floor((columns - 8) / 3)));
  const used = compact ? null : deviceUsedSeries(history.slice(-sparkWidth), sample.devices.map((d) => d.index));
  for (const d of sample.devices) {
    const seg = segments.get(d.index) ?? null;
    const status = d.status === 'ok' ? '' : ` ${paint('red', `[${d.status}]`)}`;
    const head = `${paint('bold', `[${d.index}]`)}${status}`;
    if (compact) {
      const bar = seg ? splitBar(seg, 20, paint, color) : `[${' '.repeat(20)}]`;
      lines.push(`${head} ${bar} ${facts(d)}`);
      continue;
    }
    lines.push(`${head} ${printable(d.name ?? 'unknown GPU')}  ${facts(d)}`);
    const barWidth = Math.max(10, columns - sparkWidth - 9);
    const bar = seg ? splitBar(seg, barWidth, paint, color) : `[${' '.repeat(barWidth)}]`;
    lines.push(`    ${bar} ${paint('gray', sparkline(used?.get(d.index) ?? [], sparkWidth, d.memory.totalBytes))}`);
  }
  return lines;
}

/**
 * The human view of `gpumem status`, in the spirit of nvitop/gpustat: a line per GPU with a memory bar
 * (driver-reserved shaded), then its processes. Output is a pure function of the sample, the width and the
 * colour flag, so non-TTY output is stable and testable.
 */
import { appendAll } from '../../core/arrays.js';
import { formatBytes, formatDuration, formatPercent } from '../../core/units.js';
import { printable } from '../../core/text.js';
import type { Device, GpuProcess, Sample } from '../../core/types.js';
import { cutCommand, memoryBar, painter, table, trimTo, visibleLength } from './style.js';

export interface StatusRenderOptions {
  columns: number;
  color: boolean;
  /**
   * A terminal's height (`status --watch` redraws in place): the frame keeps every GPU line and cuts each GPU's
   * process rows to fit, saying how many it left out, instead of scrolling the GPU lines off the screen.
   */
  maxLines?: number;
}

const watts = (mw: number | null): string => (mw === null ? 'n/a' : `${Math.round(mw / 1000)}W`);

/** First line: where the numbers come from, said plainly (a recording is never mistaken for live state). */
export function sourceLine(sample: Sample): string {
  const d = sample.devices[0];
  const versions = d ? ` · driver ${d.driverVersion ?? 'n/a'} · CUDA ${d.cudaDriverVersion ?? 'n/a'}` : '';
  const when = new Date(sample.timeMs).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  if (sample.source.kind === 'replay') return `replaying ${printable(sample.source.detail)}${sample.source.note ? ` — ${printable(sample.source.note)}` : ''} · sample at ${when}${versions}`;
  return `via ${sample.source.kind === 'nvml' ? 'NVML' : 'nvidia-smi'} (${sample.source.detail}) · ${when}${versions}`;
}

function deviceLine(d: Device, paint: ReturnType<typeof painter>): string {
  const m = d.memory;
  const pct = m.totalBytes && m.usedBytes !== null ? (m.usedBytes + (m.reservedBytes ?? 0)) / m.totalBytes : null;
  const barColor = pct === null ? 'gray' : pct > 0.9 ? 'red' : pct > 0.7 ? 'yellow' : 'green';
  const reserved = m.reservedBytes === null ? '' : ` (+${formatBytes(m.reservedBytes)} reserved)`;
  const mem = `${formatBytes(m.usedBytes)} / ${formatBytes(m.totalBytes)}${reserved}`;
  const status = d.status === 'ok' ? '' : ` ${paint('red', `[${d.status}]`)}`;
  const mig = d.migMode === 'enabled' ? ' MIG' : '';
  const power = d.powerDrawMw === null && d.powerLimitMw === null ? 'power n/a' : `${watts(d.powerDrawMw)}/${watts(d.powerLimitMw)}`;
  const temp = d.temperatureC === null ? 'n/a' : `${d.temperatureC}°C`;
  return `${paint('bold', `[${d.index}]`)} ${printable(d.name ?? 'unknown GPU')}${mig}${status}  ${paint(barColor, memoryBar(m.usedBytes, m.reservedBytes, m.totalBytes))} ${mem}  util ${formatPercent(d.utilization.gpuPct)}  ${temp}  ${power}`;
}

function commandOf(p: GpuProcess): string {
  if (p.host?.cmdline && p.host.cmdline.length > 0) return printable(p.host.cmdline.join(' '));
  return printable(p.name ?? p.host?.exe ?? '?');
}

/** The table of `procs`, its first `limit` rows only (then a line saying how many were left out). */
function processRows(procs: GpuProcess[], sample: Sample, columns: number, paint: ReturnType<typeof painter>, limit = procs.length): string[] {
  if (procs.length === 0) return ['    no processes'];
  const more = (shown: string) => paint('dim', `    … ${procs.length - limit} ${shown} (a taller terminal or \`gpumem watch\` shows them)`);
  if (limit === 0) return [more(procs.length === 1 ? 'process' : 'processes')];
  const rows: string[][] = [['PID', 'USER', 'GPU MEM', 'AGE', 'COMMAND'].map((h) => paint('dim', h))];
  const tails: Array<{ marks: string; command: string }> = [{ marks: '', command: '' }];
  for (const p of procs.slice(0, limit)) {
    const h = p.host;
    const age = h?.startTimeMs == null ? 'n/a' : formatDuration(Math.max(0, sample.timeMs - h.startTimeMs));
    const marks = [
      h && !h.visible ? paint('yellow', '(not visible here)') : '',
      h?.containerId ? paint('cyan', `[ctr ${printable(h.containerId.slice(0, 12))}]`) : '',
      h?.state === 'Z' ? paint('red', '(zombie)') : '',
      p.kind === 'graphics' ? '(G)' : p.kind === 'compute+graphics' ? '(C+G)' : '',
    ].filter((s) => s !== '');
    rows.push([String(p.pid), printable(h?.user ?? (h?.uid != null ? String(h.uid) : '-')), formatBytes(p.usedBytes), age, '']);
    tails.push({ marks: marks.map((m) => `${m} `).join(''), command: commandOf(p) });
  }
  const laid = table(rows, ['right', 'left', 'right', 'right', 'left']);
  return [...laid.map((line, i) => {
    if (i === 0) return `    ${line}`;
    const room = Math.max(10, columns - 4 - visibleLength(line));
    const { marks, command } = tails[i]!;
    // The marks stay whole; the command loses its program's directory, then its middle (cutCommand), so the
    // script and the arguments that tell two processes apart (a rank, a kernel's file) remain.
    if (visibleLength(marks) + 10 > room) return `    ${line}${trimPainted(marks + command, room)}`;
    return `    ${line}${marks}${cutCommand(command, room - visibleLength(marks))}`;
  }), ...(procs.length > limit ? [more('more')] : [])];
}

/** Trims text that may hold colour codes to `width` visible characters. */
function trimPainted(text: string, width: number): string {
  if (visibleLength(text) <= width) return text;
  // Drop colour when trimming: the cut could fall inside an escape sequence.
  return trimTo(text.replace(/\u001b\[[0-9;]*m/g, ''), width);
}

/** A GPU's lines above its process table (or the unlisted GPUs' heading), and the processes of that table. */
interface Group {
  head: string[];
  procs: GpuProcess[];
}

/** Lines a table of `n` processes takes showing `k` of them: one line saying how many, or header, rows and "… more". */
const tableLines = (n: number, k: number): number => (n === 0 || k === 0 ? 1 : 1 + k + (k < n ? 1 : 0));

/**
 * How many process rows each group may show so the frame fits `maxLines`: the same number for every table (its
 * own count where smaller), then one more for the first tables while lines remain, so no GPU's rows take
 * another's room. Null when everything fits, or when not even one line per table does (the caller then cuts
 * the text).
 */
function rowLimits(top: number, groups: readonly Group[], maxLines: number): number[] | null {
  const lines = (k: readonly number[]): number => top + groups.reduce((sum, g, i) => sum + g.head.length + tableLines(g.procs.length, k[i] as number), 0);
  const capped = (cap: number): number[] => groups.map((g) => Math.min(g.procs.length, cap));
  if (lines(capped(Infinity)) <= maxLines) return null;
  if (lines(capped(0)) > maxLines) return null;
  let cap = 0;
  while (lines(capped(cap + 1)) <= maxLines) cap++;
  const limits = capped(cap);
  let used = lines(limits);
  groups.forEach((g, i) => {
    const cost = tableLines(g.procs.length, cap + 1) - tableLines(g.procs.length, cap);
    if (g.procs.length > cap && used + cost <= maxLines) {
      limits[i] = cap + 1;
      used += cost;
    }
  });
  return limits;
}

/** Renders a whole status screen as text (ends with a newline). */
export function renderStatus(sample: Sample, options: StatusRenderOptions): string {
  const paint = painter(options.color);
  const lines = [sourceLine(sample)];
  if (sample.unavailable.devices) lines.push(paint('yellow', `note: ${sample.unavailable.devices}`));
  if (sample.devices.length === 0) lines.push('no GPUs');
  const groups: Group[] = sample.devices.map((d) => ({
    head: ['', deviceLine(d, paint), ...d.migInstances.map((m) => `    MIG gi ${m.gpuInstanceId} ci ${m.computeInstanceId ?? '-'}${m.profile ? ` ${m.profile}` : ''}  ${formatBytes(m.memory.usedBytes)} / ${formatBytes(m.memory.totalBytes)}`)],
    procs: sample.processes.filter((p) => p.gpuIndex === d.index || (p.gpuIndex === null && p.gpuUuid !== null && p.gpuUuid === d.uuid)),
  }));
  const orphans = sample.processes.filter((p) => !sample.devices.some((d) => p.gpuIndex === d.index || (p.gpuUuid !== null && p.gpuUuid === d.uuid)));
  if (orphans.length > 0) groups.push({ head: ['', 'processes on GPUs not listed:'], procs: orphans });
  const maxLines = options.maxLines;
  const limits = maxLines === undefined ? null : rowLimits(lines.length, groups, maxLines);
  groups.forEach((g, i) => appendAll(lines, g.head) && appendAll(lines, processRows(g.procs, sample, options.columns, paint, limits?.[i] ?? g.procs.length)));
  // Too many GPUs for even one line per table: the frame's first lines, and how many did not fit.
  if (maxLines !== undefined && lines.length > maxLines) lines.splice(Math.max(1, maxLines - 1), Infinity, paint('dim', `… ${lines.length - Math.max(1, maxLines - 1)} more lines (a taller terminal shows them)`));
  return `${lines.join('\n')}\n`;
}

export { STATUS_SCHEMA_VERSION, statusJson } from '../../core/documents/status.js';

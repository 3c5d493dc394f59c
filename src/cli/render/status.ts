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

function processRows(procs: GpuProcess[], sample: Sample, columns: number, paint: ReturnType<typeof painter>): string[] {
  if (procs.length === 0) return ['    no processes'];
  const rows: string[][] = [['PID', 'USER', 'GPU MEM', 'AGE', 'COMMAND'].map((h) => paint('dim', h))];
  const tails: Array<{ marks: string; command: string }> = [{ marks: '', command: '' }];
  for (const p of procs) {
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
  return laid.map((line, i) => {
    if (i === 0) return `    ${line}`;
    const room = Math.max(10, columns - 4 - visibleLength(line));
    const { marks, command } = tails[i]!;
    // The marks stay whole; the command loses its program's directory, then its middle (cutCommand), so the
    // script and the arguments that tell two processes apart (a rank, a kernel's file) remain.
    if (visibleLength(marks) + 10 > room) return `    ${line}${trimPainted(marks + command, room)}`;
    return `    ${line}${marks}${cutCommand(command, room - visibleLength(marks))}`;
  });
}

/** Trims text that may hold colour codes to `width` visible characters. */
function trimPainted(text: string, width: number): string {
  if (visibleLength(text) <= width) return text;
  // Drop colour when trimming: the cut could fall inside an escape sequence.
  return trimTo(text.replace(/\u001b\[[0-9;]*m/g, ''), width);
}

/** Renders a whole status screen as text (ends with a newline). */
export function renderStatus(sample: Sample, options: StatusRenderOptions): string {
  const paint = painter(options.color);
  const lines = [sourceLine(sample)];
  if (sample.unavailable.devices) lines.push(paint('yellow', `note: ${sample.unavailable.devices}`));
  if (sample.devices.length === 0) lines.push('no GPUs');
  for (const d of sample.devices) {
    lines.push('', deviceLine(d, paint));
    for (const m of d.migInstances) {
      lines.push(`    MIG gi ${m.gpuInstanceId} ci ${m.computeInstanceId ?? '-'}${m.profile ? ` ${m.profile}` : ''}  ${formatBytes(m.memory.usedBytes)} / ${formatBytes(m.memory.totalBytes)}`);
    }
    const procs = sample.processes.filter((p) => p.gpuIndex === d.index || (p.gpuIndex === null && p.gpuUuid !== null && p.gpuUuid === d.uuid));
    appendAll(lines, processRows(procs, sample, options.columns, paint));
  }
  const orphans = sample.processes.filter((p) => !sample.devices.some((d) => p.gpuIndex === d.index || (p.gpuUuid !== null && p.gpuUuid === d.uuid)));
  if (orphans.length > 0) appendAll(lines, ['', 'processes on GPUs not listed:']) && appendAll(lines, processRows(orphans, sample, options.columns, paint));
  return `${lines.join('\n')}\n`;
}

export { STATUS_SCHEMA_VERSION, statusJson } from '../../core/documents/status.js';

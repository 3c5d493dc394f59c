/**
 * The status table doctor shows above its findings: one row per GPU (memory bar with driver-reserved
 * shaded, used/total, utilization, temperature, power) and under it its processes with the facts diagnose
 * derived (user, memory, age, role, idle time, command trimmed to the terminal).
 */
import { formatBytes, formatDuration, formatPercent } from '../../core/index.js';
import type { DiagnoseReport } from '../../core/diagnose/index.js';
import type { ProcessView } from '../../core/diagnose/index.js';
import { memoryBar, table, trimTo, type Color } from '../render/style.js';

export type Paint = (color: Color, text: string) => string;

/** A short tag for what a process is, as the status table and report show it. */
export function roleTag(v: ProcessView): string {
  const tags: string[] = [];
  if (v.role !== 'main') tags.push(v.role);
  if (v.contextOnly && v.role !== 'worker') tags.push('context-only');
  if (v.gone) tags.push('gone');
  else if (!v.visible) tags.push('not visible here');
  if (v.state === 'Z') tags.push('zombie');
  return tags.join(', ') || '-';
}

/** "idle 3.0s" / "42%" / "n/a" for a process's utilization over the window. */
export function utilText(v: ProcessView): string {
  if (!v.util) return 'n/a';
  if (v.util.maxPct === 0) return `idle ${v.util.idleWholeWindow ? '≥' : ''}${formatDuration(v.util.idleMs)}`;
  return formatPercent(v.util.meanPct);
}

/** Renders the status table of a report's latest sample, width-limited to `columns`. */
export function renderStatusTable(report: DiagnoseReport, paint: Paint, columns: number): string[] {
  const lines: string[] = [];
  const devices = report.accounting;
  for (const acc of devices) {
    const sample = report.processes;
    const device = `GPU ${acc.gpuIndex}  ${acc.name ?? 'unknown model'}`;
    const memory = `${memoryBar(acc.usedBytes, acc.reservedBytes, acc.totalBytes)} ${formatBytes(acc.usedBytes)} / ${formatBytes(acc.totalBytes)}`;
    const info = deviceInfo(report, acc.gpuIndex);
    lines.push(paint('bold', device) + '  ' + memory + (info ? `  ${info}` : ''));
    const rows = sample.filter((v) => v.gpuIndex === acc.gpuIndex).sort((a, b) => (b.usedBytes ?? -1) - (a.usedBytes ?? -1));
    if (rows.length === 0) {
      lines.push(paint('gray', '  no processes'));
      continue;
    }
    const body = rows.map((v) => [
      String(v.pid),
      v.user ?? '?',
      formatBytes(v.usedBytes),
      formatDuration(v.ageMs),
      utilText(v),
      roleTag(v),
      v.command ?? (v.gone ? 'exited; the driver still lists its memory' : v.visible ? '?' : 'not visible in this PID namespace'),
    ]);
    const laid = table([['PID', 'USER', 'MEMORY', 'AGE', 'UTIL', 'ROLE', 'COMMAND'], ...body], ['right', 'left', 'right', 'right', 'right']);
    laid.forEach((line, i) => lines.push(i === 0 ? paint('gray', `  ${line}`) : trimTo(`  ${line}`, columns)));
  }
  return lines;
}

function deviceInfo(report: DiagnoseReport, index: number): string {
  const d = report.devices.find((x) => x.index === index);
  if (!d) return '';
  const parts = [`util ${formatPercent(d.utilization.gpuPct)}`];
  if (d.temperatureC !== null) parts.push(`${d.temperatureC}°C`);
  if (d.powerDrawMw !== null) parts.push(`${Math.round(d.powerDrawMw / 1000)}${d.powerLimitMw !== null ? `/${Math.round(d.powerLimitMw / 1000)}` : ''} W`);
  return parts.join('  ');
}

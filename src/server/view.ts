/**
 * The page's view of a snapshot: the same numbers as the JSON API with every size and duration already
 * formatted by core/units, so the page only places text (always as text, never as markup).
 */
import { formatBytes, formatDuration, formatPercent } from '../core/units.js';
import type { GpuProcess, Sample } from '../core/types.js';
import type { Finding } from '../core/diagnose/types.js';
import type { PipelineRow, RunRow } from '../store/index.js';
import type { FindingView, HeadView, PipelineView, ProcessRowView, RunRowView } from './page-docs.js';

/** The full command line as argv joined by spaces, else the driver's process name. */
export function commandLine(p: GpuProcess): string {
  if (p.host?.cmdline && p.host.cmdline.length > 0) return p.host.cmdline.join(' ');
  return p.name ?? '';
}

const orDash = (text: string): string => (text === 'n/a' ? '–' : text);

/** The header of the page's view of one sample: its time, source and GPU cards. */
export function headView(sample: Sample): HeadView {
  return {
    timeMs: sample.timeMs,
    source: sample.source,
    gpus: sample.devices.map((d) => ({
      index: d.index,
      name: d.name ?? 'unknown GPU',
      uuid: d.uuid ?? '',
      usedText: formatBytes(d.memory.usedBytes),
      totalText: formatBytes(d.memory.totalBytes),
      usedFraction: d.memory.usedBytes !== null && d.memory.totalBytes ? d.memory.usedBytes / d.memory.totalBytes : null,
      utilText: orDash(formatPercent(d.utilization.gpuPct)),
      tempText: d.temperatureC === null ? '–' : `${d.temperatureC}°C`,
      powerText: d.powerDrawMw === null ? '–' : `${Math.round(d.powerDrawMw / 1000)} W`,
    })),
  };
}

/** The process table's rows of one sample. */
export function processesView(sample: Sample): ProcessRowView[] {
  return sample.processes.map((p) => ({
    gpu: p.gpuIndex,
    pid: p.pid,
    user: p.host?.user ?? '',
    memText: formatBytes(p.usedBytes),
    command: commandLine(p),
    container: p.host?.containerId?.slice(0, 12) ?? '',
    visible: p.host?.visible ?? false,
  }));
}

/** The findings list; null: the first diagnosis is not in yet. */
export function findingsView(findings: readonly Finding[] | null): FindingView[] | null {
  return findings === null ? null : findings.map((f) => ({ id: f.id, severity: f.severity, title: f.title, fix: f.fix }));
}

/** The history rows the page lists. */
export function runsView(rows: readonly RunRow[]): RunRowView[] {
  return rows.map((r) => ({
    id: r.id,
    started: new Date(r.startedAtMs).toISOString().replace('T', ' ').slice(0, 19),
    duration: r.durationMs === null ? '–' : formatDuration(r.durationMs),
    status: r.status === 'ok' || r.status === 'running' ? r.status : `${r.status} ${r.exitSignal ?? r.exitCode ?? ''}`.trim(),
    peak: formatBytes(r.peakBytes),
    command: `${r.stage ? `[${r.pipelineId !== null ? `pipeline ${r.pipelineId}: ` : ''}${r.stage}] ` : ''}${r.argv.join(' ')}`,
  }));
}

/** Pipelines for the Runs page: outcome and the run id and status of each stage, which the page links to. */
export function pipelinesView(rows: readonly PipelineRow[]): PipelineView[] {
  return rows.map((p) => ({
    id: p.id,
    name: p.name ?? p.file,
    started: new Date(p.startedAtMs).toISOString().replace('T', ' ').slice(0, 19),
    duration: p.durationMs === null ? '–' : formatDuration(p.durationMs),
    status: p.status,
    stages: p.stages.map((s) => ({ runId: s.runId, stage: s.stage ?? '?', status: s.status })),
  }));
}

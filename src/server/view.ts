/**
 * The page's view of a snapshot: the same numbers as the JSON API with every size and duration already
 * formatted by core/units, so the page only places text (always as text, never as markup).
 */
import { formatBytes, formatDuration, formatPercent } from '../core/units.js';
import type { GpuProcess, HostFacts, Sample } from '../core/types.js';
import type { Finding, ProcessTree, ProcessView } from '../core/diagnose/types.js';
import { buildContext } from '../core/diagnose/index.js';
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

/** "rank 1", "rank", "worker", "kernel", or '' for a job's main process. */
function roleText(v: ProcessView): string {
  if (v.role === 'rank') return v.rank !== null && v.rank !== undefined ? `rank ${v.rank}` : 'rank';
  return v.role === 'main' ? '' : v.role;
}

/** A tree's rows, each under its own parent (a worker under its rank), parents first, siblings by memory. */
function treeRows(members: readonly ProcessView[], baseDepth: number): Array<{ view: ProcessView; depth: number }> {
  const pids = new Set(members.map((m) => m.pid));
  const children = new Map<number, ProcessView[]>();
  const tops: ProcessView[] = [];
  for (const m of members) {
    if (m.ppid !== null && m.ppid !== m.pid && pids.has(m.ppid)) children.set(m.ppid, [...(children.get(m.ppid) ?? []), m]);
    else tops.push(m);
  }
  const byMemory = (a: ProcessView, b: ProcessView): number => (b.usedBytes ?? -1) - (a.usedBytes ?? -1) || a.pid - b.pid;
  const out: Array<{ view: ProcessView; depth: number }> = [];
  const done = new Set<ProcessView>();
  const visit = (v: ProcessView, depth: number): void => {
    if (done.has(v)) return;
    done.add(v);
    out.push({ view: v, depth });
    for (const c of (children.get(v.pid) ?? []).sort(byMemory)) visit(c, depth + 1);
  };
  for (const t of tops.sort(byMemory)) visit(t, baseDepth);
  // Members only reachable through a cycle in bad /proc data: listed flat rather than lost.
  for (const m of [...members].sort(byMemory)) visit(m, baseDepth);
  return out;
}

/**
 * The process table's rows of one sample, grouped by job: a launcher's line (it holds no GPU memory itself),
 * then its ranks, each rank's workers under it. `endable` is true only for the process a job hangs from: a
 * rank or a worker of a live job is never offered alone (docs/guarantees.md, "Live jobs"). `ancestors` are the
 * /proc facts of GPU processes' parents (a launcher holds no GPU memory); without them two processes of one
 * unknown parent count as one job, and neither is offered.
 */
export function processesView(sample: Sample, ancestors: Readonly<Record<number, HostFacts>> = {}): ProcessRowView[] {
  if (sample.processes.length === 0) return [];
  const ctx = buildContext({ samples: [sample], viewer: null, pidNamespace: 'unknown', ancestors });
  const viewsByPid = new Map<number, ProcessView[]>();
  for (const v of ctx.processes) viewsByPid.set(v.pid, [...(viewsByPid.get(v.pid) ?? []), v]);
  const rows: ProcessRowView[] = [];
  const rowOf = (v: ProcessView, depth: number, tree: ProcessTree | undefined): ProcessRowView => ({
    gpu: v.gpuIndex,
    pid: v.pid,
    user: v.row.host?.user ?? '',
    memText: formatBytes(v.usedBytes),
    command: commandLine(v.row),
    container: v.row.host?.containerId?.slice(0, 12) ?? '',
    visible: v.row.host?.visible ?? false,
    role: roleText(v),
    depth,
    endable: tree !== undefined && !tree.launcher && tree.rootPid === v.pid,
  });
  const placed = new Set<ProcessView>();
  for (const tree of ctx.trees) {
    const members = tree.pids.flatMap((pid) => viewsByPid.get(pid) ?? []).filter((v) => !placed.has(v));
    if (members.length === 0) continue;
    if (tree.launcher) {
      rows.push({ gpu: null, pid: tree.rootPid, user: tree.user ?? '', memText: formatBytes(tree.totalBytes), command: tree.rootCommand ?? '(command unknown)',
        container: '', visible: false, role: 'launcher', depth: 0, endable: false });
    }
    for (const { view, depth } of treeRows(members, tree.launcher ? 1 : 0)) {
      placed.add(view);
      rows.push(rowOf(view, depth, tree));
    }
  }
  for (const v of ctx.processes.filter((x) => !placed.has(x))) rows.push(rowOf(v, 0, undefined));
  return rows;
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

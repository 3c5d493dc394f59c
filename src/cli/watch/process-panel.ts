/**
 * The process panel: one row per (pid, GPU) with user, GPU memory and its trend over the history, SM share,
 * age and the printable command; grouped as trees (launcher → ranks → workers) when sorted by memory,
 * flat otherwise; `/` filters on pid, user, GPU index and command.
 */
import { formatBytes, formatDuration, printable, type Sample } from '../../core/index.js';
import type { DiagnoseReport, ProcessView } from '../../core/diagnose/index.js';
import { processUsedSeries, trendOf } from '../../core/watch/index.js';
import { table, trimTo, visibleLength, type Color } from '../render/style.js';
import type { WatchState } from './state.js';

type Paint = (color: Color, text: string) => string;

export interface ProcessRow {
  view: ProcessView;
  /** Tree depth for indentation (0: a root). */
  depth: number;
}

function matchesFilter(v: ProcessView, filter: string): boolean {
  if (filter === '') return true;
  const f = filter.toLowerCase();
  return [String(v.pid), v.user ?? '', v.gpuIndex === null ? '' : `gpu${v.gpuIndex}`, v.command ?? ''].some((t) => t.toLowerCase().includes(f));
}

const byMemory = (a: ProcessView, b: ProcessView): number => (b.usedBytes ?? -1) - (a.usedBytes ?? -1) || a.pid - b.pid;
const COMPARE: Record<Exclude<WatchState['sort'], 'memory'>, (a: ProcessView, b: ProcessView) => number> = {
  pid: (a, b) => a.pid - b.pid || (a.gpuIndex ?? -1) - (b.gpuIndex ?? -1),
  user: (a, b) => (a.user ?? '').localeCompare(b.user ?? '') || byMemory(a, b),
  gpu: (a, b) => (a.gpuIndex ?? 1e9) - (b.gpuIndex ?? 1e9) || byMemory(a, b),
};

/** The rows in display order: trees by total memory (members by depth, then memory) or flat by the sort key. */
export function orderRows(report: DiagnoseReport, state: WatchState): ProcessRow[] {
  const views = report.processes.filter((v) => matchesFilter(v, state.filter));
  if (state.sort !== 'memory') return [...views].sort(COMPARE[state.sort]).map((view) => ({ view, depth: 0 }));
  const rows: ProcessRow[] = [];
  const placed = new Set<ProcessView>();
  const viewsByPid = new Map<number, ProcessView[]>();
  for (const v of views) viewsByPid.set(v.pid, [...(viewsByPid.get(v.pid) ?? []), v]);
  const trees = [...report.trees].sort((a, b) => b.totalBytes - a.totalBytes || a.rootPid - b.rootPid);
  for (const tree of trees) {
    const members = tree.pids.flatMap((pid) => viewsByPid.get(pid) ?? []).filter((v) => !placed.has(v));
    const ppidOf = new Map(members.map((m) => [m.pid, m.ppid]));
    const depthOf = (v: ProcessView): number => {
      let depth = 0;
      let ppid = v.ppid;
      // Walk up through members only; a cycle in bad /proc data stops at the member count.
      while (ppid !== null && ppidOf.has(ppid) && depth < members.length) {
        depth++;
        ppid = ppidOf.get(ppid) ?? null;
      }
      return depth + (tree.launcher ? 1 : 0);
    };
    const withDepth = members.map((view) => ({ view, depth: depthOf(view) })).sort((a, b) => a.depth - b.depth || byMemory(a.view, b.view));
    for (const r of withDepth) placed.add(r.view);
    rows.push(...withDepth);
  }
  for (const v of views.filter((x) => !placed.has(x)).sort(byMemory)) rows.push({ view: v, depth: 0 });
  return rows;
}

/** Samples a row's trend looks back over: enough to see growth, few enough that 40 rows × 512 pids stay cheap. */
const TREND_SAMPLES = 60;

const TREND_MARK = { growing: '↑', shrinking: '↓', steady: '=', unknown: ' ' } as const;

/** Lines of the panel (header first), `height` at most, keeping the selected row in view. */
export function processPanel(rows: readonly ProcessRow[], sample: Sample, history: readonly Sample[], state: WatchState, columns: number, height: number, paint: Paint): string[] {
  if (height <= 0) return [];
  if (rows.length === 0) return [paint('dim', state.filter ? `  no process matches "${printable(state.filter)}"` : '  no processes on any GPU')];
  const selectedAt = Math.max(0, rows.findIndex((r) => r.view.pid === state.selectedPid));
  const room = height - 1;
  const first = Math.max(0, Math.min(selectedAt - room + 1, rows.length - room));
  const shown = rows.slice(first, first + room);
  const cells: string[][] = [['PID', 'USER', 'GPU', 'GPU MEM', '', 'SM', 'AGE']];
  const recent = history.slice(-TREND_SAMPLES);
  for (const { view: v } of shown) {
    const trend = trendOf(processUsedSeries(recent, v.pid, v.gpuIndex));
    const sm = v.row.smUtilPct === null ? '-' : `${v.row.smUtilPct}%`;
    const age = v.ageMs === null ? '-' : formatDuration(Math.max(0, v.ageMs));
    cells.push([String(v.pid), printable(v.user ?? (v.uid === null ? '-' : String(v.uid))), v.gpuIndex === null ? '?' : String(v.gpuIndex), formatBytes(v.usedBytes), TREND_MARK[trend], sm, age]);
  }
  const laid = table(cells, ['right', 'left', 'right', 'right', 'left', 'right', 'right']);
  const out = [paint('dim', `  ${laid[0]}  COMMAND`)];
  shown.forEach((r, i) => {
    const v = r.view;
    const marks = [!v.visible ? '(not visible here)' : '', v.gone ? '(gone)' : '', v.state === 'Z' ? '(zombie)' : ''].filter((m) => m !== '').join(' ');
    const tree = r.depth > 0 ? `${'  '.repeat(r.depth - 1)}└ ` : '';
    const selected = v.pid === state.selectedPid;
    const left = `${selected ? '>' : ' '} ${laid[i + 1]}  `;
    const command = `${tree}${marks ? `${marks} ` : ''}${printable(v.command ?? '?')}`;
    const line = left + trimTo(command, Math.max(4, columns - visibleLength(left)));
    out.push(selected ? `\u001b[7m${line}\u001b[27m` : !v.visible ? paint('yellow', line) : line);
  });
  return out;
}

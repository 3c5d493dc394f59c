/**
 * The process panel: one row per (pid, GPU) with user, GPU memory and its trend over the history, SM share,
 * host CPU % and RSS, age and the printable command; grouped as trees (launcher → ranks → workers, the
 * launcher on a line of its own even though it holds no GPU memory) when sorted by memory, flat otherwise;
 * `/` filters on pid, user, GPU index and command.
 */
import { formatBytes, formatDuration, printable, type Sample } from '../../core/index.js';
import type { DiagnoseReport, ProcessTree, ProcessView } from '../../core/diagnose/index.js';
import { processTrend, rowOf } from '../../core/watch/index.js';
import { table, trimTo, visibleLength, type Color } from '../render/style.js';
import type { WatchState } from './state.js';

type Paint = (color: Color, text: string) => string;

export interface ProcessRow {
  /** The GPU process of the row; null on a launcher's own line. */
  view: ProcessView | null;
  pid: number;
  /** Tree depth for indentation (0: a root). */
  depth: number;
  /** Set on a launcher's line: the tree it heads (its command, user and the memory of its members). */
  launcher?: ProcessTree;
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

const row = (view: ProcessView, depth: number): ProcessRow => ({ view, pid: view.pid, depth });

/**
 * A tree's members, each directly under its own parent (a worker under its rank, not under whichever rank
 * sorts last): parents before children, siblings by memory. A member whose parent is not a member starts a
 * branch at `baseDepth`; a cycle in bad /proc data cannot loop, since each member is placed once.
 */
function depthFirst(members: readonly ProcessView[], baseDepth: number): ProcessRow[] {
  const pids = new Set(members.map((m) => m.pid));
  const children = new Map<number, ProcessView[]>();
  const tops: ProcessView[] = [];
  for (const m of members) {
    const list = m.ppid !== null && m.ppid !== m.pid && pids.has(m.ppid) ? children.get(m.ppid) : tops;
    if (list) list.push(m);
    else children.set(m.ppid as number, [m]);
  }
  const out: ProcessRow[] = [];
  const done = new Set<ProcessView>();
  const expanded = new Set<number>();
  const visit = (v: ProcessView, depth: number): void => {
    if (done.has(v)) return;
    done.add(v);
    out.push(row(v, depth));
    // A pid on two GPUs has two rows: its children follow the first of them.
    if (expanded.has(v.pid)) return;
    expanded.add(v.pid);
    for (const c of (children.get(v.pid) ?? []).sort(byMemory)) visit(c, depth + 1);
  };
  for (const t of [...tops].sort(byMemory)) visit(t, baseDepth);
  // Members only reachable through a cycle: shown flat rather than lost.
  for (const m of [...members].sort(byMemory)) visit(m, baseDepth);
  return out;
}

/**
 * The rows in display order: trees by total memory (a launcher's line first, then each member under its
 * parent, siblings by memory) or flat by the sort key.
 */
export function orderRows(report: DiagnoseReport, state: WatchState): ProcessRow[] {
  // Without a filter every view is shown: no copy of 512 views for every report.
  const views = state.filter === '' ? report.processes : report.processes.filter((v) => matchesFilter(v, state.filter));
  if (state.sort !== 'memory') return [...views].sort(COMPARE[state.sort]).map((view) => row(view, 0));
  const rows: ProcessRow[] = [];
  const placed = new Set<ProcessView>();
  // Most pids have one row (a view); a pid on several GPUs has a list.
  const viewsByPid = new Map<number, ProcessView | ProcessView[]>();
  for (const v of views) {
    const have = viewsByPid.get(v.pid);
    if (have === undefined) viewsByPid.set(v.pid, v);
    else if (Array.isArray(have)) have.push(v);
    else viewsByPid.set(v.pid, [have, v]);
  }
  // A report's trees come largest first (buildTrees and patchReport keep that order); sorted again only if not.
  const trees = inTreeOrder(report.trees) ? report.trees : [...report.trees].sort(byTreeSize);
  for (const tree of trees) {
    const depth = tree.launcher ? 1 : 0;
    // A lone process (most trees on a shared node) needs no walk: 512 walks were most of the ordering's cost.
    const only = tree.pids.length === 1 ? viewsByPid.get(tree.pids[0] as number) : undefined;
    if (only !== undefined && !Array.isArray(only)) {
      if (placed.has(only)) continue;
      if (tree.launcher) rows.push({ view: null, pid: tree.rootPid, depth: 0, launcher: tree });
      placed.add(only);
      rows.push(row(only, depth));
      continue;
    }
    const members: ProcessView[] = [];
    for (const pid of tree.pids) {
      const have = viewsByPid.get(pid);
      if (have === undefined) continue;
      for (const v of Array.isArray(have) ? have : [have]) if (!placed.has(v)) members.push(v);
    }
    if (members.length === 0) continue;
    if (tree.launcher) rows.push({ view: null, pid: tree.rootPid, depth: 0, launcher: tree });
    if (members.length === 1) {
      placed.add(members[0] as ProcessView);
      rows.push(row(members[0] as ProcessView, depth));
      continue;
    }
    for (const r of depthFirst(members, depth)) {
      placed.add(r.view as ProcessView);
      rows.push(r);
    }
  }
  if (placed.size < views.length) for (const v of views.filter((x) => !placed.has(x)).sort(byMemory)) rows.push(row(v, 0));
  return rows;
}

const byTreeSize = (a: ProcessTree, b: ProcessTree): number => b.totalBytes - a.totalBytes || a.rootPid - b.rootPid;

function inTreeOrder(trees: readonly ProcessTree[]): boolean {
  for (let i = 1; i < trees.length; i++) if (byTreeSize(trees[i - 1] as ProcessTree, trees[i] as ProcessTree) > 0) return false;
  return true;
}

/** The pids a person can select (launcher lines hold no GPU memory: nothing to open or end there). */
export function selectablePids(rows: readonly ProcessRow[]): number[] {
  const out: number[] = [];
  for (const r of rows) if (r.view) out.push(r.pid);
  return out;
}

/** The slice of `rows` on screen with `room` lines for rows, keeping the selected row in view. */
export function shownRows(rows: readonly ProcessRow[], selectedPid: number | null, room: number): readonly ProcessRow[] {
  const selectedAt = Math.max(0, rows.findIndex((r) => r.view !== null && r.pid === selectedPid));
  const first = Math.max(0, Math.min(selectedAt - room + 1, rows.length - room));
  return rows.slice(first, first + Math.max(0, room));
}

/** Samples a row's trend looks back over: enough to see growth, few enough that 40 rows × 512 pids stay cheap. */
const TREND_SAMPLES = 60;

const TREND_MARK = { growing: '↑', shrinking: '↓', steady: '=', unknown: ' ' } as const;

/**
 * Columns left out as the terminal narrows (the command keeps at least ~20 cells), and CPU / RSS where no row
 * has them (a recording, or a source that does not read them).
 */
function columnsFor(columns: number, usageKnown: boolean): { rss: boolean; age: boolean; cpu: boolean } {
  return { cpu: usageKnown && columns >= 72, rss: usageKnown && columns >= 80, age: columns >= 96 };
}

const pct = (value: number | null | undefined): string => (value === null || value === undefined ? '-' : `${Math.round(value)}%`);

/**
 * Lines of the panel (header first), `height` at most, keeping the selected row in view. Ages are counted to
 * the time of `sample`, so a frame redrawn for a newer, otherwise equal sample shows them current.
 */
export function processPanel(rows: readonly ProcessRow[], sample: Sample, history: readonly Sample[], state: WatchState, columns: number, height: number, paint: Paint): string[] {
  if (height <= 0) return [];
  if (rows.length === 0) return [paint('dim', state.filter ? `  no process matches "${printable(state.filter)}"` : '  no processes on any GPU')];
  const shown = shownRows(rows, state.selectedPid, height - 1);
  const hostOf = (r: ProcessRow) => (r.view ? (rowOf(sample, r.pid, r.view.gpuIndex)?.host ?? r.view.row.host) : null);
  const show = columnsFor(columns, shown.some((r) => hostOf(r)?.cpuPct !== undefined || hostOf(r)?.rssBytes !== undefined));
  const header = ['PID', 'USER', 'GPU', 'GPU MEM', '', 'SM', ...(show.cpu ? ['CPU'] : []), ...(show.rss ? ['RSS'] : []), ...(show.age ? ['AGE'] : [])];
  const cells: string[][] = [header];
  const recent = history.slice(-TREND_SAMPLES);
  for (const r of shown) {
    const v = r.view;
    if (!v) {
      const tree = r.launcher as ProcessTree;
      cells.push([String(r.pid), printable(tree.user ?? '-'), '', formatBytes(tree.totalBytes), '', '', ...(show.cpu ? [''] : []), ...(show.rss ? [''] : []), ...(show.age ? [''] : [])]);
      continue;
    }
    // The sample on screen may be newer than the report (equal numbers are not analysed again): CPU % and RSS from it.
    // SM share from the sample on screen too: a moved share redraws the panel without a new report.
    const rowNow = rowOf(sample, v.pid, v.gpuIndex);
    const host = rowNow?.host ?? v.row.host;
    const trend = processTrend(recent, v.pid, v.gpuIndex);
    const startMs = host?.startTimeMs;
    const ageMs = startMs !== null && startMs !== undefined ? sample.timeMs - startMs : v.ageMs;
    cells.push([
      String(v.pid), printable(v.user ?? (v.uid === null ? '-' : String(v.uid))), v.gpuIndex === null ? '?' : String(v.gpuIndex),
      formatBytes(v.usedBytes), TREND_MARK[trend], pct(rowNow?.smUtilPct ?? v.row.smUtilPct),
      ...(show.cpu ? [pct(host?.cpuPct)] : []),
      ...(show.rss ? [host?.rssBytes === null || host?.rssBytes === undefined ? '-' : formatBytes(host.rssBytes, 1)] : []),
      ...(show.age ? [ageMs === null ? '-' : formatDuration(Math.max(0, ageMs))] : []),
    ]);
  }
  const laid = table(cells, ['right', 'left', 'right', 'right', 'left', 'right', 'right', 'right', 'right']);
  const out = [paint('dim', `  ${laid[0]}  COMMAND`)];
  shown.forEach((r, i) => {
    const v = r.view;
    const selected = v !== null && r.pid === state.selectedPid;
    const left = `${selected ? '>' : ' '} ${laid[i + 1]}  `;
    const tree = r.depth > 0 ? `${'  '.repeat(r.depth - 1)}└ ` : '';
    if (!v) {
      const launcher = r.launcher as ProcessTree;
      const command = `(launcher of ${launcher.pids.length}) ${printable(launcher.rootCommand ?? '(command unknown)')}`;
      out.push(paint('dim', left + trimTo(command, Math.max(4, columns - visibleLength(left)))));
      return;
    }
    const marks = [!v.visible ? '(not visible here)' : '', v.gone ? '(gone)' : '', v.state === 'Z' ? '(zombie)' : ''].filter((m) => m !== '').join(' ');
    // A rank's number beside its command: the GPU column then says which GPU each rank of the job chose.
    const rank = v.role === 'rank' && v.rank !== null && v.rank !== undefined ? `[rank ${v.rank}] ` : '';
    const command = `${tree}${marks ? `${marks} ` : ''}${rank}${printable(v.command ?? '?')}`;
    const line = left + trimTo(command, Math.max(4, columns - visibleLength(left)));
    out.push(selected ? `\u001b[7m${line}\u001b[27m` : !v.visible ? paint('yellow', line) : line);
  });
  return out;
}

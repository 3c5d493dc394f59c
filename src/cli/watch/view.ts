/**
 * One frame of `gpumem watch` as lines, each cut to the terminal width: header, device panel, legend,
 * findings line, then the process panel (or the detail / help panel) and a status line at the bottom.
 * Pure over its input so it is tested without a terminal.
 */
import type { MemoryForecast } from '../../core/forecast/index.js';
import type { Sample } from '../../core/index.js';
import { printable } from '../../core/index.js';
import type { StepSummary } from '../../core/companion/index.js';
import type { DiagnoseReport } from '../../core/diagnose/index.js';
import { painter, trimTo, visibleLength } from '../render/style.js';
import { sourceLine } from '../render/status.js';
import { detailPanel } from './detail-panel.js';
import { devicePanel, legend } from './device-panel.js';
import { processPanel, shownRows, type ProcessRow } from './process-panel.js';
import { HELP_LINES, type WatchState } from './state.js';

export interface Frame {
  sample: Sample;
  history: readonly Sample[];
  report: DiagnoseReport;
  rows: readonly ProcessRow[];
  viewerUid: number | null;
  state: WatchState;
  columns: number;
  height: number;
  color: boolean;
  /** Step timing of supervised processes by pid (the companion's live files), for the detail panel. */
  steps?: Readonly<Record<number, StepSummary | null | undefined>>;
  /** The OOM forecast of supervised processes by pid (the companion's live files), for the detail panel. */
  forecasts?: Readonly<Record<number, readonly MemoryForecast[] | undefined>>;
  /**
   * Told which pids are on screen and on which GPUs their rows are (a live view reads their CPU % and RSS, and
   * those GPUs' per-process SM %, more often than the others').
   */
  onShown?: (pids: readonly number[], gpus: readonly number[]) => void;
}

function fit(line: string, columns: number): string {
  if (visibleLength(line) <= columns) return line;
  return trimTo(line.replace(/\u001b\[[0-9;]*m/g, ''), columns);
}

function findingsLine(report: DiagnoseReport, paint: ReturnType<typeof painter>): string {
  const f = report.findings[0];
  if (!f) return paint('green', 'no findings');
  const more = report.findings.length > 1 ? ` (+${report.findings.length - 1} more: gpumem doctor)` : '';
  const color = f.severity === 'critical' ? 'red' : f.severity === 'warning' ? 'yellow' : 'cyan';
  return `${paint(color, `${f.severity}: ${printable(f.title)}`)} — fix: ${printable(f.fix)}${more}`;
}

function bottomLine(state: WatchState, isReplay: boolean): string {
  if (state.editingFilter) return `filter: ${printable(state.filter)}█`;
  if (state.confirmKillPid !== null) return `end pid ${state.confirmKillPid}? (SIGTERM, then SIGKILL after the grace) y/n`;
  if (state.message) return printable(state.message);
  const filter = state.filter ? `  filter "${printable(state.filter)}"` : '';
  const replay = isReplay ? `  ${state.paused ? 'PAUSED' : 'playing'} ×${state.speed}` : state.paused ? '  PAUSED' : '';
  return `sort ${state.sort}${filter}${replay}${state.readonly ? '  read-only' : ''}  ? help  q quit`;
}

/** The GPU indices of these rows' views, each once. */
function gpusOf(views: ReadonlyArray<{ gpuIndex: number | null } | null>): number[] {
  const out: number[] = [];
  for (const v of views) if (v && v.gpuIndex !== null && !out.includes(v.gpuIndex)) out.push(v.gpuIndex);
  return out;
}

/** Renders the frame; the result has at most `height` lines, none wider than `columns`. */
export function renderFrame(f: Frame): string[] {
  const paint = painter(f.color);
  const columns = Math.max(20, f.columns);
  const height = Math.max(5, f.height);
  // Full mode gives each GPU two lines; drop to one when that would leave fewer than 8 rows for processes.
  const compact = columns < 100 || f.sample.devices.length * 2 + 12 > height;
  const top = [
    sourceLine(f.sample),
    ...devicePanel(f.sample, f.history, f.report, f.viewerUid, columns, compact, paint, f.color),
    legend(paint, f.color, f.viewerUid !== null, columns < 120),
    findingsLine(f.report, paint),
  ];
  const bodyHeight = Math.max(0, height - top.length - 1);
  let body: string[];
  if (f.state.help) body = [...HELP_LINES];
  else if (f.state.detailPid !== null) {
    body = detailPanel(f.state.detailPid, f.report, f.history, columns, paint, f.sample, f.steps?.[f.state.detailPid], f.forecasts?.[f.state.detailPid]);
    const detailPid = f.state.detailPid;
    f.onShown?.([detailPid], gpusOf(f.report.processes.filter((v) => v.pid === detailPid)));
  } else {
    body = processPanel(f.rows, f.sample, f.history, f.state, columns, bodyHeight, paint);
    if (f.onShown) {
      const shown = shownRows(f.rows, f.state.selectedPid, bodyHeight - 1);
      f.onShown(shown.map((r) => r.pid), gpusOf(shown.map((r) => r.view)));
    }
  }
  const lines = [...top, ...body.slice(0, bodyHeight)].slice(0, height - 1);
  while (lines.length < height - 1) lines.push('');
  lines.push(paint('dim', bottomLine(f.state, f.sample.source.kind === 'replay')));
  return lines.map((l) => fit(l, columns));
}

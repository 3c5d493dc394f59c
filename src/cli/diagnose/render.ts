/**
 * The human diagnose report: per GPU the accounting (the parts that sum to used, reserved beside them),
 * the trees and processes with their facts, per-user totals, what is unknown, then the findings ordered
 * by severity with evidence and fix.
 */
import type { MemorySplit } from '../../core/companion/split.js';
import { formatBytes, formatDuration, formatPercent } from '../../core/units.js';
import { printable } from '../../core/text.js';
import type { DeviceAccounting, Finding, ProcessTree, ProcessView } from '../../core/diagnose/types.js';
import type { DiagnoseReport } from '../../core/diagnose/engine.js';
import { cutCommand, table, tableFitted, trimTo, type Color } from '../render/style.js';

export type Paint = (color: Color, text: string) => string;

/** A short tag for what a process is, as the status table and report show it. */
export function roleTag(v: ProcessView): string {
  const tags: string[] = [];
  if (v.role === 'rank' && v.rank !== null && v.rank !== undefined) tags.push(`rank ${v.rank}`);
  else if (v.role !== 'main') tags.push(v.role);
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

const SEVERITY_COLOR = { critical: 'red', warning: 'yellow', info: 'cyan' } as const;

/** One line saying where the numbers come from and over what window. */
export function describeWindow(report: DiagnoseReport): string {
  const w = report.window;
  const from = report.source.kind === 'replay' ? `recording ${report.source.detail}` : `${report.source.kind === 'nvml' ? 'NVML' : 'nvidia-smi'} (${report.source.detail})`;
  return `${w.samples} sample${w.samples === 1 ? '' : 's'} over ${formatDuration(w.spanMs)} from ${from}`;
}

function accountingLines(acc: DeviceAccounting): string[] {
  const rows = [
    ['processes visible here', formatBytes(acc.visibleBytes)],
    ['processes not in /proc here (other containers, or gone)', formatBytes(acc.notVisibleBytes)],
    [acc.unknownPids.length > 0 ? 'unattributed (incl. unknown-size pids)' : 'unattributed', formatBytes(acc.residualBytes)],
    ['= used', formatBytes(acc.usedBytes)],
    ['reserved by the driver (not in used)', formatBytes(acc.reservedBytes)],
    ['free', formatBytes(acc.freeBytes)],
  ];
  return table(rows, ['left', 'right']).map((l) => `    ${l}`);
}

/** A tree's one line, at most `width` wide: only its root's command is cut (in the middle), never the numbers. */
function treeLine(tree: ProcessTree, gpu: number, width: number): string {
  const here = tree.bytesByGpu[String(gpu)] ?? 0;
  const command = printable(tree.rootCommand ?? (tree.launcher ? 'command unknown: not on a GPU and not read' : 'command unknown'));
  const head = `${tree.launcher ? 'launcher ' : ''}pid ${tree.rootPid} (`;
  const elsewhere = tree.totalBytes - here;
  const tail = `), ${printable(tree.user ?? 'unknown user')}: ${formatBytes(here)} here${elsewhere > 0 ? `, ${formatBytes(elsewhere)} on other GPUs` : ''}, ${tree.pids.length} process${tree.pids.length === 1 ? '' : 'es'}`;
  // Our own words for a missing command are never cut; a process's command is.
  const shown = tree.rootCommand === null ? command : cutCommand(command, Math.max(24, width - head.length - tail.length));
  return `${head}${shown}${tail}`;
}

/** "PyTorch pid 12: 30.00 GiB (NVML) = allocated … + cached … + non-PyTorch …; retries 0" for a split process. */
export function pytorchLine(p: MemorySplit): string {
  return `PyTorch pid ${p.pid}: ${formatBytes(p.processUsedBytes)} (NVML) = allocated ${formatBytes(p.allocatedBytes)} + reserved-unallocated ` +
    `${formatBytes(p.cachedBytes)} + non-PyTorch ${formatBytes(p.nonPytorchBytes)} (context, workspaces); allocator retries ${p.numAllocRetries ?? 'n/a'}`;
}

/** Renders the per-GPU accounting section. */
export function renderAccounting(report: DiagnoseReport, paint: Paint, columns: number): string[] {
  const lines: string[] = [];
  for (const acc of report.accounting) {
    lines.push(paint('bold', `GPU ${acc.gpuIndex}  ${printable(acc.name ?? 'unknown model')}  ${acc.gpuUuid ?? ''}`.trimEnd()));
    lines.push(...accountingLines(acc));
    const trees = report.trees.filter((t) => (t.bytesByGpu[String(acc.gpuIndex)] ?? 0) > 0 || t.pids.some((p) => acc.unknownPids.includes(p)));
    if (trees.length > 0) {
      lines.push('  trees:');
      for (const t of trees) lines.push(`    ${treeLine(t, acc.gpuIndex, columns - 4)}`);
    }
    const rows = report.processes.filter((v) => v.gpuIndex === acc.gpuIndex);
    if (rows.length > 0) {
      const body = rows.map((v) => [String(v.pid), String(v.ppid ?? '?'), printable(v.user ?? '?'), formatBytes(v.usedBytes), v.state ?? '?', formatDuration(v.ageMs), utilText(v), roleTag(v), printable(v.command ?? '?')]);
      // The command is cut in its middle so its script and arguments stay, not only the interpreter's path.
      const laid = tableFitted([['PID', 'PPID', 'USER', 'MEMORY', 'STATE', 'AGE', 'UTIL', 'ROLE', 'COMMAND'], ...body], ['right', 'right', 'left', 'right'], columns - 4, 24);
      laid.forEach((l, i) => lines.push(i === 0 ? paint('gray', `    ${l}`) : `    ${l}`));
    }
    for (const p of acc.pytorch) lines.push(trimTo(`    ${pytorchLine(p)}`, columns));
    for (const u of acc.unknowns) lines.push(paint('gray', `  unknown: ${printable(u)}`));
    lines.push('');
  }
  if (report.users.length > 0) {
    const users = report.users.map((u) => `${printable(u.user)} ${formatBytes(u.totalBytes)} (${Object.entries(u.bytesByGpu).map(([g, b]) => `GPU ${g}: ${formatBytes(b)}`).join(', ')})`);
    lines.push(`Per user: ${users.join('; ')}`);
  }
  return lines;
}

/** Renders findings: severity, title, evidence, fix and command; `compact` drops the evidence line. */
export function renderFindings(findings: readonly Finding[], paint: Paint, columns: number, compact = false): string[] {
  if (findings.length === 0) return [paint('green', 'No findings: every byte is accounted for and nothing looks wrong.')];
  const lines = [paint('bold', `Findings (${findings.length}):`)];
  for (const f of findings) {
    lines.push(`${paint(SEVERITY_COLOR[f.severity], f.severity.toUpperCase().padEnd(8))} ${printable(f.title)}`);
    // Compact (doctor) leaves out the evidence to stay on one screen; the fix is never cut, since a cut
    // sentence can change what it tells the user to do.
    if (!compact) lines.push(...wrap(`evidence: ${printable(f.evidence.summary)}`, columns));
    lines.push(...wrap(`fix: ${printable(f.fix)}`, columns));
    if (f.command) lines.push(`         run: ${paint('bold', printable(f.command))}`);
  }
  return lines;
}

/** Wraps a long sentence at spaces, indented under the severity column. */
function wrap(text: string, columns: number): string[] {
  const width = Math.max(40, columns - 9);
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      out.push(`         ${line}`);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(`         ${line}`);
  return out;
}

/** Small helpers the rules share: labels, sums and the emptiest GPU to suggest. */
import { formatBytes } from '../../units.js';
import type { DeviceAccounting, ProcessView, RuleContext } from '../types.js';

/** Sum of known bytes of some process rows. */
export function sumBytes(views: readonly ProcessView[]): number {
  return views.reduce((s, v) => s + (v.usedBytes ?? 0), 0);
}

/** Distinct pids, ascending. */
export function pidsOf(views: readonly ProcessView[]): number[] {
  return [...new Set(views.map((v) => v.pid))].sort((a, b) => a - b);
}

/** Distinct GPU indexes, ascending. */
export function gpusOf(views: readonly ProcessView[]): number[] {
  return [...new Set(views.map((v) => v.gpuIndex).filter((i): i is number => i !== null))].sort((a, b) => a - b);
}

/** "pid 12 (1.00 GiB)" for each row, joined. */
export function describeRows(views: readonly ProcessView[]): string {
  return views.map((v) => `pid ${v.pid} ${formatBytes(v.usedBytes)}`).join(', ');
}

/** A command trimmed for a one-line title. */
export function shortCommand(command: string | null, width = 60): string {
  if (!command) return 'unknown command';
  return command.length <= width ? command : `${command.slice(0, width - 1)}…`;
}

/** The GPU with the most free memory other than `exclude`, for "use GPU N instead" advice. */
export function freestGpu(ctx: RuleContext, exclude: readonly number[]): DeviceAccounting | null {
  const candidates = ctx.accounting.filter((a) => !exclude.includes(a.gpuIndex) && a.freeBytes !== null);
  candidates.sort((a, b) => (b.freeBytes ?? 0) - (a.freeBytes ?? 0));
  return candidates[0] ?? null;
}

/** Samples whose device `index` reported utilization, as percentages. */
export function deviceUtilPoints(ctx: RuleContext, index: number): number[] {
  const points: number[] = [];
  for (const s of ctx.samples) {
    const pct = s.devices.find((d) => d.index === index)?.utilization.gpuPct;
    if (pct !== null && pct !== undefined) points.push(pct);
  }
  return points;
}

export const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length);

/**
 * "free the other holders (pid 5 9.50 GiB, …), or " for the processes on `gpu` outside the trees of `jobPids`
 * (the job the finding is about), or "" when there are none: a fix never points at holders it does not name.
 */
export function freeOtherHolders(ctx: RuleContext, gpu: number, jobPids: readonly number[]): string {
  const job = new Set([...jobPids, ...ctx.trees.filter((t) => jobPids.some((p) => t.pids.includes(p))).flatMap((t) => t.pids)]);
  const others = ctx.processes.filter((v) => v.gpuIndex === gpu && !job.has(v.pid));
  if (others.length === 0) return '';
  return `free the other holders (${describeRows(others.slice(0, 4))}${others.length > 4 ? `, ${others.length - 4} more` : ''}), or `;
}

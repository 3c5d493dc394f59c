import { maxOf } from '../../arrays.js';
import { formatBytes, formatDuration, formatPercent } from '../../units.js';
import { THRESHOLDS } from '../thresholds.js';
import type { DeviceAccounting, Finding, ProcessView, Rule } from '../types.js';
import { deviceUtilPoints, mean, pidsOf, sumBytes } from './helpers.js';
import { activityOf, orphanReason } from './orphans.js';

const INPUT_FIX =
  'if the job should be training, it is waiting for input: raise DataLoader num_workers, set pin_memory=True and persistent_workers=True, ' +
  'raise prefetch_factor, move decoding out of __getitem__, and check disk/CPU';

/** Room for a larger batch when most of the GPU's memory is free, else null. */
function batchRoom(acc: DeviceAccounting, usedFraction: number): string | null {
  if (usedFraction >= THRESHOLDS.highMemoryFraction || acc.freeBytes === null) return null;
  return `only ${formatPercent(usedFraction * 100)} of its memory is used, so a larger batch fits: ${formatBytes(acc.freeBytes)} is free ` +
    '(find the largest that fits with `gpumem fit -- CMD {batch}` or `gpumem estimate`), with fewer gradient-accumulation steps for the same effective batch';
}

/**
 * A GPU that jobs barely use over the window, whatever its memory: idle, input-bound, or running a batch
 * far smaller than it could hold (then the finding says how much memory is free for a larger one).
 */
export const lowUtilization: Rule = {
  id: 'low-utilization',
  description: `a GPU running jobs averaged ≤ ${THRESHOLDS.lowUtilPct}% utilization over the window, whatever its memory`,
  check(ctx) {
    const findings: Finding[] = [];
    for (const acc of ctx.accounting) {
      const points = deviceUtilPoints(ctx, acc.gpuIndex);
      if (points.length < THRESHOLDS.minUtilSamples) continue;
      const meanPct = mean(points);
      if (meanPct > THRESHOLDS.lowUtilPct) continue;
      // Kernels, context-only workers, stale or hidden pids, zombies, stopped processes and idle orphans have
      // their own findings; this one is about the jobs. A process is left out only for such evidence, never
      // for being small: a 500 MiB trainer starved by its input pipeline is the case this rule is for.
      const leftover = (v: ProcessView): boolean =>
        v.state === 'Z' || v.state === 'T' || v.state === 't' || (orphanReason(v, ctx) !== null && activityOf(v) !== 'active');
      const jobs = ctx.processes.filter((v) => v.gpuIndex === acc.gpuIndex && v.role !== 'kernel' && !v.contextOnly && v.visible && !v.gone && !leftover(v));
      if (jobs.length === 0) continue;
      const held = sumBytes(jobs);
      const usedFraction = acc.usedBytes !== null && acc.totalBytes ? acc.usedBytes / acc.totalBytes : null;
      const room = usedFraction === null ? null : batchRoom(acc, usedFraction);
      const share = usedFraction === null ? '' : ` (${formatPercent(usedFraction * 100)} of ${formatBytes(acc.totalBytes)})`;
      findings.push({
        id: this.id,
        severity: 'warning',
        title: `GPU ${acc.gpuIndex} is under-used: ${formatPercent(meanPct)} mean utilization with ${formatBytes(acc.usedBytes)} used${share}`,
        evidence: {
          summary: `${points.length} samples over ${formatDuration(ctx.windowMs)}: mean ${formatPercent(meanPct, 1)}, max ${formatPercent(maxOf(points))}; jobs ${jobs.map((v) => `pid ${v.pid} ${formatBytes(v.usedBytes)}`).join(', ')}`,
          pids: pidsOf(jobs),
          gpuIndexes: [acc.gpuIndex],
          bytes: held,
          details: { meanUtilPct: meanPct, samples: points.length, windowMs: ctx.windowMs, usedFraction, freeBytes: acc.freeBytes, largerBatchFits: room !== null },
        },
        fix: `${INPUT_FIX}${room ? `; ${room}` : ''}; if it is finished or stuck, end it to free ${formatBytes(held)}`,
      });
    }
    return findings;
  },
};

import { maxOf } from '../../arrays.js';
import { formatBytes, formatDuration, formatPercent } from '../../units.js';
import { THRESHOLDS } from '../thresholds.js';
import type { Finding, Rule } from '../types.js';
import { deviceUtilPoints, mean, pidsOf, sumBytes } from './helpers.js';

/** A GPU holding much memory for jobs that barely use it over the window: idle or input-bound. */
export const lowUtilization: Rule = {
  id: 'low-utilization',
  description: `a GPU with ≥ ${THRESHOLDS.highMemoryFraction * 100}% of its memory used averaged ≤ ${THRESHOLDS.lowUtilPct}% utilization over the window`,
  check(ctx) {
    const findings: Finding[] = [];
    for (const acc of ctx.accounting) {
      if (acc.usedBytes === null || !acc.totalBytes) continue;
      if (acc.usedBytes < THRESHOLDS.highMemoryFraction * acc.totalBytes) continue;
      const points = deviceUtilPoints(ctx, acc.gpuIndex);
      if (points.length < THRESHOLDS.minUtilSamples) continue;
      const meanPct = mean(points);
      if (meanPct > THRESHOLDS.lowUtilPct) continue;
      // Kernels and context-only workers have their own findings; this one is about the jobs themselves.
      const jobs = ctx.processes.filter((v) => v.gpuIndex === acc.gpuIndex && v.role !== 'kernel' && !v.contextOnly);
      if (jobs.length === 0) continue;
      const held = sumBytes(jobs);
      findings.push({
        id: this.id,
        severity: 'warning',
        title: `GPU ${acc.gpuIndex} holds ${formatBytes(acc.usedBytes)} but averaged ${formatPercent(meanPct)} utilization`,
        evidence: {
          summary: `${points.length} samples over ${formatDuration(ctx.windowMs)}: mean ${formatPercent(meanPct, 1)}, max ${formatPercent(maxOf(points))}; jobs ${jobs.map((v) => `pid ${v.pid} ${formatBytes(v.usedBytes)}`).join(', ')}`,
          pids: pidsOf(jobs),
          gpuIndexes: [acc.gpuIndex],
          bytes: held,
          details: { meanUtilPct: meanPct, samples: points.length, windowMs: ctx.windowMs },
        },
        fix:
          'if the job should be training, it is waiting for input: raise DataLoader num_workers, set pin_memory=True and persistent_workers=True, ' +
          `prefetch, and check disk/CPU; if it is finished or stuck, end it to free ${formatBytes(held)}`,
      });
    }
    return findings;
  },
};

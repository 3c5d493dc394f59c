import { formatBytes, formatPercent } from '../../units.js';
import { THRESHOLDS } from '../thresholds.js';
import type { Finding, Rule } from '../types.js';
import { deviceUtilPoints, freeOtherHolders, mean, pidsOf } from './helpers.js';

/** A GPU close to full while a training tree on it is active: the next spike (eval, checkpoint, a longer batch) can OOM. */
export const nearCapacity: Rule = {
  id: 'near-capacity',
  description: `a GPU with an active training tree is at ≥ ${THRESHOLDS.nearCapacityFraction * 100}% of its memory`,
  check(ctx) {
    const findings: Finding[] = [];
    for (const acc of ctx.accounting) {
      if (acc.usedBytes === null || !acc.totalBytes) continue;
      const taken = acc.usedBytes + (acc.reservedBytes ?? 0);
      const fraction = taken / acc.totalBytes;
      if (fraction < THRESHOLDS.nearCapacityFraction) continue;
      const devicePoints = deviceUtilPoints(ctx, acc.gpuIndex);
      const jobs = ctx.processes.filter((v) => v.gpuIndex === acc.gpuIndex && v.role !== 'kernel' && !v.contextOnly);
      const active = jobs.filter((v) => (v.util?.meanPct ?? (devicePoints.length > 0 ? mean(devicePoints) : 0)) >= THRESHOLDS.activeUtilPct);
      if (active.length === 0) continue;
      const headroom = acc.freeBytes ?? acc.totalBytes - taken;
      // Only holders outside the training job's own tree can be freed for it; name them, or say nothing.
      const freeOthers = freeOtherHolders(ctx, acc.gpuIndex, pidsOf(active));
      findings.push({
        id: this.id,
        severity: fraction >= THRESHOLDS.nearCapacityCriticalFraction ? 'critical' : 'warning',
        title: `GPU ${acc.gpuIndex} is ${formatPercent(fraction * 100)} full during training: ${formatBytes(headroom)} headroom`,
        evidence: {
          summary: `used ${formatBytes(acc.usedBytes)} + reserved ${formatBytes(acc.reservedBytes)} of ${formatBytes(acc.totalBytes)}; free ${formatBytes(acc.freeBytes)}; active pid ${pidsOf(active).join(', ')}`,
          pids: pidsOf(active),
          gpuIndexes: [acc.gpuIndex],
          bytes: headroom,
          details: { usedFraction: fraction, freeBytes: acc.freeBytes, totalBytes: acc.totalBytes },
        },
        fix:
          `a spike above ${formatBytes(headroom)} (evaluation, checkpoint saving, a longer sequence) will OOM: ${freeOthers}` +
          'lower the batch size and keep the effective batch with gradient accumulation (gpumem estimate / gpumem fit find the largest that fits)',
      });
    }
    return findings;
  },
};

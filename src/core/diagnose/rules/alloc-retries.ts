import { formatBytes } from '../../units.js';
import type { Finding, Rule } from '../types.js';
import { freeOtherHolders } from './helpers.js';

/**
 * A process whose PyTorch allocator had to retry (free its whole cache and call cudaMalloc again) to satisfy
 * an allocation: it is at the edge of the GPU's memory, and the next larger request will raise an OOM.
 * Known only for processes whose statistics a running `gpumem run` publishes.
 */
export const allocRetries: Rule = {
  id: 'alloc-retries',
  description: 'a PyTorch process\'s allocator retried allocations after freeing its cache (num_alloc_retries > 0): a warning sign before an OOM',
  check(ctx) {
    const findings: Finding[] = [];
    for (const acc of ctx.accounting) {
      for (const s of acc.pytorch) {
        if (!s.numAllocRetries) continue;
        findings.push({
          id: this.id,
          severity: 'warning',
          title: `pid ${s.pid} on GPU ${acc.gpuIndex}: PyTorch's allocator retried ${s.numAllocRetries} time${s.numAllocRetries === 1 ? '' : 's'} — close to an OOM`,
          evidence: {
            summary: `num_alloc_retries ${s.numAllocRetries}; allocated ${formatBytes(s.allocatedBytes)}, reserved ${formatBytes(s.reservedBytes)}, ` +
              `process total (NVML) ${formatBytes(s.processUsedBytes)}; GPU free ${formatBytes(acc.freeBytes)}`,
            pids: [s.pid],
            gpuIndexes: [acc.gpuIndex],
            bytes: s.reservedBytes,
            details: { numAllocRetries: s.numAllocRetries, allocatedBytes: s.allocatedBytes, reservedBytes: s.reservedBytes, freeBytes: acc.freeBytes },
          },
          fix:
            `each retry is a full cache flush plus a second cudaMalloc (slow steps), and the next larger request will fail: ${freeOtherHolders(ctx, acc.gpuIndex, [s.pid])}` +
            `lower the batch and keep the effective batch with gradient accumulation (gpumem fit finds the largest that fits)`,
        });
      }
    }
    return findings;
  },
};

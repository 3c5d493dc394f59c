import { formatBytes, formatPercent } from '../../units.js';
import { THRESHOLDS } from '../thresholds.js';
import type { Finding, Rule } from '../types.js';

/**
 * A large share of a PyTorch process's reserved memory is not allocated to any tensor: PyTorch's cache holds
 * it, free for this process only. Either fragmentation (free pieces too small for the next request) or the
 * memory of a finished phase never returned. Known only for processes a running `gpumem run` publishes.
 */
export const pytorchCache: Rule = {
  id: 'pytorch-cache',
  description: `a PyTorch process holds ≥ ${formatBytes(THRESHOLDS.pytorchCachedMinBytes)} reserved but unallocated (≥ ${THRESHOLDS.pytorchCachedMinFraction * 100}% of its reserved bytes)`,
  check(ctx) {
    const findings: Finding[] = [];
    for (const acc of ctx.accounting) {
      for (const s of acc.pytorch) {
        if (s.cachedBytes === null || s.reservedBytes === null || s.reservedBytes === 0) continue;
        const fraction = s.cachedBytes / s.reservedBytes;
        if (s.cachedBytes < THRESHOLDS.pytorchCachedMinBytes || fraction < THRESHOLDS.pytorchCachedMinFraction) continue;
        const env = ctx.processes.find((v) => v.pid === s.pid)?.row.host?.cudaEnv ?? null;
        const conf = env ? env.PYTORCH_CUDA_ALLOC_CONF ?? env.PYTORCH_ALLOC_CONF ?? '' : null;
        const expandable = conf !== null && /expandable_segments\s*:\s*true/i.test(conf);
        findings.push({
          id: this.id,
          severity: 'warning',
          title: `pid ${s.pid} on GPU ${acc.gpuIndex}: ${formatBytes(s.cachedBytes)} reserved by PyTorch but unallocated (${formatPercent(fraction * 100)} of its reserved memory)`,
          evidence: {
            summary: `reserved ${formatBytes(s.reservedBytes)} − allocated ${formatBytes(s.allocatedBytes)} = ${formatBytes(s.cachedBytes)} cached; ` +
              `process total (NVML) ${formatBytes(s.processUsedBytes)}, of which non-PyTorch ${formatBytes(s.nonPytorchBytes)}` +
              (conf === null ? '' : `; PYTORCH_CUDA_ALLOC_CONF=${conf || '(unset)'}`),
            pids: [s.pid],
            gpuIndexes: [acc.gpuIndex],
            bytes: s.cachedBytes,
            details: { cachedBytes: s.cachedBytes, reservedBytes: s.reservedBytes, allocatedBytes: s.allocatedBytes, expandableSegments: expandable },
          },
          fix: expandable
            ? `expandable_segments is already on: the ${formatBytes(s.cachedBytes)} is memory of a finished phase — call torch.cuda.empty_cache() ` +
              'between phases (gpumem_torch.clear_cuda_memory() does it and says how much came back), and keep tensor shapes fixed'
            : `start it with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (gpumem run sets it) so the ${formatBytes(s.cachedBytes)} of free pieces ` +
              'can be reused as one segment; between phases torch.cuda.empty_cache() returns cached memory to the driver',
        });
      }
    }
    return findings;
  },
};

import { formatBytes } from '../../units.js';
import { allowedGpuIndexes } from '../cuda-visible.js';
import type { Finding, Rule } from '../types.js';

/** Memory on a GPU that the process's own CUDA_VISIBLE_DEVICES does not name. */
export const wrongGpu: Rule = {
  id: 'wrong-gpu',
  description: "a process holds memory on a GPU its CUDA_VISIBLE_DEVICES does not include",
  check(ctx) {
    const findings: Finding[] = [];
    for (const v of ctx.processes) {
      const env = v.row.host?.cudaEnv;
      const cvd = env?.CUDA_VISIBLE_DEVICES;
      if (cvd === undefined || v.gpuIndex === null || (v.usedBytes ?? 0) === 0) continue;
      const allowed = allowedGpuIndexes(cvd, env?.CUDA_DEVICE_ORDER, ctx.devices);
      if (allowed === null || allowed.includes(v.gpuIndex)) continue;
      findings.push({
        id: this.id,
        severity: 'warning',
        title: `pid ${v.pid} holds ${formatBytes(v.usedBytes)} on GPU ${v.gpuIndex}, outside its CUDA_VISIBLE_DEVICES=${cvd}`,
        evidence: {
          summary: `CUDA_VISIBLE_DEVICES="${cvd}" at start allows GPU ${allowed.length > 0 ? allowed.join(', ') : 'none'}; memory found on GPU ${v.gpuIndex}`,
          pids: [v.pid],
          gpuIndexes: [v.gpuIndex],
          bytes: v.usedBytes,
          details: { cudaVisibleDevices: cvd, allowed },
        },
        fix:
          'the variable was changed after CUDA started (setting os.environ inside the script is too late once torch touched CUDA) or a library picked its own device; ' +
          `set it before the process starts: CUDA_VISIBLE_DEVICES=${allowed.join(',') || 'N'} python …, or gpumem run --gpus ${allowed.join(',') || 'N'} -- …`,
      });
    }
    return findings;
  },
};

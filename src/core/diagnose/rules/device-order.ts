import { hasMixedModels, parseCudaVisibleDevices } from '../cuda-visible.js';
import type { Rule } from '../types.js';
import { gpusOf, pidsOf } from './helpers.js';

/** Numeric CUDA_VISIBLE_DEVICES on a machine with mixed GPU models without CUDA_DEVICE_ORDER=PCI_BUS_ID. */
export const deviceOrder: Rule = {
  id: 'device-order',
  description: 'numeric CUDA_VISIBLE_DEVICES on a machine with mixed GPU models, without CUDA_DEVICE_ORDER=PCI_BUS_ID',
  check(ctx) {
    if (!hasMixedModels(ctx.devices)) return [];
    const rows = ctx.processes.filter((v) => {
      const env = v.row.host?.cudaEnv;
      const cvd = env?.CUDA_VISIBLE_DEVICES;
      return cvd !== undefined && env?.CUDA_DEVICE_ORDER !== 'PCI_BUS_ID' && parseCudaVisibleDevices(cvd).some((e) => e.kind === 'index');
    });
    if (rows.length === 0) return [];
    const models = ctx.devices.map((d) => `${d.index}: ${d.name ?? '?'}`).join(', ');
    return [
      {
        id: this.id,
        severity: 'warning',
        title: `GPU numbers may not mean what nvidia-smi shows for ${rows.length} process${rows.length === 1 ? '' : 'es'}`,
        evidence: {
          summary: `${rows.map((v) => `pid ${v.pid} CUDA_VISIBLE_DEVICES=${v.row.host?.cudaEnv?.CUDA_VISIBLE_DEVICES} on GPU ${v.gpuIndex ?? '?'}`).join('; ')}; ` +
            `models here: ${models}; CUDA_DEVICE_ORDER is ${rows[0]?.row.host?.cudaEnv?.CUDA_DEVICE_ORDER ?? 'unset'} (fastest first)`,
          pids: pidsOf(rows),
          gpuIndexes: gpusOf(rows),
          bytes: null,
          details: { mixedModels: true },
        },
        fix: 'export CUDA_DEVICE_ORDER=PCI_BUS_ID so CUDA numbers GPUs as nvidia-smi does, or name GPUs by UUID in CUDA_VISIBLE_DEVICES (gpumem run --gpus does both)',
      },
    ];
  },
};

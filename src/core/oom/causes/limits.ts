/**
 * Limits and numbers the driver distorts: a per-process memory fraction that was hit, the WSL/WDDM
 * "not available" sentinel and Windows' system-memory fallback (allocated > total), and the device index,
 * which is counted after CUDA_VISIBLE_DEVICES remapping.
 */
import { b, pct, type CauseRule } from './helpers.js';

export const fractionLimit: CauseRule = (event) => {
  const allowed = event.allowedBytes;
  if (allowed === null || event.family === 'pytorch-mps') return null;
  const reserved = (event.allocatedByPytorchBytes ?? 0n) + (event.reservedUnallocatedBytes ?? 0n);
  const req = event.requestedBytes ?? 0n;
  const need = reserved + req;
  if (need <= allowed) return null;
  const total = event.totalBytes;
  const fraction = total !== null && total > 0n ? Math.min(1, Math.ceil((Number(need) / Number(total)) * 100) / 100) : null;
  return {
    id: 'fraction-limit',
    score: 90,
    title: `The per-process memory limit of ${b(allowed)} was hit`,
    evidence: { allowedBytes: allowed, neededBytes: need, totalBytes: total },
    detail: `A memory fraction caps this process at ${b(allowed)}${total !== null ? ` (${pct(allowed, total)} of ${b(total)})` : ''}; holding ${b(reserved)} plus the ${b(req)} request needs ${b(need)}.`,
    fix: fraction !== null
      ? `Raise torch.cuda.set_per_process_memory_fraction to at least ${fraction.toFixed(2)} (or remove it), or shrink the footprint by ${b(need - allowed)}.`
      : `Raise or remove the memory fraction, or shrink the footprint by ${b(need - allowed)}.`,
  };
};

export const driverSentinel: CauseRule = (event) => {
  // Only the driver's sentinel means WSL/WDDM; a size that could not be read says so in its own reason.
  const sentinel = Object.entries(event.unavailable).some(([k, why]) => (k === 'processInUseBytes' || k.startsWith('otherProcesses.')) && why.includes('sentinel'));
  const allocated = event.allocatedByPytorchBytes;
  const total = event.totalBytes;
  const overCommitted = allocated !== null && total !== null && allocated > total;
  if (!sentinel && !overCommitted) return null;
  if (overCommitted) {
    return {
      id: 'wddm-fallback',
      score: 40,
      title: 'Windows system-memory fallback: allocated exceeds the GPU',
      evidence: { allocatedByPytorchBytes: allocated, totalBytes: total },
      detail: `PyTorch reports ${b(allocated)} allocated on a ${b(total)} GPU; the Windows (WDDM) driver spilled ${b((allocated as bigint) - (total as bigint))} into system memory before failing.`,
      fix: `Reduce the footprint below ${b(total)} (smaller batch, checkpointing, bf16); spilled memory is slow even when it does not fail.`,
    };
  }
  return {
    id: 'wsl-sentinel',
    score: 10,
    title: 'Per-process GPU memory is not available on this platform (WSL/WDDM)',
    evidence: { unavailable: Object.keys(event.unavailable).join(',') },
    detail: 'The driver printed 17179869184.00 GiB (its "not available" value) for process memory, so per-process numbers are unknown; they are shown as n/a, not as a size.',
    fix: 'Use the allocated and reserved numbers of the message, or torch.cuda.memory_summary() inside the process.',
  };
};

export const deviceRemap: CauseRule = (event, context) => {
  const visible = context.cudaVisibleDevices;
  if (event.gpuIndex === null || visible === undefined || visible.trim() === '') return null;
  const list = visible.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const physical = list[event.gpuIndex];
  if (physical === undefined || physical === String(event.gpuIndex)) return null;
  // A UUID entry (CUDA accepts a unique prefix) is named by its nvidia-smi index: the number people typed.
  const matches = /^GPU-/i.test(physical) ? (context.gpus ?? []).filter((g) => g.uuid !== null && g.uuid.toLowerCase().startsWith(physical.toLowerCase())) : [];
  const byUuid = matches.length === 1 ? matches[0] : undefined;
  const shown = byUuid ? `${byUuid.index} (${physical})` : physical;
  const index = byUuid ? String(byUuid.index) : physical;
  return {
    id: 'device-remap',
    score: 30,
    title: `"GPU ${event.gpuIndex}" in the message is physical GPU ${shown}`,
    evidence: { gpuIndex: event.gpuIndex, cudaVisibleDevices: visible, physicalGpu: physical, physicalGpuIndex: byUuid ? byUuid.index : /^\d+$/.test(physical) ? Number(physical) : null },
    detail: `With CUDA_VISIBLE_DEVICES=${visible}, the process numbers its GPUs from 0, so its GPU ${event.gpuIndex} is entry ${event.gpuIndex} of that list: ${byUuid ? `GPU ${shown}` : physical} in nvidia-smi${/^\d+$/.test(physical) ? ' (with CUDA_DEVICE_ORDER=PCI_BUS_ID)' : ''}.`,
    fix: `Look at GPU ${index} in \`gpumem status\`; if the run was meant for another GPU, start it with \`gpumem run --gpus <index> -- …\`, which pins by UUID.`,
  };
};

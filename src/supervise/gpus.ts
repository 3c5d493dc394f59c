/**
 * GPU choice for a supervised run: `2`, `0,1,2`, UUIDs (or unique UUID prefixes), `auto` (the GPU with
 * the most free memory) and `auto:N` (the N freest). The result is pinned by UUID so that the index a
 * user typed stays the GPU nvidia-smi shows under that index whatever CUDA's own ordering would be.
 */
import { GpumemError } from '../core/errors.js';
import { formatBytes } from '../core/units.js';
import type { Device, Sample } from '../core/types.js';

export interface GpuChoice {
  /** The chosen devices, in the order the user gave them (auto: freest first). */
  devices: Device[];
  /** How they were chosen, for the environment log: "--gpus 0,2" or "auto: 2 freest". */
  reason: string;
}

function listPresent(devices: readonly Device[]): string {
  if (devices.length === 0) return 'no GPUs are present';
  return `GPUs present: ${devices.map((d) => `${d.index} (${d.uuid ?? 'uuid n/a'}, ${d.name ?? 'name n/a'})`).join('; ')}`;
}

/**
 * Resolves a `--gpus` value against the devices of a sample. `spec` undefined means "all GPUs, as CUDA
 * would see them without us" and returns null (no pinning). An empty value, unknown indexes or UUIDs,
 * duplicates, or more GPUs than present are refused with the list of GPUs present.
 */
export function chooseGpus(spec: string | undefined, sample: Sample): GpuChoice | null {
  if (spec === undefined) return null;
  // An empty value is almost always an unset shell variable (--gpus "$GPU"): running on every GPU instead
  // would silently land on someone else's.
  if (spec.trim() === '') {
    throw new GpumemError('BAD_OPTION_VALUE', '--gpus: the value is empty', { hint: `give GPU indexes or UUIDs (e.g. --gpus 0 or --gpus auto), or leave --gpus out to use every GPU; ${listPresent(sample.devices)}` });
  }
  const devices = [...sample.devices].sort((a, b) => a.index - b.index);
  const text = spec.trim();
  const auto = /^auto(?::(\d+))?$/i.exec(text);
  if (auto) {
    const count = auto[1] === undefined ? 1 : Number(auto[1]);
    const usable = devices.filter((d) => d.status === 'ok' && d.uuid !== null);
    if (count < 1 || count > usable.length) {
      throw new GpumemError('BAD_OPTION_VALUE', `--gpus ${text}: asked for ${count} GPU(s) but ${usable.length} usable`, {
        hint: listPresent(devices),
      });
    }
    const byFree = [...usable].sort((a, b) => (b.memory.freeBytes ?? -1) - (a.memory.freeBytes ?? -1) || a.index - b.index);
    const chosen = byFree.slice(0, count);
    const free = chosen.map((d) => `GPU ${d.index} ${formatBytes(d.memory.freeBytes)} free`).join(', ');
    return { devices: chosen, reason: `--gpus ${text}: the ${count === 1 ? 'freest GPU' : `${count} freest GPUs`} (${free})` };
  }
  const chosen: Device[] = [];
  for (const token of text.split(',').map((t) => t.trim())) {
    const device = resolveOne(token, devices);
    if (!device) {
      throw new GpumemError('BAD_OPTION_VALUE', `--gpus: no GPU "${token}" on this machine`, { hint: listPresent(devices) });
    }
    if (chosen.includes(device)) {
      throw new GpumemError('BAD_OPTION_VALUE', `--gpus: GPU "${token}" is given twice`, { hint: listPresent(devices) });
    }
    if (device.uuid === null) {
      throw new GpumemError('BAD_OPTION_VALUE', `--gpus: GPU ${device.index} has no readable UUID, so it cannot be pinned`, {
        hint: `its status is "${device.status}"; choose another GPU`,
      });
    }
    chosen.push(device);
  }
  return { devices: chosen, reason: `--gpus ${text}` };
}

function resolveOne(token: string, devices: readonly Device[]): Device | undefined {
  if (/^\d+$/.test(token)) return devices.find((d) => d.index === Number(token));
  const lower = token.toLowerCase();
  const exact = devices.find((d) => d.uuid?.toLowerCase() === lower);
  if (exact) return exact;
  // A unique prefix (at least "GPU-" and 4 more characters) is accepted, as nvidia-smi -i does.
  if (lower.length < 8) return undefined;
  const matches = devices.filter((d) => d.uuid?.toLowerCase().startsWith(lower));
  return matches.length === 1 ? matches[0] : undefined;
}

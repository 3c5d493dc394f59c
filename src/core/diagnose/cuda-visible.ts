/**
 * CUDA_VISIBLE_DEVICES as CUDA reads it: comma-separated integers (in CUDA's own order), `GPU-…` UUID
 * prefixes, or `MIG-…` ids; CUDA stops at the first entry it cannot read, and an empty value hides every GPU.
 */
import type { Device } from '../types.js';

export type VisibleEntry = { kind: 'index'; index: number } | { kind: 'uuid'; prefix: string };

/** Parses the variable into the entries CUDA would honour (up to the first invalid one). */
export function parseCudaVisibleDevices(value: string): VisibleEntry[] {
  const entries: VisibleEntry[] = [];
  for (const raw of value.split(',')) {
    const item = raw.trim();
    if (/^\d+$/.test(item)) entries.push({ kind: 'index', index: Number(item) });
    else if (/^(GPU|MIG)-[0-9a-fA-F-/]+$/.test(item)) entries.push({ kind: 'uuid', prefix: item });
    else break;
  }
  return entries;
}

/** True when the machine has more than one GPU model, so CUDA's default fastest-first order can differ from PCI order. */
export function hasMixedModels(devices: readonly Device[]): boolean {
  return new Set(devices.map((d) => d.name ?? '?')).size > 1;
}

/**
 * The nvidia-smi indexes a process may use under its CUDA_VISIBLE_DEVICES, or null when that cannot be known
 * (integer entries with fastest-first ordering on a machine with mixed models).
 */
export function allowedGpuIndexes(value: string, order: string | undefined, devices: readonly Device[]): number[] | null {
  const entries = parseCudaVisibleDevices(value);
  const indexesAreNvml = order === 'PCI_BUS_ID' || !hasMixedModels(devices);
  const allowed: number[] = [];
  for (const e of entries) {
    if (e.kind === 'index') {
      if (!indexesAreNvml) return null;
      allowed.push(e.index);
    } else {
      const match = devices.find((d) => d.uuid?.startsWith(e.prefix) || d.migInstances.some((m) => m.uuid?.startsWith(e.prefix)));
      if (match) allowed.push(match.index);
    }
  }
  return allowed;
}

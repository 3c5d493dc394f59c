/**
 * The environment of a supervised child and the decisions behind it. Every variable gpumem sets, keeps or
 * leaves alone is recorded as one decision and printed once, so a user can see why their job saw what it saw.
 */
import type { Device } from '../core/types.js';
import type { EnvDecision } from '../core/run/report.js';

export type { EnvDecision };

export interface EnvPlan {
  env: Record<string, string>;
  decisions: EnvDecision[];
}

export interface EnvPlanOptions {
  /** Chosen GPUs; null = no --gpus (leave CUDA_VISIBLE_DEVICES as the user has it). */
  gpus: Device[] | null;
  /** False with --no-alloc-conf. */
  allocConf: boolean;
  /** Extra variables (pipeline stage env, plugins); they win over the base environment. */
  extra?: Record<string, string>;
}

const ALLOC_VARS = ['PYTORCH_CUDA_ALLOC_CONF', 'PYTORCH_ALLOC_CONF'] as const;

/**
 * Merges `expandable_segments:True` into an allocator configuration string unless the key is already there
 * (in any case, with any value). Returns the new string and whether it changed. Options the user wrote are
 * kept verbatim and in their order.
 */
export function mergeAllocConf(existing: string | null): { value: string; changed: boolean } {
  const text = (existing ?? '').trim();
  const parts = text === '' ? [] : text.split(',').map((p) => p.trim()).filter((p) => p !== '');
  const hasKey = parts.some((p) => p.split(':')[0]?.trim().toLowerCase() === 'expandable_segments');
  if (hasKey) return { value: text, changed: false };
  return { value: [...parts, 'expandable_segments:True'].join(','), changed: true };
}

/**
 * Builds the child's environment from `base` (gpumem's own environment). Pure: takes the environment as a
 * value and returns the new one with one decision per variable touched or deliberately left alone.
 */
export function planEnv(base: Readonly<Record<string, string | undefined>>, options: EnvPlanOptions): EnvPlan {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  const decisions: EnvDecision[] = [];
  const prev = (name: string): string | null => base[name] ?? null;

  if (options.gpus) {
    const uuids = options.gpus.map((d) => d.uuid as string).join(',');
    const indexes = options.gpus.map((d) => d.index).join(',');
    env.CUDA_VISIBLE_DEVICES = uuids;
    decisions.push({
      name: 'CUDA_VISIBLE_DEVICES', value: uuids, previous: prev('CUDA_VISIBLE_DEVICES'), action: 'set',
      reason: `pins GPU ${indexes} by UUID; the child sees ${options.gpus.length === 1 ? 'it as cuda:0' : `them as cuda:0..${options.gpus.length - 1}`}`,
    });
    env.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
    decisions.push({
      name: 'CUDA_DEVICE_ORDER', value: 'PCI_BUS_ID', previous: prev('CUDA_DEVICE_ORDER'), action: 'set',
      reason: 'index order equals nvidia-smi order',
    });
  } else if (base.CUDA_VISIBLE_DEVICES !== undefined) {
    decisions.push({
      name: 'CUDA_VISIBLE_DEVICES', value: base.CUDA_VISIBLE_DEVICES, previous: base.CUDA_VISIBLE_DEVICES, action: 'kept',
      reason: 'no --gpus given; the value from your environment is passed on',
    });
  }

  if (options.allocConf) {
    // PyTorch ≥ 2.7 also reads PYTORCH_ALLOC_CONF; merge into whichever the user set, default the classic name.
    const userVar = ALLOC_VARS.find((n) => base[n] !== undefined) ?? 'PYTORCH_CUDA_ALLOC_CONF';
    const merged = mergeAllocConf(base[userVar] ?? null);
    env[userVar] = merged.value;
    decisions.push({
      name: userVar, value: merged.value, previous: prev(userVar),
      action: !merged.changed ? 'kept' : base[userVar] === undefined ? 'set' : 'merged',
      reason: !merged.changed
        ? 'you set expandable_segments yourself; your value wins'
        : 'expandable_segments:True reduces fragmentation OOMs (--no-alloc-conf to skip)',
    });
  } else {
    decisions.push({
      name: 'PYTORCH_CUDA_ALLOC_CONF', value: base.PYTORCH_CUDA_ALLOC_CONF ?? null, previous: prev('PYTORCH_CUDA_ALLOC_CONF'),
      action: base.PYTORCH_CUDA_ALLOC_CONF === undefined ? 'unset' : 'kept', reason: '--no-alloc-conf: left as you have it',
    });
  }

  for (const [name, value] of Object.entries(options.extra ?? {})) {
    const previous = env[name] ?? null;
    env[name] = value;
    decisions.push({ name, value, previous, action: 'set', reason: 'from the run configuration' });
  }
  return { env, decisions };
}

/** One line per decision, as printed on stderr before the child starts. */
export function formatDecision(d: EnvDecision): string {
  const shown = d.value === null ? '(unset)' : d.value;
  const was = d.previous !== null && d.previous !== d.value ? ` (was ${d.previous})` : '';
  return `${d.name}=${shown}${was}  [${d.action}: ${d.reason}]`;
}

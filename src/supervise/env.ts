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

/**
 * The variables PyTorch reads its allocator configuration from. Newer releases (the unified allocator
 * configuration, 2.9 and later) read PYTORCH_ALLOC_CONF first and fall back to PYTORCH_CUDA_ALLOC_CONF
 * only when it is unset; older ones read PYTORCH_CUDA_ALLOC_CONF alone. gpumem cannot know the child's
 * version before it starts, so both get the same value.
 */
export const ALLOC_VARS = ['PYTORCH_ALLOC_CONF', 'PYTORCH_CUDA_ALLOC_CONF'] as const;

export interface AllocConfMerge {
  value: string;
  changed: boolean;
  /** Why expandable_segments was not added: the user set the key, or the backend is not the native allocator. */
  kept: 'has-key' | 'async-backend' | null;
}

/**
 * Merges `expandable_segments:True` into an allocator configuration string unless the key is already there
 * (in any case, with any value) or the configuration selects `backend:cudaMallocAsync`, where expandable
 * segments do not exist (they are an option of PyTorch's native caching allocator). Options the user wrote
 * are kept verbatim and in their order.
 */
export function mergeAllocConf(existing: string | null): AllocConfMerge {
  const text = (existing ?? '').trim();
  const parts = text === '' ? [] : text.split(',').map((p) => p.trim()).filter((p) => p !== '');
  const keyOf = (p: string): string => p.split(':')[0]?.trim().toLowerCase() ?? '';
  if (parts.some((p) => keyOf(p) === 'expandable_segments')) return { value: text, changed: false, kept: 'has-key' };
  const backend = parts.find((p) => keyOf(p) === 'backend');
  if (backend && backend.slice(backend.indexOf(':') + 1).trim().toLowerCase() !== 'native') return { value: text, changed: false, kept: 'async-backend' };
  return { value: [...parts, 'expandable_segments:True'].join(','), changed: true, kept: null };
}

const KEPT_REASON = {
  'has-key': 'you set expandable_segments yourself; your value wins',
  'async-backend': 'your backend is not the native allocator, which alone has expandable_segments; left as you set it',
} as const;

/** The allocator-config decisions: both variables, one value, unless the user gave them different values. */
function planAllocConf(base: Readonly<Record<string, string | undefined>>, env: Record<string, string>): EnvDecision[] {
  const [primary, legacy] = ALLOC_VARS;
  const given = ALLOC_VARS.filter((n) => base[n] !== undefined);
  const differ = given.length === 2 && base[primary]?.trim() !== base[legacy]?.trim();
  const role = (name: string): string => (name === primary ? 'read first by PyTorch ≥ 2.9' : 'read by PyTorch < 2.9 (and by later ones when the other is unset)');
  return ALLOC_VARS.map((name) => {
    // Different values: each release keeps reading what the user gave it. Otherwise one value for both.
    const from = differ ? name : (given[0] ?? name);
    const merged = mergeAllocConf(base[from] ?? null);
    env[name] = merged.value;
    const previous = base[name] ?? null;
    const action = previous === merged.value ? 'kept' : previous === null ? 'set' : 'merged';
    const what = merged.kept ? KEPT_REASON[merged.kept] : 'expandable_segments:True reduces fragmentation OOMs (--no-alloc-conf to skip)';
    const copied = from !== name ? `; same value as ${from}, since the child's PyTorch version is not known before it starts` : '';
    return { name, value: merged.value, previous, action, reason: `${role(name)}: ${what}${copied}` };
  });
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
    decisions.push(...planAllocConf(base, env));
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

/**
 * Counting over a tensor list: parameters per dtype and per top-level module, sharded-index parsing, and the
 * name matching that freezing and LoRA use. Works the same whether tensors came from a safetensors header
 * or were derived from an architecture's config.
 */
import { GpumemError } from '../errors.js';
import { nameRecord } from '../records.js';
import type { TensorInfo } from './safetensors.js';

export interface ParamSummary {
  totalParams: number;
  totalBytes: number;
  /** dtype → parameters stored in it. */
  paramsByDtype: Record<string, number>;
  /** Top-level module ("model.layers", "lm_head", …) → parameters. */
  paramsByModule: Record<string, number>;
}

/** Wrapper prefixes that hold the whole model; grouping looks one level below them. */
const WRAPPERS = new Set(['model', 'transformer', 'bert', 'vit', 'roberta', 'gpt_neox', 'backbone', 'module', 'encoder', 'decoder']);

/**
 * The top-level module of a parameter name: its first component, or the first two when the first is a
 * wrapper like "model"/"transformer"; numbered children collapse ("model.layers.3.mlp" → "model.layers").
 */
export function topLevelModule(name: string): string {
  const parts = name.split('.');
  const first = parts[0] ?? name;
  if (parts.length > 2 && WRAPPERS.has(first)) return `${first}.${parts[1]}`;
  return parts.length > 1 ? first : name;
}

/** Sums parameters and bytes over `tensors`, per dtype and per top-level module. */
export function summarizeTensors(tensors: readonly TensorInfo[]): ParamSummary {
  const paramsByDtype = nameRecord<number>();
  const paramsByModule = nameRecord<number>();
  let totalParams = 0;
  let totalBytes = 0;
  for (const t of tensors) {
    totalParams += t.elements;
    totalBytes += t.sizeBytes;
    paramsByDtype[t.dtype] = (paramsByDtype[t.dtype] ?? 0) + t.elements;
    const mod = topLevelModule(t.name);
    paramsByModule[mod] = (paramsByModule[mod] ?? 0) + t.elements;
  }
  return { totalParams, totalBytes, paramsByDtype, paramsByModule };
}

/**
 * True when `name` lies under module `prefix` ("backbone" matches "backbone.layer1.0.conv1.weight" and
 * "backbone" itself, not "backbone2.x"). Matching is on whole dotted components.
 */
export function isUnderPrefix(name: string, prefix: string): boolean {
  return name === prefix || name.startsWith(`${prefix}.`);
}

export interface ShardIndex {
  /** Shard file name → tensor names it holds. */
  shards: Map<string, string[]>;
  /** `metadata.total_size` when present (bytes of all tensors). */
  totalSizeBytes: number | null;
}

/**
 * Parses a sharded checkpoint's `model.safetensors.index.json` (`{metadata: {total_size}, weight_map: {name:
 * file}}`) into the shard files to read. Shard names must be plain file names: a path that climbs out of
 * the folder ("../x") is refused rather than followed.
 */
export function parseShardIndex(text: string, where: string): ShardIndex {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new GpumemError('INPUT_MALFORMED', `${where}: not valid JSON`, { hint: 'expected a model.safetensors.index.json', cause });
  }
  const map = (parsed as { weight_map?: unknown } | null)?.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map)) {
    throw new GpumemError('INPUT_MALFORMED', `${where}: no "weight_map" object`, { hint: 'expected a model.safetensors.index.json' });
  }
  const shards = new Map<string, string[]>();
  for (const [tensor, file] of Object.entries(map)) {
    if (typeof file !== 'string' || file === '' || file.includes('/') || file.includes('\\') || file.startsWith('..')) {
      throw new GpumemError('INPUT_UNSAFE', `${where}: tensor "${tensor}" points at "${String(file)}", not a file in the same folder`, {
        hint: 'shard names in weight_map must be plain file names',
      });
    }
    const list = shards.get(file) ?? [];
    list.push(tensor);
    shards.set(file, list);
  }
  const total = (parsed as { metadata?: { total_size?: unknown } }).metadata?.total_size;
  return { shards, totalSizeBytes: typeof total === 'number' && Number.isFinite(total) ? total : null };
}

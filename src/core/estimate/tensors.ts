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

/**
 * Refuses module prefixes (--freeze, a stage's freeze=, --unfreeze groups) that name no parameter of the
 * model. Such a prefix would freeze nothing and the estimate would silently count a fully trained model:
 * transformers 5 renamed ViT's `vit.encoder.layer.N` to `vit.layers.N`, for one, so names copied from an
 * older release match nothing. The hint lists the model's own names at the depth the prefix was given.
 */
export function checkPrefixes(tensors: readonly TensorInfo[] | null, prefixes: readonly string[], option: string): void {
  if (prefixes.length === 0) return;
  if (tensors === null) {
    throw new GpumemError('BAD_OPTION_VALUE', `${option}: the model has no parameter names (--params N), so nothing can be frozen by name`, {
      hint: 'give a safetensors file, its header, or a config.json instead of --params',
    });
  }
  for (const prefix of prefixes) {
    if (tensors.some((t) => isUnderPrefix(t.name, prefix))) continue;
    throw new GpumemError('BAD_OPTION_VALUE', `${option}: "${prefix}" names no parameter of the model`, {
      hint: `module names at that depth include ${namesNear(tensors, prefix).join(', ')}`,
    });
  }
}

/** Up to six module names of the same depth as `prefix`, those sharing its longest leading path first. */
function namesNear(tensors: readonly TensorInfo[], prefix: string): string[] {
  const want = prefix.split('.');
  const scored = new Map<string, number>();
  for (const t of tensors) {
    const parts = t.name.split('.');
    if (parts.length <= want.length) continue;
    const name = parts.slice(0, want.length).join('.');
    if (scored.has(name)) continue;
    let shared = 0;
    while (shared < want.length && parts[shared] === want[shared]) shared++;
    scored.set(name, shared);
  }
  // Stable sort: among equal scores the model's own order stays.
  return [...scored].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name]) => name);
}

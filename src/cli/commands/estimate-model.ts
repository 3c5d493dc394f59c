/**
 * Loads the model `gpumem estimate` is asked about: a safetensors file (header only: 8 bytes, then the
 * header), a folder or sharded index (every shard's header), or a config.json; or `--params`.
 */
import { appendAll } from '../../core/arrays.js';
import { closeSync, existsSync, fstatSync, openSync, readSync, readdirSync, statSync } from 'node:fs';
import { inputKind, readInputBytes } from '../../sources/index.js';
import { basename, dirname, join } from 'node:path';
import { GpumemError } from '../../core/errors.js';
import { modelFromConfig, type TransformerShape } from '../../core/estimate/architectures.js';
import { modelFromParams, parseParamCount, type ShapeHints } from '../../core/estimate/params.js';
import { parseHeaderJson, readHeaderLength, type TensorInfo } from '../../core/estimate/safetensors.js';
import { parseShardIndex } from '../../core/estimate/tensors.js';
import type { ModelInput } from '../../core/estimate/setup.js';

export interface LoadedModel {
  model: ModelInput;
  source: 'safetensors' | 'sharded' | 'config' | 'params';
  files: string[];
}

/**
 * Reads one safetensors header from disk: exactly 8 + N bytes, whatever the file's size, so a 100 GB
 * checkpoint costs two small reads.
 */
export function readSafetensorsHeader(path: string): TensorInfo[] {
  if (inputKind(path, { what: 'safetensors file', hint: 'give a model.safetensors file' }) !== 'file') {
    throw new GpumemError('INPUT_UNREADABLE', `${path} is a FIFO, not a safetensors file`, { hint: 'give a model.safetensors file' });
  }
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (cause) {
    throw new GpumemError('INPUT_NOT_FOUND', `cannot open ${path}`, { hint: 'check the path', cause });
  }
  try {
    const size = fstatSync(fd).size;
    const first8 = new Uint8Array(8);
    const got = readSync(fd, first8, 0, 8, 0);
    const length = readHeaderLength(first8.subarray(0, got), path, size);
    const header = new Uint8Array(length);
    readSync(fd, header, 0, length, 8);
    return parseHeaderJson(header, path).tensors;
  } finally {
    closeSync(fd);
  }
}

function readJson(path: string): Record<string, unknown> {
  // A config or shard index is small; the cap keeps a FIFO or a wrong path from growing memory.
  const text = readInputBytes(path, 64 * 1024 * 1024, { what: 'JSON file', hint: 'give a config.json or model.safetensors.index.json' }).toString('utf8');
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new GpumemError('INPUT_MALFORMED', `${path}: not a JSON object`, { hint: 'give a config.json or model.safetensors.index.json' });
}

function fromShards(indexPath: string): { tensors: TensorInfo[]; files: string[] } {
  const index = parseShardIndex(readInputBytes(indexPath, 64 * 1024 * 1024, { what: 'shard index', hint: 'give a model.safetensors.index.json' }).toString('utf8'), indexPath);
  const tensors: TensorInfo[] = [];
  const files: string[] = [];
  for (const shard of index.shards.keys()) {
    const path = join(dirname(indexPath), shard);
    files.push(path);
    appendAll(tensors, readSafetensorsHeader(path));
  }
  return { tensors, files };
}

/** The shape from a config.json next to the weights, when there is one gpumem understands. */
function siblingShape(dir: string): TransformerShape | null {
  const path = join(dir, 'config.json');
  if (!existsSync(path)) return null;
  try {
    return modelFromConfig(readJson(path), path).shape;
  } catch {
    return null;
  }
}

/** Resolves the MODEL argument (or `--params`) into a ModelInput; `hints` fill in a shape for --params. */
export function loadModel(path: string | undefined, params: string | undefined, hints: ShapeHints): LoadedModel {
  if (path === undefined) {
    if (params === undefined) {
      throw new GpumemError('USAGE', 'no model given', { hint: 'give a model.safetensors, a folder, a config.json, or --params 7B' });
    }
    return { model: modelFromParams(parseParamCount(params), hints), source: 'params', files: [] };
  }
  if (!existsSync(path)) throw new GpumemError('INPUT_NOT_FOUND', `${path} does not exist`, { hint: 'check the path' });
  // A model without a single parameter would be estimated as 0 bytes, which reads like an answer.
  const total = (tensors: TensorInfo[]): number => {
    const sum = tensors.reduce((a, t) => a + t.elements, 0);
    if (sum > 0) return sum;
    throw new GpumemError('INPUT_MALFORMED', `${path}: ${tensors.length === 0 ? 'holds no tensors' : `its ${tensors.length} tensors hold no elements`}, so there is no model to estimate`, {
      hint: 'give the model.safetensors file with the weights (or the folder, or its config.json), or --params 7B',
    });
  };
  if (statSync(path).isDirectory()) {
    const index = join(path, 'model.safetensors.index.json');
    const shape = siblingShape(path);
    if (existsSync(index)) {
      const { tensors, files } = fromShards(index);
      return { model: { label: basename(path), tensors, totalParams: total(tensors), shape }, source: 'sharded', files };
    }
    const files = readdirSync(path).filter((f) => f.endsWith('.safetensors')).sort().map((f) => join(path, f));
    if (files.length > 0) {
      const tensors = files.flatMap((f) => readSafetensorsHeader(f));
      return { model: { label: basename(path), tensors, totalParams: total(tensors), shape }, source: 'safetensors', files };
    }
    if (existsSync(join(path, 'config.json'))) return loadModel(join(path, 'config.json'), undefined, hints);
    throw new GpumemError('INPUT_NOT_FOUND', `${path} holds no .safetensors file or config.json`, { hint: 'point at the model folder or file' });
  }
  if (path.endsWith('.json')) {
    const json = readJson(path);
    if ('weight_map' in json) {
      const { tensors, files } = fromShards(path);
      return { model: { label: basename(dirname(path)), tensors, totalParams: total(tensors), shape: siblingShape(dirname(path)) }, source: 'sharded', files };
    }
    const derived = modelFromConfig(json, path);
    return { model: { label: derived.architecture, tensors: derived.tensors, totalParams: total(derived.tensors), shape: derived.shape }, source: 'config', files: [path] };
  }
  const tensors = readSafetensorsHeader(path);
  return { model: { label: basename(path), tensors, totalParams: total(tensors), shape: siblingShape(dirname(path)) }, source: 'safetensors', files: [path] };
}

/**
 * Reads the header of a safetensors file: 8 bytes little-endian u64 N, then N bytes of JSON mapping each
 * tensor name to `{dtype, shape, data_offsets}` (plus an optional `__metadata__` of strings). Only the
 * header is ever needed to count parameters exactly, so callers read 8 bytes, then N bytes, never the weights.
 */
import { GpumemError } from '../errors.js';
import { nameRecord } from '../records.js';
import { bytesForElements } from './dtypes.js';

/** The format's own cap on the header size (100 MB); anything larger is not a safetensors file. */
export const MAX_HEADER_BYTES = 100_000_000;

export interface TensorInfo {
  /** Dotted parameter name, e.g. "model.layers.0.self_attn.q_proj.weight". */
  name: string;
  /** safetensors dtype name ("F32", "BF16", …). */
  dtype: string;
  shape: number[];
  elements: number;
  /** Bytes of the tensor's data as stored. */
  sizeBytes: number;
}

export interface SafetensorsHeader {
  /** N from the first 8 bytes: the JSON header's length. */
  headerBytes: number;
  tensors: TensorInfo[];
  metadata: Record<string, string>;
}

/**
 * Decodes the first 8 bytes of a safetensors file into the header length N and checks it against the
 * format's 100 MB cap (and, when known, the file size). `where` names the file in errors.
 */
export function readHeaderLength(first8: Uint8Array, where: string, fileBytes?: number): number {
  if (first8.length < 8) {
    throw malformed(where, `file is ${first8.length} bytes long; a safetensors file starts with an 8-byte header length`);
  }
  const view = new DataView(first8.buffer, first8.byteOffset, 8);
  const n = view.getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES)) {
    throw malformed(where, `header length ${n} exceeds the format's ${MAX_HEADER_BYTES}-byte limit`);
  }
  const length = Number(n);
  if (length < 2) throw malformed(where, `header length ${length} is too small for a JSON object`);
  if (fileBytes !== undefined && 8 + length > fileBytes) {
    throw malformed(where, `header length ${length} runs past the end of the ${fileBytes}-byte file`);
  }
  return length;
}

/**
 * Parses the JSON header bytes (the N bytes after the length) into tensors with dtype, shape, element count
 * and stored size. Every tensor's `data_offsets` must match its dtype × shape, so a header that would
 * miscount parameters is rejected with the tensor's name instead.
 */
export function parseHeaderJson(headerBytes: Uint8Array, where: string): SafetensorsHeader {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(headerBytes));
  } catch (cause) {
    throw new GpumemError('INPUT_MALFORMED', `${where}: the safetensors header is not valid UTF-8 JSON`, {
      hint: 'is this really a .safetensors file? it may be truncated or a different format (.bin, .pt)',
      cause,
    });
  }
  if (!isPlainObject(parsed)) throw malformed(where, 'the header is not a JSON object');
  const tensors: TensorInfo[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (name === '__metadata__') {
      metadata = readMetadata(value, where);
      continue;
    }
    tensors.push(readTensor(name, value, where));
  }
  return { headerBytes: headerBytes.length, tensors, metadata };
}

/** Parses a whole in-memory safetensors prefix (length + header); convenient for tests and small files. */
export function parseSafetensors(bytes: Uint8Array, where = 'safetensors'): SafetensorsHeader {
  const length = readHeaderLength(bytes.subarray(0, 8), where);
  if (bytes.length < 8 + length) {
    throw malformed(where, `header claims ${length} bytes but only ${bytes.length - 8} follow`);
  }
  return parseHeaderJson(bytes.subarray(8, 8 + length), where);
}

function readTensor(name: string, value: unknown, where: string): TensorInfo {
  if (!isPlainObject(value)) throw malformed(where, `tensor "${name}" is not an object`);
  const { dtype, shape, data_offsets: offsets } = value as Record<string, unknown>;
  if (typeof dtype !== 'string') throw malformed(where, `tensor "${name}" has no dtype`);
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) {
    throw malformed(where, `tensor "${name}" has an invalid shape`);
  }
  const dims = shape as number[];
  const elements = dims.reduce((a, d) => a * d, 1);
  if (!Number.isSafeInteger(elements)) throw malformed(where, `tensor "${name}" is too large to count`);
  let sizeBytes: number;
  try {
    sizeBytes = bytesForElements(dtype, elements);
  } catch {
    throw malformed(where, `tensor "${name}" has unknown dtype "${dtype}"`);
  }
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isSafeInteger(o) && (o as number) >= 0) ||
    (offsets[1] as number) - (offsets[0] as number) !== sizeBytes
  ) {
    throw malformed(where, `tensor "${name}": data_offsets do not match ${dtype} × [${dims.join(', ')}] = ${sizeBytes} bytes`);
  }
  return { name, dtype, shape: dims, elements, sizeBytes };
}

function readMetadata(value: unknown, where: string): Record<string, string> {
  if (!isPlainObject(value)) throw malformed(where, '__metadata__ is not an object');
  const out = nameRecord<string>();
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw malformed(where, `__metadata__.${k} is not a string`);
    out[k] = v;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(where: string, what: string): GpumemError {
  return new GpumemError('INPUT_MALFORMED', `${where}: ${what}`, {
    hint: 'the file is not a valid safetensors file (truncated download, or a different format)',
  });
}

/** Test helpers: write safetensors headers (optionally with zero data) for given tensors. */
import { bytesForElements } from '../../../src/core/estimate/index.js';

export interface TensorDef {
  name: string;
  dtype: string;
  shape: number[];
}

/**
 * Encodes a safetensors file: 8-byte length, JSON header, then `withData` zero bytes for the data (or none:
 * gpumem reads headers only, so header-only files are enough for most tests and keep fixtures small).
 */
export function encodeSafetensors(tensors: readonly TensorDef[], withData = false, metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const t of tensors) {
    const size = bytesForElements(t.dtype, t.shape.reduce((a, d) => a * d, 1));
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + (withData ? offset : 0));
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  return out;
}

/**
 * Element sizes of the dtypes that appear in safetensors headers and training setups. The safetensors
 * names are the format's own ("F32", "BF16", "F8_E4M3" …); sub-byte types are counted in bits so a 4-bit
 * tensor's bytes come out exact.
 */
import { GpumemError } from '../errors.js';

/** Bits per element for every dtype the safetensors format defines (format spec, `Dtype` enum). */
const BITS: Record<string, number> = {
  BOOL: 8,
  U8: 8,
  I8: 8,
  F8_E4M3: 8,
  F8_E5M2: 8,
  F8_E8M0: 8,
  I16: 16,
  U16: 16,
  F16: 16,
  BF16: 16,
  I32: 32,
  U32: 32,
  F32: 32,
  F64: 64,
  I64: 64,
  U64: 64,
  F4: 4,
  F6_E2M3: 6,
  F6_E3M2: 6,
};

/**
 * Bytes taken by `elements` values of `dtype`, rounded up to whole bytes (sub-byte types pack). Throws an
 * input error for a dtype the format does not define, so a corrupt header is named rather than miscounted.
 */
export function bytesForElements(dtype: string, elements: number): number {
  const bits = BITS[dtype];
  if (bits === undefined) {
    throw new GpumemError('INPUT_MALFORMED', `unknown tensor dtype "${dtype}"`, {
      hint: `expected one of ${Object.keys(BITS).join(', ')}`,
    });
  }
  return Math.ceil((elements * bits) / 8);
}

/**
 * Helpers the family recognizers share: read one size capture pair into bytes and record sentinels.
 */
import { invertSize } from '../size.js';

/** A size read from two regex captures; `sentinel` is true for the 17179869184.00 GiB "not available". */
export interface ReadSize {
  bytes: bigint | null;
  sentinel: boolean;
}

/** Reads `(value, unit)` captures; missing captures give `{ bytes: null, sentinel: false }`. */
export function readSize(value: string | undefined, unit: string | undefined): ReadSize {
  if (value === undefined || unit === undefined) return { bytes: null, sentinel: false };
  const size = invertSize(value, unit);
  if (!size) return { bytes: null, sentinel: false };
  return size.kind === 'sentinel' ? { bytes: null, sentinel: true } : { bytes: size.bytes, sentinel: false };
}

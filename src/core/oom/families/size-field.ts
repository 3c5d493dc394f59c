/**
 * Helpers the family recognizers share: read one size capture pair into bytes and record sentinels.
 */
import type { OomFields } from './base.js';
import { invertSize, unreadableSizeReason } from '../size.js';

/**
 * A size read from two regex captures; `sentinel` is true for the 17179869184.00 GiB "not available", and
 * `unreadable` says why a printed size gave no bytes ("1e308 GiB", "-5 GiB").
 */
export interface ReadSize {
  bytes: bigint | null;
  sentinel: boolean;
  unreadable: string | null;
}

/** Reads `(value, unit)` captures; missing captures give `{ bytes: null, sentinel: false, unreadable: null }`. */
export function readSize(value: string | undefined, unit: string | undefined): ReadSize {
  if (value === undefined || unit === undefined) return { bytes: null, sentinel: false, unreadable: null };
  const size = invertSize(value, unit);
  if (!size) return { bytes: null, sentinel: false, unreadable: unreadableSizeReason(value, unit) };
  return size.kind === 'sentinel' ? { bytes: null, sentinel: true, unreadable: null } : { bytes: size.bytes, sentinel: false, unreadable: null };
}

/**
 * Reads a size into `fields.unavailable` terms: its bytes, or null with the reason recorded under `field`
 * when the message printed something that is not a size (a null is never left unexplained). The sentinel's
 * reason is the caller's, as its meaning differs by message.
 */
export function readSizeField(fields: OomFields, field: string, value: string | undefined, unit: string | undefined): ReadSize {
  const read = readSize(value, unit);
  if (read.unreadable !== null) fields.unavailable[field] = read.unreadable;
  return read;
}

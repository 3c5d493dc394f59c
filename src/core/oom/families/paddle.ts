/**
 * PaddlePaddle's allocator: `Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0,
 * 6.000000GB memory has been allocated and available memory is only 0.000000B.` (sizes with six decimals in
 * binary units, so MB values are exact to the byte and GB ones to ±537 bytes), and the older
 * `enforce allocating <= available failed, 10513462067 > 1369702144` (exact bytes).
 */
import { FieldCursor, headRecognizer, type HeadRead, type OomFields } from './base.js';
import { readSizeField } from './size-field.js';

// The whole token before the unit, as in SIZE_SOURCE, so "-5GB" is refused rather than read as 5 GB.
const PADDLE_SIZE = String.raw`(?<![\w,+-])([-+]?\.?\d[\w.,+-]{0,40}?) ?(B|KB|MB|GB|TB)\b`;
const HEAD = /Out of memory error on GPU (\d{1,3})\.?|enforce allocating <= available failed, (\d{1,20}) > (\d{1,20})/gi;
const CANNOT = new RegExp(String.raw`Cannot allocate ${PADDLE_SIZE} memory on GPU`, 'gi');
const HELD = new RegExp(String.raw`${PADDLE_SIZE} memory has been allocated`, 'gi');
const AVAILABLE = new RegExp(String.raw`available memory is only ${PADDLE_SIZE}`, 'gi');

function size(m: RegExpExecArray | null, fields: OomFields, field: string): bigint | null {
  return m ? readSizeField(fields, field, m[1], m[2]).bytes : null;
}

export const paddle = headRecognizer(HEAD, 'paddle', (m, fields, text, start, limit): HeadRead => {
  if (m[2] !== undefined) {
    fields.requestedBytes = BigInt(m[2]);
    fields.freeBytes = BigInt(m[3] as string);
    fields.era = { version: '≤1.4', evidence: '"enforce allocating <= available" wording' };
    return { count: 2 };
  }
  fields.gpuIndex = Number(m[1]);
  const cur = new FieldCursor(text, start, limit, m.index + m[0].length);
  fields.requestedBytes = size(cur.take(CANNOT), fields, 'requestedBytes');
  fields.poolBytes = size(cur.take(HELD), fields, 'poolBytes');
  const available = cur.take(AVAILABLE);
  fields.freeBytes = size(available, fields, 'freeBytes');
  // The message is whole once "available memory is only X" was read (the hint after it carries no numbers).
  fields.partial = !available;
  return { count: cur.count + 1, end: cur.end, wants: available ? 'none' : 'any' };
});

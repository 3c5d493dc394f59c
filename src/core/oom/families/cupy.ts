/**
 * CuPy's memory pool (also under Chainer): `Out of memory allocating 25,600,000 bytes (allocated so far:
 * 3,635,267,072 bytes[, limit set to: L bytes]).` since v7, and before it `out of memory to allocate N bytes
 * (total M bytes)`, where "total" is the pool's size had the allocation succeeded (so far + request), not
 * the device: the pool's size so far is derived as M − N.
 */
import { headRecognizer, wholeBytes, type HeadRead } from './base.js';

const HEAD =
  /Out of memory allocating ([\d,]{1,30}) bytes(?: \(allocated so far: ([\d,]{1,30}) bytes(?:, limit set to: ([\d,]{1,30}) bytes)?\))?|out of memory to allocate (\d{1,20}) bytes(?: \(total (\d{1,20}) bytes(?:, limit set to (\d{1,20}) bytes)?\))?/gi;

export const cupy = headRecognizer(HEAD, 'cupy', (m, fields): HeadRead => {
  let count = 1;
  if (m[1] !== undefined) {
    fields.requestedBytes = wholeBytes(m[1]);
    if (m[2] !== undefined) {
      fields.poolBytes = wholeBytes(m[2]);
      count++;
    }
    if (m[3] !== undefined) {
      fields.allowedBytes = wholeBytes(m[3]);
      count++;
    }
    fields.partial = m[2] === undefined;
    fields.era = { version: '≥7', evidence: '"allocated so far" wording' };
  } else {
    const requested = BigInt(m[4] as string);
    fields.requestedBytes = requested;
    if (m[5] !== undefined) {
      const total = BigInt(m[5]);
      // "total" counts the failed request too; what the pool held before it is the difference.
      fields.poolBytes = total >= requested ? total - requested : null;
      count++;
    }
    if (m[6] !== undefined) {
      fields.allowedBytes = BigInt(m[6]);
      count++;
    }
    fields.partial = m[5] === undefined;
    fields.era = { version: '≤6', evidence: '"(total N bytes)" wording' };
  }
  return { count };
});

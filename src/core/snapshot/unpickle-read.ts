/**
 * Byte-level readers for the unpickler: little-endian integers, pickle's two's-complement LONG encoding,
 * big-endian doubles and UTF-8 strings. All take a buffer and an offset the caller has bounds-checked.
 */

/** Unsigned 32-bit little-endian integer. */
export function readU32(b: Uint8Array, p: number): number {
  return ((b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16)) + (b[p + 3] as number) * 0x1000000;
}

/** Signed 32-bit little-endian integer (BININT). */
export function readI32(b: Uint8Array, p: number): number {
  return (b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16) | ((b[p + 3] as number) << 24);
}

/**
 * Unsigned 64-bit little-endian length. Returns Infinity when it does not fit a safe integer, so that the
 * caller's "longer than the bytes left" check refuses it without BigInt arithmetic.
 */
export function readU64(b: Uint8Array, p: number): number {
  const hi = readU32(b, p + 4);
  if (hi >= 0x200000) return Infinity;
  return hi * 0x100000000 + readU32(b, p);
}

/**
 * Decodes pickle's LONG1/LONG4 payload: `n` bytes of little-endian two's complement. Values that fit a
 * safe integer come back as numbers (addresses and time_us, the common case, take 6–7 bytes); wider ones,
 * such as the 9-byte unsigned 64-bit values PyTorch writes, come back as BigInt so no digit is lost.
 */
export function readLong(b: Uint8Array, p: number, n: number): number | bigint {
  if (n === 0) return 0;
  if (n <= 6) {
    let value = 0;
    for (let i = n - 1; i >= 0; i--) value = value * 256 + (b[p + i] as number);
    const negative = ((b[p + n - 1] as number) & 0x80) !== 0;
    return negative ? value - 2 ** (8 * n) : value;
  }
  if (n <= 8) {
    // Low 32 bits unsigned plus a signed high part: exact while the high part stays under 2^21.
    let hi = 0;
    for (let i = n - 1; i >= 4; i--) hi = hi * 256 + (b[p + i] as number);
    if (((b[p + n - 1] as number) & 0x80) !== 0) hi -= 2 ** (8 * (n - 4));
    if (hi < 0x200000 && hi >= -0x200000) return hi * 0x100000000 + readU32(b, p);
  }
  let big = 0n;
  for (let i = n - 1; i >= 0; i--) big = (big << 8n) | BigInt(b[p + i] as number);
  if (((b[p + n - 1] as number) & 0x80) !== 0) big -= 1n << BigInt(8 * n);
  return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
}

const F64 = new DataView(new ArrayBuffer(8));

/** Big-endian IEEE double (BINFLOAT). */
export function readF64(b: Uint8Array, p: number): number {
  for (let i = 0; i < 8; i++) F64.setUint8(i, b[p + i] as number);
  return F64.getFloat64(0, false);
}

const UTF8 = new TextDecoder('utf-8');
const LATIN1 = new TextDecoder('latin1');

/**
 * UTF-8 text of `b[p, p+n)`. Short ASCII strings (dict keys, action names, file names) are built directly,
 * which is several times faster than a TextDecoder call per string.
 */
export function readUtf8(b: Uint8Array, p: number, n: number): string {
  if (n <= 48) {
    let s = '';
    for (let i = p, end = p + n; i < end; i++) {
      const c = b[i] as number;
      if (c >= 0x80) return UTF8.decode(b.subarray(p, p + n));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return UTF8.decode(b.subarray(p, p + n));
}

/** Python 2 `str` bytes (BINSTRING), read as Latin-1 so that every byte maps to one character. */
export function readLatin1(b: Uint8Array, p: number, n: number): string {
  return LATIN1.decode(b.subarray(p, p + n));
}

/**
 * A copy of b[start, end). Node's Buffer.slice returns a view, not a copy, and the file reader reuses its
 * buffer, so kept bytes always go through Uint8Array's own slice.
 */
export function copyOf(b: Uint8Array, start: number, end: number): Uint8Array {
  return Uint8Array.prototype.slice.call(b, start, end);
}

/** Joins chunks into one buffer of `total` bytes. */
export function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

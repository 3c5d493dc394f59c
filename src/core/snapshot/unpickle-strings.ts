/**
 * Strings for the unpickler: decoding, interning and their memo codes. Frame file names, function names,
 * dict keys and action names repeat millions of times in a large snapshot; short ones are decoded once per
 * distinct byte sequence (a hash of the bytes finds the string without building it again) and share one
 * string and one memo table entry however often they are memoised.
 */
import type { Memo } from './memo.js';
import { copyOf, readLatin1, readUtf8 } from './unpickle-read.js';

const INTERN_MAX_LENGTH = 64;
const INTERN_MAX_ENTRIES = 200_000;
const CACHE_BITS = 14;

export class Strings {
  private readonly codes = new Map<string, number>();
  // Direct-mapped cache of short strings by bytes: slot = hash of the bytes; a hit compares the bytes.
  private readonly cacheBytes: Array<Uint8Array | undefined> = new Array(1 << CACHE_BITS);
  private readonly cacheText: Array<string | undefined> = new Array(1 << CACHE_BITS);
  /** Estimated bytes held by interned strings. */
  bytes = 0;
  /** True when the last string decoded was an existing interned one (it costs no new memory). */
  shared = false;

  constructor(private readonly memo: Memo) {}

  /** UTF-8 text of b[p, p+n); short strings are interned. */
  utf8(b: Uint8Array, p: number, n: number): string {
    this.shared = false;
    if (n > INTERN_MAX_LENGTH) return readUtf8(b, p, n);
    let h = 0x811c9dc5 | 0; // an int32 from the start, so the loop never works in doubles
    for (let i = p, end = p + n; i < end; i++) h = Math.imul(h ^ (b[i] as number), 0x01000193);
    const slot = (h >>> 0) >>> (32 - CACHE_BITS);
    const known = this.cacheBytes[slot];
    if (known !== undefined && known.length === n && sameBytes(known, b, p)) {
      this.shared = true;
      return this.cacheText[slot] as string;
    }
    const s = this.intern(readUtf8(b, p, n));
    this.cacheBytes[slot] = copyOf(b, p, p + n);
    this.cacheText[slot] = s;
    return s;
  }

  /** Latin-1 text (Python 2 str), interned when short. */
  latin1(b: Uint8Array, p: number, n: number): string {
    this.shared = false;
    const s = readLatin1(b, p, n);
    return n > INTERN_MAX_LENGTH ? s : this.intern(s);
  }

  /** The memo code of a string value: one table entry per interned string, a new one for any other. */
  code(s: string): number {
    const known = this.codes.get(s);
    if (known !== undefined) return known;
    const code = this.memo.add(s);
    if (s.length <= INTERN_MAX_LENGTH && this.codes.size < INTERN_MAX_ENTRIES) this.codes.set(s, code);
    return code;
  }

  private intern(s: string): string {
    const code = this.codes.get(s);
    if (code !== undefined) {
      this.shared = true;
      return this.memo.values[code] as string;
    }
    if (this.codes.size < INTERN_MAX_ENTRIES) {
      this.codes.set(s, this.memo.add(s));
      this.bytes += 64 + 2 * s.length;
    }
    return s;
  }

  clear(): void {
    this.codes.clear();
    this.cacheBytes.fill(undefined);
    this.cacheText.fill(undefined);
  }
}

function sameBytes(known: Uint8Array, b: Uint8Array, p: number): boolean {
  for (let i = 0; i < known.length; i++) if (known[i] !== b[p + i]) return false;
  return true;
}

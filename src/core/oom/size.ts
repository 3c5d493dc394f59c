/**
 * Inverts the size formatters that OOM messages are printed with. PyTorch's `format_size` prints
 * `N bytes` up to 1024, then KiB/MiB/GiB with two decimals (no TiB); inverting it is
 * `round(value × 1024^k)`, computed here in bigint so no digit is lost above 2^53. Two decimals times a
 * power of two never end in exactly .5, so the rounding is unambiguous.
 */

const UNIT_POWER: Record<string, number> = {
  b: 0, byte: 0, bytes: 0,
  k: 1, kb: 1, kib: 1,
  m: 2, mb: 2, mib: 2,
  g: 3, gb: 3, gib: 3,
  t: 4, tb: 4, tib: 4,
};

/** What a parsed size is: bytes, or the sentinel that means "not available / unlimited". */
export type SizeValue = { kind: 'bytes'; bytes: bigint } | { kind: 'sentinel' };

/**
 * Converts a printed number and unit label to exact bytes: `("1.12", "MiB") → 1174405n`. Labels are
 * binary whatever their spelling (MPS and TensorFlow print KB/MB/GB or G/M while dividing by 1024). The
 * PyTorch sentinel `17179869184.00 GiB` returns `{ kind: 'sentinel' }`. Unknown labels or malformed
 * numbers return null.
 */
export function invertSize(value: string, unit: string): SizeValue | null {
  const power = UNIT_POWER[unit.toLowerCase()];
  if (power === undefined) return null;
  const match = /^(\d{1,24})(?:\.(\d{1,6}))?$/.exec(value);
  if (!match) return null;
  const intPart = match[1] as string;
  const fracPart = match[2] ?? '';
  if (power === 3 && intPart === '17179869184' && /^0*$/.test(fracPart)) return { kind: 'sentinel' };
  const scaled = BigInt(intPart + fracPart);
  const denominator = 10n ** BigInt(fracPart.length);
  const numerator = scaled * (1n << BigInt(10 * power));
  // round half up: (2n + d) / 2d
  return { kind: 'bytes', bytes: (2n * numerator + denominator) / (2n * denominator) };
}

/** Bytes of a size, or null for the sentinel or an unreadable size. */
export function sizeBytes(value: SizeValue | null): bigint | null {
  return value && value.kind === 'bytes' ? value.bytes : null;
}

/**
 * The regex source for one printed size: number, optional space, unit label. The number is captured as the
 * whole token it stands in ("-5", "1e308", "0x10", "1,024"), never a tail of it, so that invertSize can refuse
 * it as a whole: matching only digits read "1e308 GiB" as 308 GiB and "-5 GiB" as 5 GiB. Quantifiers are
 * bounded so a long run of digits cannot make the search quadratic.
 */
export const SIZE_SOURCE = String.raw`(?<![\w,+-])([-+]?\.?\d[\w.,+-]{0,40}?) ?(bytes|[KMGT]iB|[KMGT]B|[KMGT])(?!\w)`;

/** Why a printed size was not read: it is not digits with at most six decimals (and a known unit). */
export function unreadableSizeReason(value: string, unit: string): string {
  return `printed as "${value} ${unit}", which is not a size of digits with up to six decimals`;
}

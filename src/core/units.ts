/**
 * The one place sizes, percentages and durations become text. Every human output goes through here so a
 * number reads the same everywhere; JSON output carries the raw integers instead.
 */
import { GpumemError } from './errors.js';
import { printable } from './text.js';

/** Bytes in a mebibyte and a gibibyte, for code and tests that write sizes. */
export const MiB = 1024 ** 2;
export const GiB = 1024 ** 3;

const IEC = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'] as const;

/**
 * Formats a byte count with IEC units (1 KiB = 1024 B). Integers below 1 KiB print exactly; larger values
 * get `digits` decimals (default 2, trailing zeros kept so columns line up). `null` prints as "n/a".
 */
export function formatBytes(bytes: number | bigint | null | undefined, digits = 2): string {
  if (bytes === null || bytes === undefined) return 'n/a';
  // Sizes are integers everywhere; a fraction or infinity can only come from a damaged input that slipped
  // past its reader, and must print as unknown rather than end gpumem.
  if (typeof bytes === 'number' && !Number.isInteger(bytes)) return Number.isFinite(bytes) ? formatBytes(Math.round(bytes), digits) : 'n/a';
  const negative = bytes < 0;
  // Numbers may be fractional (a chart's half-way tick); only BigInt needs converting.
  let value = typeof bytes === 'bigint' ? Number(negative ? -bytes : bytes) : Math.abs(bytes);
  if (!Number.isFinite(value)) return 'n/a';
  let unit = 0;
  while (value >= 1024 && unit < IEC.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = unit === 0 ? String(Math.round(value)) : value.toFixed(digits);
  return `${negative ? '-' : ''}${text} ${IEC[unit]}`;
}

/** Formats a percentage 0–100 (null → "n/a"). */
export function formatPercent(pct: number | null | undefined, digits = 0): string {
  if (pct === null || pct === undefined || !Number.isFinite(pct)) return 'n/a';
  return `${pct.toFixed(digits)}%`;
}

/** Formats a duration in milliseconds as the two largest units: "850ms", "12.3s", "4m05s", "3h12m", "2d04h". */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return 'n/a';
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const pad = (n: number): string => String(Math.floor(n)).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${pad((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d${pad((s % 86400) / 3600)}h`;
}

const UNIT_FACTORS: Record<string, number> = {
  b: 1,
  k: 1024, kb: 1024, kib: 1024,
  m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2,
  g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3,
  t: 1024 ** 4, tb: 1024 ** 4, tib: 1024 ** 4,
};

/**
 * Parses a size a user typed: "512", "512B", "20MiB", "1.5G", "80GB". Units are binary (GB = GiB), the
 * convention nvidia-smi and PyTorch use for GPU memory. Throws a usage error naming `what` on bad input.
 */
export function parseByteSize(text: string, what = 'size'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const factor = match ? UNIT_FACTORS[(match[2] ?? '').toLowerCase() || 'b'] : undefined;
  if (!match || factor === undefined) {
    throw new GpumemError('BAD_OPTION_VALUE', `${what}: cannot read "${printable(text)}" as a size`, {
      hint: 'write a number with an optional binary unit, e.g. 512MiB, 20GiB or 1.5G',
    });
  }
  const bytes = Math.round(Number(match[1]) * factor);
  // Byte counts are whole numbers everywhere; past 2^53 they would no longer be exact.
  if (!Number.isSafeInteger(bytes)) {
    throw new GpumemError('BAD_OPTION_VALUE', `${what}: "${printable(text)}" is too large (sizes go up to 8 PiB)`, {
      hint: 'write a size in the GPU\'s range, e.g. 80GiB',
    });
  }
  return bytes;
}

/**
 * nvidia-smi value text → numbers. Both output forms are handled: XML (`1005 MiB`, `N/A`, `66.92 W`) and CSV
 * (`1005 MiB` or, with `nounits`, `1005` with the unit in the header; markers in brackets like `[N/A]`).
 * A value that is a marker becomes null with the marker as its reason, never 0.
 */

/** A parsed value: the number, or null with why. */
export type Read<T> = { value: T; reason?: undefined } | { value: null; reason: string };

const MIB = 1024 * 1024;
const UNIT_BYTES: Record<string, number> = { B: 1, KiB: 1024, MiB: MIB, GiB: 1024 * MIB, TiB: 1024 * 1024 * MIB };

/** Text nvidia-smi prints instead of a value. Bracketed in CSV, bare in XML. */
export function markerOf(raw: string | undefined): string | null {
  if (raw === undefined) return 'missing from nvidia-smi output';
  const t = raw.trim();
  if (t === '') return 'empty in nvidia-smi output';
  const inner = t.startsWith('[') && t.endsWith(']') ? t.slice(1, -1) : t;
  if (/^(N\/A|Not Supported|Insufficient Permissions|Unknown Error|GPU is lost|Requested functionality has been deprecated|No data|Not Found|Not Available|None|Unknown)$/i.test(inner)) {
    return `[${inner}] in nvidia-smi output`;
  }
  if (t.startsWith('[') && t.endsWith(']')) return `[${inner}] in nvidia-smi output`;
  return null;
}

function badValue(raw: string): Read<never> {
  return { value: null, reason: `unreadable value "${raw.trim().slice(0, 40)}" in nvidia-smi output` };
}

/**
 * A byte size: "1005 MiB" → 1005 × 2^20 exactly. `headerUnit` is the unit from a CSV header
 * (`memory.used [MiB]`) for `nounits` values. Sizes nvidia-smi prints are whole MiB, so results are exact.
 */
export function readBytes(raw: string | undefined, headerUnit?: string): Read<number> {
  const marker = markerOf(raw);
  if (marker) return { value: null, reason: marker };
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?i?B)?$/.exec(raw!.trim());
  const unit = m?.[2] ?? headerUnit;
  const factor = unit === undefined ? undefined : UNIT_BYTES[unit];
  if (!m || factor === undefined) return badValue(raw!);
  return { value: Math.round(Number(m[1]) * factor) };
}

/** A number with an optional unit suffix (`36 C`, `97 %`, `12`), as a plain number. */
export function readNumber(raw: string | undefined, suffixes: readonly string[] = []): Read<number> {
  const marker = markerOf(raw);
  if (marker) return { value: null, reason: marker };
  let t = raw!.trim();
  for (const s of suffixes) if (t.endsWith(s)) t = t.slice(0, -s.length).trim();
  if (!/^-?\d+(?:\.\d+)?$/.test(t)) return badValue(raw!);
  return { value: Number(t) };
}

/** Watts text (`66.92 W`) → integer milliwatts, the unit NVML uses. */
export function readPowerMw(raw: string | undefined): Read<number> {
  const w = readNumber(raw, ['W']);
  return w.value === null ? w : { value: Math.round(w.value * 1000) };
}

/** Plain text, or null with the marker when nvidia-smi printed one. */
export function readText(raw: string | undefined): Read<string> {
  const marker = markerOf(raw);
  return marker ? { value: null, reason: marker } : { value: raw!.trim() };
}

/** Collects reasons: `take(read, 'field')` returns the value and records the reason for nulls. */
export function collector(unavailable: Record<string, string>) {
  return <T>(read: Read<T>, field: string): T | null => {
    if (read.value === null) unavailable[field] = read.reason ?? 'unavailable';
    return read.value;
  };
}

/**
 * nvidia-smi `--format=csv` tables: a header row of field names (with the unit in brackets, e.g.
 * `memory.used [MiB]`) and rows separated by ", ". Columns are found by header name so any field order
 * works. Free-text fields (process names) may themselves contain ", ": extra cells are given back to the
 * one free-text column, reading the fixed columns from both ends.
 */
import { GpumemError } from '../../core/errors.js';

export interface CsvCell {
  raw: string;
  /** Unit from the header (`MiB`, `W`, `%`) or undefined. */
  unit: string | undefined;
}

export interface CsvTable {
  /** Field names without units, lower-case, in header order. */
  columns: string[];
  rows: Array<Map<string, CsvCell>>;
}

/** Field aliases nvidia-smi accepts for the same value; we key everything by the first name. */
const ALIASES: Record<string, string> = { used_memory: 'used_gpu_memory', gpu_name: 'name', 'memory.used': 'memory.used' };
const FREE_TEXT = new Set(['process_name', 'name']);

function malformed(where: string, message: string, line: number): GpumemError {
  return new GpumemError('INPUT_MALFORMED', `${where}: ${message} (line ${line})`, {
    hint: 'nvidia-smi output looks truncated or was made with other options; expected --format=csv with a header row',
    details: { line },
  });
}

/**
 * Parses CSV text from an nvidia-smi query into rows keyed by field name. Throws GpumemError('INPUT_MALFORMED')
 * for empty text, a header with duplicate or empty names, or a row whose cell count cannot be reconciled
 * with the header (a cut-off row).
 */
export function parseSmiCsv(text: string, where = 'nvidia-smi CSV'): CsvTable {
  const lines = text.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  if (lines.length === 0) throw malformed(where, 'no header row (empty output)', 1);
  const header = lines[0]!.split(',').map((h) => h.trim());
  const columns: string[] = [];
  const units: Array<string | undefined> = [];
  for (const h of header) {
    const m = /^([^[\]]+?)\s*(?:\[([^\]]*)\])?$/.exec(h);
    const name = m?.[1]?.trim().toLowerCase();
    if (!name || /\s/.test(name)) throw malformed(where, `bad header field "${h}"`, 1);
    // hasOwn: a header field named "__proto__" must not reach Object.prototype.
    const key = Object.hasOwn(ALIASES, name) ? (ALIASES[name] as string) : name;
    if (columns.includes(key)) throw malformed(where, `duplicate header field "${h}"`, 1);
    columns.push(key);
    units.push(m?.[2]?.trim() || undefined);
  }
  const free = columns.findIndex((c) => FREE_TEXT.has(c));
  const rows = lines.slice(1).map((line, i) => {
    const cells = splitRow(line, columns.length, free);
    if (!cells) throw malformed(where, `row has ${line.split(', ').length} fields, header has ${columns.length}`, i + 2);
    const row = new Map<string, CsvCell>();
    columns.forEach((c, j) => row.set(c, { raw: cells[j]!, unit: units[j] }));
    return row;
  });
  return { columns, rows };
}

function splitRow(line: string, count: number, free: number): string[] | null {
  const parts = line.split(', ');
  if (parts.length === count) return parts.map((p) => p.trim());
  if (parts.length < count || free < 0) return null;
  const extra = parts.length - count;
  const merged = [...parts.slice(0, free), parts.slice(free, free + extra + 1).join(', '), ...parts.slice(free + extra + 1)];
  return merged.map((p) => p.trim());
}

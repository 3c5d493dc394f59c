/**
 * Cleans one line of a pasted or logged message so the recognizers see PyTorch's own words: terminal
 * colour codes, HTML entities, markdown bold and backticks, box-drawing borders, `#`/`>` quote markers,
 * log prefixes (timestamps, levels, vLLM worker tags, torchrun `[rank3]:`, srun `3: `), tqdm residue before
 * a carriage return, and runs of whitespace. Ranks found in prefixes are returned, not thrown away.
 * Every pattern is bounded, so a pathological line costs time linear in its length.
 */

export interface NormalizedLine {
  text: string;
  /** Rank from a `[rank3]:`, `[default3]:`, `(Worker rank=3 …)` or srun `3: ` prefix. */
  rank: number | null;
}

const ANSI = /\u001b\[[0-9;?]{0,40}[ -/]{0,4}[@-~]|\u001b\][^\u0007\u001b]{0,400}(?:\u0007|\u001b\\)/g;
const ENTITY = /&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|(amp|lt|gt|quot|apos|nbsp|#39));/gi;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };
// The bars │ ┃ ║ escaped: the command's bundle is ASCII (scripts/bundle-cli.mjs).
const MARKUP = /\*\*|`|\u00a0|[\u2502\u2503\u2551]/g;
const QUOTE = /^(?:[#>]+ ?)+/;
const RANK_PREFIX = /^\[(?:rank|default) ?(\d{1,5})\] ?:? ?/i;
const WORKER_PREFIX = /^\((?:[\w.-]{1,60}) (?:rank=(\d{1,5}) )?pid=\d{1,10}\) ?/;
const LEVEL_PREFIX = /^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL) {1,8}\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? {1,4}(?:\[?[\w./-]{1,120}:\d{1,6}\] ?)?/;
const STAMP_PREFIX = /^\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]? ?/;
const SRUN_PREFIX = /^(\d{1,4}): /;
const SPACES = /\s+/g;

function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY, (whole, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    const code = dec !== undefined ? Number(dec) : hex !== undefined ? parseInt(hex, 16) : -1;
    if (code >= 0) return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    return NAMED[(name ?? '').toLowerCase()] ?? whole;
  });
}

/** The part of a line a terminal would show last: text after the final carriage return that is not blank. */
function lastSegment(line: string): string {
  if (!line.includes('\r')) return line;
  const parts = line.split('\r');
  for (let i = parts.length - 1; i >= 0; i--) if ((parts[i] as string).trim() !== '') return parts[i] as string;
  return '';
}

/** Normalizes one line (see the module comment). `keepSegment` keeps text before a `\r` (used for heads found there). */
export function normalizeLine(raw: string): NormalizedLine {
  let text = lastSegment(raw);
  if (text.includes('\u001b')) text = text.replace(ANSI, '');
  text = decodeEntities(text).replace(MARKUP, ' ').replace(SPACES, ' ').trim();
  let rank: number | null = null;
  for (let round = 0; round < 6; round++) {
    const before = text;
    text = text.replace(QUOTE, '');
    const r = RANK_PREFIX.exec(text) ?? WORKER_PREFIX.exec(text);
    if (r) {
      if (r[1] !== undefined) rank = Number(r[1]);
      text = text.slice(r[0].length);
    }
    text = text.replace(LEVEL_PREFIX, '').replace(STAMP_PREFIX, '');
    const srun = SRUN_PREFIX.exec(text);
    if (srun) {
      rank ??= Number(srun[1]);
      text = text.slice(srun[0].length);
    }
    if (text === before) break;
  }
  return { text: text.trim(), rank };
}

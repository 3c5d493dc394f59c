/**
 * The fields of PyTorch's caching-allocator message as they may appear in a piece of it (without the "; "
 * or the head that precede them in the whole message), and the reader that fills in those a reader missed.
 */
import { SIZE_SOURCE } from '../size.js';
import { within, type FieldCursor, type OomFields } from './base.js';
import { readSizeField } from './size-field.js';

const S = SIZE_SOURCE;

// The pid may have been removed from a pasted message ("Process has 14.37 GiB memory in use"); "this process" is not another one.
export const OTHER_PROCESS = new RegExp(String.raw`(?<!this )Process (?:(\d{1,10}) )?has ${S} memory in use`, 'gi');

/**
 * True when an OTHER_PROCESS match is another process: PyTorch writes "Process" capitalised there, so a
 * lower-case "process has X" without a pid is the tail of "this process has X" cut before "this".
 */
export function isOtherProcess(m: RegExpExecArray): boolean {
  return m[1] !== undefined || m[0].startsWith('P');
}

type SizeField = 'totalBytes' | 'freeBytes' | 'allocatedByPytorchBytes' | 'reservedUnallocatedBytes' | 'reservedTotalBytes' | 'processInUseBytes' | 'privatePoolBytes' | 'allowedBytes';

/** Each field as it may appear in a piece: without the "; " that precedes it in a whole message. */
const FIELDS: Array<[RegExp, SizeField]> = [
  [new RegExp(String.raw`${S} total capacity`, 'gi'), 'totalBytes'],
  [new RegExp(String.raw`total capac?ity of ${S}`, 'gi'), 'totalBytes'],
  [new RegExp(String.raw`${S} free;|of which ${S} is free`, 'gi'), 'freeBytes'],
  [new RegExp(String.raw`${S} already allocated|${S} is allocated by PyTorch`, 'gi'), 'allocatedByPytorchBytes'],
  [new RegExp(String.raw`${S} cached\b|${S} is reserved by PyTorch but unallocated`, 'gi'), 'reservedUnallocatedBytes'],
  [new RegExp(String.raw`${S} reserved in total by PyTorch`, 'gi'), 'reservedTotalBytes'],
  [new RegExp(String.raw`this process has ${S} memory in use`, 'gi'), 'processInUseBytes'],
  [new RegExp(String.raw`with ${S} allocated in private pools`, 'gi'), 'privatePoolBytes'],
  [new RegExp(String.raw`${S} allowed;`, 'gi'), 'allowedBytes'],
];
const GPU = /\(?GPU (\d{1,3})(?=;| has a total)/gi;

/** Any one field, the hint's variable, or a process line: where a piece of a message may be recognised. */
export const PIECE_HEAD = new RegExp(
  [
    ...FIELDS.map(([re]) => re.source),
    GPU.source,
    OTHER_PROCESS.source,
    String.raw`try setting (?:PYTORCH_[A-Z]{0,6}_?ALLOC_CONF=expandable_segments|max_split_size_mb)`,
  ].join('|'),
  'gi',
);

/** Words only PyTorch's OOM message uses; a lone generic field ("6.00 GiB total capacity") is not enough. */
const DISTINCTIVE = /reserved in total by PyTorch|is reserved by PyTorch but unallocated|is allocated by PyTorch|this process has .{1,30} memory in use|allocated in private pools|of which .{1,30} is free|try setting (?:PYTORCH_[A-Z]{0,6}_?ALLOC_CONF=expandable_segments|max_split_size_mb)/i;

/**
 * The start of the first piece of a PyTorch message in text[from, …), or -1: a field, where the text has words
 * only that message uses or at least two of its fields (so a training log's "12.3 GiB already allocated" is
 * not taken for an OOM).
 */
export function findPiece(text: string, from: number): number {
  PIECE_HEAD.lastIndex = from;
  const first = PIECE_HEAD.exec(text);
  if (!first) return -1;
  if (DISTINCTIVE.test(from === 0 ? text : text.slice(from))) return first.index;
  return PIECE_HEAD.exec(text) ? first.index : -1;
}

/**
 * Reads every field found in text[from, limit) into `fields`, leaving alone those already read: a cut
 * message keeps each number it still has even where the whole sentence around it is gone. These reads extend
 * the message but do not count as fields, so they never decide how a wrapped line is joined. Returns how many
 * fields it read.
 */
export function readPieces(text: string, from: number, limit: number, fields: OomFields, cur: FieldCursor): number {
  let read = 0;
  for (const [re, field] of FIELDS) {
    if (fields[field] !== null) continue;
    const m = within(re, text, from, limit);
    if (!m) continue;
    cur.extend(m);
    // Alternations put the size in the first or the second pair of captures.
    fields[field] = readSizeField(fields, field, m[1] ?? m[3], m[2] ?? m[4]).bytes;
    read++;
  }
  if (fields.gpuIndex === null) {
    const gpu = within(GPU, text, from, limit);
    if (gpu) {
      cur.extend(gpu);
      fields.gpuIndex = Number(gpu[1]);
      read++;
    }
  }
  if (fields.otherProcesses.length === 0) {
    for (let p = within(OTHER_PROCESS, text, from, limit); p; p = within(OTHER_PROCESS, text, p.index + p[0].length, limit)) {
      if (!isOtherProcess(p)) continue;
      cur.extend(p);
      const at = `otherProcesses.${p[1] ?? 'hidden'}`;
      fields.otherProcesses.push({ pid: p[1] === undefined ? null : Number(p[1]), bytes: readSizeField(fields, at, p[2], p[3]).bytes });
      read++;
    }
  }
  return read;
}

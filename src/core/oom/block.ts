/**
 * One message being collected line by line: the head line plus the continuation lines a wrapped or
 * multi-line message needs (hard wraps, the cudaMallocAsync table, NCCL's calloc line after a blank).
 * The block decides, from what its family still wants, whether the next line belongs to it.
 */
import { findHead, recognizeAll, type Recognized, type Wants } from './families/index.js';
import type { OomFrame } from './types.js';

const MAX_LINES = 12;
const MAX_CHARS = 16_384;
const TRACEBACK_LINE = /^(?:Traceback \(most recent call last\)|File "|During handling of the above|The above exception was)/;
const HINT_TEXTS = [
  'if reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation. see documentation for memory management and pytorch_cuda_alloc_conf',
  'if reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation. see documentation for memory management and pytorch_cuda_alloc_conf',
  'if reserved but unallocated memory is large try setting pytorch_cuda_alloc_conf=expandable_segments:true to avoid fragmentation. see documentation for memory management (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)',
  'if reserved but unallocated memory is large try setting pytorch_hip_alloc_conf=expandable_segments:true to avoid fragmentation. see documentation for memory management (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)',
  'if reserved but unallocated memory is large try setting pytorch_alloc_conf=expandable_segments:true to avoid fragmentation. see documentation for memory management (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)',
  'if reserved but unallocated memory is large try setting pytorch_cuda_alloc_conf=expandable_segments:true to avoid fragmentation. see documentation for memory management (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)',
  'please use empty_cache to release all unoccupied cached memory.',
].join('\n');

/** True when `line` is a piece of one of the allocator hints (a wrapped hint line). */
function isHintPiece(line: string): boolean {
  const lower = line.toLowerCase();
  return lower.length > 0 && lower.length < 260 && HINT_TEXTS.includes(lower);
}

export interface BlockResult {
  recognized: Recognized[];
  startLine: number;
  rank: number | null;
  userFrame: OomFrame | null;
}

export class Block {
  text: string;
  private lines = 1;
  private blanks = 0;
  private recognized: Recognized[];

  constructor(
    first: string,
    readonly startLine: number,
    readonly rank: number | null,
    readonly userFrame: OomFrame | null,
  ) {
    this.text = first.slice(0, MAX_CHARS);
    this.recognized = recognizeAll(this.text);
  }

  private get wants(): Wants {
    const last = this.recognized[this.recognized.length - 1];
    return last ? last.wants : 'none';
  }

  /** Offers the next normalized line; true when the block took it, false when the block is finished. */
  offer(line: string): boolean {
    const wants = this.wants;
    if (wants === 'none' || this.lines >= MAX_LINES || this.text.length >= MAX_CHARS) return false;
    if (line === '') {
      if (wants === 'nccl' && this.blanks < 2) {
        this.blanks++;
        return true;
      }
      return false;
    }
    if (TRACEBACK_LINE.test(line)) return false;
    const head = findHead(line, 0);
    if (wants === 'nccl' || wants === 'ggml') {
      const second = wants === 'nccl' ? /^.{0,300}Failed to CUDA calloc \d/i : /^.{0,300}failed to allocate (?!CPU)\w{1,24} buffer of size \d/i;
      if (!second.test(line)) return false;
      this.append(line, ' ');
      return true;
    }
    // "CUDA out of memory." wrapped before "Tried to allocate …" is one message.
    const wrappedHead = wants === 'any' && /out of memory\.?$/i.test(this.text) && /^\.? ?Tried to allocate /i.test(line);
    if (head && !wrappedHead) return false;
    if (wants === 'hint' && !isHintPiece(line)) return false;
    this.appendBest(line);
    return true;
  }

  /** Joins a wrapped line with a space, or without one when that reads more fields (a wrap inside a word). */
  private appendBest(line: string): void {
    const spaced = this.text + ' ' + line;
    const withSpace = recognizeAll(spaced);
    if (/[\w.]$/.test(this.text) && /^[\w.]/.test(line)) {
      const glued = this.text + line;
      const withoutSpace = recognizeAll(glued);
      const gain = fieldTotal(withoutSpace) - fieldTotal(withSpace);
      if (gain > 0 || (gain === 0 && withoutSpace.length < withSpace.length && midNumber(this.text, line))) {
        this.commit(glued, withoutSpace);
        return;
      }
    }
    this.commit(spaced, withSpace);
  }

  private append(line: string, sep: string): void {
    const text = this.text + sep + line;
    this.commit(text, recognizeAll(text));
  }

  private commit(text: string, recognized: Recognized[]): void {
    this.text = text.slice(0, MAX_CHARS);
    this.recognized = recognized;
    this.lines++;
    this.blanks = 0;
  }

  /** True when a message of the block reads numbers printed before it (then `preceding` must be set). */
  get readsBefore(): boolean {
    return this.recognized.some((r) => r.readBefore !== undefined);
  }

  /** The text before the block's first line, for messages that read numbers printed before them. */
  preceding = '';

  /** The messages read from the block as it stands. */
  finish(): BlockResult {
    for (const r of this.recognized) r.readBefore?.(this.preceding + this.text.slice(0, r.start));
    return { recognized: this.recognized, startLine: this.startLine, rank: this.rank, userFrame: this.userFrame };
  }
}

/** A wrap inside a number ("4" + ".00 GiB", "4." + "00 GiB"): join without a space. */
function midNumber(before: string, after: string): boolean {
  return (/\d$/.test(before) && /^\.\d/.test(after)) || (/\d\.$/.test(before) && /^\d/.test(after));
}

function fieldTotal(found: readonly Recognized[]): number {
  return found.reduce((n, r) => n + r.fieldCount, 0);
}

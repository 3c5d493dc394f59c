/**
 * De-duplication of repeated messages: the same OOM printed by 8 ranks, or by the exception and again by a
 * logger, becomes one event listing every line and rank. Repeats merge while they come within a window of
 * lines of the previous sighting; an event is released once the window has passed (or the input ends).
 */
import type { BlockResult } from './block.js';
import type { OomFields } from './families/index.js';
import type { OomEvent } from './types.js';

interface Pending {
  key: string;
  event: OomEvent;
  lastLine: number;
}

/** Identity of a message: its family and every number it printed (not its wording or prefixes). */
function keyOf(fields: OomFields): string {
  return JSON.stringify([
    fields.family, fields.gpuIndex, fields.requestedBytes, fields.totalBytes, fields.freeBytes, fields.processInUseBytes,
    fields.allocatedByPytorchBytes, fields.reservedUnallocatedBytes, fields.reservedTotalBytes, fields.allowedBytes,
    fields.privatePoolBytes, fields.otherProcesses, fields.mps, fields.tensor, fields.requestMoreThan1EB, fields.kvCache,
    fields.poolBytes, fields.backend,
  ], (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

export class Dedup {
  private pending: Pending[] = [];

  constructor(private readonly windowLines: number) {}

  /** Adds the messages of one finished block. */
  add(result: BlockResult): void {
    for (const recognized of result.recognized) {
      const key = keyOf(recognized.fields);
      const line = result.startLine;
      const same = this.pending.find((p) => p.key === key && line - p.lastLine <= this.windowLines);
      if (same) {
        // Lines arrive in order, so a repeat on the same line can only be the last one listed (a scan of the
        // whole list would make a log of a million repeats quadratic).
        if (same.event.lines[same.event.lines.length - 1] !== line) same.event.lines.push(line);
        if (result.rank !== null && !same.event.ranks.includes(result.rank)) same.event.ranks.push(result.rank);
        same.event.userFrame ??= result.userFrame;
        same.lastLine = line;
        continue;
      }
      this.pending.push({
        key,
        lastLine: line,
        event: {
          ...recognized.fields,
          line,
          lines: [line],
          ranks: result.rank === null ? [] : [result.rank],
          userFrame: result.userFrame,
        },
      });
    }
  }

  /** Events whose window closed before `currentLine`, in order of first appearance. */
  release(currentLine: number): OomEvent[] {
    const out: OomEvent[] = [];
    const keep: Pending[] = [];
    for (const p of this.pending) {
      if (currentLine - p.lastLine > this.windowLines) out.push(p.event);
      else keep.push(p);
    }
    this.pending = keep;
    for (const event of out) event.ranks.sort((a, b) => a - b);
    return out;
  }
}

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
  /** Order of first appearance, the order events are released in. */
  seq: number;
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

/**
 * Pending events are kept in a Map by key whose insertion order is the order of their last sighting (a repeat
 * moves its entry to the end), so adding is one lookup and releasing stops at the first entry still inside
 * its window: a flood of distinct OOMs costs the same per message as a log with one.
 */
export class Dedup {
  private pending = new Map<string, Pending>();
  /** Entries whose window had closed when a new message with the same key arrived: released next time. */
  private closed: Pending[] = [];
  private seq = 0;

  constructor(private readonly windowLines: number) {}

  /** Adds the messages of one finished block. */
  add(result: BlockResult): void {
    for (const recognized of result.recognized) {
      const key = keyOf(recognized.fields);
      const line = result.startLine;
      const same = this.pending.get(key);
      if (same && line - same.lastLine <= this.windowLines) {
        // Lines arrive in order, so a repeat on the same line can only be the last one listed (a scan of the
        // whole list would make a log of a million repeats quadratic).
        if (same.event.lines[same.event.lines.length - 1] !== line) same.event.lines.push(line);
        if (result.rank !== null && !same.event.ranks.includes(result.rank)) same.event.ranks.push(result.rank);
        same.event.userFrame ??= result.userFrame;
        same.lastLine = line;
        this.pending.delete(key);
        this.pending.set(key, same);
        continue;
      }
      if (same) {
        this.pending.delete(key);
        this.closed.push(same);
      }
      this.pending.set(key, {
        key,
        lastLine: line,
        seq: this.seq++,
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
    const done = this.closed;
    this.closed = [];
    for (const [key, p] of this.pending) {
      if (currentLine - p.lastLine <= this.windowLines) break;
      done.push(p);
      this.pending.delete(key);
    }
    done.sort((a, b) => a.seq - b.seq);
    const out = done.map((p) => p.event);
    for (const event of out) event.ranks.sort((a, b) => a - b);
    return out;
  }
}

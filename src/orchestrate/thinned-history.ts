/**
 * A live view's history: the newest samples at full rate, older ones thinned to about one per period.
 *
 * Ten minutes at 10 Hz are 6,000 samples; on a machine whose 512 GPU processes all change every sample each one
 * holds 512 new rows, and the heap grew by 1.3 MB a second until the history was full (close to 1 GB). What the
 * view draws at full rate is the newest samples (the panels' sparklines); the detail panel and the findings read
 * the older ones, for which one sample a second says what the full rate said.
 *
 * Of the samples in one period the one holding the most GPU memory is kept, so a peak shorter than the period
 * still shows in a process's min / max and in the used-memory history.
 */
import type { Sample } from '../core/types.js';
import { RingBuffer } from './ring-buffer.js';

/** What a live sampler keeps its samples in. */
export interface SampleHistory {
  readonly size: number;
  push(sample: Sample): void;
  latest(): Sample | undefined;
  /** Samples oldest first; `last` limits it to the newest `last` of them. */
  toArray(last?: number): Sample[];
  clear(): void;
}

export interface ThinningOptions {
  /** Newest samples kept at full rate. */
  recent: number;
  /** Older samples are kept at most about one per this period (samples closer than 0.9 of it share a slot). */
  everyMs: number;
  /** Time the whole history covers (recent samples at the sampling interval, older ones at `everyMs`). */
  spanMs: number;
  /** The sampling interval, to size the part kept at full rate. */
  intervalMs: number;
}

// Timers fire a little early or late: samples taken once a period must not share a slot.
const SLOT_FRACTION = 0.9;

function usedBytes(sample: Sample): number {
  let total = 0;
  for (const d of sample.devices) total += d.memory.usedBytes ?? 0;
  return total;
}

/** Whether a sample at `t` falls in the slot opened at `slotStartMs` (see SLOT_FRACTION). */
function inSlot(t: number, slotStartMs: number, slotMs: number): boolean {
  return t >= slotStartMs && t - slotStartMs < slotMs;
}

/**
 * `samples` (oldest first) at about one per `everyMs`, by the rule ThinnedHistory applies to its older part:
 * a view that draws the whole history on one time axis gives the recent full-rate part the same spacing.
 */
export function thinnedToPeriod(samples: readonly Sample[], everyMs: number): Sample[] {
  const slotMs = everyMs * SLOT_FRACTION;
  const out: Sample[] = [];
  let slotStartMs = -Infinity;
  for (const s of samples) {
    if (out.length === 0 || !inSlot(s.timeMs, slotStartMs, slotMs)) {
      out.push(s);
      slotStartMs = s.timeMs;
    } else if (usedBytes(s) > usedBytes(out[out.length - 1] as Sample)) out[out.length - 1] = s;
  }
  return out;
}

export class ThinnedHistory implements SampleHistory {
  private readonly recent: RingBuffer<Sample>;
  private readonly older: RingBuffer<Sample>;
  private readonly slotMs: number;
  /** Time of the sample that opened the older part's newest slot. */
  private slotStartMs = -Infinity;

  constructor(options: ThinningOptions) {
    const { recent, everyMs, spanMs, intervalMs } = options;
    if (!(recent >= 1) || !(everyMs > 0) || !(spanMs > 0) || !(intervalMs > 0)) {
      throw new RangeError(`thinned history needs positive sizes, got ${JSON.stringify(options)}`);
    }
    this.recent = new RingBuffer<Sample>(Math.ceil(recent));
    this.older = new RingBuffer<Sample>(Math.max(1, Math.ceil((spanMs - recent * intervalMs) / everyMs)));
    this.slotMs = everyMs * SLOT_FRACTION;
  }

  get size(): number {
    return this.older.size + this.recent.size;
  }

  push(sample: Sample): void {
    if (this.recent.size === this.recent.capacity) this.keepOlder(this.recent.oldest() as Sample);
    this.recent.push(sample);
  }

  latest(): Sample | undefined {
    return this.recent.latest();
  }

  toArray(last = this.size): Sample[] {
    const fromRecent = Math.min(last, this.recent.size);
    const fromOlder = Math.min(last - fromRecent, this.older.size);
    const out = fromOlder > 0 ? this.older.toArray(fromOlder) : [];
    for (const s of this.recent.toArray(fromRecent)) out.push(s);
    return out;
  }

  clear(): void {
    this.recent.clear();
    this.older.clear();
    this.slotStartMs = -Infinity;
  }

  private keepOlder(sample: Sample): void {
    const t = sample.timeMs;
    const sameSlot = this.older.size > 0 && inSlot(t, this.slotStartMs, this.slotMs);
    if (!sameSlot) {
      this.older.push(sample);
      this.slotStartMs = t;
    } else if (usedBytes(sample) > usedBytes(this.older.latest() as Sample)) this.older.replaceLatest(sample);
  }
}

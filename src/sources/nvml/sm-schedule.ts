/**
 * When each device's per-process SM % is read (NvmlFields.processSm*): the one expensive field a live view shows
 * (2.53 ms of driver CPU per read on an H100), so it has its own periods — a slow one for devices nobody sees, the
 * view's for those on screen — and, with a budget, the on-screen period stretches to what the timed reads allow.
 */
import type { NvmlFields } from './source.js';

/** Said for every process's SM % when the consumer did not ask for it (NvmlFields.processSmEveryMs null). */
export const SM_NOT_READ = 'per-process SM % not read: this command does not show it';

const positive = (share: number | undefined): number | null => (share !== undefined && share > 0 ? share : null);

export class SmSchedule {
  private readonly everyMs: number | null;
  private readonly shown: ((index: number) => boolean) | null;
  private readonly shownEveryMs: number | null;
  private readonly budget: number | null;
  private readonly unshownBudget: number | null;
  /** Mean cost of a read so far, ms (null: none timed yet). */
  private costMs: number | null = null;

  constructor(fields: NvmlFields, private readonly costClockMs: () => number = () => performance.now()) {
    this.everyMs = fields.processSmEveryMs === undefined ? 0 : fields.processSmEveryMs;
    this.shown = fields.processSmShown ?? null;
    this.shownEveryMs = fields.processSmShownEveryMs ?? this.everyMs;
    this.budget = positive(fields.processSmBudget);
    this.unshownBudget = positive(fields.processSmUnshownBudget);
  }

  /**
   * The period of device `index` now, ms (0: every sample; null: never read). `count(shown)` counts the
   * readable devices on screen (or off it); it is asked only when a budget may stretch the period.
   */
  periodMs(index: number, count: (shown: boolean) => number): number | null {
    const shown = this.shown?.(index) ?? false;
    const base = shown ? this.shownEveryMs : this.everyMs;
    const budget = shown ? this.budget : this.unshownBudget;
    if (base === null || budget === null || this.costMs === null) return base;
    return Math.max(base, (count(shown) * this.costMs) / budget);
  }

  /** Whether device `index` counts as on screen. */
  isShown(index: number): boolean {
    return this.shown?.(index) ?? false;
  }

  /** Runs one read, timing it when a budget needs its cost. */
  timed<T>(read: () => T): T {
    if (this.budget === null && this.unshownBudget === null) return read();
    const startedMs = this.costClockMs();
    const out = read();
    const costMs = Math.max(0, this.costClockMs() - startedMs);
    // A running mean: one slow read (a page fault, a busy core) moves the period a quarter of the way.
    this.costMs = this.costMs === null ? costMs : this.costMs + (costMs - this.costMs) / 4;
    return out;
  }
}

/**
 * Whether a read every `everyMs` is due. A tenth of the period is forgiven, so a period that is a multiple of the
 * sampling interval is read on that multiple, not one sample late because of timer jitter.
 */
export function smDue(lastMs: number | null, nowMs: number, everyMs: number): boolean {
  return everyMs <= 0 || lastMs === null || nowMs < lastMs || nowMs - lastMs >= everyMs * 0.9;
}

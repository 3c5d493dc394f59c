/**
 * How often watch refreshes its findings line. The windowed diagnosis behind it grows with the processes
 * (8 GPUs × 64 pids: 10–20 ms a run, about six one-sample accountings), so, like the per-process SM % reads
 * (src/sources/nvml/sm-schedule.ts), it has a budget: the period stretches to what the timed runs allow.
 */

/** While numbers change: at most this often (a handful of processes keeps this period). */
export const FINDINGS_EVERY_MS = 5000;
/**
 * While no number changes, this rarely: the line shows titles and fixes, which quote no duration, so only new
 * /proc readings (a round of re-reads) can change it, e.g. "CPU use unknown" becoming "idle" once the window
 * holds two readings.
 */
export const FINDINGS_UNCHANGED_EVERY_MS = 120_000;
/**
 * The share of one core the findings may take: 0.03 %, a seventh of what the whole view may use at 1 Hz (the
 * driver's calls alone take 0.14 % of it at 8 GPUs). At 8 × 64 a run of ~3 ms is then repeated every ~10 s
 * while numbers change; the bars and rows, from the one-sample accounting of every changed sample, are not
 * slowed, and the findings name slow things (idle processes, workers holding memory, copies, zombies).
 */
export const FINDINGS_BUDGET = 0.0003;

export class FindingsPace {
  /** Mean cost of a run so far, ms (null: none timed yet). */
  private costMs: number | null = null;

  constructor(private readonly budget: number = FINDINGS_BUDGET, private readonly clockMs: () => number = () => performance.now()) {}

  /**
   * The period in the samples' own time: `changed` says whether numbers moved since the last run; `speed` is a
   * replay's (its samples' time runs that much faster than the clock the runs are timed on).
   */
  periodMs(changed: boolean, speed = 1): number {
    const floor = changed ? FINDINGS_EVERY_MS : FINDINGS_UNCHANGED_EVERY_MS;
    if (this.costMs === null) return floor;
    return Math.max(floor, (this.costMs / this.budget) * speed);
  }

  /** Runs one diagnosis, timing it. */
  timed<T>(run: () => T): T {
    const startedMs = this.clockMs();
    const out = run();
    const costMs = Math.max(0, this.clockMs() - startedMs);
    // A running mean: one slow run (a collection, a busy core) moves the period a quarter of the way.
    this.costMs = this.costMs === null ? costMs : this.costMs + (costMs - this.costMs) / 4;
    return out;
  }
}

/**
 * What the server shows at one moment: the live sample, the PyTorch numbers of supervised runs, the
 * findings of the last diagnosis and the run history's summary. Every view (/metrics, the JSON API, the
 * page) renders from one of these, so they agree with each other.
 */
import type { Sample } from '../core/types.js';
import type { Finding } from '../core/diagnose/types.js';
import type { LiveCompanionEntry, RunRow } from '../store/index.js';

export interface RunSummary {
  /** Runs in the history by state ("running", "ok", "failed", "signal"). */
  byStatus: Record<string, number>;
  /** OOM events recorded over every run in the history. */
  oomEvents: number;
  /** The newest runs, newest first. */
  recent: RunRow[];
}

export interface ServerSnapshot {
  sample: Sample;
  hostname: string;
  companion: readonly LiveCompanionEntry[];
  findings: readonly Finding[];
  runs: RunSummary | null;
  /**
   * Pids whose job has ended while they still hold GPU memory: the `gpumem run` that marked them is over, or
   * the diagnosis found them orphaned (launcher gone, idle).
   */
  jobEnded: ReadonlySet<number>;
}

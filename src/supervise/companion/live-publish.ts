/**
 * Publishes the companion's latest statistics of a running attempt for `gpumem diagnose` (the live
 * companion file, store/live): at most four times a second, only once some process has statistics for a
 * known GPU, and removed when the attempt ends. A failure to write (a refused folder: not ours, open to
 * others, a symlink) is said once through `warn` and retried on the next tick: diagnose then says the split
 * is unknown, and the run itself is never disturbed.
 */
import { buildLiveCompanionDoc } from '../../core/companion/live.js';
import type { MemoryForecast } from '../../core/forecast/forecast.js';
import type { CompanionState } from '../../core/companion/state.js';
import { readStartTicks } from '../../sources/index.js';
import { removeLiveCompanion, writeLiveCompanion } from '../../store/index.js';

const MIN_INTERVAL_MS = 250;

export interface LivePublisher {
  /** Writes the file when the state changed and the last write is at least 250 ms old. */
  maybePublish(): void;
  remove(): void;
}

/** A publisher for `state` at `path`; `warn` gets one line the first time a write fails. */
export function createLivePublisher(
  path: string, state: CompanionState, now: () => number, warn?: (line: string) => void, forecastsOf?: (pid: number) => MemoryForecast[],
): LivePublisher {
  const supervisor = { pid: process.pid, startTicks: readStartTicks(process.pid) };
  const starts = new Map<number, number | null>();
  const startOf = (pid: number): number | null => {
    if (!starts.has(pid)) starts.set(pid, readStartTicks(pid));
    return starts.get(pid) ?? null;
  };
  let lastMs = -Infinity;
  let lastKey = '';
  let written = false;
  let warned = false;
  return {
    maybePublish() {
      const t = now();
      if (t - lastMs < MIN_INTERVAL_MS) return;
      const doc = buildLiveCompanionDoc(state, supervisor, t, startOf, forecastsOf);
      if (doc.processes.length === 0 && !written) return;
      const key = JSON.stringify(doc.processes);
      if (key === lastKey) return;
      const problem = writeLiveCompanion(path, doc);
      if (problem === null) {
        lastMs = t;
        lastKey = key;
        written = true;
      } else if (!warned) {
        warned = true;
        warn?.(`warning: live companion file ${path} not written (${problem}); gpumem doctor will not see this run's PyTorch split`);
      }
    },
    remove() {
      removeLiveCompanion(path);
    },
  };
}

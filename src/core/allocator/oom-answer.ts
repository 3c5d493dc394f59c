/**
 * The run report's answer for a snapshot written at an OOM: would `expandable_segments:True` have avoided the
 * failed request, and does the replay under the settings the run used fail there too (the check that the
 * simulation reproduces the run). Only devices whose trace holds an OOM are answered.
 */
import type { MemorySnapshot } from '../snapshot/model-types.js';
import { simulateSnapshot, type SimulationRun } from './simulate-snapshot.js';

/** The settings asked about for every OOM snapshot of a run. */
export const OOM_WHAT_IF = 'expandable_segments:True';

export interface OomSettingsAnswer {
  /** "(as recorded)" for the run's own settings, else the allocator string replayed. */
  settings: string;
  oomAvoided: boolean;
  /** Device memory left after the request that failed, when every request would have succeeded. */
  oomSpareBytes: number | null;
  /** Trace index of the first allocation that fails under these settings (null when none fails). */
  firstOomEventIndex: number | null;
}

export interface SnapshotOomAnswer {
  file: string;
  /** Why there is no answer (unreadable, too large, no trace); null when answered. */
  problem: string | null;
  devices: Array<{ device: number; coversWholeRun: boolean; recorded: OomSettingsAnswer; whatIf: OomSettingsAnswer }>;
}

function answerOf(run: SimulationRun): OomSettingsAnswer {
  return { settings: run.settings, oomAvoided: run.oomAvoided === true, oomSpareBytes: run.oomSpareBytes, firstOomEventIndex: run.firstOomEventIndex };
}

/**
 * Replays each device trace of `snapshot` that ends in an OOM under its recorded settings and under
 * {@link OOM_WHAT_IF}. A snapshot without a trace holding an OOM gets a `problem` saying so.
 */
export function answerOomSnapshot(file: string, snapshot: MemorySnapshot): SnapshotOomAnswer {
  const devices = simulateSnapshot(snapshot, [OOM_WHAT_IF])
    .filter((d) => d.actual.oomAvoided !== null && d.whatIf[0] !== undefined)
    .map((d) => ({ device: d.device, coversWholeRun: d.actual.coversWholeRun, recorded: answerOf(d.actual), whatIf: answerOf(d.whatIf[0] as SimulationRun) }));
  const problem = devices.length > 0 ? null
    : snapshot.traces.some((t) => t.length > 0) ? 'its trace records no OOM to replay' : 'it holds no allocation trace to replay';
  return { file, problem, devices };
}

/** The answer for a snapshot that could not be replayed, with the reason. */
export function unansweredSnapshot(file: string, problem: string): SnapshotOomAnswer {
  return { file, problem, devices: [] };
}

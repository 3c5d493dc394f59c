/** What the server asks of a snapshot analysis in a worker thread, and what comes back. */
import type { SnapshotAnalysisOptions } from '../../orchestrate/snapshot-analysis.js';

export interface AnalysisJob {
  /** The snapshot: bytes of an upload (moved to the worker, not copied) or a file of a supervised run. */
  input: { bytes: Uint8Array } | { path: string };
  /** The name errors start with ("upload" or the file's name). */
  label: string;
  options: SnapshotAnalysisOptions;
  /** 'page': what the page shows, sizes formatted; 'cli': the document of `gpumem snapshot --json`. */
  view: 'page' | 'cli';
  source: { name: string; sizeBytes: number };
  schemaVersion: number;
}

export type AnalysisResult =
  /** The answer's JSON text. */
  | { kind: 'ok'; text: string }
  /** A GpumemError: the input or the settings are wrong, said in one line. */
  | { kind: 'refused'; code: string; message: string }
  /** Anything else thrown while reading or analysing the file: the file is one the reader cannot take. */
  | { kind: 'unreadable'; message: string }
  /** Over the time budget or the memory bound; the worker was stopped. */
  | { kind: 'timeout'; limitMs: number }
  | { kind: 'memory'; limitMb: number }
  /** The server is stopping. */
  | { kind: 'stopped' }
  /** The worker itself failed (a broken install, not the file): a bug to log with its stack. */
  | { kind: 'crashed'; error: unknown };

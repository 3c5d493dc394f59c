/**
 * The documents the dashboard page reads, as types: the server's builders return them and the page's
 * script (src/server/page/) reads them through the same types, so a field renamed on one side is a compile
 * error on the other. Sizes and durations arrive formatted (the page only places text).
 */
import type { Sample } from '../core/types.js';
import type { SplitPoint } from '../core/companion/report.js';
import type { StoredAttempt, StoredGpuSplit } from '../core/run/index.js';
import type { KillOutcome, KillRow } from '../supervise/kill/index.js';
import type { LiveRow } from './live-row.js';
import type { SplitView, StepsView } from './run-view.js';
import type { SnapshotDeviceView } from './snapshot-view.js';

export type { LiveRow, SplitView, StepsView, SnapshotDeviceView };

/** Every error answer: `{ error: { code, message } }` (http/respond.ts). */
export interface ErrorDoc {
  error: { code: string; message: string };
}

/** One GPU's card. */
export interface GpuCardView {
  index: number;
  name: string;
  uuid: string;
  usedText: string;
  totalText: string;
  /** Used / total, null when either is unknown. */
  usedFraction: number | null;
  utilText: string;
  tempText: string;
  powerText: string;
}

/** The header of the page's view of one sample: its time, source and GPU cards. */
export interface HeadView {
  timeMs: number;
  source: Sample['source'];
  gpus: GpuCardView[];
}

/** One row of the process table. */
export interface ProcessRowView {
  gpu: number | null;
  pid: number;
  user: string;
  memText: string;
  command: string;
  container: string;
  /** In gpumem's PID namespace: only such a process can be ended from the page. */
  visible: boolean;
  /** "launcher", "rank 1", "worker", "kernel", or '' for a job's main process. */
  role: string;
  /** Depth in its job's tree: a rank under its launcher, a worker under its rank. */
  depth: number;
  /** Only the process a job hangs from may be offered for ending; a rank or worker of a live job never alone. */
  endable: boolean;
}

export interface FindingView {
  id: string;
  severity: string;
  title: string;
  fix: string;
}

/** The view of a sample; the process table and the findings are left out when they did not change. */
export interface PageView extends HeadView {
  processes?: ProcessRowView[];
  /** null: the first diagnosis is not in yet. */
  findings?: FindingView[] | null;
}

/** One `sample` event of /api/v1/events; a stream's first one also carries the server's facts and the chart history. */
export interface LiveMessage {
  server?: { hostname: string; readonly: boolean };
  history?: LiveRow[];
  live: LiveRow;
  view: PageView;
}

/** A row of the Runs page. */
export interface RunRowView {
  id: number;
  started: string;
  duration: string;
  status: string;
  peak: string;
  command: string;
}

/** A pipeline on the Runs page, with the run id and status of each stage. */
export interface PipelineView {
  id: number;
  name: string;
  started: string;
  duration: string;
  status: string;
  stages: Array<{ runId: number; stage: string; status: string }>;
}

interface Versioned<K extends string> {
  schemaVersion: number;
  kind: K;
}

/** GET /api/v1/page/runs */
export interface PageRunsDoc extends Versioned<'gpumem.page-runs'> {
  runs: RunRowView[];
  pipelines: PipelineView[];
}

/** One attempt's series in GET /api/v1/runs/{id}/samples, as the history stored them. */
export interface RunSamplesAttempt {
  attempt: number | null;
  timeline: Array<{ tMs: number; bytes: Record<string, number> }>;
  /** As stored: a figure that could not be read back is null. */
  peaks: StoredAttempt['peaks'];
  ooms: StoredAttempt['ooms'];
  pytorch: StoredGpuSplit[];
  /** The PyTorch split over time; empty for runs recorded before the history kept it. */
  pytorchTimeline: SplitPoint[];
}

/** GET /api/v1/runs/{id}/samples */
export interface RunSamplesDoc extends Versioned<'gpumem.run-samples'> {
  runId: number;
  attempts: RunSamplesAttempt[];
}

/** GET /api/v1/page/compare?a=ID&b=ID: [label, run a, run b] rows. */
export interface PageCompareDoc extends Versioned<'gpumem.page-compare'> {
  a: number;
  b: number;
  rows: [string, string, string][];
}

/** GET /api/v1/page/runs/{id}/split */
export interface PageSplitDoc extends Versioned<'gpumem.page-split'> {
  runId: number;
  splits: SplitView[];
  /** Whether the run also has the split over time, in its samples. */
  perSample: boolean;
}

/** GET /api/v1/page/runs/{id}/steps */
export interface PageStepsDoc extends Versioned<'gpumem.page-steps'> {
  runId: number;
  steps: StepsView[];
}

/** GET /api/v1/runs/{id}/snapshots */
export interface RunSnapshotsDoc extends Versioned<'gpumem.run-snapshots'> {
  runId: number;
  snapshots: Array<{ index: number; file: string; name: string; available: boolean; sizeBytes: number | null }>;
}

/** A snapshot analysis with `view=page`: per device, label/value rows. */
export interface SnapshotPageDoc extends Versioned<'gpumem.page-snapshot'> {
  source: { name: string; sizeBytes: number };
  devices: SnapshotDeviceView[];
}

/** POST /api/v1/processes/{pid}/kill */
export interface KillDoc extends Versioned<'gpumem.kill'> {
  rows: KillRow[];
  outcomes: KillOutcome[];
}

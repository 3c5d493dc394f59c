/**
 * Reading and writing run history. A run is inserted as "running" before the child starts and completed
 * in one transaction at the end, so a gpumem killed mid-run leaves a row that says so instead of nothing.
 * The report's types come from core/run; OOM events stay values until written here, in their JSON form.
 */
import type { CompanionReport } from '../../core/companion/report.js';
import { parseStoredRunReport, STORED_REPORT_VERSION, type StoredRunReport } from '../../core/run/stored-report.js';
import { oomFindingJson } from '../../core/run/json.js';
import type { AttemptReport, GpuPeak, GpuRef, ProcessOutcome, RunReport } from '../../core/run/report.js';
import { readHistory, type Db } from './open.js';

/** The parts of an attempt's report the history keeps (a supervise AttemptReport fits). */
export type HistoryAttempt = Pick<AttemptReport, 'attempt' | 'argv' | 'batch' | 'durationMs' | 'exit' | 'timeline' | 'ooms'> & {
  peaks: Array<Pick<GpuPeak, 'index' | 'uuid' | 'peakBytes' | 'atMs' | 'chosen'>>;
  cleanup: { leftovers: Array<Pick<ProcessOutcome, 'pid' | 'cmdline' | 'gpuBytes' | 'outcome' | 'detail'>>; survivors?: Array<Pick<ProcessOutcome, 'pid'>> };
  /**
   * Run plugins' data; the companion's per-GPU PyTorch summary is also stored as pytorch_peaks rows, its
   * split over time as pytorch_samples rows.
   */
  plugins?: {
    companion?: Pick<CompanionReport, 'gpus' | 'splitTimeline'> & { processes?: Array<Pick<CompanionReport['processes'][number], 'pid' | 'steps'>> };
  };
};

/** The parts of a run's report the history keeps (a supervise RunReport fits). */
export type HistoryReport = Pick<RunReport, 'argv' | 'cwd' | 'startedAtMs' | 'durationMs' | 'env' | 'retries' | 'exit'> & {
  gpus: Array<Pick<GpuRef, 'index' | 'uuid'>> | null;
  attempts: HistoryAttempt[];
  /** Set when the program could not be started (stored as status "not-started"). */
  startError?: string | null;
};

export interface RunRow {
  id: number;
  pipelineId: number | null;
  stage: string | null;
  argv: string[];
  cwd: string;
  gpus: Array<{ index: number; uuid: string }> | null;
  startedAtMs: number;
  durationMs: number | null;
  /**
   * "running" until completed; "ok", "failed", "signal" or "not-started" (the program could not be started)
   * after; a "running" row of a dead gpumem stays so.
   */
  status: string;
  exitCode: number | null;
  exitSignal: string | null;
  retries: number;
  /** Peak bytes of the tree, summed over GPUs, max over attempts. */
  peakBytes: number | null;
  /**
   * Step timing of the last attempt's busiest loop (the process with the most steps), from the companion:
   * mean step in ms, the share of it spent waiting for data (0..1), samples per second. Null without step timing.
   */
  meanStepMs: number | null;
  dataWaitShare: number | null;
  samplesPerSec: number | null;
  /** Set when the stored row is damaged (a field that is not what this gpumem wrote): what could not be read. */
  unreadable?: string;
}

/** Inserts a run that is starting; returns its id. */
export function beginRun(db: Db, run: { argv: string[]; cwd: string; startedAtMs: number; pipelineId?: number; stage?: string }): number {
  const info = db
    .prepare('INSERT INTO runs (pipeline_id, stage, argv_json, cwd, started_at_ms, status) VALUES (?, ?, ?, ?, ?, ?)')
    .run(run.pipelineId ?? null, run.stage ?? null, JSON.stringify(run.argv), run.cwd, run.startedAtMs, 'running');
  return Number(info.lastInsertRowid);
}

/** A pipeline's cleanup check after a stage (supervise/pipeline): passed, or why not. */
export interface StageCheckVerdict {
  passed: boolean;
  reason: string | null;
}

/**
 * "cleanup-failed" when the program succeeded but its cleanup did not (a process of the run survived it, or,
 * for a pipeline stage, the check between stages failed): the exit code is kept beside it, never "ok".
 */
function statusOf(report: HistoryReport, check: StageCheckVerdict | null): string {
  if (report.startError) return 'not-started';
  if (report.exit.signal) return 'signal';
  if (report.exit.code !== 0) return 'failed';
  const survived = report.attempts.some((a) => (a.cleanup.survivors ?? []).length > 0);
  return survived || (check !== null && !check.passed) ? 'cleanup-failed' : 'ok';
}

/**
 * Stores the finished run's report and everything in it, in one transaction. A pipeline stage passes its
 * cleanup check's verdict, kept in the report as `cleanupCheck` (docs/run.md, "History").
 */
export function completeRun(db: Db, id: number, report: HistoryReport, check: StageCheckVerdict | null = null): void {
  const stored = { schemaVersion: STORED_REPORT_VERSION, ...report, attempts: report.attempts.map((a) => ({ ...a, ooms: a.ooms.map(oomFindingJson) })), ...(check ? { cleanupCheck: { passed: check.passed, reason: check.reason } } : {}) };
  db.transaction(() => {
    db.prepare('UPDATE runs SET gpus_json = ?, duration_ms = ?, status = ?, exit_code = ?, exit_signal = ?, retries = ?, report_json = ? WHERE id = ?').run(
      report.gpus ? JSON.stringify(report.gpus) : null, report.durationMs, statusOf(report, check), report.exit.code, report.exit.signal,
      report.retries, JSON.stringify(stored), id,
    );
    const env = db.prepare('INSERT INTO env_decisions (run_id, name, value, previous, action, reason) VALUES (?, ?, ?, ?, ?, ?)');
    for (const d of report.env) env.run(id, d.name, d.value, d.previous, d.action, d.reason);
    const att = db.prepare('INSERT INTO attempts (run_id, attempt, argv_json, batch, accum, duration_ms, exit_code, exit_signal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const peak = db.prepare('INSERT INTO peaks (run_id, attempt, gpu_index, gpu_uuid, peak_bytes, at_ms, chosen) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const sample = db.prepare('INSERT INTO samples (run_id, attempt, t_ms, gpu_uuid, bytes) VALUES (?, ?, ?, ?, ?)');
    const oom = db.prepare('INSERT INTO oom_events (run_id, attempt, line, text, event_json) VALUES (?, ?, ?, ?, ?)');
    const left = db.prepare('INSERT INTO leftovers (run_id, attempt, pid, cmdline, gpu_bytes, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const torch = db.prepare('INSERT INTO pytorch_peaks (run_id, attempt, gpu_index, gpu_uuid, tree_bytes, allocated_bytes, reserved_bytes, non_pytorch_bytes, peak_allocated_bytes, peak_reserved_bytes, num_alloc_retries, num_ooms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    const split = db.prepare('INSERT INTO pytorch_samples (run_id, attempt, t_ms, gpu_uuid, allocated_bytes, reserved_bytes) VALUES (?, ?, ?, ?, ?, ?)');
    const steps = db.prepare('INSERT INTO step_timing (run_id, attempt, pid, steps, mean_step_ms, data_wait_share, samples_per_sec, batch_seen, batch_asked) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
    for (const a of report.attempts) {
      for (const { pid, steps: s } of a.plugins?.companion?.processes ?? []) {
        if (s && s.steps > 0) steps.run(id, a.attempt, pid, s.steps, s.meanStepMs, s.dataWaitShare, s.samplesPerSec, s.batchSeen, s.batchAsked);
      }
      att.run(id, a.attempt, JSON.stringify(a.argv), a.batch?.batch ?? null, a.batch?.accum ?? null, a.durationMs, a.exit.code, a.exit.signal);
      for (const p of a.peaks) peak.run(id, a.attempt, p.index, p.uuid, p.peakBytes, p.atMs, p.chosen ? 1 : 0);
      for (const t of a.timeline) for (const [uuid, bytes] of Object.entries(t.bytes)) sample.run(id, a.attempt, t.tMs, uuid, bytes);
      for (const o of a.ooms.map(oomFindingJson)) oom.run(id, a.attempt, o.line, o.text, JSON.stringify({ event: o.event, causes: o.causes }));
      for (const l of a.cleanup.leftovers) left.run(id, a.attempt, l.pid, l.cmdline?.join(' ') ?? null, l.gpuBytes, l.outcome, l.detail);
      for (const t of a.plugins?.companion?.splitTimeline ?? []) {
        for (const uuid of new Set([...Object.keys(t.allocatedBytes), ...Object.keys(t.reservedBytes)])) {
          split.run(id, a.attempt, t.tMs, uuid, t.allocatedBytes[uuid] ?? null, t.reservedBytes[uuid] ?? null);
        }
      }
      for (const g of a.plugins?.companion?.gpus ?? []) {
        torch.run(id, a.attempt, g.gpuIndex, g.gpuUuid, g.treeBytes, g.allocatedBytes, g.reservedBytes, g.nonPytorchBytes, g.peakAllocatedBytes, g.peakReservedBytes, g.numAllocRetries, g.numOoms);
      }
    }
  })();
}

interface RawRun {
  id: number; pipeline_id: number | null; stage: string | null; argv_json: string; cwd: string; gpus_json: string | null;
  started_at_ms: number; duration_ms: number | null; status: string; exit_code: number | null; exit_signal: string | null;
  retries: number; peak_bytes: number | null; mean_step_ms: number | null; data_wait_share: number | null; samples_per_sec: number | null;
}

// The step figures of the last attempt's process with the most steps: the training loop, not an evaluation process.
const BUSIEST_LOOP = 'FROM step_timing WHERE run_id = r.id ORDER BY attempt DESC, steps DESC LIMIT 1';
const SELECT_RUN = `SELECT r.*, (SELECT MAX(s) FROM (SELECT SUM(peak_bytes) AS s FROM peaks WHERE run_id = r.id GROUP BY attempt)) AS peak_bytes,
  (SELECT mean_step_ms ${BUSIEST_LOOP}) AS mean_step_ms, (SELECT data_wait_share ${BUSIEST_LOOP}) AS data_wait_share,
  (SELECT samples_per_sec ${BUSIEST_LOOP}) AS samples_per_sec FROM runs r`;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const intOrNull = (v: unknown): number | null => (isInt(v) ? v : null);
const textOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const figureOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

function parseField<T>(text: unknown, name: string, ok: (v: unknown) => v is T, problems: string[]): T | null {
  if (text === null) return null;
  try {
    const value: unknown = typeof text === 'string' ? JSON.parse(text) : undefined;
    if (ok(value)) return value;
  } catch {
    // Reported below with the field's name.
  }
  problems.push(name);
  return null;
}

const isArgv = (v: unknown): v is string[] => Array.isArray(v) && v.every((a) => typeof a === 'string');
// Both as completeRun writes them: the runs document and its readers take a GPU's UUID to be a string.
const isGpus = (v: unknown): v is NonNullable<RunRow['gpus']> => Array.isArray(v)
  && v.every((g) => typeof g === 'object' && g !== null && isInt((g as { index?: unknown }).index) && typeof (g as { uuid?: unknown }).uuid === 'string');

/**
 * A stored row as a RunRow. A damaged row (a disk error, a hand edit, another program) does not stop the
 * listing: every field is checked, the readable ones are kept and `unreadable` names the rest.
 */
function toRow(r: RawRun): RunRow {
  const problems: string[] = [];
  const argv = parseField(r.argv_json, 'argv_json', isArgv, problems) ?? [];
  const gpus = parseField(r.gpus_json, 'gpus_json', isGpus, problems);
  if (!isInt(r.started_at_ms) || Math.abs(r.started_at_ms) > 8.64e15) problems.push('started_at_ms');
  if (typeof r.status !== 'string') problems.push('status');
  for (const [name, v] of [['duration_ms', r.duration_ms], ['exit_code', r.exit_code], ['retries', r.retries], ['peak_bytes', r.peak_bytes]] as const) {
    if (v !== null && !isInt(v)) problems.push(name);
  }
  const row: RunRow = {
    id: r.id, pipelineId: intOrNull(r.pipeline_id), stage: textOrNull(r.stage), argv, cwd: textOrNull(r.cwd) ?? '',
    gpus, startedAtMs: isInt(r.started_at_ms) && Math.abs(r.started_at_ms) <= 8.64e15 ? r.started_at_ms : 0, durationMs: intOrNull(r.duration_ms),
    status: textOrNull(r.status) ?? 'unreadable', exitCode: intOrNull(r.exit_code), exitSignal: textOrNull(r.exit_signal), retries: intOrNull(r.retries) ?? 0,
    peakBytes: intOrNull(r.peak_bytes),
    meanStepMs: figureOrNull(r.mean_step_ms), dataWaitShare: figureOrNull(r.data_wait_share), samplesPerSec: figureOrNull(r.samples_per_sec),
  };
  if (problems.length > 0) row.unreadable = `damaged field${problems.length > 1 ? 's' : ''} ${problems.join(', ')}`;
  return row;
}

/** The most recent runs, newest first. */
export function listRuns(db: Db, limit = 20): RunRow[] {
  return readHistory(db, () => (db.prepare(`${SELECT_RUN} ORDER BY r.id DESC LIMIT ?`).all(limit) as RawRun[]).map(toRow));
}

/**
 * One run with its stored report, read by the one tolerant reader every view uses (null while it is still
 * running or was cut off). A damaged report is a value: its `damage` says what could not be read.
 */
export function getRun(db: Db, id: number): { run: RunRow; report: StoredRunReport | null } | null {
  const raw = readHistory(db, () => db.prepare(`${SELECT_RUN} WHERE r.id = ?`).get(id) as (RawRun & { report_json: unknown }) | undefined);
  if (!raw) return null;
  const run = toRow(raw);
  if (raw.report_json === null || raw.report_json === undefined || raw.report_json === '') return { run, report: null };
  const report = parseStoredRunReport(typeof raw.report_json === 'string' ? raw.report_json : '');
  if (report.document !== null) return { run, report };
  return { run: { ...run, unreadable: run.unreadable ? `${run.unreadable}, report_json` : 'damaged field report_json' }, report };
}

/** Inserts a pipeline that is starting; returns its id. */
export function beginPipeline(db: Db, file: string, startedAtMs: number): number {
  return Number(db.prepare('INSERT INTO pipelines (file, started_at_ms, status) VALUES (?, ?, ?)').run(file, startedAtMs, 'running').lastInsertRowid);
}

/** Stores a finished pipeline's report. */
export function completePipeline(db: Db, id: number, status: string, durationMs: number, report: unknown): void {
  db.prepare('UPDATE pipelines SET status = ?, duration_ms = ?, report_json = ? WHERE id = ?').run(status, durationMs, JSON.stringify(report), id);
}

/** A pipeline as the history lists it: its outcome and its stages' runs, in order. */
export interface PipelineRow {
  id: number;
  /** The pipeline's `name` (from its stored report), else null. */
  name: string | null;
  file: string;
  startedAtMs: number;
  durationMs: number | null;
  /** "running" until completed; then "ok" or "failed". */
  status: string;
  stages: Array<{ runId: number; stage: string | null; status: string }>;
}

/** The most recent pipelines, newest first, each with the runs of its stages. */
export function listPipelines(db: Db, limit = 20): PipelineRow[] {
  const rows = db.prepare('SELECT id, file, started_at_ms, duration_ms, status, report_json FROM pipelines ORDER BY id DESC LIMIT ?').all(limit) as Array<{
    id: number; file: unknown; started_at_ms: unknown; duration_ms: unknown; status: unknown; report_json: unknown;
  }>;
  const stagesOf = db.prepare('SELECT id, stage, status FROM runs WHERE pipeline_id = ? ORDER BY id');
  return rows.map((r) => {
    let name: string | null = null;
    try {
      const parsed: unknown = typeof r.report_json === 'string' ? JSON.parse(r.report_json) : null;
      const n = (parsed as { name?: unknown } | null)?.name;
      name = typeof n === 'string' ? n : null;
    } catch {
      // A damaged report only loses the name.
    }
    const stages = (stagesOf.all(r.id) as Array<{ id: number; stage: unknown; status: unknown }>).map((s) => ({ runId: s.id, stage: textOrNull(s.stage), status: textOrNull(s.status) ?? 'unreadable' }));
    return {
      id: r.id, name, file: textOrNull(r.file) ?? '', startedAtMs: intOrNull(r.started_at_ms) ?? 0, durationMs: intOrNull(r.duration_ms),
      status: textOrNull(r.status) ?? 'unreadable', stages,
    };
  });
}

/** How many runs are in each state and how many OOM events the history holds (for /metrics). */
export function historySummary(db: Db): { byStatus: Record<string, number>; oomEvents: number } {
  const rows = db.prepare('SELECT status, COUNT(*) AS n FROM runs GROUP BY status').all() as Array<{ status: string; n: number }>;
  const ooms = db.prepare('SELECT COUNT(*) AS n FROM oom_events').get() as { n: number };
  return { byStatus: Object.fromEntries(rows.map((r) => [r.status, r.n])), oomEvents: ooms.n };
}
